"""Moved: `resolve_parallel` is in judge/lazy.py, the engine's `Backend` in judge/llama.py.
This name stays only while localeval/generate/estimate.py (owned elsewhere this session)
imports it from here; delete it when that import moves."""

from localeval.judge.lazy import resolve_parallel

__all__ = ["resolve_parallel"]
