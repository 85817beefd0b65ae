"""Embedders: sentence-transformers from a local folder, and a deterministic hash embedder for
tests. Texts are deduplicated across the whole run and encoded with fixed shapes (a text's vector
never depends on the texts beside it), normalised."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import re
import threading
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from localeval.errors import ModelError


class Embedder(Protocol):
    name: str
    fingerprint: str

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length rows, one per text."""
        ...


class HashEmbedder:
    """Bag of hashed character n-grams (1..3) in 512 dims: same text → same vector, related
    texts → positive cosine. For tests and `--judge fake`; not a semantic model."""

    name = "hash-ngram-512"
    fingerprint = "hash-ngram-512-v1"
    dim = 512

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            t = re.sub(r"\s+", " ", text.lower())
            for n in (1, 2, 3):
                for i in range(max(0, len(t) - n + 1)):
                    digest = hashlib.blake2b(t[i:i + n].encode(), digest_size=4).digest()
                    h = int.from_bytes(digest, "little")
                    out[row, h % self.dim] += 1.0
            norm = np.linalg.norm(out[row])
            if norm > 0:
                out[row] /= norm
        return out


MIN_BUCKET = 8  # tokens: a text is padded to the next power of two from here (its bucket)
BATCH_TOKENS = 2048  # rows of a bucket's batch: this many tokens / bucket, 1 to MAX_ROWS
MAX_ROWS = 8


def bucket(tokens: int, cap: int) -> int:
    """The padded length of a text of `tokens` tokens: the next power of two (from MIN_BUCKET),
    at most the model's `cap`."""
    size = MIN_BUCKET
    while size < tokens:
        size *= 2
    return min(size, cap)


