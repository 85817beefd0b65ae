"""localeval's version (the package's `__version__`): what run folders and summaries record."""

__version__ = "0.1.0"
