"""A text's claims: its sentences, every one that carries content judged.

The text and its material come split into sentences (text.sentences_of). A rule may lower a
score or flag a sentence; it never raises one (DESIGN §11). Before any request:
- a sentence **aimed at the evaluator** (`addresses_judge`: a note or instruction addressed to
  the judge, grader or checker, a verdict or verdict JSON, chat-control tokens, the prompt's own
  section markers) is an unsupported claim (verdict 0, flagged). The same sentence in the
  material is never deleted: the judge sees it, fenced as data (prompts/*/system.j2), and the
  sample is flagged by the shield (metrics/shield.py), which lets it only lower a score;
- a sentence **repeated** byte for byte (whitespace aside: `text.repeat_key`) counts once;
- a sentence that **may assert nothing** (`asserts_nothing`: a question by its form) is judged
  like any other, in the same request, and the judge is asked beside its verdict whether it
  asserts a fact (judge.schemas.fact_verdicts); it drops out of the score only when the judge
  says it asserts none.
Every other sentence is a claim to judge. A sentence **quoted** whole from the material
(`quoted_in`) is judged too — a neighbouring denial, a heading ("Myth #3.") or a list's lead-in
("The following claims are false:") can deny it — and is marked `quoted` for the reader.

What is judged for a sentence (`claim_texts`): the sentence as written; a fragment that answers
the question ("Delhi") as the answer to it ("Q: … A: Delhi"); a leading "It" with its referent
("It (the Eiffel Tower) is …"). A fragment none of whose content terms (`terms`) occurs in the
material or the question, and that denies nothing, is unsupported without a request
(`unfounded`: a rule that lowers). With `claims = "statements"` the judge's statements replace
the sentences (support/statements.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from localeval.metrics.shield import aimed_at_evaluator
from localeval.text import (
    Sentences,
    content,  # noqa: F401  (metrics/context_relevance.py imports it here)
    has_cjk,
    match_key,
    repeat_key,
    terms,
    word_count,
)

MIN_QUOTE_WORDS = 10.0
"""Shortest quoted sentence: 10 words (15 Chinese characters; text.word_count)."""
FRAGMENT_WORDS = 6.0
"""A sentence of fewer words (9 Chinese characters) is a fragment: judged with the question."""
_CLOSERS = r"[\"'”’」』）)\]]*$"
_QUESTION = re.compile(r"[?？]" + _CLOSERS)
_STATEMENT_END = re.compile(r"[.。!！;；]" + _CLOSERS)
_AUX = (r"(?:is|are|was|were|am|do|does|did|has|have|had|can|could|will|would|should|shall|"
        r"must|may|might|ought)")
# a question by its form (asserts_nothing): a question word or an auxiliary first (en), a question
# word or a final 吗 (zh)
_WH_EN = r"(?:what|who|whom|whose|which|when|where|how)"  # not "why": it presupposes
_OPENER_EN = re.compile(r"^(?:(?P<wh>" + _WH_EN + r")|" + _AUX + r")\b", re.IGNORECASE)
_WH_ZH = re.compile(r"什么|啥|谁|哪|几|多少|多大|多高|多长|多久|怎样|怎么样|如何|何时|何处|何地|"
                    r"何人|是否")
_YES_NO_ZH = re.compile(r"[吗么][？?]$")
# anything that can join a second clause to a question, or set one inside it
_CLAUSE_MARK = re.compile(r"[,;:()\[\]{}\"“”‘«»—–…，、；：（）「」『』《》【】〈〉]|\s[-‐]\s|--|"
                          r"(?:^|\s)'|'(?:\s|$)|[.!?。！？]")
# what makes a question carry a proposition: a negation (a leading question), a verb of knowing
# or saying with a clause after it, a word that presupposes or asserts, a relative clause
_KNOWING = (r"know|knew|heard|hear|think|thought|believ|realis|realiz|aware|remember|forget|"
            r"forgot|surpris|say|said|tell|told|notic|learn|admit|deny|denied|doubt|agree|"
            r"suppos|guess|bet|wonder|imagin|read|saw|see")
_CARRIES_EN = re.compile(
    r"\b(?:not|no|never|nobody|nothing|none|neither|nor|without)\b|n['’]t\b"
    r"|\b(?:" + _KNOWING + r")\w*\s+(?!more\b)\S+\s+\S+"
    r"|\b(?:true|fact|false|obvious|clear|course|actually|really|indeed|right|correct|wrong|"
    r"since|because|given|still|again|even|only|already|also|too|famous|well|supposed|"
    r"that|who|which|whose|come)\b", re.IGNORECASE)
_DETAIL_EN = re.compile(r"\d|(?<=\s)(?!I\b)[A-Z]")  # a number, a capitalised word after the first
_CARRIES_ZH = re.compile(r"[不没未非无别莫勿吧呢]|知道|听说|认为|觉得|以为|相信|记得|忘|难道|岂|"
                         r"竟|居然|其实|确实|原来|果然|当然|毕竟|为什么|为何|怎么会|怎会|可见|"
                         r"谁不|早就|还是")
_CLOSING = "?？\"'”’」』）)] "
WH_WORDS, WH_CHARS = 6, 8
"""Longest wh-question that asserts nothing: 6 words (en), 8 characters (zh); a longer one's
verb phrase can carry a claim it presupposes ("When did the sun start orbiting the earth?")."""


@dataclass
class Claim:
    """One claim to judge and the numbered sentence (1-based) it came from; `extracted` is the
    judge's statement when a check replaced it by its sentence (support/statements.py)."""

    statement: str
    sentence: int
    extracted: str | None = None
    asks: bool = False
    """The sentence may assert nothing (`asserts_nothing`): the judge is asked whether it
    asserts a fact beside its verdict."""


