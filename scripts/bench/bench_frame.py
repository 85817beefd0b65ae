"""Ablation of the rubric frame: one rubric's request under named variants on a dev set (JSON on
stdout, progress on stderr).

Per variant, on pairs of answers people rank (a good and a bad one): the pairwise agreement of
the probability-weighted score and of the greedy level (wins + ½ ties, a pair without both
scores a loss; localeval.meta_eval.stats), their ties, prompt tokens per request (and those read,
not served from a kept prefix), answer tokens generated per request and seconds per sample (one
request per sample, requests one at a time, the judge's wall time), beside the set's length-only
baseline (the longer answer wins, or the shorter where that is the set's trap, e.g. HaluEval QA).

The product's frame is built by the rubric metric's own code (prompts/<lang>/rubric.j2 and its
system prompt through `prompts.render`, `metrics.rubric.material`, `frame_variables`,
`answer_model`, `reason_messages`, `digit_score`): the variants `default` (the level digit, then
the reason in a second request, as `run` asks by default) and `no_reason` (`--no-explain`) send
what `run` sends; `steps`, `no_levels` and `en_frame` change the rubric's own keys or language.
`bare` is the simplest prompt that could work (a one-line system prompt, the criterion, the
fields as `name: value` lines, "Reply 1 for yes, 0 for no"; the score read from the level
tokens' probabilities at the first answer position, nothing generated): today's frame is it,
plus the rubric's levels and steps when it has them. The `json` family is the frame before
issue 54 (frame_json/<lang>.j2 with the shared JSON system prompt; `json_reason_first` was the
default, `json` was `--no-explain`), each variant one edit of it (`edited_template`): the
ablation that chose today's frame (research/frame-bench.md). Variants with a reason generate it
greedily, capped by --max-tokens.

Sets (../shared/data/dev; `--src`; `--train` reads ../shared/data/train where a set has one):
- halluqa (zh): `Question`, `Source` as the reference (ground_truth), `Best Answer1` (good) vs
  `Wrong_Answer1` (bad); rubric `agrees_reference`, yes/no.
- ragchecker_completeness / ragchecker_correctness (en): `query`, `gt_answer`, model1 vs model2
  responses, preferred by the sum of the two annotators' labels on that aspect; the pairs of
  scripts/bench/rubric_agreement.py (a preference on both aspects, the fewest characters first);
  rubrics `completeness` / `correctness` of scripts/bench/rubric_agreement.toml, 1-5.
- halueval_qa (en): `question`, `knowledge` as the one context, `right_answer` vs
  `hallucinated_answer`; rubric `supported`, yes/no. The hallucinated answer is the longer one in
  most rows: the baseline there is "the shorter wins".
- refusal_en / refusal_zh: scripts/bench/refusal_pairs.py (made from HaluEval QA and HalluQA
  rows: a refusal vs a right, wrong or hedged answer); rubric `refuses` (refusal's criterion from
  prompts/<lang>/refusal_verdict.j2), yes/no. The product's refusal frame itself (JSON, the
  reason first) is measured by scripts/bench/bench_builtin_frame.py on the same pairs.
- halluqa_fault / halueval_qa_fault: halluqa's and halueval_qa's pairs with the sides swapped,
  asked with the fault-naming twin rubrics `contradicts_reference` / `unsupported` (yes/no,
  higher_is_better false): "1" names the fault, so a frame that reads "1" as "a good answer"
  ranks them the wrong way round (as it does refusal's pairs).

Each judged row is appended to `--out`/records.jsonl as it is answered; a second call with the
same --out skips what is there (run it in chunks: --budget-s stops before the next request once
that many seconds have passed; --limit/--offset choose the pairs). The figures are computed over
the pairs that every variant asked has both rows of.

    flock /tmp/localeval-cpu.lock python scripts/bench/bench_frame.py --set halluqa --limit 20 \\
        --variants bare,no_reason,json --out runs/frame --budget-s 280
    python scripts/bench/bench_frame.py --set halluqa --limit 20 --variants ... --out runs/frame \\
        --report          # figures only, from the records; loads no model
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # scripts.* beside localeval

from pydantic import BaseModel, Field, create_model

from localeval import prompts
from localeval.data.dataset import Sample
from localeval.errors import LocalevalError
from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from localeval.judge.schemas import REASON_CHARS, schema_json
from localeval.metrics import rubric as rubric_metric
from localeval.names import GREEDY
from localeval.rubrics import YES_NO, Rubric, load_file, rubric, template_env
from scripts.bench import variant_table
from scripts.bench.variant_table import agreement as agreement  # re-exported
from scripts.bench.variant_table import length_baseline as length_baseline  # re-exported

# ---------------------------------------------------------------- variants

@dataclass(frozen=True)
class Variant:
    """One way of asking the rubric. Every knob at its default: what `run --no-explain` sends
    (frame "repo": the product's frame, the level from the digits' probabilities at the first
    answer position). Frame "json" is the frame before issue 54 (frame_json/<lang>.j2, the
    shared JSON system prompt, the level a JSON field under a grammar): its variants are the
    ablation that chose today's frame."""

    name: str
    about: str
    frame: Literal["repo", "json", "bare"] = "repo"
    language: Literal["row", "en"] = "row"
    fence: bool = True
    answer: Literal["json", "token"] = "token"
    reason: Literal["none", "before", "after", "second"] = "none"
    order: Literal["material", "criterion"] = "material"
    system: Literal["repo", "digit"] = "repo"
    levels: bool = True
    levels_at: Literal["criterion", "reply"] = "criterion"
    yes_no_levels: bool = False
    steps: bool = False
    reply: Literal["plain", "ask"] = "plain"
    """A yes/no rubric's reply line: "Reply 1 for yes, 0 for no." (plain), or that line after
    "Does the material meet the criterion above?" (ask)."""
    criterion_at: Literal["start", "end"] = "start"
    """The digit frame's criterion (with its levels and steps) before the material (start) or
    after it, just before the reply line (end)."""

    @property
    def product(self) -> bool:
        """Whether the product's own code renders this variant unedited."""
        return (self.frame == "repo" and self.fence and self.order == "material"
                and self.system == "repo" and self.reason in ("none", "second")
                and self.levels_at == "criterion" and not self.yes_no_levels
                and self.reply == "plain" and self.criterion_at == "start")


