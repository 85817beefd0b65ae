"""Reading and validating input rows: file formats and column aliases (`readers`), rows into
validated Samples with their problems (`dataset`), and a compact list of them (`pickled`)."""

from localeval.data.dataset import Dataset, Sample, load, to_sample
from localeval.data.pickled import PickledList
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
    "load",
    "to_sample",
]
