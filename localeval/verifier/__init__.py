"""A learned verifier: support verdicts scored from the judge's own activations at the verdict.

`head` (the file and its scoring), `apply` (the verifier in a run: which requests, which head),
`extract` (the activations of labelled rows, read once), `fit` (a head learned from labels, with
cross-validated figures before and after)."""

from localeval.verifier.apply import Verifier, select
from localeval.verifier.head import Head, load_head, save_head

__all__ = ["Head", "Verifier", "load_head", "save_head", "select"]
