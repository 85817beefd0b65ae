"""Reading and validating input rows: file formats and column aliases (`readers`), rows into
validated Samples with their problems, kept compact for a large file (`dataset`)."""

from localeval.data.dataset import Dataset, PickledList, Sample, input_hash, load, to_sample
from localeval.data.readers import ALIASES, LIST_FIELDS, READERS, RowProblem, clip

__all__ = [
    "ALIASES",
    "LIST_FIELDS",
    "READERS",
    "Dataset",
    "PickledList",
    "RowProblem",
    "Sample",
    "clip",
    "input_hash",
    "load",
    "to_sample",
]
