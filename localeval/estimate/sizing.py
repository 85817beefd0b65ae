"""The estimate of a run (`run --estimate`): rows → dry run → engine work → replay → figures.

The metrics run on the rows against a dry-run judge (estimate/dryrun.py): every request they
would send is recorded, those the answer cache holds are served from it. Each request's prompt
is tokenized with the judge's own tokenizer (a vocabulary-only load) and its answer laid out by
its schema (estimate/workload.py); the engine's own schedule (judge/llamacpp/schedule.py) is
replayed over them (estimate/simulate.py) for the prompt tokens it reads after prefix reuse and its
decode calls, priced by this machine's calibration (estimate/calibrate.py), measured once and
cached.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.config import Settings
from localeval.estimate import calibrate
from localeval.estimate.dryrun import DryJudge, dry_run
from localeval.estimate.simulate import replay
from localeval.estimate.workload import CharVocab, Vocab, build
from localeval.judge.client import floor_account

DEFAULT_FREE_TOKENS = 20.0
"""Tokens of a free string (a generated question, a reason) before a calibration measured it."""
STATEMENTS_STEP = "faithfulness_statements"
"""The shared step that writes a text's statements (`--claims statements`)."""


def claim_steps() -> frozenset[str]:
    """The steps that judge a text's claims (its sentences, or with `--claims statements` the
    statements the judge writes): the own steps of the metrics that declare the statements step
    in their `@metric(steps=...)`. Declared steps are the rendered ones
    (tests/test_metric_declarations.py), so this holds."""
    from localeval.metrics import REGISTRY

    return frozenset(s for m in REGISTRY.values() if STATEMENTS_STEP in m.steps for s in m.steps
                     if not s.endswith("_statements"))


def count_kind(step: str, settings: Settings, upper: frozenset[str] = frozenset()) -> str:
    """How far a step's request count can be known before the judge answers: `exact`,
    `lower bound` (an answer that loops is asked again in halves), `upper bound` (a step in
    `upper`: some of its requests are made only on some answers, and the dry run asked them
    all) or `estimate` (the requests follow from the judge's answers: the statements it writes;
    or bounded both ways)."""
    if step in claim_steps() and settings.claims == "statements":
        return "estimate"
    if step.endswith("_statements"):
        return "estimate" if step in upper else "lower bound"
    return "upper bound" if step in upper else "exact"


def upper_steps(recorded: Iterable[Any]) -> frozenset[str]:
    """The steps of the dry run's requests that a run makes only on some answers: a
    conversation turn's user pass (data/conversation.USER_MARK), asked only where a claim is
    left unsupported."""
    from localeval.data.conversation import USER_MARK

    return frozenset(r.request.step for r in recorded if r.request.sample_id.endswith(USER_MARK))


@dataclass
class VocabJudge:
    """The run's judge as the estimate needs it, without its weights: its cache identity,
    tokenizer (a vocabulary-only load) and window."""

    name: str
    fingerprint: str
    sampling: str
    vocab: Vocab
    n_ctx: int | None
    model_path: Path | None = None
    close: Callable[[], None] = field(default=lambda: None)


def estimate_parallel(settings: Settings) -> int:
    """The slots an estimate sizes for: 1 for the fake judge, else --parallel or the hardware
    default (judge/llamacpp.resolve_parallel)."""
    if settings.judge == "fake":
        return 1
    from localeval.judge.llamacpp import resolve_parallel

    return resolve_parallel(settings.parallel, settings.n_gpu_layers)


def open_judge(settings: Settings, parallel: int) -> VocabJudge:
    """The run's judge without its weights: the llama.cpp judge's vocabulary only."""
    if settings.judge == "fake":
        return VocabJudge("fake", "fake", "fake", CharVocab(), None)
    from localeval.judge.llamacpp import Tokenizer, load_model
    from localeval.models.backends import make_judge

    lazy, info = make_judge(settings.model_copy(update={"parallel": parallel}))
    vocab_model = load_model(lazy.model_path, 0, vocab_only=True)
    return VocabJudge(info["name"], lazy.fingerprint, lazy.sampling_key(), Tokenizer(vocab_model),
                      settings.n_ctx, lazy.model_path, vocab_model.close)


