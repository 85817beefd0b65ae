"""Text from datasets and file names, made safe to print or to write.

`terminal_safe` is for what goes to a terminal (stderr/stdout): ids, paths and dataset text may
hold escape sequences (ESC, other C0/C1 controls), bidirectional overrides, line breaks, or lone
surrogates (a non-UTF-8 file name, a JSON "\\ud800"); each becomes a visible backslash escape, so
a message stays one line and cannot recolour, move the cursor or reorder the terminal.
`unicode_safe` only replaces lone surrogates, for text that must be written as UTF-8 (JSON).
`text_encoding` tells a text file's encoding from its bytes (UTF-8, UTF-16, UTF-32).
"""

from __future__ import annotations

import codecs
import html
import re

# C0 controls, DEL, C1 controls; the bidi marks, embeddings, overrides and isolates; the Unicode
# line/paragraph separators; and every surrogate (never valid alone in UTF-8 output).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_safe(text: object) -> str:
    """`text` with every control, bidi override, line break and lone surrogate escaped."""
    return _UNSAFE.sub(_escape, str(text))


def unicode_safe(text: str) -> str:
    """`text` with lone surrogates escaped (bytes of a non-UTF-8 file name as \\xNN), so that
    it can be encoded as UTF-8; other text is returned unchanged."""
    return _SURROGATE.sub(_escape, text) if _SURROGATE.search(text) else text


def esc(value: object) -> str:
    """Text for HTML (element content or a quoted attribute)."""
    return html.escape(str(value), quote=True)


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
"""Byte-order marks, UTF-32's first (its little-endian mark starts like UTF-16's)."""


def text_encoding(data: bytes) -> str:
    """The encoding of a text file's bytes: UTF-32 or UTF-16 by its byte-order mark; UTF-16
    without one when the NULs of its first 4 KB fall on one side of the byte pairs (the high
    byte of Latin text); else UTF-8 (a leading UTF-8 mark dropped)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    head = data[:4096]
    even, odd = head[0::2].count(0), head[1::2].count(0)
    pairs = len(head) // 2
    if pairs and odd >= 0.3 * pairs and even <= odd / 10:
        return "utf-16-le"
    if pairs and even >= 0.3 * pairs and odd <= even / 10:
        return "utf-16-be"
    return "utf-8-sig"
