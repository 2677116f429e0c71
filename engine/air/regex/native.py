"""Matching `re` patterns with PCRE2's JIT on ASCII text, with exactly `re`'s results.

`re` tries a pattern at every position of the text from Python's own matching loop; PCRE2
compiles it to machine code and skips ahead with start-of-match optimisations, which is
several times faster on the patterns of rule packs. The two engines read pattern syntax
differently in places (`{,}`, `\\v`, `\\Z`, `\\u`, POSIX classes, spaces in quantifiers), so a
pattern is not handed over as written: it is parsed by `re` and the parse is written out again
in constructs both engines define alike. Character categories are spelled out as byte ranges
(`re`'s `\\s` also holds the separators `\\x1c`-`\\x1f`), `^` is kept only where a match starts
(PCRE2 does not match it after a final line break), and the text must be ASCII, where Unicode
and byte semantics agree. A pattern that holds non-ASCII characters is not translated.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pcre2

if TYPE_CHECKING:
    from sre_constants import MAXREPEAT  # typeshed describes re._constants under its former name

    from _typeshed import MaybeNone
else:
    from re._constants import MAXREPEAT

_CATEGORIES = {
    "CATEGORY_DIGIT": [(0x30, 0x39)],
    "CATEGORY_WORD": [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
    "CATEGORY_SPACE": [(0x09, 0x0D), (0x1C, 0x20)],
}
_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))
_ANCHORS = {
    "AT_END": "$",
    "AT_BEGINNING_STRING": "\\A",
    "AT_END_STRING": "\\z",
    "AT_BOUNDARY": "\\b",
    "AT_NON_BOUNDARY": "\\B",
}
_REPEATS = {"MAX_REPEAT": "", "MIN_REPEAT": "?", "POSSESSIVE_REPEAT": "+"}
_LOOKAROUNDS = {("ASSERT", 1): "=", ("ASSERT", -1): "<=", ("ASSERT_NOT", 1): "!", ("ASSERT_NOT", -1): "<!"}
MAX_PCRE_REPEAT = 65535


class Untranslatable(Exception):
    """A construct without an equivalent written alike in both engines."""


def compile_native(parsed) -> pcre2.Pattern | None:
    """`parsed` (an `re` parse, compiled with MULTILINE) as a PCRE2 pattern over ASCII bytes
    that matches exactly where `re` does on ASCII text; None when no such translation is known."""
    return compile_source(native_source(parsed))


def native_source(parsed) -> bytes | None:
    """The PCRE2 source of `compile_native`; None when no translation is known."""
    try:
        return translate(parsed).encode("ascii")
    except Untranslatable:
        return None


def compile_source(source: bytes | None) -> pcre2.Pattern | None:
    """A `native_source`, JIT-compiled; None for none, or one too large for PCRE2."""
    if source is None:
        return None
    try:
        return pcre2.compile(source, pcre2.MULTILINE)
    except pcre2.LibraryError:
        return None


def translate(parsed) -> str:
    """PCRE2 source for an `re` parse: (*LF) line breaks, then the pattern's global flags."""
    if parsed.getwidth()[0] == 0:
        raise Untranslatable("a pattern that can match empty text iterates differently")
    names = {number: name for name, number in parsed.state.groupdict.items()}
    flags = "".join(letter for flag, letter in _FLAGS if flag != re.MULTILINE and parsed.state.flags & flag)
    return "(*LF)" + (f"(?{flags})" if flags else "") + _sequence(list(parsed), names, leading=True)


def _sequence(items: list, names: dict[int, str], leading: bool = False) -> str:
    return "".join(_item(op, value, names, leading and position == 0) for position, (op, value) in enumerate(items))


