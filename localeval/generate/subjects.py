"""What names a document's subject, so that a question can be checked to name it (filters'
`unnamed_subject`): a title's distinctive words and a document's names. A short form of the
document's name that the document itself uses ("the ferry" of "The Kestrel Bay Ferry",
咖啡馆 of 半岛咖啡馆) names no subject alone: a reader of the question does not know which."""

from __future__ import annotations

import re
from dataclasses import dataclass

from localeval.generate.lang import LANGUAGES, en, written_in, zh
from localeval.generate.words import content_words, word_key
from localeval.text import CJK_RUN, normalize, split_sentences

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+)$", re.MULTILINE)
NAME = en.NAME
_NEVER = frozenset().union(*(lang.never_subject for lang in LANGUAGES.values()))
"""Words that never name a subject (months, weekdays)."""
_NUMERALS = frozenset().union(*(lang.numerals for lang in LANGUAGES.values()))
"""Characters of numbers and dates: a term holding one names no subject."""


def subject_terms(documents: dict[str, str]) -> dict[str, set[str]]:
    """Per document (source → text) the terms that name its subject, as content words.

    English: its title's words (a heading opening it) and its names (capitalised words of its
    body, not its headings, that it never writes in lower case). A title word it also writes
    in lower case ("the ferry" of "The Kestrel Bay Ferry") is a common noun: it counts only in
    a title of common nouns ("Sourdough Baking at Home"). Its first sentence's words count
    only when it has neither title nor name.

    Chinese (no capitals): its name, the title or else the longest opening of its first
    sentence that it writes again and that is a name ("半岛咖啡馆", not "越来越多"); a short
    form of the name the document uses alone (茶园 of 云岭茶园, 保护区 of 卧龙大熊猫保护区)
    does not count, the name's opening always does. A title that is no name (a headline:
    "邀请制去哪儿了？——国际奥委会委员杨扬释疑奥运会申办程序改革") also counts its words that
    no other document of the corpus writes (奥委, 申办: "国际奥委会什么时候确认……？" names its
    story; 上海 of a corpus holding two stories of Shanghai does not). Without such a name:
    its first sentence's terms and its own recurring terms (in two sentences or more of it and
    in no other document).
    Numbers, months, weekdays and Chinese question words (哪儿 of a headline) never name a
    subject."""
    counts = {src: _counts(text) for src, text in documents.items()}
    df: dict[str, int] = {}
    for mine in counts.values():
        for w in mine:
            df[w] = df.get(w, 0) + 1
    out: dict[str, set[str]] = {}
    for src, text in documents.items():
        body = text.lstrip()
        title = _HEADING.match(body)
        if title:
            body = body[title.end():]
        first = split_sentences(body.strip())[:1]
        if not written_in(text).capitals:
            name = title.group(1).strip() if title else _zh_name(first[0] if first else "",
                                                                  text)
            terms = _zh_name_terms(name, text) if name else set()
            if title and not zh.is_name(name):
                # a headline, not a name: its words no other document writes name its story
                terms |= {w for w in content_words(name) if df.get(w) == 1}
            if not terms:
                terms = content_words(first[0]) if first else set()
                terms |= {w for w, n in counts[src].items() if n >= 2 and df[w] == 1}
        else:
            terms = content_words(" ".join(_names(_HEADING.sub("", text))))
            if title:
                words = content_words(title.group(1))
                terms |= (words & terms) or words
            if not terms and first:
                terms = content_words(first[0])
        out[src] = {w for w in terms if not w.isdigit() and len(w) > 1 and w not in _NEVER
                    and not any(ch in _NUMERALS for ch in w) and not zh.ASKS.search(w)}
    return out


