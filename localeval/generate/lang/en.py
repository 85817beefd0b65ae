"""English: every word list, pattern, unit and rule of `generate` that is English's own, and
`LANGUAGE`, the record the stages read."""

from __future__ import annotations

import re
import zlib

from localeval.generate.lang.record import Language
from localeval.text import STOPWORDS

WORD = re.compile(r"[a-z0-9]+(?:[.'’-][a-z0-9]+)*")
"""A word or number of a normalized text (content words)."""
NAME = re.compile(r"\b[A-Z][A-Za-z'’-]+")
"""A capitalised word (a name when it is not a sentence's first word)."""
TITLE_WORD = re.compile(r"[A-Z][A-Za-z'’-]*")
"""A word of a title of capitalised words (subjects.document_names)."""
NAME_WORDS = 6
"""The most words a subject may have to be a name a question is rewritten to hold (longer: a
description, "a strong colony in a good year")."""
DATES = frozenset((
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday", "sundays"))
"""Words that never name a subject."""

# ---- questions -------------------------------------------------------------------------------
POINTERS = re.compile(
    r"\b(?:(?:the|this|that|these|above|given|following|provided|said|same)\s+"
    r"(?:passage|text|document|article|paragraph|excerpt|context|section|chunk|snippet|"
    r"source|story|report)s?|according to the (?:author|writer)|mentioned (?:above|here|"
    r"earlier)|described above|the author)\b", re.IGNORECASE)
ASKING = re.compile(r"\b(?:what|when|where|who|whom|whose|which|why|how)\b", re.IGNORECASE)
"""A question word."""
OPENERS = frozenset({
    "what", "when", "where", "who", "whom", "whose", "which", "why", "how", "is", "are", "was",
    "were", "do", "does", "did", "can", "could", "will", "would", "should", "has", "have", "had",
    "may", "might", "must", "shall", "in", "on", "at", "for", "from", "by", "to", "with",
    "during", "since", "after", "before", "under", "of", "about", "through", "between", "into",
    "tell", "name", "list"})
"""The first words of a question: question words, auxiliaries, prepositions, imperatives."""
PREPOSITIONS = frozenset({"in", "on", "at", "for", "from", "by", "to", "with", "during",
                          "since", "after", "before", "under", "of", "about", "through",
                          "between", "into"})
LOWER_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
"""A word of a lower-cased question."""
DUMP_WORDS = 5
"""A question of this many words or more with no function word after its first is a keyword
string ("Who paid tolls westbound direction car 2018?"), not a question."""
VAGUE = re.compile(r"\babout\s*\?$|^(?:tell me about|describe|explain)\b", re.IGNORECASE)
ASKED_WORDS = re.compile(r"\b(?:what|when|where|who|whom|whose|which|why|how|many|much|"
                         r"name|named|called)\b", re.IGNORECASE)
"""The words of a question that ask, not say (answerable.stated_in)."""
DECLINES = re.compile(
    r"^\W*(?:none|no answer|unknown|n/?a)\W*$|"
    r"\b(?:do(?:es)? not|don't|doesn't) (?:say|mention|state|give|specify|provide)|"
    r"\bnot (?:mentioned|stated|given|specified|provided)\b|\bno information\b",
    re.IGNORECASE)
TAIL = re.compile(r",\s+(?=(?:who|whom|whose|which|where|when|while|making|including|each|"
                  r"although|though|but)\b)", re.IGNORECASE)
PLACING = frozenset({"of", "at", "in", "on", "from", "for", "the"})
EXAMPLE_NAMES = ("Eiffel Tower Paris World's Fair",
                 "Heat Michael Mann Chicago Al Pacino Robert De Niro")

# ---- kinds of answer (answer_kind) --------------------------------------------------------------
DURATION = (r"second|minute|hour|day|night|week|fortnight|month|year|decade|century|"
            r"centuries")
LENGTH = (r"metres?|meters?|m|km|kilometres?|kilometers?|miles?|feet|foot|ft|yards?|cm|mm|"
          r"inch(?:es)?")
CARDINALS = (r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
             r"thirty|forty|fifty|sixty|hundred|thousand|million|billion|dozen|a few|several")
"""Numbers written as words."""
NUMBER = rf"\d|\b(?:{CARDINALS}|half|free|none|no)\b"
WHEN_NUMBER = (r"\b(?:1\d{3}|20\d{2})s?\b|\d(?:st|nd|rd|th)\b|\d\s*(?:am|pm|a\.m\.|p\.m\.|"
               rf"o'clock)|\d:\d\d|(?:\d|\b(?:{CARDINALS}))\s+(?:{DURATION})s?\b")
"""A number that tells a time: a year, an ordinal, a clock time, a count of a time unit (not
"212 players")."""
TIME = (WHEN_NUMBER + r"|\b(?:january|february|march|april|may|june|july|august|september|"
        r"october|november|december|spring|summer|autumn|winter|morning|afternoon|evening|"
        r"night|century|ago|after|before|during|since|until|when|daily|weekly|"
        r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|first|last|once)\b")
MEASURE = (rf"(?:{DURATION}|{LENGTH}|pounds?|pence|dollars?|euros?|yuan|percent|degrees?|"
           r"kg|kilograms?|grams?|tonnes?|litres?|liters?)s?")
"""A unit a number measures by: "60 pounds" or "seven hours" counts no people."""
COUNT = re.compile(r"\bhow many ([a-z]+)")
COUNTED = re.compile(rf"(?:\d[\d,.]*|\b(?:{CARDINALS})\b)(?:\s+({MEASURE})\b|"
                     rf"\s+[a-z-]+\s+({MEASURE})\b)?")
KINDS = (  # (the question's words, what its answer must hold, its name)
    (r"\bhow long\b.*\b(?:take|takes|took|last|lasts|lasted|wait|stay|spend|run for)\b",
     rf"\b(?:{DURATION})s?\b", "a duration"),
    (r"\bhow (?:long|far|tall|high|deep|wide)\b", rf"\d|\b(?:{DURATION}|{LENGTH})s?\b",
     "a measure"),
    (r"\bhow (?:many|much|old)\b", NUMBER, "a number"),
    (r"\bhow often\b", r"\b(?:every|each|once|twice|times?|daily|weekly|monthly|yearly|annually|"
     r"hourly|per|a (?:day|week|month|year))\b", "a frequency"),
    (r"^(?:when|what year|which year|in (?:what|which) year)\b|\bwhen (?:was|were|did|does|is)\b",
     TIME, "a time"),
)

# ---- entities (picking) ------------------------------------------------------------------------
UPPER, LETTER = "A-ZÀ-ÖØ-Þ", "A-Za-zÀ-ÖØ-öø-ÿĀ-ž"  # Latin, with its accented letters
CAPITAL = re.compile(
    rf"(?<![{LETTER}])[{UPPER}][{LETTER}]{{2,}}(?:[ -][{UPPER}][{LETTER}]+)*")
"""A capitalised name, accented letters in it ("Blålon", "Tomas Hrubý"), found in Chinese text
too ("江州的Severn Gate Bridge": no letter before it, where `\\b` wants a non-word character)."""
COMMON = {"The", "This", "That", "These", "Those", "There", "Their", "They", "When", "What",
          "Which", "While", "With", "After", "Before", "During", "From", "Since", "Many",
          "Most", "Some", "Each", "Every", "Its", "His", "Her", "For", "But", "And", "Today",
          "Unlike", "Although", "Because", "However", "Other", "One", "Two", "Three",
          "She", "He", "It", "We", "You", "Our", "Your", "Him", "Them", "Then", "Now",
          "Here", "Both", "All", "Only", "Also", "About", "Around", "Over", "Under", "Into",
          "Until", "Once", "Later", "Yesterday"}
"""Capitalised words that open sentences, not names."""
CALENDAR = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
            "January", "February", "March", "April", "May", "June", "July", "August",
            "September", "October", "November", "December", "Mondays", "Tuesdays",
            "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays"}
"""Capitalised words that name no subject: two documents that both say "Sunday" are unlinked."""


def stem(word: str) -> str:
    """A word less one plural or verb ending (-ing, -ed, -es, -s), keeping 3 letters."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def key(word: str) -> str:
    """A word's stem less a final e ("honeybe" of "honeybees" and "honeybee" both "honeyb")."""
    return stem(word).rstrip("e")


def asks(text: str) -> bool:
    """Opens with a question word, an auxiliary or a preposition before one ("In which year
    ...") and is no keyword string."""
    words = LOWER_WORD.findall(text.lower())
    if not words or words[0] not in OPENERS:
        return False
    if words[0] in PREPOSITIONS and not ASKING.search(text):
        return False
    return len(words) < DUMP_WORDS or any(w in STOPWORDS for w in words[1:])


def two_things(question: str) -> bool:
    """Two question words, or a list (two commas)."""
    asking = [m.group(0) for m in ASKING.finditer(question)]
    return len(asking) >= 2 or question.count(",") >= 2


def question_words(text: str) -> set[str]:
    """Its question word ("how" with the word after it: "how long", "how many"), or its first
    word when it opens with an auxiliary."""
    words = LOWER_WORD.findall(text.lower())
    for i, w in enumerate(words):
        if ASKING.fullmatch(w):
            return {f"how {words[i + 1]}" if w == "how" and i + 1 < len(words) else w}
    return set(words[:1])


def measured_count(question: str, added_words: str) -> str | None:
    """For "how many <things>" (not a unit: "how many years", nor "times"), "a count of
    <things>" when the first number the answer adds measures by a unit ("Membership costs 60
    pounds a year" for "How many people join …?", "within seven hours" for "How many runners
    …?"); None otherwise."""
    m = COUNT.search(question)
    if m is None or m.group(1) == "times" or re.fullmatch(MEASURE, m.group(1)):
        return None
    first = COUNTED.search(added_words)
    return f"a count of {m.group(1)}" if first and (first.group(1) or first.group(2)) else None


def answer_lacks(question: str, new: str, answer: str) -> str | None:
    """A duration for "how long does it take" (not "11 kilometres"), a number for "how many", a
    time for "when", a word beyond function words for "which"/"who"."""
    q, a = question.lower(), new.lower()
    if (what := measured_count(q, a)) is not None:
        return what
    for asked, needed, name in KINDS:
        if re.search(asked, q):
            return None if re.search(needed, a) else name
    if re.match(r"(?:which|who|whom|whose)\b", q) and not set(
            re.findall(r"[a-z0-9]+", a)) - STOPWORDS:
        return "a name"  # "Which magazine …?" answered "A travel magazine …"
    return None


def casual(text: str, key: str) -> str:
    """Lower case and one typo: two letters of a long word swapped, the word picked from `key`
    (the same every time)."""
    text = text.lower()
    words = text.split(" ")
    long = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha()]
    if long:
        i = long[zlib.crc32(key.encode()) % len(long)]
        w = words[i]
        j = 1 + zlib.crc32(w.encode()) % (len(w) - 3)
        words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