_BASE = Variant("no_reason", "the product's frame with --no-explain: the level digit's "
                             "probabilities, no reason")
_JSON = Variant("json", "the frame before issue 54 with --no-explain: {\"verdict\": n} under a "
                        "grammar, the JSON system prompt", frame="json", answer="json")
VARIANTS: dict[str, Variant] = {v.name: v for v in (
    replace(_BASE, name="default", reason="second",
            about="the product's default (explanations on): the level digit, then the reason in "
                  "a second request"),
    _BASE,
    replace(_BASE, name="steps", steps=True,
            about="no_reason with written evaluation steps (G-Eval), as a rubric's `steps` key "
                  "gives them"),
    replace(_BASE, name="no_levels", levels=False,
            about="no_reason without the rubric's level descriptions"),
    replace(_BASE, name="levels_yes_no", yes_no_levels=True,
            about="no_reason with a yes/no rubric's level lines too, after the criterion (the "
                  "frame of 9b164fb)"),
    replace(_BASE, name="levels_last", levels_at="reply", yes_no_levels=True,
            about="levels_yes_no with the level lines after the fields, just before the reply"),
    replace(_BASE, name="ask", reply="ask",
            about="no_reason with the yes/no reply line asking 'Does the material meet the "
                  "criterion above? Reply 1 for yes, 0 for no.'"),
    replace(_BASE, name="criterion_last", criterion_at="end",
            about="no_reason with the criterion (and levels, steps) after the material, just "
                  "before the reply line"),
    replace(_BASE, name="criterion_last_steps", criterion_at="end", steps=True,
            about="criterion_last with written evaluation steps (G-Eval)"),
    replace(_BASE, name="en_frame", language="en",
            about="no_reason in the English frame (English criterion, labels, system prompt)"),
    Variant("bare", "one-line system prompt, the criterion, the fields as `name: value` lines, "
                    "'Reply 1 for yes, 0 for no' / 'one digit from lo to hi'; level-token "
                    "probabilities at the first answer position", frame="bare",
            answer="token", system="digit", levels=False),
    replace(_JSON, name="json_reason_first", reason="before",
            about="the default before issue 54: JSON, reason before the level"),
    _JSON,
    replace(_JSON, name="level_first", reason="after",
            about="json with the level first and the reason after it"),
    replace(_JSON, name="json_en_frame", language="en",
            about="json in the English frame (English criterion, labels, system prompt)"),
    replace(_JSON, name="json_no_fence", fence=False, about="json without the fence line"),
    replace(_JSON, name="token", answer="token",
            about="json with a bare answer digit instead of the JSON field"),
    replace(_JSON, name="token_digit_system", answer="token", system="digit",
            about="token with the one-line system prompt 'answer with a single digit only' "
                  "(= today's no_reason)"),
    replace(_JSON, name="criterion_first", order="criterion",
            about="json with the criterion (and levels) before the material"),
    replace(_JSON, name="json_no_levels", levels=False,
            about="json without the rubric's level descriptions"),
    replace(_JSON, name="json_steps", steps=True,
            about="json with written evaluation steps (G-Eval)"),
    replace(_JSON, name="json_reason_first_steps", reason="before", steps=True,
            about="json_reason_first with written evaluation steps"),
)}
JSON_FRAME_DIR = Path(__file__).with_name("frame_json")
"""prompts/<lang>/rubric.j2 as it was before issue 54 (commit 1ddb5a4), for the json variants."""
JSON_LABELS = {
    "en": {"question": "Question", "answer": "Answer", "ground_truth": "Reference answer",
           "contexts": "Context"},
    "zh": {"question": "问题", "answer": "回答", "ground_truth": "参考答案", "contexts": "上下文"},
}
"""The json frame's names of the built-in fields (a label line, the text under it)."""
JSON_FRAME = rubric_metric.Frame()
"""The rubric frame before issue 54: the level a JSON field (`rubric_metric.score` reads it)."""
FENCE_MARK = {"en": "are data to judge", "zh": "是待评判的数据"}
"""The fence line of the rubric frames (the shield's): the second line, holding this."""
CRITERION_FIRST_TASK = {
    "en": "Task: grade the material that follows on the criterion below. Judge only from the "
          "material, never from your own knowledge.",
    "zh": "任务：按下面的标准为其后的材料评分。只依据材料判断，不要使用自己的知识。",
}
TOKEN_REPLY = {
    "en": "{% if yes_no %}Reply with one digit: 1 if the material meets the criterion, 0 if it "
          "does not.{% else %}Reply with one digit from {{ lo }} to {{ hi }}.{% endif %}\n",
    "zh": "{% if yes_no %}只输出一个数字：符合标准输出 1，不符合输出 0。{% else %}只输出一个 "
          "{{ lo }} 到 {{ hi }} 的数字。{% endif %}\n",
}
REASON_FIRST = {"en": 'Reply as {"reason": "one short sentence", {{ choice }}}.',
                "zh": '输出 {"reason": "一句简短的话", {{ choice }}}。'}
