"""localeval: a fully local, offline evaluator for RAG systems."""

__version__ = "0.1.0"
