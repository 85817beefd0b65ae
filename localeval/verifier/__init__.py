"""A learned verifier (a plug-in): support verdicts scored from the judge's own activations at
the verdict.

`head` (the file and its scoring), `apply` (the verifier in a run: which requests, which head),
`extract` (the activations of labelled rows, read once), `fit` (a head learned from labels, with
cross-validated figures before and after). Importing the package hands `apply.select` to the
core (models/backends.plug_head), which never imports it: the entry points (the CLI, the Python
API, a Ray worker) import it when `--verifier` names a head file."""

from localeval.models.backends import plug_head
from localeval.verifier.apply import Verifier, select
from localeval.verifier.head import Head, load_head, save_head

plug_head(select)

__all__ = ["Head", "Verifier", "load_head", "save_head", "select"]
