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
("It (the Eiffel Tower) is …"). A fragment none of whose content terms (`ranking_terms`) occurs
in the material or the question, and that denies nothing, is unsupported without a request
(`unfounded`: a rule that lowers). With `claims = "statements"` the judge's statements replace
the sentences (claims/split.py).

`claims = "statements"`: the judge writes the statements of each sentence, kept true to it.

The text (an answer or a ground truth) comes split into sentences (text.sentences_of); the
prompt shows every sentence numbered, and each request asks for the statements of a group of
consecutive sentences with an exact-length schema: one list per sentence (1..3 statements, each
at most a few characters longer than its sentence). So no sentence is dropped, no statement is
invented beside the sentences, and the longest possible answer of a request fits max_tokens:
groups are formed so that n · per_sentence · (chars + 4) + 16 ≤ max_tokens (a token holds at
least one character). A request that still fails (max_tokens, an invalid answer) or
degenerates (the same n-gram over and over) is retried once split smaller (claims/verdicts.py).

Each statement is then checked against its own sentence (`true_to_sentence`): a statement that
adds a number, a name or content words its sentence and the question lack, or that leaves out
a content word, a number or a negation of its sentence (a statement that drops "never", part of
the sentence, or swaps one word), is replaced by the sentence; one that matches another sentence
better is moved there (dropped if that sentence has it already); duplicates are dropped; a
sentence left without a statement is its own statement. How often each rule fired is in
`details.rules`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from localeval.judge.schemas import sentence_statements
from localeval.metrics.base import MetricContext
from localeval.metrics.claims.record import ClaimRecord, Verdict
from localeval.metrics.claims.verdicts import degenerate, retry_split
from localeval.metrics.shield import aimed_at_evaluator
from localeval.text import (
    CJK,
    Sentences,
    has_cjk,
    json_safe,
    match_key,
    overlap_words,
    ranking_terms,
    repeat_key,
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
    judge's statement when a check replaced it by its sentence (claims/split.py)."""

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
    own = ranking_terms(fragment)
    known = set(ranking_terms(" ".join([*material, question or ""])))
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
    each sentence's rule (`found`), the claims settled without the
    judge (sentence number, record) and the count of each rule that fired."""

    sentences: list[str]
    material: tuple[Sentences, ...]
    found: SentenceRules
    entries: list[tuple[int, ClaimRecord]]
    rules: Counter[str]


def rule_out(text: Sentences, question: str | None, material: Sequence[Sentences],
             material_name: str = "context") -> Ruled:
    """Apply the rules (module doc) to a text's sentences and its material."""
    sentences = list(text.items)
    material = tuple(material)
    found = sentence_rules(sentences, material)
    rules = found.fired()
    entries = [(i + 1, ClaimRecord(sentences[i], i + 1, Verdict(
        0, f"addressed to the evaluator: not a claim the {material_name} could support",
        shape="ruled", rule="check", p_yes=0.0))) for i in found.aimed]
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
        ruled.entries.append((a.sentence, ClaimRecord(a.statement, a.sentence, Verdict(
            0, f"names only what the {material_name} and the question never mention: "
               f"{', '.join(novel)}", shape="ruled", rule="check", novel_details=tuple(novel),
            p_yes=0.0))))
    return kept


STEP = "faithfulness_statements"
PER_SENTENCE_MAX = 3
WORDS_PER_STATEMENT = 6
MIN_CHARS, MAX_CHARS, EXTRA_CHARS = 60, 240, 30
OVERHEAD_TOKENS = 16
_WORDY = re.compile(r"[^\W_]")


def per_sentence(sentence: str) -> int:
    """Statements allowed for one sentence: one per ~6 words, 1..3."""
    return max(1, min(PER_SENTENCE_MAX, math.ceil(word_count(sentence) / WORDS_PER_STATEMENT)))


def chars_for(sentence: str, question: str = "") -> int:
    """Longest statement allowed: the sentence plus room for the names that replace its
    pronouns and, for a short answer, the question's words that make it a full sentence."""
    return max(MIN_CHARS, min(MAX_CHARS, len(sentence) + len(question) + EXTRA_CHARS))


def _shape(group: Sequence[str], max_tokens: int, question: str = "") -> tuple[int, int]:
    k = max(per_sentence(s) for s in group)
    chars = max(chars_for(s, question) for s in group)
    room = (max_tokens - OVERHEAD_TOKENS) // (len(group) * k) - 4
    return k, max(8, min(chars, room))


def worst_tokens(group: Sequence[str], k: int, chars: int) -> int:
    return len(group) * k * (chars + 4) + OVERHEAD_TOKENS


def groups(sentences: list[str], max_tokens: int,
           question: str = "") -> list[tuple[int, int]]:
    """Consecutive [start, end) runs of sentences whose worst-case answer fits max_tokens."""
    out: list[tuple[int, int]] = []
    start = 0
    for end in range(1, len(sentences) + 1):
        run = sentences[start:end]
        k = max(per_sentence(s) for s in run)
        chars = max(chars_for(s, question) for s in run)
        if end - start > 1 and worst_tokens(run, k, chars) > max_tokens:
            out.append((start, end - 1))
            start = end - 1
    if sentences:
        out.append((start, len(sentences)))
    return out


def _numbers(indices: list[int]) -> list[int] | None:
    """The 1-based numbers of a group that skips some, else None (the prompt says "i to j")."""
    consecutive = indices == list(range(indices[0], indices[-1] + 1))
    return None if consecutive else [i + 1 for i in indices]


async def anchored_statements(ctx: MetricContext, text: Sentences, question: str | None,
                              skip: Collection[int] = ()) -> TextClaims:
    """The statements of every sentence of `text` but those (0-based) in `skip`, in order. The
    prompt still shows every sentence, for the names that pronouns stand for; a group of the
    others may skip numbers ("sentences 2, 4 and 6"), so skipped sentences cost no extra request.
    Shared by faithfulness, context_recall and answer_correctness (identical requests are asked
    once)."""
    sentences = list(text.items)
    result = TextClaims(sentences)
    max_tokens = ctx.settings.max_tokens

    async def ask(indices: list[int]) -> list[list[str]]:
        group = [sentences[i] for i in indices]
        k, chars = _shape(group, max_tokens, question or "")
        found = await ctx.ask(STEP, sentence_statements(len(group), k, chars),
                              question=question or "",
                              sentences=[json_safe(s) for s in sentences],
                              first=indices[0] + 1, last=indices[-1] + 1, count=len(indices),
                              numbers=_numbers(indices))
        return [list(s) for s in found.statements]  # type: ignore[attr-defined]

    def bad(answer: list[list[str]]) -> bool:
        return degenerate([s for per in answer for s in per])

    seen: set[str] = set()
    asked = [i for i in range(len(sentences)) if i not in skip]
    for start, end in groups([sentences[i] for i in asked], max_tokens, question or ""):
        answer, retried = await retry_split(asked[start:end], ask, bad)
        result.retries += retried
        for index, per in zip(asked[start:end], answer, strict=True):
            number = index + 1
            # a statement already written for an earlier sentence is that sentence's, not this
            kept = [s for s in dict.fromkeys(s.strip() for s in per if _WORDY.search(s))
                    if repeat_key(s) not in seen]
            if not kept:  # the sentence itself stands for its claim: no sentence is dropped
                kept = [sentences[number - 1]]
            seen.update(repeat_key(s) for s in kept)
            result.items.extend(Claim(s, number) for s in kept)
    return result


def true_to_sentence(items: list[Claim], sentences: list[str], question: str | None,
                     rules: Counter[str], skip: set[int] | frozenset[int] = frozenset()
                     ) -> list[Claim]:
    """Each statement kept under the sentence it belongs to, with nothing its sentence (and the
    question) lacks; see the module doc. Sentences in `skip` (0-based: settled mechanically)
    take no statement. `rules` counts what fired."""
    sets = [overlap_words(s) for s in sentences]
    q = overlap_words(question or "")
    names = overlap_words(" ".join(sentences))  # pronouns may be replaced by the answer's own names
    out: dict[int, list[Claim]] = {i + 1: [] for i in range(len(sentences)) if i not in skip}
    seen: set[str] = set()
    copied: set[int] = set()
    for item in items:
        if item.sentence in out and match_key(item.statement) == match_key(
                sentences[item.sentence - 1]):
            copied.add(item.sentence)  # the sentence as its own statement: added below,
            continue  # only if nothing else is
        own = item.sentence if item.sentence in out else min(out)
        words = overlap_words(item.statement)
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
        key = repeat_key(text)  # the same bytes only: "2.5 mg" and "25 mg" are two claims
        if key in seen:
            rules["duplicate"] += 1
            continue
        seen.add(key)
        out[own].append(Claim(text, own, extracted))
    for n, kept in out.items():
        own = [c for c in kept if c.statement != sentences[n - 1]]
        if own and drops_or_changes(sentences[n - 1], [c.statement for c in kept]):
            rules["dropped or changed"] += 1
            out[n] = [Claim(sentences[n - 1], n, " | ".join(c.extracted or c.statement
                                                            for c in kept))]
        elif not kept:
            rules["sentence itself"] += n not in copied
            kept.append(Claim(sentences[n - 1], n))
    return [a for n in sorted(out) for a in out[n]]


_NEGATION = re.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot)\b"
                       r"|n['’]t\b|[不没未非无别勿莫]", re.IGNORECASE)
CJK_MISSING = 0.2
"""Share of a Chinese sentence's character bigrams its statements may leave out (a pronoun
replaced by its name drops one or two); Latin words and numbers may not be left out at all."""


def _negations(text: str) -> set[str]:
    found = {m.group().casefold() for m in _NEGATION.finditer(text)}
    return {"not" if w in {"n't", "n’t", "cannot"} else w for w in found}


def drops_or_changes(sentence: str, statements: list[str]) -> bool:
    """The statements of a sentence leave out one of its numbers or content words (a part of
    the sentence, or a word swapped for another), more than `CJK_MISSING` of its Chinese
    bigrams, or do not negate what it negates ("never" dropped, "not" added)."""
    union = set().union(*(overlap_words(s) for s in statements))
    missing = overlap_words(sentence) - union
    han = {w for w in overlap_words(sentence) if CJK.match(w)}
    dropped_han = {w for w in missing if CJK.match(w)}
    if missing - dropped_han or len(dropped_han) > max(2, int(len(han) * CJK_MISSING)):
        return True
    return _negations(sentence) != _negations(" ".join(statements))
