"""Where localeval's data lives: a checkout's top-level folders, or the installed package's.

A checkout (an editable install, or running from the repository) keeps the templates in
`prompts/` and the manifest in `models/`; the wheel carries them as `localeval/_prompts` and
`localeval/_models/manifest.toml` (pyproject.toml maps the folders).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


@cache
def checkout_root() -> Path | None:
    """The repository root when localeval runs from a checkout, else None (an installed wheel)."""
    root = PACKAGE.parent
    if (root / "pyproject.toml").is_file() and (root / "prompts").is_dir():
        return root
    return None


def package_data(name: str) -> Path:
    """A data folder of the installed package (`_prompts`, `_models`), via importlib.resources."""
    from importlib.resources import files

    return Path(str(files("localeval") / name))


def user_cache() -> Path:
    """$XDG_CACHE_HOME/localeval, else ~/.cache/localeval."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "localeval"