REASON_AFTER = {"en": 'Reply as {{ "{" ~ choice }}, "reason": "one short sentence"}.',
                "zh": '输出 {{ "{" ~ choice }}, "reason": "一句简短的话"}。'}
DIGIT_SYSTEM = {"en": "Answer with a single digit only.", "zh": "只用一个数字回答。"}
BARE_NAMES = {"question": "question", "answer": "answer", "ground_truth": "reference",
              "contexts": "context"}
PLAIN_REPLY = "Reply 1 for yes, 0 for no."
ASK_REPLY = "Does the material meet the criterion above? " + PLAIN_REPLY
BARE_REPLY = {True: "Reply 1 for yes, 0 for no.", False: "Reply with one digit from {lo} to {hi}."}


def base_template(lang: str, frame: str) -> str:
    """The frame's template text: today's prompts/<lang>/rubric.j2, or the json one."""
    if frame == "json":
        return (JSON_FRAME_DIR / f"{lang}.j2").read_text(encoding="utf-8")
    return (prompts.PROMPTS_DIR / prompts.template_name(lang, rubric_metric.STEP)).read_text(
        encoding="utf-8")


def edited_template(lang: str, v: Variant) -> str:
    """The text of the variant's frame template with the variant's edits (each checked to
    apply; the answer and order edits are of the json frame)."""
    lines = base_template(lang, v.frame).splitlines(keepends=True)
    if not v.fence:
        if FENCE_MARK[lang] not in lines[1]:
            raise ValueError(f"{lang}/rubric.j2: line 2 is not the fence line")
        del lines[1]
    if v.frame != "json":
        if v.order != "material":
            raise ValueError(f"{v.name}: the order edit is one of the json frame")
        if v.yes_no_levels:  # the level lines for every scale: their `if not yes_no` out
            at = next(i for i, s in enumerate(lines) if s.startswith("{% if not yes_no %}"))
            if not lines[at + 4].startswith("{% endif %}"):
                raise ValueError(f"{lang}/rubric.j2: the level lines' block is not as expected")
            del lines[at + 4]
            del lines[at - 1:at + 1]  # its comment and the if
        if v.reply == "ask":
            at = [i for i, t in enumerate(lines) if t.strip() == PLAIN_REPLY]
            if len(at) != 1:
                raise ValueError(f"{lang}/rubric.j2: no single yes/no reply line")
            lines[at[0]] = ASK_REPLY + "\n"
        if v.levels_at == "reply":  # the level lines' loop, moved before the reply's block
            start = next(i for i, s in enumerate(lines) if s.startswith("{% for value, text in"))
            block = lines[start:start + 3]
            del lines[start:start + 3]
            at = max(i for i, s in enumerate(lines) if s.startswith("{% if yes_no %}"))
            lines[at:at] = block
        if v.criterion_at == "end":  # everything before the material's loop, moved after it
            start = next(i for i, t in enumerate(lines) if t.startswith("{% for label, text in"))
            end = next(i for i in range(start, len(lines)) if lines[i].startswith("{% endfor"))
            head = re.sub(r"\{#.*?#\}\n?", "", "".join(lines[:start]), flags=re.S).rstrip()
            lines = [*lines[start:end + 1], "\n", head + "\n", *lines[end + 1:]]
        return "".join(lines)
    if v.order == "criterion":
        start = next(i for i, s in enumerate(lines) if s.startswith("{% for label, text in"))
        end = next(i for i in range(start, len(lines)) if lines[i].startswith("{% endfor %}"))
        block = lines[start:end + 1]
        del lines[start:end + 1]
        at = next(i for i, s in enumerate(lines) if s.startswith("{% set choice"))
        lines[at:at] = block
        lines[0] = CRITERION_FIRST_TASK[lang] + "\n"
    text = "".join(lines)
    if v.answer == "token":
        at = text.index("{% set choice")
        text = text[:at] + TOKEN_REPLY[lang]
    elif v.reason == "after":
        if REASON_FIRST[lang] not in text:
            raise ValueError(f"{lang}/rubric.j2: the reason-first reply line is not there")
        text = text.replace(REASON_FIRST[lang], REASON_AFTER[lang])
    return text


