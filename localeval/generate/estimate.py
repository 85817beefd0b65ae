"""`generate --estimate`: the judge requests, tokens and time a generation would take, without
loading the judge: the generation runs against run --estimate's dry-run judge (placeholder
answers, the answer cache read only, prompts counted with the judge's tokenizer) and the hash
embedder, and the engine's schedule is replayed and priced by this machine's calibration.

Which checks a draft gets depends on what the judge writes (a draft a rule drops is never
checked), so the estimate is a range: at least the drafts' own requests, at most those of
every draft checked in full (the dry run makes them all: tasks.Env.every_check, and checks
every "unanswerable" draft against the kept rows nearest it); the steps,
tokens and time are the upper bound."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from localeval.config import Settings
from localeval.generate.drafting import BRIDGE_STEP, CLUE_STEP, SINGLE_STEP
from localeval.generate.pipeline import GenerateOptions, Log, build_corpus, plan_and_run

DEFAULT_FREE_TOKENS = 20.0


def estimate(docs: Iterable[str | Path], settings: Settings, options: GenerateOptions,
             log: Log | None = None) -> dict[str, Any]:
    """The estimate as run --estimate gives it (`estimate.table` prints it): per step the
    requests at most; `total.at_least` the drafts' alone."""
    from localeval.config import default_cache_path
    from localeval.estimate import calibrate
    from localeval.estimate.dryrun import DryCache, DryJudge
    from localeval.estimate.simulate import replay
    from localeval.estimate.sizing import estimate_parallel, open_judge
    from localeval.estimate.workload import build
    from localeval.judge.client import JudgeClient
    from localeval.judge.llamacpp import default_threads
    from localeval.models.backends import Backends
    from localeval.models.embed import EmbeddingStore, HashEmbedder
    from localeval.models.preflight import check_before_loading

    corpus, _ = build_corpus(docs, settings, options, log)
    check_before_loading(settings, [])
    parallel = estimate_parallel(settings)
    judge = open_judge(settings, parallel)
    try:
        dry = DryJudge(judge.fingerprint, judge.sampling, judge.vocab.prompt_tokens,
                       judge.n_ctx, {})
        dry.distinct = True  # two drafts' checks are two requests, as in a run
        cache_path = settings.cache_path()
        client = JudgeClient(dry, DryCache(cache_path) if cache_path else None)  # type: ignore[arg-type]
        backends = Backends(judge=client, embeddings=EmbeddingStore(HashEmbedder()),
                            info={"judge": {"parallel": parallel, "sha256": judge.fingerprint}})
        made = asyncio.run(plan_and_run(corpus, None, settings, options, backends, False,
                                        every_check=True))
        drafted = made.report["candidates_drafted"]
        key = calibrate.calibration_key(judge.fingerprint, settings.n_threads
                                        or default_threads(), settings.n_batch,
                                        settings.n_gpu_layers)
        entry = calibrate.load(calibrate.speed_file(default_cache_path().parent), key)
        free = float(entry["free_tokens"]) if entry else DEFAULT_FREE_TOKENS
        works = [build(r.request, r.sample, r.tokens, judge.vocab, max_chunk=settings.n_batch,
                       free_tokens=free, temperature=settings.temperature)
                 for r in dry.recorded]
        client.close()
    finally:
        judge.close()
    totals = replay(works, parallel=parallel, speed=calibrate.speed_of(entry) if entry else None)
    drafts = (SINGLE_STEP, BRIDGE_STEP, CLUE_STEP)
    steps = {step: {"requests": n, "count": "exact" if step in drafts else "at most",
                    "cached": int(client.stats.steps.get(step, {}).get("cached", 0)),
                    "prompt_tokens": totals.prompt_tokens.get(step, 0),
                    "prompt_tokens_processed": totals.processed.get(step, 0),
                    "generated_tokens": totals.generated.get(step, 0), "generated": "estimate",
                    "forced_tokens": totals.forced.get(step, 0)}
             for step, n in sorted((s, totals.requests.get(s, 0)) for s in
                                   set(totals.requests) | set(client.stats.steps))}
    total = {k: sum(s[k] for s in steps.values()) for k in
             ("requests", "prompt_tokens", "prompt_tokens_processed", "generated_tokens",
              "forced_tokens")}
    at_least = sum(totals.requests.get(step, 0) for step in drafts)
    total |= {"count": "at most", "at_least": at_least,
              "cached": sum(s["cached"] for s in steps.values()),
              "generated": "estimate"}
    notes = [f"{len(corpus)} chunks; {drafted} candidates drafted (fewer once --n of every "
             f"kind is kept); between {at_least} judge requests (the drafts alone: a rule drops "
             f"every draft before the judge's checks) and {total['requests']} (every draft "
             "checked in full: the steps, tokens and time shown)",
             "the dry run links pairs with the hash embedder, not the real one"]
    time = None
    if entry and total["requests"]:
        load_s = float(entry.get("load_s", 0.0))
        time = {"seconds": round(totals.seconds + load_s, 1), "judge_s": round(totals.seconds, 1),
                "load_s": round(load_s, 1), "calibration": {k: entry.get(k) for k in (
                    "measured_at", "prompt_tokens_per_s", "generated_tokens_per_s_at_4")}}
    elif total["requests"]:
        notes.append("time not estimated: no calibration of this machine's judge speed yet "
                     "(`localeval run DATA --estimate` measures it once)")
    return {"samples": drafted, "metrics": ["generate"], "parallel": parallel,
            "judge": {"name": judge.name, "sha256": judge.fingerprint}, "steps": steps,
            "total": total, "time": time, "notes": notes}