@dataclass
class TextClaims:
    """A text's sentences and the claims anchored to them (in sentence order), with the judge
    requests retried split smaller."""

    sentences: list[str]
    items: list[Claim] = field(default_factory=list)
    retries: int = 0

    @property
    def texts(self) -> list[str]:
        return [a.statement for a in self.items]


def addresses_judge(sentence: str) -> bool:
    """Text aimed at the evaluator rather than at the world (metrics/shield.aimed_at_evaluator):
    never a claim a context could support."""
    return aimed_at_evaluator(sentence)


def is_question(sentence: str) -> bool:
    return bool(_QUESTION.search(sentence.strip()))


def asserts_nothing(sentence: str) -> bool:
    """The sentence may assert nothing a context could deny: a question by its form alone (it
    opens with a question word or an auxiliary, zh: holds a question word or ends in 吗; one
    clause; no negation, verb of knowing, presupposing word; a short wh-question without a name
    or number). Such a sentence is still judged: the judge says beside its verdict whether it
    asserts a fact (judge.schemas.fact_verdicts), and only a sentence both call claimless
    leaves the score."""
    s = sentence.strip()
    if not is_question(s):
        return False
    body = s.rstrip(_CLOSING)  # the question mark and what closes it
    if _CLAUSE_MARK.search(body):
        return False
    if has_cjk(body):
        if _CARRIES_ZH.search(body):
            return False
        if _YES_NO_ZH.search(s):
            return True
        # a wh-question presupposes its verb phrase: only a short one without a number is free
        return bool(_WH_ZH.search(body)) and not re.search(r"\d", body) and len(body) <= WH_CHARS
    opener = _OPENER_EN.match(body)
    if not opener or _CARRIES_EN.search(body, opener.end()):
        return False
    return not opener.group("wh") or not (_DETAIL_EN.search(body)
                                          or word_count(body) > WH_WORDS)


def quoted_in(sentence: str, material: Sequence[Sentences]) -> bool:
    """The sentence equals (punctuation and spaces aside) a whole sentence, or a run of whole
    consecutive sentences, of one of the material's texts."""
    if word_count(sentence) < MIN_QUOTE_WORDS or not _STATEMENT_END.search(sentence.strip()):
        return False
    key = match_key(sentence)
    if not key:
        return False
    for text in material:
        if key not in match_key(text.text):
            continue  # cheap test first: most sentences are not quotes
        keys = [k for k in text.keys if k]
        for i in range(len(keys)):
            run = ""
            for k in keys[i:]:
                run += k
                if run == key:
                    return True
                if len(run) >= len(key):
                    break
    return False