def _item(op, value, names: dict[int, str], leading: bool) -> str:
    name = str(op)
    if name == "LITERAL":
        return _character(value)
    if name == "NOT_LITERAL":
        return f"[^{_character(value)}]"
    if name == "ANY":
        return "."
    if name == "IN":
        return _class(value)
    if name == "AT":
        return _anchor(str(value), leading)
    if name in _REPEATS:
        low, high, body = value
        if low > MAX_PCRE_REPEAT or (high != MAXREPEAT and high > MAX_PCRE_REPEAT):
            raise Untranslatable("repeat count beyond PCRE2's limit")
        upper = "" if high == MAXREPEAT else str(high)
        body = list(body)
        repeated = _sequence(body, names)
        if len(body) != 1 or str(body[0][0]) in ("AT", "ASSERT", "ASSERT_NOT", "GROUPREF"):
            repeated = f"(?:{repeated})"  # one character, class or group repeats as it is written
        return f"{repeated}{{{low},{upper}}}{_REPEATS[name]}"
    if name == "SUBPATTERN":
        group, added, removed, body = value
        inner = _sequence(list(body), names, leading)
        modifiers = _modifiers(added, removed)
        if group is None:
            return f"(?{modifiers}:{inner})"
        opened = f"(?P<{names[group]}>" if group in names else "("
        return f"{opened}(?{modifiers}:{inner}))" if modifiers else f"{opened}{inner})"
    if name == "BRANCH":
        return "(?:" + "|".join(_sequence(list(branch), names, leading) for branch in value[1]) + ")"
    if name in ("ASSERT", "ASSERT_NOT"):
        direction, body = value
        return f"(?{_LOOKAROUNDS[name, direction]}{_sequence(list(body), names)})"
    if name == "ATOMIC_GROUP":
        return f"(?>{_sequence(list(value), names)})"
    if name == "GROUPREF":
        return f"\\g{{{value}}}"
    if name == "GROUPREF_EXISTS":
        group, yes, no = value
        return f"(?({group}){_sequence(list(yes), names)}|{_sequence(list(no or []), names)})"
    raise Untranslatable(name)


def _anchor(at: str, leading: bool) -> str:
    if at == "AT_BEGINNING":
        return "^" if leading else "(?<![^\\n])"  # `re` also matches after a final line break
    if at not in _ANCHORS:
        raise Untranslatable(at)
    return _ANCHORS[at]


def _class(items: list) -> str:
    negated = bool(items) and str(items[0][0]) == "NEGATE"
    ranges: list[tuple[int, int]] = []
    for op, value in items[negated:]:
        name = str(op)
        if name == "LITERAL":
            ranges.append((value, value))
        elif name == "RANGE":
            ranges.append(value)
        elif name == "CATEGORY":
            ranges.extend(_category(str(value)))
        else:
            raise Untranslatable(name)
    if not ranges:
        return "[\\x00-\\xff]" if negated else "(?!)"
    body = "".join(_character(low) if low == high else f"{_character(low)}-{_character(high)}" for low, high in ranges)
    return f"[{'^' if negated else ''}{body}]"


def _category(category: str) -> list[tuple[int, int]]:
    positive = category.replace("CATEGORY_NOT_", "CATEGORY_")
    if positive not in _CATEGORIES:
        raise Untranslatable(category)
    ranges = _CATEGORIES[positive]
    if positive == category:
        return ranges
    complement, start = [], 0
    for low, high in ranges:
        if low > start:
            complement.append((start, low - 1))
        start = high + 1
    return complement + [(start, 0x7F)]  # bytes beyond ASCII never occur in the text


def _character(code: int) -> str:
    if code > 0x7F:
        raise Untranslatable("a non-ASCII character")
    return chr(code) if chr(code).isalnum() else f"\\x{code:02x}"


def _modifiers(added: int, removed: int) -> str:
    if (added | removed) & re.MULTILINE:
        raise Untranslatable("a group that sets its own line mode")
    on = "".join(letter for flag, letter in _FLAGS if added & flag)
    off = "".join(letter for flag, letter in _FLAGS if removed & flag)
    return on + (f"-{off}" if off else "")


class AsciiMatch:
    """A PCRE2 match over ASCII bytes, read as the `re.Match` over the text it was found in."""

    __slots__ = ("match",)

    def __init__(self, match: pcre2.Match) -> None:
        self.match = match

    def start(self, group: int | str = 0) -> int:
        return self.match.start(group)

    def end(self, group: int | str = 0) -> int:
        return self.match.end(group)

    def span(self, group: int | str = 0) -> tuple[int, int]:
        return self.match.span(group)

    def group(self, group: int | str = 0) -> str | MaybeNone:  # as `re.Match` has it: None for a group not taken
        value = self.match.group(group)
        return None if value is None else value.decode("ascii")

    __getitem__ = group

    def groupdict(self) -> dict[str, str | MaybeNone]:
        found = self.match.groupdict().items()
        return {name: None if value is None else value.decode("ascii") for name, value in found}