def _names(text: str) -> list[str]:
    """Capitalised words the text writes once or more inside a sentence (or opening it before
    another capitalised word: "Dong Ding") and never in lower case: "Holm" of Holm Island, not
    "Island" ("the island's mail")."""
    lower = set(re.findall(r"\b[a-z][a-z-]*", text))
    inside = {m.group(0) for m in NAME.finditer(text)
              if not _opens_sentence(text, m.start()) or _THEN_NAME.match(text, m.end())}
    return sorted(w for w in inside if w.lower() not in lower)


_THEN_NAME = re.compile(r" [A-Z]")
_LEAD = "\"'“‘("
"""What may stand between a sentence's end (or the text's start) and its first word."""


def _opens_sentence(text: str, at: int) -> bool:
    """The word at `at` opens a sentence: only quotes, brackets and spaces stand between it and
    the text's start or a .!?:; or a line break. Reads back from `at` over those characters only,
    so a document's names are found in time linear in its length."""
    i = at
    while i > 0 and (text[i - 1] in _LEAD or text[i - 1].isspace()):
        if text[i - 1] == "\n":
            return True
        i -= 1
    return i == 0 or text[i - 1] in ".!?:;"


def _zh_name(first: str, text: str) -> str:
    """The longest opening of a Chinese first sentence that the text writes again and that is a
    name (zh.NAME_CHARS or more characters of one run, no function character, not a time or
    quantity, zh.NO_NAME_OPENINGS), or ""."""
    run = CJK_RUN.match(first.strip())
    if not run or run.group(0).startswith(zh.NO_NAME_OPENINGS):
        return ""
    for end in range(len(run.group(0)), zh.NAME_CHARS - 1, -1):
        if text.count(run.group(0)[:end]) >= 2 and zh.is_name(run.group(0)[:end]):
            return run.group(0)[:end]
    return ""


def _zh_name_terms(name: str, text: str) -> set[str]:
    """The bigrams of a Chinese name that name it: its opening one, and every other one the
    text never writes outside the name (a short form in use, 茶园 of 云岭茶园, does not)."""
    norm_name, rest = normalize(name), normalize(text)
    runs = ["".join(ch for ch in r if ch not in zh.FUNCTION) for r in CJK_RUN.findall(norm_name)]
    runs = [r for r in runs if len(r) >= 2]
    if not runs:
        return set()
    outside = rest.replace(norm_name, "\n")
    return {runs[0][:2]} | {w for w in content_words(name) if w not in outside}


def _counts(text: str) -> dict[str, int]:
    """Content word → the number of the text's sentences holding it."""
    counts: dict[str, int] = {}
    for line in split_sentences(text):
        for w in content_words(line):
            counts[w] = counts.get(w, 0) + 1
    return counts


_POINTING = re.compile(rf"(?<![因应如为彼从就])[该此这][个家座所位项条种次批些]?"
                       rf"[^{zh.FUNCTION}\s，。？?、；]*")
"""A Chinese phrase that points at what the reader was shown ("该旗舰店", "这座城堡"): it
names nothing a reader of the question alone can place (因此, 应该, 如此 are no pointers)."""


def names_subject(question: str, terms: set[str]) -> bool:
    """The question holds one of its document's subject terms (`subject_terms`), an English
    word as its stem ("honeybee" for "honeybees"), outside a Chinese phrase pointing at the
    passage ("该旗舰店提供多少种商品？" names no store: `_POINTING`)."""
    named = _POINTING.sub(" ", question)
    return bool({word_key(w) for w in content_words(named)} & {word_key(w) for w in terms})




