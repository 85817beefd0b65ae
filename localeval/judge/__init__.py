"""The judge: its interface (interface), the client metrics call (client), the answer cache
(cache), the answer schemas (schemas), a fake for tests (fake), and the llama.cpp engine behind
one door (the package llamacpp)."""

from localeval.judge.interface import Judge, JudgeReply, JudgeRequest

__all__ = ["Judge", "JudgeReply", "JudgeRequest"]
