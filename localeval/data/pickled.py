"""A list kept compact: each item pickled, rebuilt when it is asked for. A run over a large
file keeps its validated Samples so (a query-log row: ~500 bytes instead of ~2.5 KB as
objects), never holding every row as a pydantic object at once."""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Sequence
from typing import Generic, TypeVar, overload

T = TypeVar("T")


class PickledList(Sequence[T], Generic[T]):
    """Items in order; each access rebuilds an item equal to the one appended."""

    def __init__(self, blobs: list[bytes] | None = None) -> None:
        self._blobs = [] if blobs is None else blobs

    def append(self, item: T) -> None:
        self._blobs.append(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))

    def __len__(self) -> int:
        return len(self._blobs)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [pickle.loads(b) for b in self._blobs[index]]
        return pickle.loads(self._blobs[index])

    def __iter__(self) -> Iterator[T]:
        for blob in self._blobs:
            yield pickle.loads(blob)

    def select(self, keep: Iterable[bool]) -> PickledList[T]:
        """The items whose flag in `keep` (one per item, in order) is true; the pickles are
        shared, not copied."""
        return PickledList([b for b, k in zip(self._blobs, keep, strict=True) if k])

    def clear(self) -> None:
        self._blobs.clear()