def claim_text(sentence: str, question: str | None, language: str) -> str:
    """What is judged for a sentence: the sentence, or for a fragment that answers the question,
    the question and the fragment together."""
    if question and question.strip() and word_count(sentence) < FRAGMENT_WORDS:
        return (f"问：{question.strip()} 答：{sentence}" if language == "zh"
                else f"Q: {question.strip()} A: {sentence}")
    return sentence


_IT = re.compile(r"^(It|Its)\b")
_DUMMY_IT = re.compile(r"^It\s+(?:is|was|has been|had been|will be|would be|seems|seemed|"
                       r"appears|appeared|remains|takes|took|became)\b(?:\s+\S+){0,3}?\s+"
                       r"(?:that|to|whether|how|why|if|when)\b")
# a subject the next sentence's "It" stands for: a run of capitalised words (after an optional
# article) before "is/was/are/were" — what the sentence is about; after an active verb ("Philips
# unveiled the lamp. It costs …") the "It" is as likely to be the object, so no guess is made
_SUBJECT = re.compile(r"^(?:(The|A|An)\s+)?((?:[A-Z][\w'’.-]*)(?:\s+(?:[A-Z][\w'’.-]*|of|de|da|"
                      r"du|von|van|der|la|le|and|&))*)\s+(?:is|was|are|were)\b")
_PRONOUNS = {"It", "Its", "He", "She", "They", "We", "I", "You", "This", "That", "These",
             "Those", "There", "Here", "His", "Her", "Their", "Our", "My", "Your"}


def referents(sentences: list[str], language: str) -> list[str | None]:
    """Per sentence, what a leading "It"/"Its" refers to: the subject of the sentence before it
    when that one opens with a name and "is/was/are/were" ("The Eiffel Tower was …" → "the
    Eiffel Tower"), carried through consecutive "It" sentences. A sentence
    judged alone loses its antecedent ("It is 330 metres tall." says nothing a context could
    support). Not for an "it" that stands for nothing ("It is believed that …", "It takes two
    hours to …"); English only; None where there is no such subject."""
    out: list[str | None] = []
    subject: str | None = None  # of the sentence just before (carried through "It" sentences)
    for sentence in sentences:
        text = sentence.strip()
        it = language != "zh" and _IT.match(text) and not _DUMMY_IT.match(text)
        out.append(subject if it else None)
        m = _SUBJECT.match(text)
        words = m.group(2).split() if m else []
        if m and words[0] not in _PRONOUNS | {"The", "A", "An"} and not m.group(2).endswith(
                ("'", "’", "'s", "’s")):  # "Evans' book is …": the name is not the subject
            subject = f"{m.group(1).lower()} {m.group(2)}" if m.group(1) else m.group(2)
        elif not (it and subject):
            subject = None
    return out


def claim_texts(sentences: list[str], question: str | None, language: str) -> list[str]:
    """What is judged for each sentence: a leading "It" with its referent in brackets ("It
    (the Eiffel Tower) is 330 metres tall."), else `claim_text`."""
    out = []
    for sentence, referent in zip(sentences, referents(sentences, language), strict=True):
        m = _IT.match(sentence.strip())
        if referent and m:  # a full claim now, even when short
            rest = sentence.strip()[m.end():]
            out.append(f"{m.group(1)} ({referent}){rest}")
        else:
            out.append(claim_text(sentence, question, language))
    return out


def is_fragment(claim: str, sentence: str) -> bool:
    """The claim is a fragment judged with its question ("Q: … A: <sentence>")."""
    return claim != sentence and claim.endswith(sentence)


_DENIAL = re.compile(r"\b(?:no|not|none|never|nobody|nothing|neither|nor|cannot|unknown)\b|n['’]t\b"
                     r"|[没无不未非否别]", re.IGNORECASE)


def unfounded(fragment: str, material: list[str], question: str | None) -> list[str]:
    """The content terms of a fragment answer when none of them occurs in the material or the
    question: an answer that only names what the material never mentions ("上海", "Delhi")
    cannot be supported by it. A fragment that denies ("没有这样的APP", "no one") names nothing."""
    if _DENIAL.search(fragment):
        return []
    own = terms(fragment)
    known = set(terms(" ".join([*material, question or ""])))
    return [] if not own or any(t in known for t in own) else list(dict.fromkeys(own))


