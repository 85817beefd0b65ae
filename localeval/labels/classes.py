"""Class labels: a person's diagnosis class of one claim (metrics/claims/matrix.py), and the
diagnosis scores they give a sample.

A class label is a claim label of one of two label metrics, named after the details lists
they index: `diagnosis.answer_claims` (the claim's index in any answer-side diagnosis metric's
`details.<metric>.answer_claims`; a class of `ANSWER`) and `diagnosis.truth_claims` (in
`truth_claims`; a class of `TRUTH`). The row says
`"class": NAME` with `"label": 1`, or `"label": null` (no class) for unsure; it is bound to
the sample's input_hash and the claim's text as every claim label is (labels/bound.py).

They are not a new score: when every claim of a side of a sample is labelled, none unsure, the
classes give that sample a person's value of each diagnosis score of the side, by the same
formula the judge's classes give it (`share`): answer claims give noise_sensitivity,
`.relevant`, `.irrelevant`, hallucination and self_knowledge; ground-truth claims give
claim_recall and context_utilization. Those values are the sample labels the estimate corrects
the judge's means with (labels/estimate.sample_labels), over the samples (unit: rows, or turns).
A sample-level label of a score key, where there is one, says it directly and wins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

ANSWER_CLAIMS = "diagnosis.answer_claims"
TRUTH_CLAIMS = "diagnosis.truth_claims"
ANSWER = ("supported", "self_knowledge", "noise_relevant", "noise_irrelevant", "hallucination")
"""An answer claim's classes (matrix.ANSWER_CLASSES)."""
TRUTH = ("used", "unused", "not_retrieved", "retrieved")
"""A ground-truth claim's classes (matrix.TRUTH_CLASSES); `retrieved` says only that a context
holds it (claim_recall alone, the answer not read)."""
CLASSES = {ANSWER_CLAIMS: ANSWER, TRUTH_CLAIMS: TRUTH}
"""Each class-label metric and the classes its rows may name."""
DETAILS = {ANSWER_CLAIMS: "answer_claims", TRUTH_CLAIMS: "truth_claims"}
"""Each class-label metric and the details list its claim index is into."""
_ANSWER_OWNERS = ("noise_sensitivity", "hallucination", "self_knowledge", "context_utilization")
OWNERS = {ANSWER_CLAIMS: _ANSWER_OWNERS, TRUTH_CLAIMS: (*_ANSWER_OWNERS, "claim_recall")}
"""The diagnosis metrics whose details hold each list, the first found used (the owners
report/diagnosis.py reads; every one holds the same claims)."""
SCORES = {ANSWER_CLAIMS: ("noise_sensitivity", "noise_sensitivity.relevant",
                          "noise_sensitivity.irrelevant", "hallucination", "self_knowledge"),
          TRUTH_CLAIMS: ("claim_recall", "context_utilization")}
"""The score keys each side's classes give."""
SIDE_OF = {key: side for side, keys in SCORES.items() for key in keys}
"""A diagnosis score key → the class-label metric that gives it."""


VIEW_SCORES = {ANSWER_CLAIMS: ("hallucination", "noise_sensitivity", "self_knowledge"),
               TRUTH_CLAIMS: ("claim_recall", "context_utilization")}
"""The score the labelling page shows and estimates as it goes for each side's class labels,
the first of these the run scored (they are all estimated from the file)."""


def class_rows(details: Mapping[str, Any], side: str) -> list[Any] | None:
    """The claims (details entries: statement, sentence, class, …), in index order, a class
    label of `side` indexes (`DETAILS`), from the first of `OWNERS` whose details hold the
    list; None when none does."""
    for owner in OWNERS[side]:
        detail = details.get(owner)
        rows = detail.get(DETAILS[side]) if isinstance(detail, dict) else None
        if isinstance(rows, list):
            return rows
    return None


def class_claims(details: Mapping[str, Any], side: str) -> list[str] | None:
    """The claim texts of `class_rows`, in index order ("" for an entry without one)."""
    rows = class_rows(details, side)
    if rows is None:
        return None
    return [r.get("statement") if isinstance(r, dict) and isinstance(r.get("statement"), str)
            else "" for r in rows]


def share(key: str, classes: Sequence[str]) -> float | None:
    """A person's value of score `key` from the classes of every claim of its side (in
    claims/matrix.diagnose's formula); None when the classes leave it undefined (no claim;
    context_utilization without a retrieved claim, or with a claim classed only `retrieved`)."""
    n = len(classes)
    if not n:
        return None
    count = classes.count
    if key == "claim_recall":
        return (n - count("not_retrieved")) / n
    if key == "context_utilization":
        retrieved = count("used") + count("unused")
        return count("used") / retrieved if retrieved and not count("retrieved") else None
    if key == "noise_sensitivity":
        return (count("noise_relevant") + count("noise_irrelevant")) / n
    kind = {"noise_sensitivity.relevant": "noise_relevant",
            "noise_sensitivity.irrelevant": "noise_irrelevant"}.get(key, key)
    return count(kind) / n
