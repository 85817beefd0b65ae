"""`localeval generate`: a test set from the user's own documents, offline, with the judge.

One module per step: `documents` (read the files) → `chunking` (the corpus, ids `source#n`) →
`picking` (which chunks and linked pairs) → `drafting` (the judge writes drafts: grammar-
constrained JSON through the run's JudgeClient) → `tasks` (one candidate's judge work, its
answer checked by faithfulness) → `filters` (and `answerable`, the rules that an "unanswerable"
question is answered) → `assemble` (rows by the `coverage` plan, near-duplicates) → `store`
(the files, the resumable work file); `pipeline` drives them, `estimate` sizes a generation.
`records` holds the typed records between the steps (a task's draft and checks: `Asked`,
`PairAsked`); `lang/`, one module per language, every word list, pattern, unit and joiner the
steps read, behind one record (`lang.Language`; a third language is one new file:
lang/__init__.py).
"""

__all__ = ["KINDS"]

KINDS = ("single", "pair", "bridge", "unanswerable", "colloquial")
"""The kinds of question, in the order the test set lists them."""
