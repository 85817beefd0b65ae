"""The support machinery the claim metrics share: statements anchored to a text's sentences
(`statements`), claims and their judgement (`claims`), asking the judge whether numbered items
are supported by the material (`verdicts`: `support_verdicts`), with the checks around it
(`evidence`, `closest`, `contrast`, `focus`) and the verdict probability threshold
(`threshold`). No metric is registered here."""

from localeval.metrics.support.claims import claim_texts, judge_claims
from localeval.metrics.support.statements import Anchored, AnchoredStatements, anchored_statements
from localeval.metrics.support.threshold import effective_thresholds, p_yes, threshold
from localeval.metrics.support.verdicts import Support, support_verdicts

__all__ = [
    "Anchored",
    "AnchoredStatements",
    "Support",
    "anchored_statements",
    "claim_texts",
    "effective_thresholds",
    "judge_claims",
    "p_yes",
    "support_verdicts",
    "threshold",
]