def join_questions(head: str, second: str) -> str:
    """"When did X open, and who designed it?"."""
    opener = second.split(" ", 1)[0].lower()
    return f"{head}, and {second[:1].lower() + second[1:] if opener in OPENERS else second}"


def join_answers(first: str, second: str) -> str:
    return (first if first.endswith((".", "!", "?")) else first + ".") + " " + second


def named(question: str, name: str) -> str:
    """The longest end of the name the question holds after "the", written in full."""
    words = name.split()
    if name.lower() in question.lower():
        return question
    for k in range(len(words) - 1, 0, -1):
        short = " ".join(words[-k:])
        m = re.search(rf"\bthe {re.escape(short)}\b", question, re.IGNORECASE)
        if m:
            return question[:m.start()] + m.group(0)[:4] + name + question[m.end():]
    return question


def as_name(subject: str) -> str:
    """NAME_WORDS words at most ("the Hallam Hill Observatory"), a leading "The" lower-cased."""
    return re.sub(r"^The\b", "the", subject) if len(subject.split()) <= NAME_WORDS else ""


def without_terms(text: str, terms: frozenset[str]) -> str:
    """Each word whose key is a term's, blanked."""
    keys = {key(t) for t in terms}
    return re.sub(r"[A-Za-z][A-Za-z'’-]*", lambda m: " " if key(m.group(0).lower()) in keys
                  else m.group(0), text)


