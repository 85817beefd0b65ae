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
    cjk = len(_CJK.findall(text))
    words = len(_WORD.findall(text))
    other = sum(1 for ch in text if not ch.isspace() and not ch.isalnum() and not _CJK.match(ch))
    return round(cjk * 0.7 + words * 1.3 + other * 0.5)


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
    its first sentence)."""
    if estimate_tokens(paragraph) <= max_tokens:
        return [paragraph]
    return [_join([s], " ") for s in split_sentences(paragraph)]


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