class SentenceTransformerEmbedder:
    """A sentence-transformers model from a local folder, run with fixed shapes: each text is
    padded to its bucket (bucket()) and goes through the model in a batch of the bucket's fixed
    row count, filled with empty texts, so that its vector depends on nothing but itself.
    Batched as usual, padding to a neighbour's length moved a text's vector in the 7th decimal
    (19 of 60 dev answers; scripts/bench/embed_invariance.py), so the same sample scored differently
    in another dataset or on Ray. `batch_size` is kept for the settings; the shapes are fixed."""

    def __init__(self, path: Path, fingerprint: str, *, batch_size: int = 32,
                 device: str | None = None, in_thread: bool = False) -> None:
        """Loads the model now, or with `in_thread` in a thread from now on (`load`)."""
        self.path, self.device = Path(path), device
        self.name = self.path.name
        self.fingerprint = fingerprint
        self.batch_size = batch_size
        self.load: concurrent.futures.Future[Any] = concurrent.futures.Future()
        """The model once loaded, or the ModelError of a load that failed (the first encode
        raises it). Running from the start: a waiter's cancel does not cancel the load."""
        self.load.set_running_or_notify_cancel()
        if in_thread:
            threading.Thread(target=self._load_into, name="localeval-embedder-load",
                             daemon=True).start()
        else:
            self.load.set_result(self._load())

    def _load_into(self) -> None:
        try:
            self.load.set_result(self._load())
        except BaseException as exc:
            self.load.set_exception(exc)

    @property
    def model(self) -> Any:
        return self.load.result()

    def _load(self) -> Any:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ModelError("sentence-transformers is not installed: "
                             "run scripts/setup.sh") from None
        import logging

        from transformers.utils import logging as hf_logging

        logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
        shown = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # its "Loading weights" bar is not ours to show
        try:
            return SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
        except Exception as exc:  # torch/transformers raise many kinds
            raise ModelError(f"could not load the embedder at {self.path}: {exc}") from None
        finally:
            if shown:
                hf_logging.enable_progress_bar()

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            dim = self.model.get_sentence_embedding_dimension() or 0
            return np.zeros((0, dim), dtype=np.float32)
        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None:  # no plain tokenizer to pad with: one text per forward pass
            vecs = self.model.encode(texts, batch_size=1, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
            return np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)
        import torch

        cap = int(self.model.max_seq_length or tokenizer.model_max_length)
        lengths = [len(ids) for ids in
                   tokenizer(list(texts), truncation=True, max_length=cap)["input_ids"]]
        groups: dict[int, list[int]] = {}
        for i, n in enumerate(lengths):
            groups.setdefault(bucket(n, cap), []).append(i)
        out: dict[int, np.ndarray] = {}
        for size, members in sorted(groups.items()):
            rows = max(1, min(MAX_ROWS, BATCH_TOKENS // size))
            for start in range(0, len(members), rows):
                part = members[start:start + rows]
                batch = [texts[i] for i in part] + [""] * (rows - len(part))
                features = tokenizer(batch, padding="max_length", max_length=size,
                                     truncation=True, return_tensors="pt")
                features = {k: v.to(self.model.device) for k, v in features.items()}
                with torch.inference_mode():
                    vecs = self.model.forward(features)["sentence_embedding"]
                vecs = torch.nn.functional.normalize(vecs.float(), dim=1).cpu().numpy()
                out.update(zip(part, vecs, strict=False))
        return np.stack([out[i] for i in range(len(texts))]).astype(np.float32)


class EmbeddingStore:
    """Run-wide memo: each distinct text is encoded once, in batches, off the event loop.

    `prefetch` encodes the texts known before the run (answers, ground truths, questions) in
    one batched pass — in a background thread while the judge works when there are cores to
    spare (`background`), else at once. Texts met later (e.g. generated questions) are encoded
    when asked for, also deduplicated.
    """

    def __init__(self, embedder: Embedder, *, batch_size: int = 64) -> None:
        self.embedder = embedder
        self.batch_size = batch_size
        self._vectors: dict[str, np.ndarray] = {}
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary())  # one per event loop: a store outlives a run's loop
        self._encoder = threading.Lock()  # one encode at a time, prefetch or on demand
        self._prefetch: threading.Thread | None = None
        self.encoded = 0

    def prefetch(self, texts: Iterable[str | None], *, background: bool) -> None:
        todo = [t for t in dict.fromkeys(t for t in texts if t) if t not in self._vectors]
        if not todo:
            return

        def work() -> None:
            for i in range(0, len(todo), self.batch_size):
                try:
                    self._encode(todo[i:i + self.batch_size])
                except Exception:
                    return

        if background:
            self._prefetch = threading.Thread(target=work, name="localeval-embed", daemon=True)
            self._prefetch.start()
        else:
            work()

    def _encode(self, texts: list[str]) -> None:
        with self._encoder:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
            if missing:
                vecs = self.embedder.encode(missing)
                self._vectors.update(zip(missing, vecs, strict=True))
                self.encoded += len(missing)

    def _loop_lock(self) -> asyncio.Lock:
        """The running event loop's lock: an asyncio.Lock serves one loop, and a store serves
        several (the companion stores, two `localeval.evaluate` calls in one process)."""
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    async def vectors(self, texts: list[str]) -> np.ndarray:
        if any(t not in self._vectors for t in texts):
            async with self._loop_lock():
                if any(t not in self._vectors for t in texts):
                    await asyncio.to_thread(self._encode, list(texts))
        return np.stack([self._vectors[t] for t in texts])

    async def cosine(self, a: str, b: str) -> float:
        return (await self.cosines(a, [b]))[0]

    async def cosines(self, a: str, others: list[str]) -> list[float]:
        """The cosine of `a` with each of `others`, the texts not yet met encoded in one batch
        (a text's vector does not depend on the texts beside it)."""
        vecs = await self.vectors([a, *others])
        return [float(np.clip(np.dot(vecs[0], v), -1.0, 1.0)) for v in vecs[1:]]

    async def baseline(self, language: str) -> float:
        """Mean cosine this embedder gives two unrelated texts of `language`: over every pair
        of the bundled sentences (models/baseline_text.py; English for another language).
        Computed once per embedder fingerprint and language in a process."""
        key = (self.embedder.fingerprint, language)
        if key not in _BASELINES:
            from localeval.models.baseline_text import SENTENCES

            vecs = (await self.vectors(list(SENTENCES.get(language, SENTENCES["en"])))).astype(
                np.float64)
            sims = vecs @ vecs.T
            upper = np.triu_indices(len(vecs), 1)
            _BASELINES[key] = float(np.clip(sims[upper].mean(), -1.0, 0.99))
        return _BASELINES[key]

    def close(self) -> None:
        if self._prefetch is not None:
            self._prefetch.join()
            self._prefetch = None


_BASELINES: dict[tuple[str, str], float] = {}
"""(embedder fingerprint, language) → baseline cosine (EmbeddingStore.baseline)."""
LANGUAGE_OF = {"m3e-small": "zh", "all-minilm-l6-v2": "en"}
"""Embedders of one language (manifest names); any other is taken as multilingual."""
_COMPANIONS: dict[str, EmbeddingStore | None] = {}


def language_store(language: str) -> EmbeddingStore | None:
    """A store over the manifest's embedder for `language`, if one is present and verified
    (loaded once per process)."""
    if language not in _COMPANIONS:
        from localeval import models

        store = None
        manifest = models.load_manifest()
        for name, lang in LANGUAGE_OF.items():
            if lang != language or name not in manifest.models:
                continue
            spec = manifest.get(name)
            state = models.check(spec, full=False)
            if state.ok:
                store = EmbeddingStore(SentenceTransformerEmbedder(
                    state.path, models.expected_sha256(spec)))
                break
        _COMPANIONS[language] = store
    return _COMPANIONS[language]


async def store_for(store: EmbeddingStore, language: str) -> EmbeddingStore:
    """The run's store, unless its embedder is of another language than the sample and the
    embedder of the sample's language is present: a Chinese-only model gives ~0.9 to any two
    English texts, so English rows are embedded with the English model (and vice versa)."""
    own = LANGUAGE_OF.get(store.embedder.name)
    if own is None or own == language:
        return store
    other = await asyncio.to_thread(language_store, language)
    return other if other is not None else store
