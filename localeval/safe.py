"""Text from datasets and file names, made safe to print or to write.

`terminal_safe` is for what goes to a terminal (stderr/stdout): ids, paths and dataset text may
hold escape sequences (ESC, other C0/C1 controls), bidirectional overrides, line breaks, or lone
surrogates (a non-UTF-8 file name, a JSON "\\ud800"); each becomes a visible backslash escape, so
a message stays one line and cannot recolour, move the cursor or reorder the terminal.
`unicode_safe` only replaces lone surrogates, for text that must be written as UTF-8 (JSON).
"""

from __future__ import annotations

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
