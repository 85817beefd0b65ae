"""A run without a judge: the metrics' own code on the rows, every request answered with a
schema-valid placeholder and recorded, cached requests served from the answer cache (read
only). What the metrics ask of the judge is then known without loading it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.errors import ConfigError, PromptTooLong
from localeval.executor import evaluate_all
from localeval.judge.cache import AnswerCache
from localeval.judge.client import JudgeClient
from localeval.judge.interface import JudgeReply, JudgeRequest
from localeval.metrics import Metric
from localeval.models.backends import Backends
from localeval.models.embed import EmbeddingStore, HashEmbedder

Counter = Callable[[list[dict[str, str]]], list[int]]


class DryCache:
    """The answer cache as a run would see it, read only on disk: the dry run's placeholder
    answers are kept in memory only, so a request repeated later in the run is served, as the
    real run would serve it from the answers it stored."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.unusable: str | None = None
        self._disk: AnswerCache | None = None
        if path.is_file():
            try:
                self._disk = AnswerCache(path)
            except ConfigError as exc:  # as a run does: go on without it, and say so
                self.unusable = f"{exc}; the estimate assumes no cached answer"
        self._memo: dict[str, JudgeReply] = {}

    def get(self, key: str) -> JudgeReply | None:
        if key in self._memo:
            return self._memo[key].model_copy(update={"cached": True})
        return self._disk.get(key) if self._disk is not None else None

    def put(self, key: str, reply: JudgeReply) -> None:
        self._memo[key] = reply

    def close(self) -> None:
        if self._disk is not None:
            self._disk.close()


def placeholder(schema_json: str, choice: int = -1, salt: str = "") -> Any:
    """A value the schema accepts: every field present, the fewest list items allowed (at least
    one), each enum's value at index `choice` (default the last: the engine's guess), distinct
    short strings (holding `salt`, when given)."""
    schema = json.loads(schema_json)
    defs = schema.get("$defs", {})
    counter = iter(range(1, 1_000_000))

    def walk(node: dict[str, Any]) -> Any:
        if "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[-1]]
        if "enum" in node:
            return node["enum"][choice]
        if "const" in node:
            return node["const"]
        for key in ("anyOf", "oneOf", "allOf"):
            if key in node:
                return walk(node[key][0])
        kind = node.get("type")
        if kind == "object":
            return {k: walk(v) for k, v in node.get("properties", {}).items()}
        if kind == "array":
            n = max(1, int(node.get("minItems", 0)))
            return [walk(node.get("items", {})) for _ in range(n)]
        if kind in ("integer", "number"):
            return node.get("minimum", 0)
        if kind == "boolean":
            return True
        text = f"placeholder {salt}{next(counter)}"
        low, high = int(node.get("minLength", 0)), node.get("maxLength")
        text = text.ljust(low, "x")
        return text[:high] if high is not None else text

    return walk(schema)


@dataclass
class Recorded:
    """One request the judge would get, with its prompt's tokens."""

    request: JudgeRequest
    tokens: list[int]
    sample: int  # index of its sample in the rows


class DryJudge:
    """Answers every request with a placeholder; raises PromptTooLong as the engine would.
    `distinct`: each request's strings hold a digest of its prompt, so that two requests never
    get the same answer (generate's checks of two drafts then differ, as in a run)."""

    name = "dry-run"
    distinct = False

    def __init__(self, fingerprint: str, sampling: str, count: Counter, n_ctx: int | None,
                 order: dict[str, int]) -> None:
        self.fingerprint, self._sampling = fingerprint, sampling
        self._count, self._order = count, order
        if n_ctx is not None:
            self.n_ctx = n_ctx  # chunking splits material by tokens only when this exists
        self.recorded: list[Recorded] = []

    def sampling_key(self) -> str:
        return self._sampling

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        return self._count(messages)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        tokens = self._count(request.messages)
        n_ctx = getattr(self, "n_ctx", None)
        # the engine's reserve: the answer's max_tokens, or a prompt-only request's longest
        # continuation (its characters: at least its tokens; a digit is one of each)
        reserve = (max(len(c) for c in request.continuations) if request.continuations
                   else request.max_tokens)
        if n_ctx is not None and len(tokens) + reserve > n_ctx:
            raise PromptTooLong(len(tokens), n_ctx, reserve)
        self.recorded.append(Recorded(request, tokens, self._sample_of(request.sample_id)))
        salt = ""
        if self.distinct:
            import hashlib

            said = json.dumps(request.messages, ensure_ascii=False, sort_keys=True)
            salt = hashlib.sha256(said.encode()).hexdigest()[:8] + " "
        if request.continuations:  # the last one, as a placeholder takes an enum's last value
            return JudgeReply(text="", finish_reason="stop", prompt_tokens=len(tokens),
                              prompt_tokens_processed=len(tokens), choice_probs={
                                  c: float(i == len(request.continuations) - 1)
                                  for i, c in enumerate(request.continuations)})
        text = json.dumps(placeholder(request.answer_schema, salt=salt), ensure_ascii=False)
        return JudgeReply(text=text, finish_reason="stop", prompt_tokens=len(tokens),
                          prompt_tokens_processed=len(tokens))

    def _sample_of(self, sample_id: str) -> int:
        """The position of the row a request is for (a conversation's turn: the conversation)."""
        if sample_id in self._order:
            return self._order[sample_id]
        from localeval.data.conversation import conversation_of

        return self._order.get(conversation_of(sample_id), 0)

    def close(self) -> None:
        pass


@dataclass
class DryRun:
    """What a dry run found: the requests for the judge, the requests the cache serves, per
    step, and the samples' errors (a metric that would fail)."""

    recorded: list[Recorded]
    cached_by_step: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    cache_unusable: str | None = None  # why the answer cache could not be read


def dry_run(samples: list[Sample], metrics: list[Metric], settings: Settings, judge: DryJudge,
            cache_path: Path | None, parallel: int, embedder: Any = None) -> DryRun:
    """Run the metrics over the samples against `judge` (cache read only), with `embedder`
    (the run's, where the shield's meaning head reads its vectors: sizing.shield_embedder),
    else the hash embedder."""
    cache = DryCache(cache_path) if cache_path is not None else None
    client = JudgeClient(judge, cache)  # type: ignore[arg-type]
    stats = client.stats
    backends = Backends(judge=client, embeddings=EmbeddingStore(embedder or HashEmbedder()),
                        info={"judge": {"parallel": parallel}}, every_request=True)
    errors: list[str] = []

    def on_record(_sample: Any, record: Any) -> None:
        errors.extend(f"{record.id} {m}: {e}" for m, e in record.errors.items())

    try:
        asyncio.run(evaluate_all(samples, metrics, settings, backends, on_record))
    finally:
        client.close()
    cached = {step: int(n) for step, f in stats.steps.items() if (n := f["cached"])}
    return DryRun(judge.recorded, cached, errors, cache.unusable if cache else None)
