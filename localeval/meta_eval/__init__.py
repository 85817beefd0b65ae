"""`localeval meta-eval`: how well the judge agrees with people.

formats (the labelled data: pairs or labelled rows), convert (the dev sets → pairs), stats
(bootstrap, AUROC, Spearman, Kendall), analyse (records → agreement figures), run (the normal
run path, then the figures and files), render (table, meta_eval.md, meta_eval.html).
"""

from localeval.meta_eval.run import MetaEvalOutcome, MetaEvalResult, evaluate

__all__ = ["MetaEvalOutcome", "MetaEvalResult", "evaluate"]
