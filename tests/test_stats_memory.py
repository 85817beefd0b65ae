"""The bootstrap in bounded memory: the same intervals as before for runs up to EXACT_LIMIT
values, memory that does not grow with resamples × values, and a deterministic interval of the
right width beyond (the multinomial draw over distinct values)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from localeval.meta_eval import stats as meta_stats
from localeval.results import tally
from localeval.results.tally import bootstrap_ci


def old_bootstrap_ci(values: list[float], n: int = 2000, seed: int = 0) -> tuple[float, float]:
    """The implementation before: every index of every resample drawn at once."""
    arr = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, len(arr), size=(n, len(arr)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def old_meta_bootstrap(statistic, *columns, n=2000, seed=0):  # type: ignore[no-untyped-def]
    arrays = [np.asarray(c, dtype=np.float64) for c in columns]
    idx = np.random.default_rng(seed).integers(0, len(arrays[0]), size=(n, len(arrays[0])))
    found = (statistic(*(a[i] for a in arrays)) for i in idx)
    values = np.asarray([v for v in found if v is not None], dtype=np.float64)
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


@pytest.mark.parametrize("size", [2, 3, 17, 600, 1001, 5000])
def test_small_runs_keep_their_intervals(size: int) -> None:
    rng = np.random.default_rng(size)
    for values in (rng.random(size).tolist(), rng.integers(0, 2, size).astype(float).tolist()):
        assert bootstrap_ci(values) == old_bootstrap_ci(values)
        assert bootstrap_ci(values, n=333, seed=7) == old_bootstrap_ci(values, n=333, seed=7)
        assert meta_stats.bootstrap_ci(meta_stats.mean, values) == old_bootstrap_ci(values)


def test_chunks_smaller_than_all_resamples_give_the_same_means(monkeypatch) -> None:
    values = np.random.default_rng(3).random(999)
    monkeypatch.setattr(tally, "CHUNK", 999 * 3)  # 3 resamples per chunk, 667 chunks
    assert bootstrap_ci(values.tolist()) == old_bootstrap_ci(values.tolist())
    y = [1, 0] * 20
    s = np.random.default_rng(4).random(40).tolist()
    got = meta_stats.bootstrap_ci(meta_stats.auroc, s, y)
    assert got == old_meta_bootstrap(meta_stats.auroc, s, y)


def _peak_mib(fn) -> float:  # type: ignore[no-untyped-def]
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_resamples_times_values() -> None:
    # before: 2000 × 30,000 indices and as many gathered values, about 900 MiB
    continuous = np.random.default_rng(0).random(30_000).tolist()
    assert _peak_mib(lambda: bootstrap_ci(continuous)) < 40
    # 200,000 ranking scores (few distinct values): before, 6 GiB
    ranks = (1.0 / np.random.default_rng(1).integers(1, 12, 200_000)).tolist()
    assert _peak_mib(lambda: bootstrap_ci(ranks)) < 40


def test_large_runs_are_deterministic_and_as_wide_as_the_index_bootstrap(monkeypatch) -> None:
    values = np.random.default_rng(5).choice([0.0, 0.25, 0.5, 1.0], 40_000).tolist()
    ci = bootstrap_ci(values)
    assert ci is not None and ci == bootstrap_ci(values)  # fixed seed
    monkeypatch.setattr(tally, "EXACT_LIMIT", 10**9)  # the index bootstrap, for reference
    ref = bootstrap_ci(values)
    assert ref is not None
    width, ref_width = ci[1] - ci[0], ref[1] - ref[0]
    assert abs(width - ref_width) < 0.1 * ref_width
    assert abs((ci[0] + ci[1]) / 2 - (ref[0] + ref[1]) / 2) < 0.1 * ref_width
    assert ci[0] < float(np.mean(values)) < ci[1]


def test_constant_and_tiny_inputs() -> None:
    assert bootstrap_ci([1.0]) is None
    assert bootstrap_ci([0.5] * 30_000) == (0.5, 0.5)


def old_detect_language(*texts: str | None) -> str:
    """text.detect_language before: a list of every CJK character and every Latin word."""
    import re

    joined = " ".join(t for t in texts if t)
    cjk = len(re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]", joined))
    latin = sum(len(w) for w in re.findall(r"[A-Za-z]+", joined)) / 4
    return "zh" if cjk and cjk >= latin * 0.5 else "en"


def test_detect_language_same_answers_in_bounded_memory() -> None:
    from localeval.text import detect_language

    rng = np.random.default_rng(9)
    alphabet = list("abcXYZ 12.,;!?") + list("的一是不了人我在有他。") + ["é", "ß", "🙂"]
    for _ in range(300):
        texts = ["".join(rng.choice(alphabet, rng.integers(0, 60))) for _ in range(3)]
        texts.append(None)  # type: ignore[arg-type]
        assert detect_language(*texts) == old_detect_language(*texts)
    answer = "alpha beta gamma. " * 1_000_000  # 18 MB: the old code took 214 MB (3M words)
    assert _peak_mib(lambda: detect_language("q?", answer, None)) < 2.5 * len(answer) / 2**20


def old_metric_summary(records, owners):  # type: ignore[no-untyped-def]
    """stats.metric_summary before: five passes over the records per score key."""
    from collections.abc import Mapping

    def retries(r, owner):  # type: ignore[no-untyped-def]
        found = r.details.get(owner)
        n = found.get("judge_retries") if isinstance(found, Mapping) else None
        return n if isinstance(n, int) else 0

    out = {}
    for key, owner in owners.items():
        vals = [float(v) for r in records if (v := r.scores.get(key)) is not None]
        ci = bootstrap_ci(vals)
        out[key] = {
            "metric": owner,
            "mean": float(np.mean(vals)) if vals else None,
            "count": len(vals),
            "unscored": sum(1 for r in records if key in r.scores and r.scores[key] is None),
            "errors": sum(1 for r in records if owner in r.errors),
            "skipped": sum(1 for r in records if owner in r.skipped),
            "ci95": list(ci) if ci else None,
            "judge_retries": sum(retries(r, owner) for r in records),
        }
    return out


def test_metric_summary_in_one_pass_says_the_same() -> None:
    from localeval.results.records import SampleRecord
    from localeval.results.tally import metric_summary, score_keys

    rng = np.random.default_rng(11)
    records = []
    for i in range(700):
        r = SampleRecord(id=f"s{i}", line=i + 1)
        for owner in ("faithfulness", "mrr", "ndcg", "rare"):
            roll = rng.random()
            if owner == "rare" and roll < 0.97:
                continue
            if roll < 0.1:
                r.errors[owner] = "boom"
            elif roll < 0.2:
                r.skipped[owner] = "needs contexts"
            else:
                value = None if roll < 0.3 else float(rng.integers(0, 5)) / 4
                r.scores[owner] = value
                if owner == "ndcg":
                    r.scores["ndcg@5"] = None if value is None else float(rng.random())
                retried = rng.integers(0, 3) if owner == "faithfulness" else "x"
                r.details[owner] = {"judge_retries": int(retried)} if retried != "x" else {}
        records.append(r)
    owners = score_keys(records, {"faithfulness": "faithfulness", "never": "never"})
    assert list(owners) == ["faithfulness", "never", "mrr", "ndcg", "ndcg@5", "rare"]
    assert metric_summary(records, owners) == old_metric_summary(records, owners)