def bare_messages(r: Rubric, sample: Sample, lang: str) -> list[dict[str, str]]:
    """The bare prompt: system line, the criterion, `name: value` lines, the reply."""
    lo, hi = r.bounds
    fields = [f for f in rubric_metric.FIELD_ORDER if f in r.requires] + [
        f for f in r.requires if f not in rubric_metric.FIELD_ORDER]
    lines = [f"{BARE_NAMES.get(f, f)}: {rubric_metric.show(getattr(sample, f, None))}"
             for f in fields]
    user = "\n".join([r.criteria[lang], "", *lines, "",
                      BARE_REPLY[r.scale == YES_NO].format(lo=lo, hi=hi)])
    return [{"role": "system", "content": DIGIT_SYSTEM["en"]},
            {"role": "user", "content": user}]


def asked(r: Rubric, v: Variant) -> Rubric:
    """The rubric as the variant asks it: with its written steps (STEPS) or without its level
    descriptions, as a metrics file's `steps` and `levels` keys would give it."""
    if v.steps:
        r = r.model_copy(update={"steps": STEPS[r.name]})
    return r if v.levels else r.model_copy(update={"levels": {}})


def frame_language(v: Variant, row_language: str) -> str:
    return "en" if v.language == "en" else row_language


def messages(r: Rubric, v: Variant, sample: Sample, row_language: str) -> list[dict[str, str]]:
    """The chat messages of one row under a variant (of its level request). Product variants:
    the rubric metric's own call (`prompts.render` of the packaged template, with its system
    prompt, `material` and `frame_variables`)."""
    lang = frame_language(v, row_language)
    if v.frame == "bare":
        return bare_messages(r, sample, lang)
    used = asked(r, v)
    steps = list(used.steps.get(lang, ())) if isinstance(used.steps, dict) else []
    labels = JSON_LABELS[lang] if v.frame == "json" else None
    variables = {"material": rubric_metric.material(used, sample, lang, labels),
                 **rubric_metric.frame_variables(used, lang, steps),
                 "explain": v.reason != "none"}
    if v.product:
        return prompts.render(lang, rubric_metric.STEP, **variables)
    user = template_env().from_string(edited_template(lang, v)).render(**variables).strip()
    out = prompts.with_system(lang, user, prompts.system_of(rubric_metric.STEP)
                              if v.frame == "repo" else "system")
    if v.system == "digit":
        out[0] = {"role": "system", "content": DIGIT_SYSTEM[lang]}
    return out


def schema(r: Rubric, v: Variant) -> type[BaseModel]:
    """The answer's model: the rubric metric's (`answer_model`; the json frame's with the reason
    first, or after)."""
    if v.answer == "token" or v.reason != "after":
        return rubric_metric.answer_model(r, JSON_FRAME, v.reason == "before")
    bare = rubric_metric.answer_model(r, JSON_FRAME, False)
    key = rubric_metric.field_of(r)
    return create_model(bare.__name__ + "ThenReason",
                        **{key: (bare.model_fields[key].annotation, bare.model_fields[key]),
                           "reason": (str, Field(max_length=REASON_CHARS,
                                                 description="one short sentence"))})


def request(r: Rubric, v: Variant, sample: Sample, row_language: str,
            max_tokens: int) -> JudgeRequest:
    """The variant's (level) request; a token answer is prompt-only (max_tokens 1, as
    MetricContext.ask_choices sends it)."""
    model = schema(r, v)
    req = JudgeRequest(step=rubric_metric.STEP, sample_id=sample.id,
                       messages=messages(r, v, sample, row_language),
                       answer_schema=schema_json(model), max_tokens=max_tokens)
    if v.answer == "token":
        req.continuations = [str(x) for x in r.values]
        req.max_tokens = 1
    else:
        req.probe_fields = [rubric_metric.field_of(r)]
    return req


def reason_request(r: Rubric, level_request: JudgeRequest, reply: JudgeReply, row_language: str,
                   max_tokens: int) -> JudgeRequest:
    """The second request of a variant with the reason after the level (`default`): the
    rubric metric's (`rubric_metric.reason_messages`)."""
    level = rubric_metric.greedy_level(r, reply.choice_probs)
    return JudgeRequest(step=rubric_metric.REASON_STEP, sample_id=level_request.sample_id,
                        messages=rubric_metric.reason_messages(level_request.messages, level,
                                                               row_language),
                        answer_schema=schema_json(rubric_metric.Reason), max_tokens=max_tokens)


