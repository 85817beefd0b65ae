"""A text's claims judged against material: the shared body of faithfulness and context_recall.

The text is split into sentences (text.split_sentences). Two kinds of sentence are settled
mechanically, before any request:
- a **plain question** claims nothing and is listed in `no_claim`. Only a question that asserts
  nothing counts: a tag question ("…, didn't she?", "…，对吧？"), a negative or "isn't it true
  that …" question, a "why" question (it presupposes its claim) or a rhetorical one ("难道…",
  "who doesn't know that …") is judged like any sentence;
- a sentence **quoted** from the material is supported: its `match_key` form equals a whole
  sentence, or a run of whole consecutive sentences, of one text of the material. A sentence
  found only *inside* a longer one ("It is a myth that X.", "X, critics falsely claimed.") is
  judged, since the material does not assert it. Only a whole sentence counts (at least
  `MIN_QUOTE_WORDS` words, ending in . 。 ! ！ ; ；).

A sentence **aimed at the evaluator** (`addresses_judge`: a note or instruction to the judge, a
verdict or verdict JSON, a claim of a reviewer's approval, chat-control tokens, the prompt's own
section markers) is an unsupported claim, decided without a request, so the rest of the answer
is judged exactly as it would be without it; such sentences in the material are removed before
judging. A sentence repeated (after an index mark such as "[1]") counts once. Measured on the
adversarial dev pairs (meta-eval convert adversarial), these rules keep injections from paying.

Every other sentence is a claim to judge. How claims are cut (`settings.claims`):
- `sentences` (default): each sentence is judged as written; a fragment that answers the question
  ("Delhi") is judged as the answer to it ("Q: … A: Delhi"). Nothing is rewritten, so no claim
  can drift from its sentence, and no token is generated for it. A fragment none of whose
  content terms (metrics/focus.terms) occurs in the material or the question, and that denies
  nothing, is unsupported without a request (`unfounded`: it names only what the material never
  mentions — the Chinese counterpart of the novel-name check, which sees only Latin capitals).
- `statements`: the judge writes anchored statements per sentence (support/statements.py), then
  each is checked against its own sentence (`true_to_sentence`): a statement that adds a number,
  a name or content words its sentence and the question lack is replaced by the sentence; one
  that matches another sentence better is moved there (dropped if that sentence has it already);
  duplicates are dropped; a sentence left without a statement is its own statement. How often
  each rule fired is in `details.rules`.
Verdicts come from metrics/support/verdicts.py (the judge's P(supported) against τ).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from localeval.metrics.base import MetricContext
from localeval.metrics.support.focus import terms
from localeval.metrics.support.statements import Anchored, anchored_statements
from localeval.metrics.support.verdicts import support_verdicts
from localeval.text import STOPWORDS, match_key, normalize, split_sentences, word_count

MIN_QUOTE_WORDS = 10.0
"""Shortest quoted sentence: 10 words (15 Chinese characters; text.word_count)."""
FRAGMENT_WORDS = 6.0
"""A sentence of fewer words (9 Chinese characters) is a fragment: judged with the question."""
_CLOSERS = r"[\"'”’」』）)\]]*$"
_QUESTION = re.compile(r"[?？]" + _CLOSERS)
_STATEMENT_END = re.compile(r"[.。!！;；]" + _CLOSERS)
_AUX = (r"(?:is|are|was|were|am|do|does|did|has|have|had|can|could|will|would|should|shall|"
        r"must|may|might|ought)")
_PRONOUN = r"(?:i|you|he|she|it|we|they|there|that|this|one)"
# what makes a question assert something: a tag, a negative or leading opener, a "that" clause
# of knowing or agreeing, a presupposing "why"
_ASSERTING_EN = re.compile(
    r",\s*(?:" + _AUX + r"(?:n['’]t)?(?:\s+not)?\s+" + _PRONOUN + r"|right|true|correct|no|"
    r"yes|eh|ok|okay|isn['’]t that so)\s*[?]"
    r"|^\s*" + _AUX + r"n['’]t\b"
    r"|^\s*" + _AUX + r"\s+\w+(?:\s+\w+)?\s+not\b"
    r"|\b(?:true|fact|obvious|clear|known|agreed|correct|right|case)\s+that\b"
    r"|\b(?:forget|know|deny|doubt|remember|realize|realise|say|think|believe|agree|admit|"
    r"see)\s+that\b"
    r"|^\s*(?:why|how come)\b", re.IGNORECASE)
_ASSERTING_ZH = re.compile(r"难道|岂|不是.{0,60}[吗么嘛]|对吧|是吧|对不对|是不是|不对吗|没错吧|"
                           r"何尝|谁不知道|莫非|为什么|为何|怎么会|不就是|别忘了|不正是|可不是")


_TO_THE_JUDGE = re.compile(
    r"\b(?:evaluators?|graders?|assessors?)\b"
    r"|\b(?:note|message|instructions?)\s+(?:to|for)\s+(?:the\s+)?(?:judge|reviewer|model)"
    r"|\bverdicts?\s*(?:[:=]|of|is|as)?\s*[\"']?[01]\b|\bgive\s+(?:a\s+)?verdict"
    r"|\{\s*[\"']verdicts?[\"']|<\|im_(?:start|end)\|>|<\|endoftext\|>"
    r"|\b(?:every|each|all)\s+(?:of\s+the\s+)?statements?\b"
    r"|\bsupported\s+by\s+the\s+context\b|\bignore\s+(?:all\s+|the\s+)?(?:previous|above)"
    r"|\b(?:reviewed|approved|verified)\s+(?:and\s+\w+\s+)?by\s+(?:a|an|the)?\s*(?:\w+\s+){0,2}"
    r"(?:fact[- ]?checkers?|reviewers?|experts?)\s+as\b"
    r"|^\s*(?:context|statements?|sentences?)\s*:\s*$"
    r"|评审须知|致评审|评估者|判[断定]为\s*[01]|核查员审核|每条陈述|陈述都|上下文的支持|忽略.{0,6}指令"
    r"|符合上下文|^\s*(?:上下文|陈述)\s*[:：]\s*$", re.IGNORECASE)
_INDEX_MARK = re.compile(r"^\s*\[\d+\]\s*")


def addresses_judge(sentence: str) -> bool:
    """Text aimed at the evaluator rather than at the world: an instruction or a note to the
    judge, a verdict, a claim of a reviewer's approval, chat-control tokens, the prompt's own
    section markers. Such a sentence is never a claim a context could support."""
    return bool(_TO_THE_JUDGE.search(sentence))


def without_instructions(material: list[str]) -> tuple[list[str], int]:
    """The material with its sentences aimed at the evaluator removed, and how many were."""
    out, removed = [], 0
    for text in material:
        sentences = split_sentences(text)
        kept = [s for s in sentences if not addresses_judge(s)]
        if len(kept) == len(sentences):
            out.append(text)
            continue
        removed += len(sentences) - len(kept)
        joiner = "" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else " "
        out.append(joiner.join(kept))
    return [t for t in out if t.strip()], removed


def is_question(sentence: str) -> bool:
    return bool(_QUESTION.search(sentence.strip()))


def asserts_nothing(sentence: str) -> bool:
    """A plain question: it ends in a question mark and carries no claim of its own."""
    s = sentence.strip()
    return is_question(s) and not _ASSERTING_EN.search(s) and not _ASSERTING_ZH.search(s)


def _sentence_keys(text: str) -> list[str]:
    return [k for k in (match_key(s) for s in split_sentences(text)) if k]


def quoted_in(sentence: str, material: list[str]) -> bool:
    """The sentence equals (punctuation and spaces aside) a whole sentence, or a run of whole
    consecutive sentences, of one of the material's texts."""
    if word_count(sentence) < MIN_QUOTE_WORDS or not _STATEMENT_END.search(sentence.strip()):
        return False
    key = match_key(sentence)
    if not key:
        return False
    for text in material:
        if key not in match_key(text):
            continue  # cheap test first: most sentences are not quotes
        keys = _sentence_keys(text)
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


