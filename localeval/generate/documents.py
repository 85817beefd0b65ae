"""Read the documents to generate from: files or folders of .txt, .md, .html and .pdf, or a
JSONL of `{"id", "text"}` chunks a user already has. Whatever cannot be read (a binary file, a
PDF without pypdf, a bad JSONL line, an empty folder) becomes one problem line; the rest goes on."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from localeval.safe import text_encoding, unicode_safe

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")
SUFFIXES = (*TEXT_SUFFIXES, ".pdf", ".jsonl")
PDF_EXTRA = "pip install 'localeval[pdf]' (pypdf)"


@dataclass
class Document:
    """One document's text, named by `source` (its path relative to the DOCS argument it was
    found under, or the file name), or a user's ready chunk (`chunk_id` set: not re-cut)."""

    source: str
    text: str
    chunk_id: str | None = None


@dataclass
class Read:
    documents: list[Document] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def read_documents(paths: Iterable[str | Path]) -> Read:
    """Every document under `paths`, in a fixed order (arguments as given, folders sorted)."""
    out = Read()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file()
                           and not p.name.startswith("."))
            files = [p for p in found if p.suffix.lower() in SUFFIXES and _inside(p, path, out)]
            _say_unread(path, [p for p in found if p.suffix.lower() not in SUFFIXES], out)
            if not files:
                out.problems.append(f"{path}: no .txt, .md, .html, .pdf or .jsonl file in this "
                                    "folder; skipped")
            for f in files:
                _read_file(f, unicode_safe(f.relative_to(path).as_posix()), out)
        elif path.is_file():
            _read_file(path, unicode_safe(path.name), out)
        else:
            out.problems.append(f"{path}: no such file or folder; skipped")
    return out


def _inside(file: Path, folder: Path, out: Read) -> bool:
    """`file` (found under `folder`) is there itself, not a link to a file elsewhere."""
    try:
        file.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        out.problems.append(f"{file}: a link to a file outside {folder}; skipped (give that "
                            "file itself to read it)")
        return False


def _say_unread(folder: Path, files: list[Path], out: Read) -> None:
    """One line for the files of a folder that are not read, by kind (a .docx, an image)."""
    if not files:
        return
    kinds = Counter(f.suffix.lower() or "(no suffix)" for f in files)
    listed = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in sorted(kinds.items()))
    out.problems.append(f"{folder}: {len(files)} file(s) not read ({listed}): only .txt, .md, "
                        ".html, .pdf and .jsonl are; save a .docx as .pdf or .txt to use it")


def _read_file(path: Path, source: str, out: Read) -> None:
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        text = _pdf_text(path, out)
    elif suffix == ".jsonl":
        out.documents.extend(_jsonl_chunks(path, source, out))
        return
    elif suffix in TEXT_SUFFIXES:
        text = _plain_text(path, out)
        if text is not None and suffix in (".html", ".htm"):
            text = html_text(text)
    else:
        out.problems.append(f"{path}: not a .txt, .md, .html, .pdf or .jsonl file; skipped")
        return
    if text is None:
        return
    if not text.strip():
        out.problems.append(f"{path}: empty; skipped")
        return
    out.documents.append(Document(source, text))


def _plain_text(path: Path, out: Read) -> str | None:
    """A text file's text (text_encoding), or None with its problem said: unreadable, binary (a
    NUL anywhere in it), or not valid text in its encoding."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        out.problems.append(f"{path}: unreadable ({exc.strerror or exc}); skipped")
        return None
    encoding = text_encoding(data)
    if encoding == "utf-8-sig" and b"\x00" in data:
        out.problems.append(f"{path}: a binary file, not text (a NUL byte at byte "
                            f"{data.index(0)}); skipped")
        return None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        said = "UTF-8" if encoding == "utf-8-sig" else encoding.upper()
        out.problems.append(f"{path}: not {said} text (byte {exc.start}); save it as UTF-8; "
                            "skipped")
        return None
    if "\x00" in text:
        out.problems.append(f"{path}: a binary file, not text (a NUL character at character "
                            f"{text.index(chr(0))}); skipped")
        return None
    return text


def _pdf_text(path: Path, out: Read) -> str | None:
    try:
        import pypdf
    except ImportError:
        out.problems.append(f"{path}: a PDF needs pypdf: {PDF_EXTRA}; skipped")
        return None
    try:
        reader = pypdf.PdfReader(str(path))
        pages = [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:  # pypdf raises many kinds on a damaged file
        out.problems.append(f"{path}: unreadable PDF ({type(exc).__name__}: {exc}); skipped")
        return None
    return "\n\n".join(p.strip() for p in pages)


def _jsonl_chunks(path: Path, source: str, out: Read) -> list[Document]:
    text = _plain_text(path, out)
    if text is None:
        return []
    docs: list[Document] = []
    seen: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            out.problems.append(f"{path} line {n}: not JSON ({exc.msg}); skipped")
            continue
        if not isinstance(row, dict) or not isinstance(row.get("text"), str) \
                or not isinstance(row.get("id"), str | int) or isinstance(row.get("id"), bool):
            out.problems.append(f'{path} line {n}: expected {{"id": ..., "text": "..."}}; '
                                "skipped")
            continue
        cid = unicode_safe(str(row["id"]))  # a lone surrogate ("\\ud800") cannot be written
        if cid in seen:
            out.problems.append(f"{path} line {n}: duplicate id {cid!r}; skipped")
            continue
        if not row["text"].strip():
            out.problems.append(f"{path} line {n}: empty text; skipped")
            continue
        seen.add(cid)
        docs.append(Document(source, unicode_safe(row["text"]), chunk_id=cid))
    if not docs and not any(p.startswith(f"{path} line") for p in out.problems):
        out.problems.append(f"{path}: no chunk; skipped")
    return docs


_HIDDEN = ("script", "style", "noscript", "template", "title", "nav")
"""Elements whose text is not the page's content (a menu, "Home | Visit", is no chunk)."""
_BLOCKS = {"p", "div", "br", "li", "tr", "section", "article", "header", "footer", "table",
           "ul", "ol", "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6"}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self._skip += 1
        elif tag in _BLOCKS:
            self.parts.append("\n\n" + ("# " if tag[0] == "h" and tag[1:].isdigit() else ""))

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(" ".join(data.split()) if data.strip() else " ")


def html_text(html: str) -> str:
    """The visible text of an HTML page: blocks become paragraphs, headings `# ` lines."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    lines = [" ".join(line.split()) for line in "".join(parser.parts).split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