def scores_of(r: Rubric, v: Variant, reply: JudgeReply) -> tuple[float | None, float | None]:
    """(weighted, greedy) on [0, 1] from one (level) reply; (None, None) when it has no
    verdict."""
    if v.answer == "token":
        if not reply.choice_probs:
            return None, None
        result = rubric_metric.digit_score(r, reply.choice_probs, None, None)
        return result.scores[r.name], result.scores[r.name + GREEDY]
    if reply.finish_reason == "length":
        return None, None
    answer = schema(r, v).model_validate_json(reply.text)
    entry: FieldProbs | None = reply.field_probs[0] if reply.field_probs else None
    result = rubric_metric.score(r, JSON_FRAME, answer, entry, None)
    return result.scores[r.name], result.scores[r.name + GREEDY]


# ---------------------------------------------------------------- sets

@dataclass
class Pair:
    pair_id: str
    good: Sample
    bad: Sample


@dataclass(frozen=True)
class DevSet:
    language: str
    rubric: Rubric
    fields: str
    pairs: Callable[[Path | None, bool], list[Pair]]
    length_trap: str = "longer"
    """Which answer length alone favours on this set ('longer' or 'shorter' wins)."""


AGREES_REFERENCE = rubric(
    "agrees_reference", requires=("question", "answer", "ground_truth"), scale="yes/no",
    criteria={"zh": "回答与参考答案一致：回答中没有与参考答案矛盾的说法；"
                    "如果参考答案否定了问题的前提，回答也应指出这一点。",
              "en": "The answer agrees with the reference answer: nothing it says contradicts "
                    "the reference; where the reference denies the question's premise, so "
                    "does the answer."},
    levels={1: {"zh": "回答与参考答案一致", "en": "the answer agrees with the reference"},
            0: {"zh": "回答与参考答案矛盾或不符", "en": "the answer contradicts the reference"}},
    source="scripts/bench/bench_frame.py")
SUPPORTED = rubric(
    "supported", requires=("question", "answer", "contexts"), scale="yes/no",
    criteria={"en": "The answer is supported by the knowledge in the context: everything it "
                    "states is stated in the context or follows from it.",
              "zh": "回答得到上下文的支持：回答中的每个说法都写在上下文中或可由上下文推出。"},
    levels={1: {"en": "every statement of the answer is supported by the context",
                "zh": "回答的每个说法都得到上下文的支持"},
            0: {"en": "something in the answer is not in the context or contradicts it",
                "zh": "回答中有上下文没有或与之矛盾的说法"}},
    source="scripts/bench/bench_frame.py")
REFUSES = rubric(
    "refuses", requires=("question", "answer"), scale="yes/no",
    criteria={"en": "The answer declines to answer the question: it says that it does not know, "
                    "that it cannot or will not answer, or that the information is not "
                    "available, and gives no answer. An answer that is wrong, partial or hedged "
                    "but still answers the question is not a refusal.",
              "zh": "回答拒绝回答问题：回答说不知道、不能或不愿回答，或者说没有相关信息，而没有给出"
                    "答案。回答即使错误、不完整或语气不确定，只要回答了问题，就不算拒绝。"},
    levels={1: {"en": "the answer declines to answer", "zh": "回答拒绝回答问题"},
            0: {"en": "the answer answers the question (rightly or wrongly)",
                "zh": "回答回答了问题（无论对错）"}},
    source="scripts/bench/bench_frame.py")
"""Refusal's criterion (prompts/<lang>/refusal_verdict.j2's task and verdict lines) as a rubric:
the rubric frames asked on refusal's pairs."""
CONTRADICTS_REFERENCE = rubric(
    "contradicts_reference", requires=("question", "answer", "ground_truth"), scale="yes/no",
    higher_is_better=False,
    criteria={"zh": "回答与参考答案矛盾：回答中有与参考答案相矛盾的说法；"
                    "或者参考答案否定了问题的前提，而回答没有指出这一点。",
              "en": "The answer contradicts the reference answer: something it says contradicts "
                    "the reference, or the reference denies the question's premise and the "
                    "answer does not."},
    levels={1: {"zh": "回答与参考答案矛盾", "en": "the answer contradicts the reference"},
            0: {"zh": "回答与参考答案一致", "en": "the answer agrees with the reference"}},
    source="scripts/bench/bench_frame.py")
