"""Cut documents into the corpus: chunks at headings, then paragraphs, then sentences, never
mid-sentence (Chinese without spaces included), each with a stable id `source#n`."""

from __future__ import annotations

import re

from pydantic import BaseModel

from localeval.generate.documents import Document
from localeval.text import CJK_RANGES, detect_language, split_sentences

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_CJK = re.compile(f"[{CJK_RANGES}]")
_WORD = re.compile(r"[A-Za-z0-9]+")


class Chunk(BaseModel):
    """One corpus entry: what a user's retriever indexes and `expected_ids` name."""

    id: str
    text: str
    source: str
    language: str
    tokens: int


def estimate_tokens(text: str) -> int:
    """Judge tokens of a text, estimated without the tokenizer (Qwen: ~0.7 per Chinese
    character, ~1.3 per English word, 1 per other mark)."""
    return round(_tokens(text))


def _tokens(text: str) -> float:
    cjk = len(_CJK.findall(text))
    words = len(_WORD.findall(text))
    other = sum(1 for ch in text if not ch.isspace() and not ch.isalnum() and not _CJK.match(ch))
    return cjk * 0.7 + words * 1.3 + other * 0.5


def _sections(text: str) -> list[list[str]]:
    """Paragraphs grouped by heading: a heading line starts a section and opens its first
    paragraph."""
    sections: list[list[str]] = [[]]
    para: list[str] = []

    def end_paragraph() -> None:
        if para:
            sections[-1].append("\n".join(para))
            para.clear()

    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line.strip():
            end_paragraph()
        elif _HEADING.match(line):
            end_paragraph()
            if sections[-1]:
                sections.append([])
            para.append(line.strip())
        else:
            para.append(line.strip())
    end_paragraph()
    return [s for s in sections if s]


def _join(parts: list[str], sep: str) -> str:
    out = ""
    for p in parts:
        if not out:
            out = p
        elif sep == " " and (_CJK.match(out[-1]) or _CJK.match(p[0])):
            out += p
        else:
            out += sep + p
    return out


def _units(paragraph: str, max_tokens: int) -> list[str]:
    """A paragraph, or its sentences when it is longer than a chunk (a heading line stays with
    its first sentence); a sentence longer than a chunk, cut at spaces (`_pieces`)."""
    if estimate_tokens(paragraph) <= max_tokens:
        return [paragraph]
    return [p for s in split_sentences(paragraph) for p in _pieces(_join([s], " "), max_tokens)]


_SPACED = re.compile(r"\S+\s*")


def _pieces(sentence: str, max_tokens: int) -> list[str]:
    """A sentence longer than a chunk (a document with no sentence end: a one-line dump, a
    table) in pieces of at most `max_tokens`, cut at spaces, or between characters within a
    run with none (Chinese)."""
    if estimate_tokens(sentence) <= max_tokens:
        return [sentence]
    words = [w for m in _SPACED.finditer(sentence) for w in _cut_long(m.group(0), max_tokens)]
    pieces: list[str] = []
    current, size = "", 0.0
    for word in words:
        n = _tokens(word)
        if current and size + n > max_tokens:
            pieces.append(current.strip())
            current, size = "", 0.0
        current += word
        size += n
    if current.strip():
        pieces.append(current.strip())
    return pieces


def _cut_long(word: str, max_tokens: int) -> list[str]:
    """A run without spaces longer than a chunk, in runs of characters that fit."""
    if estimate_tokens(word) <= max_tokens:
        return [word]
    step = max(1, max_tokens)  # ≥ 0.5 tokens per character, so `step` characters fit
    return [word[i:i + step] for i in range(0, len(word), step)]


def chunk_document(doc: Document, *, max_tokens: int, language: str) -> list[Chunk]:
    """The chunks of one document: whole paragraphs packed until a chunk reaches half of
    `max_tokens` (never past it); long paragraphs cut at sentence ends."""
    if doc.chunk_id is not None:  # a user's own chunk: kept as it is
        return [_chunk(doc.chunk_id, doc.text, doc.source, language)]
    target = max(1, max_tokens // 2)
    texts: list[str] = []
    for section in _sections(doc.text):
        current: list[str] = []
        size = 0
        for paragraph in section:
            for unit in _units(paragraph, max_tokens):
                n = estimate_tokens(unit)
                heading_only = len(current) == 1 and _HEADING.match(current[0])
                if current and not heading_only and (size + n > max_tokens or size >= target):
                    texts.append(_join(current, "\n\n"))
                    current, size = [], 0
                current.append(unit)
                size += n
        if current:
            if texts and size < target // 3 and not _HEADING.match(current[0]) \
                    and estimate_tokens(texts[-1]) + size <= max_tokens:
                texts[-1] = _join([texts[-1], *current], "\n\n")  # a short tail joins its chunk
            else:
                texts.append(_join(current, "\n\n"))
    return [_chunk(f"{doc.source}#{i}", t, doc.source, language)
            for i, t in enumerate(texts, 1)]


def _chunk(cid: str, text: str, source: str, language: str) -> Chunk:
    lang = language if language != "auto" else detect_language(text[:2000])
    return Chunk(id=cid, text=text.strip(), source=source, language=lang,
                 tokens=estimate_tokens(text))
