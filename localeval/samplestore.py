"""A dataset's samples kept compact for a run over a large file: each validated Sample pickled
(a query-log row: ~500 bytes instead of ~2.5 KB as objects) and rebuilt when its turn comes, so
a run never holds every row as a pydantic object at once."""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:  # dataset.py imports this module; pickle needs no class here
    from localeval.dataset import Sample


class SampleStore(Sequence["Sample"]):
    """Samples in input order; each access rebuilds a Sample equal to the one appended."""

    def __init__(self, blobs: list[bytes] | None = None) -> None:
        self._blobs = [] if blobs is None else blobs

    def append(self, sample: Sample) -> None:
        self._blobs.append(pickle.dumps(sample, protocol=pickle.HIGHEST_PROTOCOL))

    def __len__(self) -> int:
        return len(self._blobs)

    @overload
    def __getitem__(self, index: int) -> Sample: ...

    @overload
    def __getitem__(self, index: slice) -> list[Sample]: ...

    def __getitem__(self, index: int | slice) -> Sample | list[Sample]:
        if isinstance(index, slice):
            return [pickle.loads(b) for b in self._blobs[index]]
        return pickle.loads(self._blobs[index])

    def __iter__(self) -> Iterator[Sample]:
        for blob in self._blobs:
            yield pickle.loads(blob)

    def select(self, keep: Iterable[bool]) -> SampleStore:
        """The samples whose flag in `keep` (one per sample, in order) is true; the pickles are
        shared, not copied."""
        return SampleStore([b for b, k in zip(self._blobs, keep, strict=True) if k])

    def clear(self) -> None:
        self._blobs.clear()