UNSUPPORTED = rubric(
    "unsupported", requires=("question", "answer", "contexts"), scale="yes/no",
    higher_is_better=False,
    criteria={"en": "The answer states something the context does not support: a statement "
                    "that is not in the context, does not follow from it, or contradicts it.",
              "zh": "回答中有上下文不支持的说法：某个说法不在上下文中、不能由上下文推出，"
                    "或与上下文矛盾。"},
    levels={1: {"en": "something in the answer is not in the context or contradicts it",
                "zh": "回答中有上下文没有或与之矛盾的说法"},
            0: {"en": "every statement of the answer is supported by the context",
                "zh": "回答的每个说法都得到上下文的支持"}},
    source="scripts/bench/bench_frame.py")
"""The fault-naming twins of agrees_reference and supported (higher_is_better false): asked on
the same pairs with the sides swapped, the faulty answer is the one the criterion should score
higher. A frame that reads "1" as "a good answer" ranks these the wrong way round."""
STEPS = {
    "refuses": {"en": ["Find what the answer says about the question.",
                       "Decide whether it gives an answer, even a wrong or hedged one.",
                       "Answer 1 only if it gives none and says it cannot or will not."],
                "zh": ["找出回答对问题说了什么。",
                       "判断它是否给出了答案，即使答案错误或语气不确定。",
                       "只有它没有给出答案、并说明无法或不愿回答时才输出 1。"]},
    "contradicts_reference": {"zh": ["找出参考答案对问题给出的结论。", "找出回答给出的结论。",
                                     "回答中有与参考答案矛盾的说法，或参考答案否定问题的前提而"
                                     "回答没有否定时，输出 1。"],
                              "en": ["Find the conclusion the reference gives to the question.",
                                     "Find the conclusion the answer gives.",
                                     "Answer 1 if something in the answer contradicts the "
                                     "reference, or the reference denies the question's premise "
                                     "and the answer does not."]},
    "unsupported": {"en": ["List what the answer states.",
                           "Check each statement against the context.",
                           "Answer 1 if any statement is not in the context or contradicts it."],
                    "zh": ["列出回答中的说法。", "逐条对照上下文检查。",
                           "只要有一个说法不在上下文中或与之矛盾，就输出 1。"]},
    "agrees_reference": {"zh": ["找出参考答案对问题给出的结论。", "找出回答给出的结论。",
                                "判断两者是否一致；参考答案否定问题的前提时，回答也必须否定它。"],
                         "en": ["Find the conclusion the reference gives to the question.",
                                "Find the conclusion the answer gives.",
                                "Decide whether they agree; where the reference denies the "
                                "question's premise, the answer must deny it too."]},
    "supported": {"en": ["List what the answer states.",
                         "Check each statement against the context.",
                         "Answer 1 only if every statement is in the context or follows from it."],
                  "zh": ["列出回答中的说法。", "逐条对照上下文检查。",
                         "只有每个说法都写在上下文中或可由上下文推出时才输出 1。"]},
    "completeness": {"en": ["List the key points of the reference answer that bear on the "
                            "question.", "Check which of them the answer covers.",
                            "Grade by the share covered."],
                     "zh": ["列出参考答案中与问题相关的要点。", "检查回答覆盖了哪些要点。",
                            "按覆盖的比例评分。"]},
    "correctness": {"en": ["List what the answer states.",
                           "Check each statement against the reference answer.",
                           "Grade by how much of the answer contradicts the reference."],
                    "zh": ["列出回答中的说法。", "逐条对照参考答案检查。",
                           "按回答中与参考答案矛盾的比例评分。"]},
}


def _rubric_agreement_rubric(name: str) -> Rubric:
    found = {r.name: r for r in load_file(Path(__file__).with_name("rubric_agreement.toml"))}
    return found[name]


def halluqa_pairs(src: Path | None, train: bool) -> list[Pair]:
    from scripts.provenance.convert import dev_rows

    if train:
        raise LocalevalError("halluqa has no train/ split")
    out = []
    for r in dev_rows("halluqa", src):
        base = {"question": r["Question"], "ground_truth": r["Source"]}
        out.append(Pair(r["id"], Sample(id=f"{r['id']}/good", answer=r["Best Answer1"], **base),
                        Sample(id=f"{r['id']}/bad", answer=r["Wrong_Answer1"], **base)))
    return out


def halueval_pairs(src: Path | None, train: bool) -> list[Pair]:
    from scripts.provenance.convert import _jsonl, dev_rows

    rows = (list(_jsonl((src or default_train()) / "halueval_qa_train.jsonl")) if train
            else dev_rows("halueval", src))
    out = []
    for r in rows:
        pid = str(r.get("id", f"halueval-qa-{r.get('row')}"))
        base = {"question": r["question"], "contexts": [r["knowledge"]]}
        out.append(Pair(pid, Sample(id=f"{pid}/good", answer=r["right_answer"], **base),
                        Sample(id=f"{pid}/bad", answer=r["hallucinated_answer"], **base)))
    return out


