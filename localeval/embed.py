"""Embedders: sentence-transformers from a local folder, and a deterministic hash embedder for
tests. Texts are deduplicated across the whole run and encoded in batches, normalised."""

from __future__ import annotations

import asyncio
import hashlib
import re
from pathlib import Path
from typing import Protocol

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
                    h = int.from_bytes(hashlib.blake2b(t[i:i + n].encode(), digest_size=4).digest(), "little")
                    out[row, h % self.dim] += 1.0
            norm = np.linalg.norm(out[row])
            if norm > 0:
                out[row] /= norm
        return out


class SentenceTransformerEmbedder:
    def __init__(self, path: Path, fingerprint: str, *, batch_size: int = 32, device: str | None = None) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ModelError("sentence-transformers is not installed: run scripts/setup.sh") from None
        import logging

        logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
        try:
            self.model = SentenceTransformer(str(path), device=device, local_files_only=True)
        except Exception as exc:  # torch/transformers raise many kinds
            raise ModelError(f"could not load the embedder at {path}: {exc}") from None
        self.name = Path(path).name
        self.fingerprint = fingerprint
        self.batch_size = batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        vecs = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vecs, dtype=np.float32)


class EmbeddingStore:
    """Run-wide memo: each distinct text is encoded once; calls are serialised off the event loop."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = asyncio.Lock()
        self.encoded = 0

    async def vectors(self, texts: list[str]) -> np.ndarray:
        async with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
            if missing:
                vecs = await asyncio.to_thread(self.embedder.encode, missing)
                self._vectors.update(zip(missing, vecs, strict=True))
                self.encoded += len(missing)
        return np.stack([self._vectors[t] for t in texts])

    async def cosine(self, a: str, b: str) -> float:
        va, vb = await self.vectors([a, b])
        return float(np.clip(np.dot(va, vb), -1.0, 1.0))
