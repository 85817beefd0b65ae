"""Drive a generation: read the documents, cut the corpus, plan the candidates, run each
candidate's judge work (resumable: each finished one is kept in the work file at once), then
filter and write the test set, the corpus, the dropped candidates and the report."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, field_validator

from localeval.config import Settings
from localeval.errors import LocalevalError, OutputError, UsageError
from localeval.generate import KINDS
from localeval.generate.assemble import (
    Assembled,
    Candidate,
    assemble,
    from_bridge,
    from_pair,
    from_single,
)
from localeval.generate.chunking import Chunk, chunk_document
from localeval.generate.coverage import Doc, doc_chunks
from localeval.generate.documents import read_documents
from localeval.generate.drafting import STEPS, focus_sentences
from localeval.generate.filters import ANSWERED, content_share
from localeval.generate.picking import Bridge, Pair, pick_bridges, pick_pairs, seeded_order
from localeval.generate.records import Asked, BridgeAsked, PairAsked, Result, parse
from localeval.generate.store import Row, WorkFile, paths_for, write_json, write_lines
from localeval.generate.subjects import Naming, namings
from localeval.generate.tasks import (
    Env,
    bridge_task,
    contradicted,
    pair_task,
    single_name,
    single_task,
)

Log = Callable[[str], None]
_NOT_IN_FINGERPRINT = {"cache", "no_cache", "parallel", "n_threads", "metrics", "n_gpu_layers"}
BATCH = 8
"""Candidates drafted between two looks at what is kept: a generation stops drafting a list
(single-chunk drafts, pairs) once every kind it feeds has --n kept. Fixed, so what is drafted
depends on the inputs only, never on --parallel or timing."""


class GenerateOptions(BaseModel):
    """What to generate (the judge, cache and language come from the run's Settings)."""

    n: int = Field(20, ge=1, description="questions kept per kind, at most")
    kinds: tuple[str, ...] = Field(KINDS, description="single, pair, bridge, unanswerable, "
                                   "colloquial")
    seed: int = Field(0, description="fixes which chunks and pairs are asked about")
    chunk_tokens: int = Field(256, ge=32, description="largest chunk, in judge tokens")
    min_tokens: int = Field(24, ge=1, description="smallest chunk asked about")
    duplicate_cosine: float = Field(0.92, gt=0, le=1, description="near-duplicate from here")
    max_drafts: int | None = Field(None, ge=1, description="stop drafting past this many "
                                   "drafts (in batches of BATCH): a generation sized to a budget")
    per_chunk: int = Field(2, ge=1, description="single-chunk drafts per chunk at most (one per "
                           "sentence asked about); a chunk is in twice as many pairs at most")

    @field_validator("kinds", mode="before")
    @classmethod
    def _kinds(cls, v: Any) -> Any:
        items = [k.strip() for k in v.split(",")] if isinstance(v, str) else list(v)
        unknown = [k for k in items if k not in KINDS]
        if unknown or not items:
            raise ValueError(f"unknown kind(s) {unknown}; choose from {', '.join(KINDS)}")
        return tuple(k for k in KINDS if k in items)


class GenerationInterrupted(LocalevalError):
    exit_code = 130


@dataclass
class Generated:
    """A generation's rows (what `run` reads), its corpus, its report and the input problems."""

    rows: list[Row]
    corpus: list[Chunk]
    report: dict[str, Any]
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Needs:  # what build_backends and the preflight read of the "metrics" a job needs
    uses_judge: bool = True
    uses_embedder: bool = True

    def needs_embedder(self, settings: Settings) -> bool:
        return True  # pairs, nearest chunks and near-duplicates


def build_corpus(docs: Iterable[str | Path], settings: Settings, options: GenerateOptions,
                 log: Log | None = None) -> tuple[list[Chunk], list[str]]:
    """The corpus and the problems (each also logged): unreadable files, documents too short
    for any question (kept in the corpus), nothing to generate from (an error)."""
    read = read_documents(docs)
    problems = list(read.problems)
    corpus: list[Chunk] = []
    seen: set[str] = set()
    for doc in read.documents:
        chunks = chunk_document(doc, max_tokens=options.chunk_tokens, language=settings.language)
        for c in chunks:
            if c.id in seen:
                problems.append(f"{doc.source}: chunk id {c.id} already used; skipped")
                continue
            seen.add(c.id)
            corpus.append(c)
        if doc.chunk_id is None and chunks and all(c.tokens < options.min_tokens
                                                   for c in chunks):
            problems.append(f"{doc.source}: too short for any question (under "
                            f"{options.min_tokens} tokens); kept in the corpus only")
    for p in problems:
        if log:
            log(p)
    if not any(c.tokens >= options.min_tokens for c in corpus):
        raise UsageError("no document to generate from: " + ("; ".join(problems[:3])
                                                             or "no input given"))
    return corpus, problems


@dataclass(frozen=True)
class SingleJob:
    """A single-chunk draft to make: its task ("single:ID[@k]"), its chunk and the sentence it
    asks about."""

    task: str
    chunk: Chunk
    focus: str


@dataclass(frozen=True)
class PairJob:
    """A pair to draft: its task ("pair:A+B") and its two chunks' ids and link."""

    task: str
    pair: Pair


@dataclass(frozen=True)
class BridgeJob:
    """A bridge to draft: its task ("bridge:A+B"), its two chunks' ids and the entity."""

    task: str
    bridge: Bridge


Job = SingleJob | PairJob | BridgeJob


def spread(order: Sequence[Chunk]) -> list[Chunk]:
    """The chunks in seeded order, the documents interleaved: every document's first chunk,
    then the others by their place within their document (the k-th of m at (k + ½) / m), so
    that drafting reaches every document early and each in proportion to its chunks."""
    docs: dict[Doc, list[Chunk]] = {}
    for c in order:
        docs.setdefault((c.source, c.language), []).append(c)
    rank = {doc: i for i, doc in enumerate(docs)}
    keyed = [(0 if k == 0 else 1, (k + 0.5) / len(mine), rank[doc], c)
             for doc, mine in docs.items() for k, c in enumerate(mine)]
    return [t[3] for t in sorted(keyed, key=lambda t: t[:3])]


def plan(corpus: Sequence[Chunk], vectors: dict[str, np.ndarray],
         options: GenerateOptions, naming: dict[str, Naming] | None = None
         ) -> tuple[list[Job], list[Job], list[Job]]:
    """Everything that may be drafted, in seeded order: each chunk's first sentence (then, in
    later rounds, its next ones, up to per_chunk; the documents interleaved, `spread`), the
    pairs (2 × per_chunk per chunk at most: a pair is drafted once, the languages taking
    turns) and the bridges (picking.pick_bridges). Drafting follows this order and stops when
    enough is kept."""
    eligible = [c for c in corpus if c.tokens >= options.min_tokens]
    singles: list[Job] = []
    if set(options.kinds) - {"pair", "bridge"}:
        order = spread(seeded_order(eligible, options.seed))
        focus = {c.id: focus_sentences(c.text) or [c.text] for c in order}
        for k in range(options.per_chunk):
            singles += [SingleJob(single_name(c.id, k), c, focus[c.id][k])
                        for c in order if k < len(focus[c.id])]
    by_lang: list[list[Pair]] = []
    if "pair" in options.kinds:
        for lang, vecs in vectors.items():
            mine = [i for i, c in enumerate(corpus) if c.language == lang]
            keep = [i for i in mine if corpus[i].tokens >= options.min_tokens]
            rows = [mine.index(i) for i in keep]
            by_lang.append(pick_pairs([corpus[i] for i in keep], vecs[rows], options.seed,
                                      len(keep) * options.per_chunk,
                                      per_chunk=2 * options.per_chunk))
    turns = [p for group in zip_longest(*by_lang) for p in group if p is not None]
    bridges: list[Job] = []
    if "bridge" in options.kinds:
        bridges = [BridgeJob(f"bridge:{b.first}+{b.second}", b) for b in pick_bridges(
            eligible, naming or {}, options.seed, len(eligible) * options.per_chunk)]
    return singles, [PairJob(f"pair:{p.first}+{p.second}", p) for p in turns], bridges


def fingerprint(corpus: Sequence[Chunk], settings: Settings, options: GenerateOptions,
                judge_sha: str) -> str:
    from localeval import prompts

    data = {"corpus": [[c.id, c.text, c.language] for c in corpus],
            "options": options.model_dump(mode="json"), "judge": judge_sha,
            "settings": {k: v for k, v in settings.model_dump(mode="json").items()
                         if k not in _NOT_IN_FINGERPRINT},
            "prompts": prompts.prompt_hashes(set(STEPS) | {"faithfulness_verdicts"})}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def generate(docs: Iterable[str | Path], out: Path | None, settings: Settings,
             options: GenerateOptions, *, judge: Any = None, embedder: Any = None,
             progress: bool = False, log: Log | None = None,
             overwrite: bool = False) -> Generated:
    """Generate a test set from `docs`; write it to `out` (JSONL) with the corpus, dropped
    candidates and report beside it, when given; an existing test set at `out` is replaced
    only with `overwrite`. `judge`/`embedder`: ready objects that override the settings
    (tests)."""
    started = time.perf_counter()
    lock = claim(out, overwrite) if out is not None else None
    try:
        return _generate(docs, out, settings, options, judge, embedder, progress, log, started)
    finally:
        if lock is not None:
            os.close(lock)


def claim(out: Path, overwrite: bool = False) -> int | None:
    """Check `out` can be a test set and hold its lock (`<stem>.lock` beside it) for this
    process: a second generation into the same --out, or one that would replace a test set
    without `overwrite` (its review would then be of other rows), is refused at once, not
    after judging."""
    from localeval.results.folder import hold_lock

    if out.is_dir():
        raise UsageError(f"generate --out {out} is a folder; name the test set's file, e.g. "
                         f"{out / 'testset.jsonl'}")
    if (out.exists() or out.is_symlink()) and not overwrite:
        reviewed = paths_for(out)["decisions"]
        raise UsageError(f"generate --out {out}: a test set is already there"
                         + (f" (reviewed: {reviewed.name})" if reviewed.exists() else "")
                         + "; give --overwrite to replace it, or another --out")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {out.parent}: {exc.strerror or exc}") from None
    return hold_lock(paths_for(out)["lock"], f"{out} is being written by another generation "
                     "(pid {pid}); wait for it to finish, or choose another --out")


def _generate(docs: Iterable[str | Path], out: Path | None, settings: Settings,
              options: GenerateOptions, judge: Any, embedder: Any, progress: bool,
              log: Log | None, started: float) -> Generated:
    from localeval.models.backends import build_backends
    from localeval.models.preflight import check_before_loading

    corpus, problems = build_corpus(docs, settings, options, log)
    needs: list[Any] = [_Needs()]
    check_before_loading(settings, needs, judge=judge, embedder=embedder)
    backends = build_backends(settings, needs, judge=judge, embedder=embedder)
    if backends.judge is not None and log is not None:
        backends.judge.warn = log
    try:
        result = asyncio.run(plan_and_run(corpus, out, settings, options, backends, progress))
    except KeyboardInterrupt:
        where = paths_for(out)["work"] if out else None
        raise GenerationInterrupted(
            "interrupted" + (f"; every finished candidate is kept in {where}: run the same "
                             "command again to go on" if where else "")) from None
    finally:
        backends.close()
    elapsed = time.perf_counter() - started
    result.problems = problems
    result.report.update(_timing(result.report, elapsed, backends), problems=problems)
    if out is not None:
        write_json(paths_for(out)["report"], result.report)
    return result


def finished(lines: dict[str, dict[str, Any]]) -> dict[str, Result]:
    """The work file's finished tasks as their records; a line that does not read as its
    record (written by hand, or by another version) is left out: its task is drafted again."""
    out: dict[str, Result] = {}
    for task, line in lines.items():
        try:
            out[task] = parse(line)
        except ValueError:  # pydantic's ValidationError
            continue
    return out


async def plan_and_run(corpus: list[Chunk], out: Path | None, settings: Settings,
                       options: GenerateOptions, backends: Any, progress: bool,
                       every_check: bool = False) -> Generated:
    """Embed the corpus, plan, run the candidates not in the work file, assemble, write
    (`every_check`: tasks.Env's, for the estimate)."""
    from localeval.executor import sample_concurrency
    from localeval.models.embed import store_for
    from localeval.progress import Progress

    judge, embeddings = backends.judge, backends.embeddings
    by_lang: dict[str, tuple[list[Chunk], np.ndarray]] = {}
    for lang in sorted({c.language for c in corpus}):
        chunks = [c for c in corpus if c.language == lang]
        store = await store_for(embeddings, lang)
        by_lang[lang] = (chunks, await store.vectors([c.text for c in chunks]))
    texts = _documents(corpus)
    naming = namings(texts)
    singles, pairs, bridges = plan(corpus, {k: v[1] for k, v in by_lang.items()}, options,
                                   naming)
    by_id = {c.id: c for c in corpus}
    env = Env(settings, judge, embeddings, by_lang, naming, every_check=every_check)
    coverage = doc_chunks(corpus, options.min_tokens)
    paths = paths_for(out) if out is not None else None
    work = WorkFile(paths["work"], fingerprint(
        corpus, settings, options, str(backends.info.get("judge", {}).get("sha256")))) \
        if paths is not None else None
    done = finished(work.done) if work else {}
    for task, result in done.items():  # a resumed run's pairs reuse the finished drafts
        if isinstance(result, Asked):
            env.known(task, result)
    lists = {"single": singles, "pair": pairs, "bridge": bridges}
    feeds = {"single": {"single", "colloquial", "unanswerable"}, "pair": {"pair"},
             "bridge": {"bridge"}}
    cut = dict.fromkeys(lists, 0)
    bar = Progress(sum(map(len, lists.values())), done=0, enabled=progress,
                   stats=lambda: judge.stats)

    def doc_of(job: Job) -> Doc:
        chunk = job.chunk if isinstance(job, SingleJob) else by_id[
            job.pair.first if isinstance(job, PairJob) else job.bridge.first]
        return chunk.source, chunk.language

    def candidates(jobs: list[Job]) -> list[Candidate]:
        found: list[Candidate] = []
        for job in jobs:
            result = done[job.task]
            mine: list[Candidate]
            if isinstance(job, PairJob):
                first, second = by_id[job.pair.first], by_id[job.pair.second]
                assert isinstance(result, PairAsked)
                mine = [from_pair(result, first, second, job.pair.link,
                                  (env.terms_of(first), env.terms_of(second)),
                                  env.titled(first, second))]
            elif isinstance(job, BridgeJob):
                first, second = by_id[job.bridge.first], by_id[job.bridge.second]
                assert isinstance(result, BridgeAsked)
                mine = [from_bridge(result, first, second, env.terms_of(first, second),
                                    env.titled(first, second))]
            else:
                mine = from_single(result, job.chunk, env.terms_of(job.chunk),
                                   env.titled(job.chunk))
            for c in mine:
                c.doc = doc_of(job)
            found += mine
        return [c for c in found if c.kind in options.kinds]

    async def contradicts(row: Row, kept: list[Row]) -> str | None:
        return await contradicted(env, row, kept)

    async def select(jobs: list[Job]) -> Assembled:
        return await assemble(candidates(jobs), embeddings, options.n, options.duplicate_cosine,
                              coverage, contradicts)

    async def run_one(job: Job) -> None:
        result: Result
        if isinstance(job, PairJob):
            pair = job.pair
            result = await pair_task(env, job.task, by_id[pair.first], by_id[pair.second],
                                     pair.link, options.per_chunk)
        elif isinstance(job, BridgeJob):
            bridge = job.bridge
            result = await bridge_task(env, job.task, by_id[bridge.first],
                                       by_id[bridge.second], bridge.entity)
        else:
            result = await single_task(env, job.task, job.chunk, job.focus)
        done[job.task] = result
        if work is not None:
            work.add(result.line())
        bar.advance()

    try:
        limit = asyncio.Semaphore(max(1, sample_concurrency(settings, backends)))

        async def bounded(job: Job) -> None:
            async with limit:
                await run_one(job)

        while True:
            batch: list[Job] = []
            for name, jobs in lists.items():
                wanted_kinds = feeds[name] & set(options.kinds)
                over = options.max_drafts is not None and sum(
                    min(c, len(lists[k])) for k, c in cut.items()) >= options.max_drafts
                if cut[name] >= len(jobs) or not wanted_kinds or over:
                    continue
                made = await select(jobs[:cut[name]])
                ahead = {doc_of(j) for j in jobs[cut[name]:]}  # documents left to draft
                if cut[name] and all(made.counts.get(k, {}).get("kept", 0) >= options.n
                                     and not ahead & set(made.short.get(k, ()))
                                     for k in wanted_kinds):
                    continue
                batch += jobs[cut[name]:cut[name] + BATCH]
                cut[name] += BATCH
            if not batch:
                break
            bar.advance(sum(1 for job in batch if job.task in done))
            await asyncio.gather(*(bounded(job) for job in batch if job.task not in done))
    finally:
        bar.close()
        if work is not None:
            work.close()
    drafted = [j for name, jobs in lists.items() for j in jobs[:cut[name]]]
    made = await select(drafted)
    if every_check:  # the estimate: every "unanswerable" draft checked against the rows
        found = [c.row for c in candidates(drafted) if c.row is not None]
        for row in found:
            if row.kind == "unanswerable":
                await contradicted(env, row, found)
    report = _report(made.counts, made.rows, corpus, options, len(drafted), judge)
    report["coverage"] = [{"document": src, "language": lang,
                           "chunks": coverage.get((src, lang), 0), "kinds": kinds}
                          for (src, lang), kinds in sorted(made.coverage.items())]
    if paths is not None and out is not None:
        # the old test set goes first: a kill below never leaves it beside a new corpus
        out.unlink(missing_ok=True)
        write_lines(paths["corpus"], corpus)
        write_lines(paths["dropped"], (d.line() for d in made.dropped))
        write_lines(out, made.rows)
        paths["work"].unlink(missing_ok=True)  # everything it held is in the files above
    return Generated(made.rows, corpus, report)


def _documents(corpus: Sequence[Chunk]) -> dict[str, str]:
    """Each document's text, its chunks joined in corpus order (a user's JSONL chunks: each
    its own document)."""
    texts: dict[str, list[str]] = {}
    for c in corpus:
        texts.setdefault(c.source, []).append(c.text)
    return {src: "\n\n".join(parts) for src, parts in texts.items()}


def _report(counts: dict[str, dict[str, int]], rows: list[Row], corpus: list[Chunk],
            options: GenerateOptions, n_jobs: int, judge: Any) -> dict[str, Any]:
    """Counts per kind and filter, the content-word check, the corpus and the judge's work."""
    shares: dict[str, float] = {}
    for kind in [k for k in KINDS if k in ANSWERED]:  # the kinds with a reference answer
        answers = [(r.ground_truth, r.reference_contexts) for r in rows if r.kind == kind]
        if answers:
            shares[kind] = round(sum(content_share(a, t) >= 1.0 for a, t in answers)
                                 / len(answers), 3)
    stats = judge.stats
    return {"kept": len(rows), "by_kind": counts,
            "answers_with_every_content_word_in_their_chunks": shares,
            "corpus": {"chunks": len(corpus), "documents": len({c.source for c in corpus}),
                       "languages": sorted({c.language for c in corpus})},
            "candidates_drafted": n_jobs, "options": options.model_dump(mode="json"),
            "judge": {"calls": stats.calls, "cached": stats.cached, "failures": stats.failures,
                      "prompt_tokens_processed": stats.prompt_tokens_processed,
                      "generated_tokens": stats.completion_tokens, "by_step": stats.by_step}}


def _timing(report: dict[str, Any], elapsed: float, backends: Any) -> dict[str, Any]:
    kept = report["kept"]
    return {"seconds": round(elapsed, 1),
            "seconds_per_kept_question": round(elapsed / kept, 2) if kept else None,
            "models": backends.describe()}