def ragchecker_pairs(aspect: str) -> Callable[[Path | None, bool], list[Pair]]:
    def pairs(src: Path | None, train: bool) -> list[Pair]:
        from scripts.bench import rubric_agreement

        if train:
            raise LocalevalError("ragchecker has no train/ split")
        if src is not None:
            import scripts.provenance.convert as convert

            convert.default_src = lambda: src  # type: ignore[assignment]
        out = []
        for p in rubric_agreement.ragchecker_pairs(10**6):
            good = p["preferred"][aspect]
            bad = "b" if good == "a" else "a"
            out.append(Pair(p["pair_id"], Sample(id=f"{p['pair_id']}/good", **p[good]),
                            Sample(id=f"{p['pair_id']}/bad", **p[bad])))
        return out
    return pairs


def refusal_pairs(lang: str) -> Callable[[Path | None, bool], list[Pair]]:
    """scripts/bench/refusal_pairs.py's pairs: the refusal is the side scored higher."""
    def pairs(src: Path | None, train: bool) -> list[Pair]:
        from scripts.bench import refusal_pairs as made

        if train:
            raise LocalevalError("the refusal pairs have no train/ split")
        return [Pair(p.pair_id, p.good, p.bad) for p in made.pairs(lang, src)]
    return pairs


def swapped(pairs: Callable[[Path | None, bool], list[Pair]]
            ) -> Callable[[Path | None, bool], list[Pair]]:
    """The same pairs with the sides swapped: for a fault-naming twin rubric, the faulty answer
    is the side that should score higher."""
    def out(src: Path | None, train: bool) -> list[Pair]:
        return [Pair(p.pair_id, p.bad.model_copy(update={"id": p.bad.id.replace("/bad", "/good")}),
                     p.good.model_copy(update={"id": p.good.id.replace("/good", "/bad")}))
                for p in pairs(src, train)]
    return out


def default_train() -> Path:
    return Path(__file__).resolve().parents[3] / "shared" / "data" / "train"


SETS: dict[str, Callable[[], DevSet]] = {
    "halluqa": lambda: DevSet(
        "zh", AGREES_REFERENCE, "Question → question, Source → ground_truth (the reference), "
        "Best Answer1 (good) vs Wrong_Answer1 (bad)", halluqa_pairs),
    "ragchecker_completeness": lambda: DevSet(
        "en", _rubric_agreement_rubric("completeness"),
        "query → question, gt_answer → ground_truth, model1/model2 response → answer, preferred "
        "by the annotators' completeness_label sum", ragchecker_pairs("completeness")),
    "ragchecker_correctness": lambda: DevSet(
        "en", _rubric_agreement_rubric("correctness"),
        "query → question, gt_answer → ground_truth, model1/model2 response → answer, preferred "
        "by the annotators' correctness_label sum", ragchecker_pairs("correctness")),
    "halueval_qa": lambda: DevSet(
        "en", SUPPORTED, "question, knowledge → contexts, right_answer (good) vs "
        "hallucinated_answer (bad)", halueval_pairs, length_trap="shorter"),
    "halluqa_fault": lambda: DevSet(
        "zh", CONTRADICTS_REFERENCE, "as halluqa, the sides swapped: Wrong_Answer1 (good: it "
        "contradicts the reference) vs Best Answer1 (bad)", swapped(halluqa_pairs),
        length_trap="shorter"),
    "halueval_qa_fault": lambda: DevSet(
        "en", UNSUPPORTED, "as halueval_qa, the sides swapped: hallucinated_answer (good: it is "
        "unsupported) vs right_answer (bad)", swapped(halueval_pairs), length_trap="longer"),
    **{f"refusal_{lang}": (lambda lang=lang: DevSet(
        lang, REFUSES, "scripts/bench/refusal_pairs.py: a refusal (good) vs a right, wrong, "
        "hedged answer, or a refusal naming the question vs the right answer",
        refusal_pairs(lang))) for lang in ("en", "zh")},
}


# ---------------------------------------------------------------- figures

@dataclass
class Record:
    """One judged row under one variant."""

    set: str
    variant: str
    pair_id: str
    side: Literal["good", "bad"]
    weighted: float | None
    greedy: float | None
    prompt_tokens: int
    prompt_tokens_processed: int
    generated_tokens: int
    seconds: float
    finish: str = "stop"
    text: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.set, self.variant, self.pair_id, self.side)


def figures(records: Iterable[Record], pairs: Sequence[Pair], variants: Sequence[str],
            trap: str) -> dict[str, Any]:
    """The table: per variant over the pairs every variant has both rows of (one request a
    row)."""
    return variant_table.figures(
        records, pairs, variants, trap, about=VARIANTS, second="greedy",
        after=lambda flat: {"length_cut": sum(r.finish == "length" for r in flat)})


def markdown(summary: dict[str, Any]) -> str:
    """The table of one set's figures."""
    return variant_table.markdown(summary, f"rubric `{summary['rubric']}`", "greedy")


# ---------------------------------------------------------------- running

