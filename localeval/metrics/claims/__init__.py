"""The claim pipeline the claim metrics share (faithfulness, context_recall, ...), one step per
module, in the order a claim goes through them:

1. `split` — a text's sentences (text.sentences_of: every text split once, for every step), the
   rules that may lower or flag, never raise (aimed at the evaluator, repeated byte for byte),
   the claims to judge (with `claims = "statements"`, the judge's statements of each sentence,
   kept true to it);
2. `evidence` — what a claim is judged against: the whole material, narrowed to the passages
   that bear on it, each with its frame, split into pieces when too long for the window;
3. `verdicts` — the judge asked in groups (a failed request asked again in halves), its
   P(supported) against τ decides (`threshold`);
4. `checks` — a detail the material never mentions overrules a verdict of support; the
   material's sentence closest to a claim (shown to the reader);
5. `score` — the share supported: the body of faithfulness and context_recall.

Between the steps a claim and its verdict are one frozen record (`record`: `ClaimRecord`,
`Verdict`), written to the results by `as_json` under the keys the results have always had.

No metric is registered here."""

from localeval.metrics.claims.evidence import ask_pieces
from localeval.metrics.claims.record import ClaimRecord, Verdict
from localeval.metrics.claims.score import claims_of, claims_supported, nonempty
from localeval.metrics.claims.verdicts import (
    Support,
    effective_thresholds,
    p_yes,
    support_verdicts,
    threshold,
)

__all__ = [
    "ClaimRecord",
    "Support",
    "Verdict",
    "ask_pieces",
    "claims_of",
    "claims_supported",
    "effective_thresholds",
    "nonempty",
    "p_yes",
    "support_verdicts",
    "threshold",
]