@dataclass
class SentenceRules:
    """What the rules found per sentence of a text (0-based indices): sentences aimed at the
    evaluator, repeated byte for byte, that may assert nothing (judged, and asked), quoted
    whole from the material (judged)."""

    aimed: list[int] = field(default_factory=list)
    repeated: list[int] = field(default_factory=list)
    asks: list[int] = field(default_factory=list)
    quoted: list[int] = field(default_factory=list)

    @property
    def skip(self) -> set[int]:
        """Sentences not judged: aimed at the evaluator (verdict 0) or repeated (counted once).
        A question and a quote are judged."""
        return set(self.aimed) | set(self.repeated)

    def fired(self) -> Counter[str]:
        return Counter({"may assert nothing: asked": len(self.asks), "quote": len(self.quoted),
                        "instruction to the judge": len(self.aimed),
                        "repeated": len(self.repeated)})


def sentence_rules(sentences: Sequence[str], material: Sequence[Sentences]) -> SentenceRules:
    """Apply the module doc's rules to each sentence, in order."""
    found = SentenceRules()
    seen: set[str] = set()
    for i, sentence in enumerate(sentences):
        key = repeat_key(sentence)
        if addresses_judge(sentence):
            found.aimed.append(i)
        elif key in seen:
            found.repeated.append(i)  # the same bytes again: counted once
        else:
            if asserts_nothing(sentence):
                found.asks.append(i)
            if quoted_in(sentence, material):
                found.quoted.append(i)
        seen.add(key)
    return found


def sentence_claims(sentences: list[str], question: str | None, language: str,
                    skip: set[int], asks: set[int] | frozenset[int] = frozenset()
                    ) -> list[Claim]:
    """The claims of `claims = "sentences"`: each sentence not in `skip` as `claim_texts`
    writes it, those in `asks` marked to be asked whether they assert a fact."""
    return [Claim(c, i + 1, asks=i in asks)
            for i, c in enumerate(claim_texts(sentences, question, language)) if i not in skip]


@dataclass
class Ruled:
    """What the rules settle before any request: the text's sentences, the material (whole),
    each sentence's rule (`found`), the verdict entries of the sentences settled without the
    judge (sentence number, entry) and the count of each rule that fired."""

    sentences: list[str]
    material: tuple[Sentences, ...]
    found: SentenceRules
    entries: list[tuple[int, dict[str, Any]]]
    rules: Counter[str]


def rule_out(text: Sentences, question: str | None, material: Sequence[Sentences],
             material_name: str = "context") -> Ruled:
    """Apply the rules (module doc) to a text's sentences and its material."""
    sentences = list(text.items)
    material = tuple(material)
    found = sentence_rules(sentences, material)
    rules = found.fired()
    entries = [(i + 1, {"statement": sentences[i], "sentence": i + 1, "verdict": 0,
                        "rule": "check", "p_supported": 0.0,
                        "reason": "addressed to the evaluator: not a claim the "
                                  f"{material_name} could support"}) for i in found.aimed]
    return Ruled(sentences, material, found, entries, rules)


def sentence_items(ruled: Ruled, question: str | None, language: str,
                   material_name: str = "context") -> list[Claim]:
    """The claims of `claims = "sentences"` left for the judge: `sentence_claims`, less each
    fragment answer (not a question: the judge says whether it asserts anything) that names
    only what the material and the question never mention (`unfounded`), whose unsupported
    entry joins `ruled.entries`."""
    kept, sentences = [], ruled.sentences
    for a in sentence_claims(sentences, question, language, ruled.found.skip,
                             set(ruled.found.asks)):
        sentence = sentences[a.sentence - 1]
        novel = not a.asks and is_fragment(a.statement, sentence) and unfounded(
            sentence, [m.text for m in ruled.material], question)  # a question: the judge's
        if not novel:
            kept.append(a)
            continue
        ruled.rules["unfounded fragment"] += 1
        ruled.entries.append((a.sentence, {
            "statement": a.statement, "sentence": a.sentence, "verdict": 0, "rule": "check",
            "novel_details": novel, "p_supported": 0.0,
            "reason": f"names only what the {material_name} and the question never "
                      f"mention: {', '.join(novel)}"}))
    return kept