def shield_embedder(settings: Settings) -> Any:
    """The run's embedder when the shield's meaning head reads its vectors (`--shield meaning`,
    the real judge, the embedder the head was fitted on), so that the dry run flags what the
    run flags and counts the second scoring of each flagged sample; else None (the hash
    embedder: no request count depends on the vectors otherwise). Its weights load at the
    first sentence to embed."""
    if settings.shield != "meaning" or settings.judge == "fake":
        return None
    from localeval.metrics import shield_meaning
    from localeval.models.backends import make_embedder
    from localeval.models.embed import EmbeddingStore

    embedder, _ = make_embedder(settings)
    return embedder if shield_meaning.applies(EmbeddingStore(embedder)) else None


def estimate_run(source: str | Path | Iterable[Mapping[str, Any]], settings: Settings, *,
                 parallel: int, calibrate_now: bool = True, recalibrate: bool = False,
                 skip_ids: set[str] | None = None,
                 log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The estimate of a run of `source` with `settings` at `parallel`, as a JSON-able dict."""
    from localeval.data import dataset
    from localeval.metrics import resolve
    from localeval.models.preflight import check_before_loading

    data = dataset.load(source)
    metrics = resolve(settings.metrics, settings.rubrics)
    samples = [s for s in data.samples if s.id not in (skip_ids or set())]
    judged = [m for m in metrics
              if m.uses_judge and any(not s.missing(m.requires) for s in samples)]
    check_before_loading(settings, judged)
    out: dict[str, Any] = {
        "samples": len(samples), "parallel": parallel,
        "metrics": [m.name for m in metrics if any(not s.missing(m.requires) for s in samples)],
        "input_errors": len(data.problems), "steps": {}, "notes": []}
    out["skipped"] = skipped_rows(samples, metrics)
    if samples:
        out["notes"] += skip_notes(out["skipped"], len(samples),
                                   everything=settings.metrics is not None or not out["metrics"])
    if not judged:
        out["notes"].append("no sample to judge" if not samples else
                            "no metric that applies to these rows uses the judge")
        return out | {"total": _total({}), "time": None}
    judge = open_judge(settings, parallel)
    try:
        order = {s.id: i for i, s in enumerate(samples)}
        dry = DryJudge(judge.fingerprint, judge.sampling, judge.vocab.prompt_tokens,
                       judge.n_ctx, order)
        found = dry_run(samples, judged, settings, dry, settings.cache_path(), parallel,
                        shield_embedder(settings))
        if found.cache_unusable:
            log(f"warning: {found.cache_unusable}")
            out["notes"].append(found.cache_unusable)
        entry, key = _calibration(settings, judge, calibrate_now and bool(found.recorded),
                                  recalibrate, log)
        free_tokens = float(entry["free_tokens"]) if entry else DEFAULT_FREE_TOKENS
        loads = [build(r.request, r.sample, r.tokens, judge.vocab, max_chunk=settings.n_batch,
                       free_tokens=free_tokens, temperature=settings.temperature)
                 for r in found.recorded]
        asked = {w.sample for w in loads}
        own = sum(len(judge.vocab.tokens(t)) for i, s in enumerate(samples) if i in asked
                  for t in s.own_texts())
    finally:
        judge.close()
    speed = calibrate.speed_of(entry) if entry else None
    totals = replay(loads, parallel=parallel, speed=speed)
    steps = sorted(set(totals.requests) | set(found.cached_by_step))
    upper = upper_steps(found.recorded)
    for step in steps:
        free = any(w.step == step and w.generated for w in loads)
        out["steps"][step] = {
            "requests": totals.requests.get(step, 0),
            "cached": found.cached_by_step.get(step, 0),
            "count": count_kind(step, settings, upper),
            "prompt_tokens": totals.prompt_tokens.get(step, 0),
            "prompt_tokens_processed": totals.processed.get(step, 0),
            "generated_tokens": totals.generated.get(step, 0),
            "generated": "estimate" if free else "exact",
            "forced_tokens": totals.forced.get(step, 0),
        }
    out["total"] = _total(out["steps"]) | {"decode_calls": totals.decode_calls}
    t = out["total"]
    out["floor"] = floor_account(own, sum(w.choices for w in loads) + t["generated_tokens"],
                                 t["prompt_tokens_processed"] + t["generated_tokens"]
                                 + t["forced_tokens"])
    out["judge"] = {"name": judge.name, "sha256": judge.fingerprint}
    if found.errors:
        out["notes"].append(f"{len(found.errors)} metric error(s) would occur before the judge "
                            f"answers, e.g. {found.errors[0]}")
    requests = out["total"]["requests"]
    if not requests:
        out["time"] = {"seconds": 0.0, "judge_s": 0.0, "load_s": 0.0, "calibration": None}
        out["notes"].append("every request is served from the answer cache: the judge will not "
                            "even load")
    elif speed is None or entry is None:
        out["time"] = None
        out["notes"].append("time not estimated: no calibration of this machine's judge speed "
                            "(run --estimate without --no-calibrate once)")
    else:
        load_s = float(entry.get("load_s", 0.0)) if requests else 0.0
        out["time"] = {"seconds": round(totals.seconds + load_s, 1),
                       "judge_s": round(totals.seconds, 1), "load_s": round(load_s, 1),
                       "calibration": {"key": key, **{k: entry[k] for k in (
                           "measured_at", "prompt_tokens_per_s", "generated_tokens_per_s_at_4",
                           "free_tokens", "load_s") if k in entry}}}
        out["notes"].append("time covers the judge (model load and decoding); the embedder, "
                            "reading the rows and writing the reports are not included")
    if any(v["count"] != "exact" for v in out["steps"].values()):
        out["notes"].append("a count marked 'estimate', 'lower bound' or 'upper bound' depends on "
                            "the judge's answers (placeholders stood in for them; an upper "
                            "bound: requests made only on some answers were all counted)")
    return out


def skipped_rows(samples: list[Any], metrics: list[Any]) -> dict[str, dict[str, Any]]:
    """Per metric that some row cannot feed: how many rows it is skipped on, and per missing
    required field ("a|b": either) on how many rows it is missing or empty."""
    out: dict[str, dict[str, Any]] = {}
    for m in metrics:
        missing = [s.missing(m.requires) for s in samples]
        rows = sum(1 for f in missing if f)
        if rows:
            fields: dict[str, int] = {}
            for found in missing:
                for f in found:
                    fields[f] = fields.get(f, 0) + 1
            out[m.name] = {"rows": rows, "missing": fields}
    return out


def skip_notes(skipped: dict[str, dict[str, Any]], n: int, *, everything: bool) -> list[str]:
    """With `everything` (the metrics were asked for, or none applies), one note per metric
    skipped on some row, naming the fields it needs that rows lack."""
    notes: list[str] = []
    if not everything:
        return notes
    for name, found in skipped.items():
        fields = ", ".join(f"{f.replace('|', ' or ')} (missing or empty in {k} of {n} rows)"
                           for f, k in found["missing"].items())
        if found["rows"] == n:
            notes.append(f"{name} would score nothing: every row lacks a field it needs: "
                         f"{fields}")
        else:
            notes.append(f"{name} would be skipped on {found['rows']} of {n} rows: it needs "
                         f"{fields}")
    return notes


def _total(steps: dict[str, dict[str, Any]]) -> dict[str, Any]:
    keys = ("requests", "cached", "prompt_tokens", "prompt_tokens_processed",
            "generated_tokens", "forced_tokens")
    total: dict[str, Any] = {k: sum(s[k] for s in steps.values()) for k in keys}
    kinds = {s["count"] for s in steps.values()} - {"exact"}
    total["count"] = "exact" if not kinds else kinds.pop() if len(kinds) == 1 else "estimate"
    return total


def _calibration(settings: Settings, judge: VocabJudge, calibrate_now: bool, recalibrate: bool,
                 log: Callable[[str], None] | None) -> tuple[dict[str, Any] | None, str]:
    """The cached calibration, else one measured now (loads the judge once)."""
    from localeval.config import default_cache_path
    from localeval.judge.llamacpp import default_threads

    threads = settings.n_threads or default_threads()
    key = calibrate.calibration_key(judge.fingerprint, threads, settings.n_batch,
                                    settings.n_gpu_layers)
    path = calibrate.speed_file(default_cache_path().parent)
    entry = None if recalibrate else calibrate.load(path, key, log)
    if entry is not None or not calibrate_now or judge.model_path is None:
        return entry, key
    if log:
        log(f"calibrating this machine's judge speed once (cached in {path})")
    entry = calibrate.measure(judge.model_path, judge.fingerprint, n_ctx=settings.n_ctx,
                              threads=threads, n_gpu_layers=settings.n_gpu_layers,
                              n_batch=settings.n_batch)
    try:
        calibrate.store(path, key, entry)
    except OSError as exc:  # the estimate still has its measurement; only the cache is lost
        if log:
            log(f"warning: could not keep the calibration in {path} ({exc.strerror or exc}); "
                "the next estimate will measure again: make that folder writable or set "
                "LOCALEVAL_CACHE_DIR")
    return entry, key
