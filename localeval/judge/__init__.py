"""The judge: a protocol (base), the llama.cpp engine, a fake for tests, and the answer cache."""

from localeval.judge.base import Judge, JudgeReply, JudgeRequest

__all__ = ["Judge", "JudgeReply", "JudgeRequest"]