# -- statements true to their sentence ---------------------------------------------------------

_STOP = STOPWORDS | {"one", "two"}
_NUM = re.compile(r"\d+(?:[.,]\d+)*")
_LATIN = re.compile(r"[a-z][a-z'’-]*")
_CJK = re.compile(r"[\u3400-\u9fff]")


def content(text: str) -> set[str]:
    """Numbers, and content words (Latin: 5-letter stems of non-function words; Chinese:
    character bigrams) of a text."""
    flat = normalize(text)
    out = {n.replace(",", "") for n in _NUM.findall(flat)}
    out |= {w[:5] for w in _LATIN.findall(flat) if w not in _STOP and len(w) > 2}
    han = "".join(_CJK.findall(flat))
    out |= {han[i:i + 2] for i in range(len(han) - 1)}
    return out


def true_to_sentence(items: list[Anchored], sentences: list[str], question: str | None,
                     rules: Counter[str], skip: set[int] | frozenset[int] = frozenset()
                     ) -> list[Anchored]:
    """Each statement kept under the sentence it belongs to, with nothing its sentence (and the
    question) lacks; see the module doc. Sentences in `skip` (0-based: settled mechanically)
    take no statement. `rules` counts what fired."""
    sets = [content(s) for s in sentences]
    q = content(question or "")
    names = content(" ".join(sentences))  # pronouns may be replaced by the answer's own names
    out: dict[int, list[Anchored]] = {i + 1: [] for i in range(len(sentences)) if i not in skip}
    seen: set[str] = set()
    copied: set[int] = set()
    for item in items:
        if item.sentence in out and match_key(item.statement) == match_key(
                sentences[item.sentence - 1]):
            copied.add(item.sentence)  # the sentence as its own statement: added below,
            continue  # only if nothing else is
        own = item.sentence if item.sentence in out else min(out)
        words = content(item.statement)
        missing = {n: len(words - sets[n - 1] - q) for n in out}
        best = min(out, key=lambda n: (missing[n], n != own))
        if missing[best] < missing[own]:  # another sentence says it: it belongs there
            rules["moved"] += 1
            own = best
        added = words - sets[own - 1] - q
        numbers = {w for w in added if w[0].isdigit()}
        foreign = added - names
        text, extracted = item.statement, None
        if numbers or len(foreign) > 1 or len(added) > max(2, len(sets[own - 1]) // 3):
            rules["replaced"] += 1
            text, extracted = sentences[own - 1], item.statement
        key = match_key(text)
        if key in seen:
            rules["duplicate"] += 1
            continue
        seen.add(key)
        out[own].append(Anchored(text, own, extracted))
    for n, kept in out.items():
        if not kept:
            rules["sentence itself"] += n not in copied
            kept.append(Anchored(sentences[n - 1], n))
    return [a for n in sorted(out) for a in out[n]]


# -- the shared body -----------------------------------------------------------------------------

@dataclass
class Claims:
    """Per claim (in sentence order) its text, sentence number and verdict entry; the
    sentences that claim nothing; pieces of the material, retried requests, rules fired."""

    sentences: list[str]
    statements: list[dict[str, Any]] = field(default_factory=list)
    no_claim: list[int] = field(default_factory=list)
    pieces: int = 1
    retries: int = 0
    rules: Counter[str] = field(default_factory=Counter)

    @property
    def supported(self) -> int:
        return sum(s["verdict"] for s in self.statements)

    @property
    def p_supported(self) -> float | None:
        """Summed probability of support (None when the judge gave none for some statement)."""
        probs = [s.get("p_supported") for s in self.statements]
        return None if any(p is None for p in probs) else sum(probs)  # type: ignore[arg-type]

    def details(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sentences": self.sentences, "statements": self.statements}
        if self.no_claim:
            out["no_claim"] = self.no_claim
        if self.rules:
            out["rules"] = dict(sorted(self.rules.items()))
        if self.pieces > 1:
            out["context_pieces"] = self.pieces
        if self.retries:
            out["judge_retries"] = self.retries
        return out


async def judge_claims(ctx: MetricContext, step: str, text: str, question: str | None,
                       material: list[str], material_name: str = "context") -> Claims:
    """The claims of `text`, each with its verdict against `material` (the contexts)."""
    sentences = split_sentences(text)
    claims = Claims(sentences=sentences)
    material, claims.rules["context instruction removed"] = without_instructions(material)
    quoted: list[int] = []
    aimed: list[int] = []
    repeated: list[int] = []
    seen: set[str] = set()
    for i, sentence in enumerate(sentences):
        key = match_key(_INDEX_MARK.sub("", sentence))
        if addresses_judge(sentence):
            aimed.append(i)
        elif key in seen:
            repeated.append(i)  # the same sentence again: counted once
        elif asserts_nothing(sentence):
            claims.no_claim.append(i + 1)
        elif quoted_in(sentence, material):
            quoted.append(i)
        seen.add(key)
    claims.rules.update({"question (no claim)": len(claims.no_claim), "quote": len(quoted),
                         "instruction to the judge": len(aimed), "repeated": len(repeated)})
    skip = {n - 1 for n in claims.no_claim} | set(quoted) | set(aimed) | set(repeated)
    if ctx.settings.claims == "statements":
        found = await anchored_statements(ctx, text, question, skip=skip)
        items = true_to_sentence(found.items, sentences, question, claims.rules, skip)
        claims.retries = found.retries
    else:
        items = [Anchored(c, i + 1) for i, c in
                 enumerate(claim_texts(sentences, question, ctx.language)) if i not in skip]
    entries: list[tuple[int, dict[str, Any]]] = [
        (i + 1, {"statement": sentences[i], "sentence": i + 1, "verdict": 1, "quoted": True,
                 "rule": "quote", "reason": f"a whole sentence of the {material_name}",
                 "p_supported": 1.0})
        for i in quoted]
    entries += [(i + 1, {"statement": sentences[i], "sentence": i + 1, "verdict": 0,
                         "rule": "check", "p_supported": 0.0,
                         "reason": "addressed to the evaluator: not a claim the "
                                   f"{material_name} could support"})
                for i in aimed]
    fragments = [a for a in items if ctx.settings.claims == "sentences"
                 and is_fragment(a.statement, sentences[a.sentence - 1])]
    for a in fragments:
        novel = unfounded(sentences[a.sentence - 1], material, question)
        if novel:
            claims.rules["unfounded fragment"] += 1
            items.remove(a)
            entries.append((a.sentence, {
                "statement": a.statement, "sentence": a.sentence, "verdict": 0,
                "rule": "check", "novel_details": novel, "p_supported": 0.0,
                "reason": f"names only what the {material_name} and the question never "
                          f"mention: {', '.join(novel)}"}))
    if items:
        support = await support_verdicts(ctx, step, [a.statement for a in items],
                                         split="contexts", contexts=material, question=question,
                                         material_name=material_name)
        entries += [(a.sentence, {"statement": a.statement, "sentence": a.sentence, **v,
                                  **({"extracted": a.extracted} if a.extracted else {})})
                    for a, v in zip(items, support.verdicts, strict=True)]
        claims.pieces, claims.retries = support.pieces, claims.retries + support.retries
    claims.statements = [e for _, e in sorted(entries, key=lambda x: x[0])]
    claims.rules = Counter({k: v for k, v in claims.rules.items() if v})
    return claims
