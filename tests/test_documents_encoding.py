"""Issue 53, Low: what `generate` reads as text. A NUL byte anywhere (not only in the first
4 KB) makes a file binary; a UTF-16 or UTF-32 file (with its byte-order mark, or UTF-16 without
one) is read as text, not called binary."""

from __future__ import annotations

from pathlib import Path

import pytest

from localeval.generate.documents import read_documents

TEXT = "The Kestrel Bay ferry began in 1923 with a steam launch called the Puffin.\n" \
       "渡轮于1923年开始运营。\n"


def test_a_nul_byte_past_the_first_4_kb_is_binary(tmp_path: Path) -> None:
    path = tmp_path / "late.txt"
    path.write_bytes(TEXT.encode() * 100 + b"\x00\x01\x02tail")
    assert len(TEXT.encode()) * 100 > 4096
    read = read_documents([path])
    assert read.documents == []
    assert read.problems == [f"{path}: a binary file, not text (a NUL byte at byte "
                             f"{len(TEXT.encode()) * 100}); skipped"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_utf16_or_utf32_file_is_read_as_text(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / f"{encoding}.txt"
    path.write_bytes(TEXT.encode(encoding))  # "utf-16"/"utf-32": with a BOM; -le/-be: none
    read = read_documents([path])
    assert read.problems == []
    assert [d.text for d in read.documents] == [TEXT]


def test_a_utf16_jsonl_of_chunks_is_read(tmp_path: Path) -> None:
    path = tmp_path / "chunks.jsonl"
    path.write_bytes('{"id": "c1", "text": "渡轮于1923年开始运营。"}\n'.encode("utf-16"))
    read = read_documents([path])
    assert read.problems == [] and [d.text for d in read.documents] == ["渡轮于1923年开始运营。"]
