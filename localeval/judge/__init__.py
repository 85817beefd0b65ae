"""The judge: its interface (interface), the client metrics call (client), the llama.cpp engine, a
fake for tests, and the answer cache."""

from localeval.judge.interface import Judge, JudgeReply, JudgeRequest

__all__ = ["Judge", "JudgeReply", "JudgeRequest"]