def entities(text: str) -> set[str]:
    """Capitalised names, less the common sentence openers."""
    return {m.group(0) for m in CAPITAL.finditer(text)} - COMMON


def links(term: str) -> bool:
    """A capitalised name, not a day or month."""
    return bool(CAPITAL.fullmatch(term)) and term not in CALENDAR


LANGUAGE = Language(
    code="en", spaced=True, capitals=True,
    no_answer="The documents do not answer this question.", full_stop=".",
    pointers=POINTERS, vague=VAGUE, declines=DECLINES, stated_asks=ASKED_WORDS, point_asks=None,
    tail=TAIL, asks=asks, two_things=two_things, question_words=question_words,
    names_in_question=lambda q: NAME.findall(q)[1:],
    outside_names=lambda words: [w for w in words[1:] if w[0].isupper()],
    length=lambda text: len(text.split()), focus_length=4, query_length=3,
    answer_size=lambda answer: len(answer.split()), tells_many=lambda answer: False,
    answer_lacks=answer_lacks, casual=casual, spoken=lambda text: text,
    join_questions=join_questions, join_answers=join_answers, named=named, as_name=as_name,
    key=key, without_terms=without_terms, entities=entities, links=links, never_subject=DATES,
    numerals=frozenset(),
    placing=PLACING, example_names=EXAMPLE_NAMES)
