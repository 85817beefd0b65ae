"""`localeval meta-eval`: how well the judge agrees with people.

formats (the labelled data: pairs or labelled rows), convert (the dev sets → pairs), stats
(bootstrap, AUROC, Spearman, Kendall), analyse (records → agreement figures), run (the normal
run path, then the figures and files: `localeval.meta_eval.run.evaluate`). The table,
meta_eval.md and meta_eval.html are laid out by `localeval.report.meta_eval_page` on the report's
page kit. Nothing heavy is imported here, so `--help` stays fast.
"""

__all__ = ["analyse", "checks", "convert", "formats", "render", "run", "stats"]
