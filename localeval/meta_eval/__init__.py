"""`localeval meta-eval`: how well the judge agrees with people.

formats (the labelled data: pairs or labelled rows), stats (bootstrap, AUROC, Spearman,
Kendall), analyse (records → agreement figures), checks (the record `--advisory-until-checked`
reads), run (the normal run path, then the figures and files:
`localeval.meta_eval.run.evaluate`). The table, meta_eval.md and meta_eval.html are laid out by
`localeval.report.meta_eval_page` on the report's page kit. Nothing heavy is imported here, so
`--help` stays fast.
"""

__all__ = ["analyse", "checks", "formats", "run", "stats"]