def document_names(documents: dict[str, str]) -> dict[str, str]:
    """Per document (source → text) its name, where it has one whose short form it uses alone:
    an English title of capitalised words (two or more, a leading "The" left out), one a name
    of its body, ending in a common noun the document writes in lower case ("Severn Gate
    Bridge": "the bridge"; not "Keeping Honeybees"); a
    Chinese name (the title, or the opening of the first sentence written again) of one run of
    characters, no function character ("云岭茶园": "茶园")."""
    out: dict[str, str] = {}
    for src, text in documents.items():
        body = text.lstrip()
        title = _HEADING.match(body)
        if not written_in(text).capitals:
            first = split_sentences(body[title.end():].strip() if title else body)[:1]
            name = title.group(1).strip() if title else _zh_name(first[0] if first else "", text)
            if len(name) >= zh.NAME_CHARS and zh.is_name(name):
                out[src] = name
            continue
        if not title:
            continue
        words = title.group(1).split()
        if words and words[0] == "The":
            words = words[1:]
        names = set(_names(_HEADING.sub("", text)))
        if len(words) >= 2 and all(en.TITLE_WORD.fullmatch(w) for w in words) and re.search(
                rf"\b{re.escape(words[-1].lower())}\b", text) and names & set(words[:-1]):
            out[src] = " ".join(words)
    return out


def document_titles(documents: dict[str, str], names: dict[str, str]) -> dict[str, str]:
    """Per document (source → text) the title a draft is shown beside a chunk that may not
    name its subject ("It rests overnight."): its opening heading (Markdown, or an HTML
    page's first heading as documents.html_text writes it), else its name (`document_names`)."""
    out: dict[str, str] = {}
    for src, text in documents.items():
        heading = _HEADING.match(text.lstrip())
        title = heading.group(1).strip() if heading else names.get(src, "")
        if title:
            out[src] = title
    return out


@dataclass(frozen=True)
class Naming:
    """What names one document's subject, every view of it in one place: its subject terms
    (`subject_terms`), its name (`document_names`, "" when none) and the title a draft is shown
    beside its chunks (`document_titles`, "" when none)."""

    terms: frozenset[str] = frozenset()
    name: str = ""
    title: str = ""

    @property
    def title_words(self) -> frozenset[str]:
        """The content words of its title."""
        return frozenset(content_words(self.title))

    @property
    def own_terms(self) -> frozenset[str]:
        """Its subject terms that its title or name holds: what names the document itself, not
        another name of its body ("hallam", "hill", not "sun")."""
        return self.terms & (self.title_words | content_words(self.name))

    @property
    def named_by(self) -> frozenset[str]:
        """Everything that names the subject: its terms, its title's words, and its title and
        name whole (a Chinese name is no word of its own)."""
        return self.terms | self.title_words | ({self.title, self.name} - {""})


def namings(documents: dict[str, str]) -> dict[str, Naming]:
    """Per document (source → text) its `Naming`."""
    terms, names = subject_terms(documents), document_names(documents)
    titles = document_titles(documents, names)
    return {src: Naming(frozenset(terms.get(src, ())), names.get(src, ""), titles.get(src, ""))
            for src in documents}


def named(question: str, name: str) -> str:
    """The question with a short form of its document's name written in full ("When did the
    bridge open?" → "When did the Severn Gate Bridge open?"; "茶园主要出产什么茶？" →
    "云岭茶园主要出产什么茶？"): the longest end of the name it holds, as a phrase of its own
    (English after "the", Chinese at its start or after a function character)."""
    return written_in(question).named(question, name)


_CLAUSE_MARK = re.compile(r"[,;:!?，。；：！？]")
"""A mark no name holds: a subject with one is a clause of its sentence."""


def subject_name(subject: str, terms: set[str], name: str = "") -> str:
    """The name a question that names no subject is rewritten to hold (tasks.renamed): the
    document's name (`document_names`), else the draft's subject when it names a subject term
    and is a name, not a description (its language's `as_name`): English of en.NAME_WORDS
    words at most ("the Hallam Hill Observatory"), Chinese one run of characters with no
    function character ("江州博物馆", not "围棋的规则与历史"). "" when there is none."""
    if name:
        return name
    subject = subject.strip()
    if not names_subject(subject, terms) or _CLAUSE_MARK.search(subject):
        return ""
    return written_in(subject).as_name(subject)
