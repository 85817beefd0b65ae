"""closest_sentence through the trigram index gives the old set comparison's answer, and the
sentence splitter without its per-sentence copies splits as before (old code kept here)."""

from __future__ import annotations

import random

import pytest

from localeval import text as text_module
from localeval.metrics.claims.checks import SentenceIndex, grams
from localeval.metrics.claims.checks import closest_sentence as closest_in_split
from localeval.text import sentences_of_all, split_sentences


def closest_sentence(item: str, material: list[str]) -> str | None:
    return closest_in_split(item, sentences_of_all(material))


def old_closest_sentence(item: str, material: list[str]) -> str | None:
    """The implementation before: the item's trigram set against every sentence's."""
    g = grams(item)
    best, best_n = None, 0
    for text in material:
        for sentence in split_sentences(text) or [text]:
            n = len(g & grams(sentence))
            if n > best_n:
                best, best_n = sentence, n
    return best


def old_split_english(text: str) -> list[str]:
    """text._split_english before (it copied the rest of the line at every sentence end)."""
    text = text_module._GLUED.sub(r"\1 ", text)
    pieces: list[str] = []
    start = 0
    for m in text_module._EN_END.finditer(text):
        before = text[start : m.start()]
        last_word = before.rsplit(None, 1)[-1] if before.split() else ""
        nxt = text[m.end() :].lstrip()[:1]
        if nxt.islower():
            continue
        if m.group(1) == ".":
            word = last_word.lower().rstrip(".")
            if word in text_module._ABBREV or (len(word) == 1 and word.isalpha()):
                continue
        pieces.append(text[start : m.end()])
        start = m.end()
    pieces.append(text[start:])
    return pieces


TOKENS = [
    "the", "The", "Rae", "Dr.", "e.g.", "J.", "p.m.", "U.S.", "3", "2,011", "in", "A", "a",
    "!", "?", ".", ". ", "...", "…", "。", "；", ";", "！", "\n", "  ", "\u3000", "\xa0", "\t",
    "”", ")", "’", "a.b", "x.Y", "we", "Ok.", "第一", "中文句子", "是", "🙂", "é", "ß", "'", '"',
    "- ", "* ", "1. ", "(2)", "一、", "",
]


def _text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(TOKENS) + rng.choice(["", " ", " ", "\n"]) for _ in range(n))


@pytest.mark.parametrize("seed", range(3))
def test_split_sentences_unchanged(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    texts = [_text(rng, rng.randint(0, 80)) for _ in range(400)]
    new = [split_sentences(t) for t in texts]
    monkeypatch.setattr(text_module, "_split_english", old_split_english)
    assert new == [split_sentences(t) for t in texts]


@pytest.mark.parametrize("seed", range(4))
def test_closest_sentence_equals_the_old_set_comparison(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        material = [_text(rng, rng.randint(0, 60)) for _ in range(rng.randint(0, 4))]
        sentences = [s for t in material for s in split_sentences(t)]
        for _ in range(4):
            if sentences and rng.random() < 0.5:  # a paraphrase of a sentence
                words = rng.choice(sentences).split()
                item = " ".join(w for w in words if rng.random() < 0.7)
            else:
                item = _text(rng, rng.randint(0, 12))
            assert closest_sentence(item, material) == old_closest_sentence(item, material), (
                item, material)


def test_short_keys_and_empty_material() -> None:
    cases = [("", [""]), ("", ["..."]), ("ab", ["ab", "abc"]), ("a", ["b. a."]), ("x", []),
             ("??", ["!!", "?"]), ("中文", ["中文。", "中文字"]), ("abc", ["ab", "bc"])]
    for item, material in cases:
        assert closest_sentence(item, material) == old_closest_sentence(item, material)


def test_index_is_shared_by_a_samples_items() -> None:
    rng = random.Random(7)
    material = [" ".join(_text(rng, 30) for _ in range(50))]
    index = SentenceIndex(sentences_of_all(material))
    for _ in range(20):
        item = _text(rng, 10)
        assert index.closest(item) == old_closest_sentence(item, material)


def old_novel_details(item: str, known: list[str]) -> list[str]:
    """checks.novel_details before its known numbers and words were cached per material."""
    import unicodedata

    from localeval.metrics.claims import checks
    from localeval.text import numbers

    known_numbers: set[str] = set()
    known_words: set[str] = set()
    for text in known:
        known_numbers |= numbers(text)
        known_words |= {w.casefold()
                        for w in checks._WORD.findall(unicodedata.normalize("NFKC", text))}
    missing = sorted(numbers(item) - known_numbers, key=item.find)
    missing += [n for n in checks._names(item) if not checks._name_known(n, known_words)]
    return missing


def test_novel_details_with_the_cached_material_say_the_same() -> None:
    from localeval.metrics.claims.checks import novel_details

    rng = random.Random(5)
    extra = ["Toronto", "Toronto's", "1,200", "3.5", "2011", "Ju-hyun", "American", "America"]
    for _ in range(300):
        known = [_text(rng, 30) + " " + " ".join(rng.sample(extra, 3)) for _ in range(2)]
        item = _text(rng, 8) + " " + " ".join(rng.sample(extra, 2))
        assert novel_details(item, known) == old_novel_details(item, known)
