"""Text from an analysed tree, made safe to show: control characters become visible escapes.

A file name or a package name can hold terminal control sequences (`ESC ] 0 ; title BEL`
retitles a terminal; others move the cursor or hide text). Every such character is shown as
`\\xNN` instead, on the terminal and in the Markdown report: the C0 controls (tab and newline
included, since messages and table cells are one line), DEL, the C1 controls, and the bytes
that were not UTF-8 in a file name (kept as lone surrogates by Python's `surrogateescape`).
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\udc80-\udcff]")
_SURROGATE_OFFSET = 0xDC00  # surrogateescape keeps byte 0xNN as U+DCNN


def printable(text: str) -> str:
    """`text` with each control character (and each undecodable byte) as a visible `\\xNN`."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - _SURROGATE_OFFSET if code >= _SURROGATE_OFFSET else code:02x}"
