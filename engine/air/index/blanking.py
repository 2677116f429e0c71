"""Blanking parts of source text (comments, literals) while keeping its length and line
breaks, so that offsets and line numbers found in the result hold for the original."""

from __future__ import annotations

import re
from collections.abc import Iterable

_SPACES_BUT_LINE_BREAKS = bytes(byte if byte in b"\r\n" else ord(" ") for byte in range(256))
_HASH_COMMENT = re.compile(r"(?:^|(?<=[ \t]))#[^\r\n]*", re.MULTILINE)


def blank(text: str) -> str:
    """Spaces in place of every character except line breaks."""
    if "\n" in text or "\r" in text:
        one_byte_each = text.encode("ascii", "replace")  # `?` for each character beyond ASCII
        return one_byte_each.translate(_SPACES_BUT_LINE_BREAKS).decode("ascii")
    return " " * len(text)


def blank_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """Blank the given (start, end) spans, which are sorted by start and may overlap."""
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        if start < last:
            start = last
        if start < end:
            pieces.append(text[last:start])
            pieces.append(blank(text[start:end]))
            last = end
    pieces.append(text[last:])
    return "".join(pieces)


def blank_hash_comments(text: str) -> str:
    """Blank `#` comments as YAML, TOML and shell write them: from a `#` that starts a line or
    follows a blank to the end of the line (a `#` inside a word, as in a URL, starts none)."""
    return _HASH_COMMENT.sub(lambda comment: blank(comment.group()), text)
