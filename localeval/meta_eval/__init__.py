"""`localeval meta-eval`: how well the judge agrees with people.

formats (the labelled data: pairs or labelled rows), convert (the dev sets → pairs), stats
(bootstrap, AUROC, Spearman, Kendall), analyse (records → agreement figures), run (the normal
run path, then the figures and files: `localeval.meta_eval.run.evaluate`), render (table,
meta_eval.md, meta_eval.html). Nothing heavy is imported here, so `--help` stays fast.
"""

__all__ = ["analyse", "checks", "convert", "formats", "render", "run", "stats"]
