"""A claim and its verdict, the record the claim pipeline passes between its steps.

`Verdict` is one item's verdict (a claim, a context sentence, a context): what the judge said,
what τ and the checks made of it, and in words why. `ClaimRecord` is one claim of a text (an
answer, a ground truth) with its `Verdict`. Both are frozen; `as_json` writes the entry that
results.jsonl holds, and only there does a field take its output name:

| field               | output key          | written when                                        |
|---------------------|---------------------|-----------------------------------------------------|
| `verdict`           | `verdict`           | always: 1 supported (stated, useful), 0 not         |
| `judge_verdict`     | `judge_verdict`     | the judge decided it: its verdict (by τ), before    |
|                     |                     | the checks                                          |
| `closest_sentence`  | `closest_sentence`  | a sentence of the material shares a trigram         |
| `novel_details`     | `novel_details`     | a number or name the material lacks (non-empty)     |
| `reason`            | `reason`            | always                                              |
| `rule`              | `rule`              | set: "judge", "check", "not a candidate"            |
| `p_yes`             | `p_supported`       | the judge gave probabilities (`p_key`: `p_useful`   |
|                     |                     | for context_precision)                              |
| `greedy_verdict`    | `greedy_verdict`    | with `p_yes` from a judge's request: its written    |
|                     |                     | digit                                               |
| `judge_p_yes`       | `p_judge`           | a verifier head gave `p_yes`: the judge's own       |
| `asserts_fact`      | `asserts_fact`      | the judge was asked whether the item asserts a fact |
| `evidence_passages` | `evidence_passages` | judged against the passages that bear on it         |
| `piece`             | `piece`             | judged against a piece of a split material          |

`p_yes` is P(verdict = 1) as the run scores it: the verifier head's when it scored the verdict,
else the judge's own renormalised over the two verdicts (verdicts.p_yes), rounded to 4 places
(as written and as the `.weighted` scores average it), 0.0 where a check overruled a verdict of
support or a rule settled the item. `judge_p_yes` is the judge's own P(verdict = 1)
(judge.interface.judge_p_yes), kept only beside a head's.

The key order of an entry depends on what settled it (`shape`): `JUDGED` (the judge was asked:
claims/verdicts.py, context_precision), `RULED` (a rule before any request: claims/split.py),
`NOT_CANDIDATE` (a context sentence context_relevance does not ask about). A `ClaimRecord`
writes `statement` and `sentence` (the 1-based number of its sentence) first, then its verdict's
keys, then `extracted` (the judge's statement a check replaced by its sentence) and `quoted`
(true: the sentence is quoted whole from the material) when set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Shape = Literal["judged", "ruled", "not_candidate"]

OUTPUT_KEYS = {"verdict": "verdict", "judge_verdict": "judge_verdict",
               "closest_sentence": "closest_sentence", "novel_details": "novel_details",
               "reason": "reason", "rule": "rule", "p_yes": "p_supported",
               "greedy_verdict": "greedy_verdict", "judge_p_yes": "p_judge",
               "asserts_fact": "asserts_fact", "evidence_passages": "evidence_passages",
               "piece": "piece"}
"""Each field of `Verdict` and the key it is written under."""

ORDER: dict[Shape, tuple[str, ...]] = {
    "judged": ("verdict", "judge_verdict", "closest_sentence", "novel_details", "reason", "rule",
               "p_yes", "greedy_verdict", "judge_p_yes", "asserts_fact", "evidence_passages",
               "piece"),
    "ruled": ("verdict", "rule", "novel_details", "p_yes", "reason"),
    "not_candidate": ("verdict", "p_yes", "rule", "reason"),
}
"""The fields each shape may hold, in the order they are written."""


@dataclass(frozen=True)
class Verdict:
    """One item's verdict (module doc: the fields and the keys they are written under)."""

    verdict: int
    reason: str
    shape: Shape = "judged"
    judge_verdict: int | None = None
    closest_sentence: str | None = None
    novel_details: tuple[str, ...] = ()
    rule: str | None = None
    p_yes: float | None = None
    greedy_verdict: int | None = None
    judge_p_yes: float | None = None
    asserts_fact: int | None = None
    evidence_passages: tuple[str, ...] | None = None
    piece: int | None = None

    def __post_init__(self) -> None:
        allowed = ORDER[self.shape]
        stray = [f for f in OUTPUT_KEYS if f not in allowed and self._written(f)]
        if stray:
            raise ValueError(f"a {self.shape} verdict holds no {', '.join(stray)}")

    @property
    def overruled(self) -> bool:
        """The judge found support and a check took it away."""
        return self.judge_verdict == 1 and self.verdict == 0

    def _written(self, name: str) -> bool:
        value = getattr(self, name)
        return bool(value) if name == "novel_details" else value is not None

    def as_json(self, p_key: str = "p_supported") -> dict[str, Any]:
        """The entry results.jsonl holds; `p_yes` under `p_key`."""
        out: dict[str, Any] = {}
        for name in ORDER[self.shape]:
            if not self._written(name):
                continue
            value = getattr(self, name)
            key = p_key if name == "p_yes" else OUTPUT_KEYS[name]
            out[key] = list(value) if isinstance(value, tuple) else value
        return out


    @classmethod
    def from_json(cls, entry: dict[str, Any], p_key: str = "p_supported") -> Verdict:
        """The verdict `as_json` wrote as `entry` (its shape read from its keys and their
        order); ValueError for an entry no shape writes."""
        field_of = {v: k for k, v in OUTPUT_KEYS.items()} | {p_key: "p_yes"}
        names = [field_of.get(k, k) for k in entry]
        for shape, order in ORDER.items():
            if set(names) <= set(order) and names == [n for n in order if n in names]:
                values = {field_of.get(k, k): v for k, v in entry.items()}
                for name in ("novel_details", "evidence_passages"):
                    if name in values:
                        values[name] = tuple(values[name])
                return cls(shape=shape, **values)
        raise ValueError(f"no verdict is written with the keys {list(entry)}")


NOT_JUDGED = Verdict(0, "not judged")
"""An item no answer of the judge covered."""


@dataclass(frozen=True)
class ClaimRecord:
    """One claim of a text: what was judged (`statement`), the 1-based number of the sentence it
    came from, its verdict, the judge's statement a check replaced by the sentence
    (`extracted`), and whether the sentence is quoted whole from the material."""

    statement: str
    sentence: int
    support: Verdict
    extracted: str | None = None
    quoted: bool = False

    def as_json(self) -> dict[str, Any]:
        """The entry of `details.statements` (and answer_correctness's statement lists)."""
        return {"statement": self.statement, "sentence": self.sentence,
                **self.support.as_json(),
                **({"extracted": self.extracted} if self.extracted else {}),
                **({"quoted": True} if self.quoted else {})}

    @classmethod
    def from_json(cls, entry: dict[str, Any]) -> ClaimRecord:
        """The record `as_json` wrote as `entry`."""
        rest = {k: v for k, v in entry.items()
                if k not in ("statement", "sentence", "extracted", "quoted")}
        return cls(entry["statement"], entry["sentence"], Verdict.from_json(rest),
                   entry.get("extracted"), bool(entry.get("quoted")))


@dataclass(frozen=True)
class JudgeAnswer:
    """The judge's answer for one item of a request, before τ and the checks: its written
    verdict digit, its answer to "does it assert a fact" (when asked), P(verdict = 1) as the run
    uses it (unrounded: `Verdict.p_yes`), and the judge's own P when a verifier head gave
    `p_yes`."""

    greedy_verdict: int
    fact: int | None = None
    p_yes: float | None = None
    judge_p_yes: float | None = None