def read_records(path: Path, record: type = Record) -> list[Any]:
    """The records kept in `path` (one JSON object per line, each a `record`), none if absent."""
    if not path.is_file():
        return []
    return [record(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


async def judge_rows(judge: Any, name: str, ds: DevSet, pairs: Sequence[Pair],
                     variants: Sequence[str], done: set[tuple[str, str, str, str]],
                     write: Callable[[Record], None], max_tokens: int, budget_s: float | None,
                     log: Callable[[str], None]) -> bool:
    """Ask every missing (variant, pair, side), one request at a time; False when the budget
    stopped it first."""
    started = time.perf_counter()
    todo = [(v, p, side) for v in variants for p in pairs for side in ("good", "bad")
            if (name, v, p.pair_id, side) not in done]
    log(f"{name}: {len(todo)} requests to ask")
    for i, (v, p, side) in enumerate(todo, 1):
        if budget_s is not None and time.perf_counter() - started > budget_s:
            log(f"{name}: budget of {budget_s:.0f} s spent; {len(todo) - i + 1} requests left")
            return False
        variant = VARIANTS[v]
        sample = p.good if side == "good" else p.bad
        t0 = time.perf_counter()
        asked = request(ds.rubric, variant, sample, ds.language, max_tokens)
        reply = await judge.complete(asked)
        weighted, greedy = scores_of(ds.rubric, variant, reply)
        tokens = [reply.prompt_tokens, reply.prompt_tokens_processed, reply.completion_tokens]
        text = reply.text
        if variant.reason == "second" and reply.choice_probs:
            second = await judge.complete(reason_request(ds.rubric, asked, reply, ds.language,
                                                         max_tokens))
            tokens = [a + b for a, b in zip(tokens, (
                second.prompt_tokens, second.prompt_tokens_processed, second.completion_tokens),
                strict=True)]
            text = second.text
        seconds = time.perf_counter() - t0
        write(Record(name, v, p.pair_id, side, weighted, greedy, *tokens, round(seconds, 3),
                     reply.finish_reason, text[:300]))
        if i % 10 == 0 or i == len(todo):
            log(f"{name}: {i}/{len(todo)} ({v}, {time.perf_counter() - started:.0f} s)")
    return True


def make_judge(profile: str, n_ctx: int) -> Any:
    from localeval.config import Settings
    from localeval.models.backends import make_judge as build

    judge, _ = build(Settings(profile=profile, parallel=1, n_ctx=n_ctx))
    return judge


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", required=True, help=", ".join(SETS))
    parser.add_argument("--variants", default="bare,no_reason,json",
                        help="comma-separated: " + ", ".join(VARIANTS))
    parser.add_argument("--limit", type=int, default=20, help="pairs (from --offset)")
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="folder of records.jsonl")
    parser.add_argument("--src", type=Path, default=None,
                        help="the dev folder (with --train: the train folder)")
    parser.add_argument("--train", action="store_true", help="the set's train/ split")
    parser.add_argument("--profile", default="small")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--max-tokens", type=int, default=160,
                        help="answer cap (a reason is generated greedily up to it)")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="stop before the next request once this many seconds have passed")
    parser.add_argument("--report", action="store_true", help="figures from the records only")
    parser.add_argument("--markdown", action="store_true", help="also the table on stderr")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    if args.set not in SETS:
        log(f"--set {args.set}: unknown set; one of {', '.join(SETS)}")
        return 2
    variants = [v for v in args.variants.split(",") if v]
    if unknown := [v for v in variants if v not in VARIANTS]:
        log(f"--variants: unknown {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
        return 2
    if args.limit < 1 or args.offset < 0:
        log("--limit must be 1 or more and --offset 0 or more")
        return 2
    ds = SETS[args.set]()
    name = args.set + ("-train" if args.train else "")
    try:
        pairs = ds.pairs(args.src, args.train)[args.offset:args.offset + args.limit]
    except LocalevalError as exc:
        log(str(exc))
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "records.jsonl"
    records = [r for r in read_records(path) if r.set == name]
    complete = True
    if not args.report:
        judge = make_judge(args.profile, args.n_ctx)
        with path.open("a", encoding="utf-8") as fh:
            def write(rec: Record) -> None:
                fh.write(json.dumps(asdict(rec), ensure_ascii=False) + "\n")
                fh.flush()
                records.append(rec)
            try:
                complete = asyncio.run(judge_rows(
                    judge, name, ds, pairs, variants, {r.key for r in records}, write,
                    args.max_tokens, args.budget_s, log))
            finally:
                judge.close()
    summary = {"set": name, "language": ds.language, "rubric": ds.rubric.name,
               "scale": ds.rubric.scale, "fields": ds.fields, "profile": args.profile,
               "max_tokens": args.max_tokens, "complete": complete,
               "command": shlex.join(["python", "scripts/bench/bench_frame.py",
                                      *(sys.argv[1:] if argv is None else argv)]),
               "figures": figures(records, pairs, variants, ds.length_trap)}
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    if args.markdown:
        log(markdown(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
