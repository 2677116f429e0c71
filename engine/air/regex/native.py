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

import codecs
import re
from functools import lru_cache
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


# --- Finders: where PCRE2 cannot give re's results, it says where re need look -----------

NON_ASCII = 0xFF  # the byte every character beyond ASCII becomes in the text a finder searches
RELAXED_REPEAT = 255  # a repeat bounded above this is searched unbounded (its copies make PCRE2's code too large)
_AS_NON_ASCII_BYTES = "air-non-ascii-bytes"  # the encoding error handler below


def _non_ascii_bytes(error: UnicodeError) -> tuple[bytes, int]:
    """NON_ASCII for each character of a run that ASCII cannot encode."""
    assert isinstance(error, UnicodeEncodeError)
    return bytes([NON_ASCII]) * (error.end - error.start), error.end


codecs.register_error(_AS_NON_ASCII_BYTES, _non_ascii_bytes)


class Finder:
    """A PCRE2 pattern that matches at every position where an `re` pattern matches: over a
    text's `finder_bytes`, and on ASCII texts alone unless `any_text`. It may match elsewhere
    too: `re` is then tried where it matches, and only there (see `air.regex.GuardedPattern`).
    For the patterns and texts that exact translation cannot serve."""

    def __init__(self, pattern: pcre2.Pattern, any_text: bool) -> None:
        self.pattern = pattern
        self.any_text = any_text

    def next_start(self, data: bytes, position: int) -> int | None:
        """The first position from `position` on where a match may start; None when none can."""
        found = self.pattern.search(data, position)
        return None if found is None else found.start()


@lru_cache(maxsize=4)
def finder_bytes(text: str) -> bytes:
    """The text as a Finder reads it: one byte per character, each beyond ASCII as NON_ASCII
    (so that positions are the text's). The same text, searched by pattern after pattern, is
    written once."""
    return text.encode("ascii", _AS_NON_ASCII_BYTES)


FinderSource = tuple[bytes, bool]  # a Finder's PCRE2 source, and whether it serves any text


def compile_finder(parsed) -> Finder | None:
    """A Finder for `parsed` (an `re` parse, compiled with MULTILINE), or None when none is known."""
    return finder_from(finder_source(parsed))


def finder_source(parsed) -> FinderSource | None:
    """What `compile_finder` compiles; None when no Finder is known."""
    if parsed.getwidth()[0] == 0:
        return None  # empty matches iterate differently
    names = {number: name for name, number in parsed.state.groupdict.items()}
    translation = _Relaxation(names, case_blind=bool(parsed.state.flags & re.IGNORECASE))
    try:
        source = translation.sequence(list(parsed), positive=True, exact=False, leading=True)
    except Untranslatable:
        return None
    flags = "".join(letter for flag, letter in _FLAGS if flag != re.MULTILINE and parsed.state.flags & flag)
    return ("(*LF)" + (f"(?{flags})" if flags else "") + source).encode("latin-1"), translation.any_text


def finder_from(source: FinderSource | None) -> Finder | None:
    """A `finder_source`, JIT-compiled; None for none, or one too large for PCRE2."""
    if source is None:
        return None
    try:
        return Finder(pcre2.compile(source[0], pcre2.MULTILINE), source[1])
    except pcre2.LibraryError:
        return None


class _Relaxation:
    """Writes an `re` parse as a PCRE2 pattern that matches at least wherever it does
    (`positive`) or, inside a negative lookaround, at most wherever it does: a character
    beyond ASCII (NON_ASCII in the text) is let through, or kept out, where `re` might take or
    refuse it (a word character, a word boundary), and a long bounded repeat loses its bound.
    Inside an atomic group or a possessive repeat (`exact`), where matching more could make a
    match fail, nothing is relaxed: what would be is written for ASCII, and the finder then
    serves ASCII texts alone (`any_text` off). Case-blind, `re` also folds letters beyond ASCII
    onto ASCII ones (`ſ` is `s`, `K` the Kelvin sign is `k`): an ASCII letter may then stand for
    a character beyond ASCII, and one beyond ASCII for an ASCII letter."""

    def __init__(self, names: dict[int, str], case_blind: bool) -> None:
        self.names = names
        self.case_blind = case_blind  # from the first case-blind group on (to the end: wider is safe)
        self.any_text = True

    def sequence(self, items: list, positive: bool, exact: bool, leading: bool = False, behind: bool = False) -> str:
        return "".join(
            self.item(op, value, positive, exact, leading and position == 0, behind)
            for position, (op, value) in enumerate(items)
        )

    def item(self, op, value, positive: bool, exact: bool, leading: bool, behind: bool) -> str:
        name = str(op)
        if name in ("LITERAL", "NOT_LITERAL") and value > 0x7F and exact and self.case_blind:
            raise Untranslatable("a case-blind character beyond ASCII where nothing may be relaxed")
        if name == "LITERAL":
            if value <= 0x7F and not (self.case_blind and chr(value).isalpha()):
                return _character(value)
            if value <= 0x7F:  # a letter that may stand for one beyond ASCII
                return self._uncertain(positive, exact, f"[{_character(value)}\\xff]", _character(value))
            return self._uncertain(positive, exact, "[\\x00-\\xff]" if self.case_blind else _byte(NON_ASCII), "(?!)")
        if name == "NOT_LITERAL":
            if value <= 0x7F and not (self.case_blind and chr(value).isalpha()):
                return f"[^{_character(value)}]"  # takes every character beyond ASCII, as re does
            if value <= 0x7F:  # refuses the letters beyond ASCII that fold onto it
                return self._uncertain(positive, exact, f"[^{_character(value)}]", f"[^{_character(value)}\\xff]")
            return self._uncertain(positive, exact, "[\\x00-\\xff]", "(?!)" if self.case_blind else "[\\x00-\\x7f]")
        if name == "ANY":
            return "."
        if name == "IN":
            return self._class(value, positive, exact)
        if name == "AT":
            at = str(value)
            if at in ("AT_BOUNDARY", "AT_NON_BOUNDARY"):
                return self._uncertain(positive, exact, "", "(?!)", _ANCHORS[at])
            return _anchor(at, leading)
        if name in _REPEATS:
            low, high, body = value
            exact = exact or name == "POSSESSIVE_REPEAT"
            relaxed = high != MAXREPEAT and high > RELAXED_REPEAT and positive and not exact and not behind
            if low > MAX_PCRE_REPEAT or (high != MAXREPEAT and high > MAX_PCRE_REPEAT and not relaxed):
                raise Untranslatable("repeat count beyond PCRE2's limit")
            upper = "" if high == MAXREPEAT or relaxed else str(high)
            return f"(?:{self.sequence(list(body), positive, exact, behind=behind)}){{{low},{upper}}}{_REPEATS[name]}"
        if name == "SUBPATTERN":
            group, added, removed, body = value
            if added & re.IGNORECASE:
                self.case_blind = True
            inner = self.sequence(list(body), positive, exact, leading, behind)
            modifiers = _modifiers(added, removed)
            if group is None:
                return f"(?{modifiers}:{inner})"
            opened = f"(?P<{self.names[group]}>" if group in self.names else "("
            return f"{opened}(?{modifiers}:{inner}))" if modifiers else f"{opened}{inner})"
        if name == "BRANCH":
            return "(?:" + "|".join(self.sequence(list(b), positive, exact, leading, behind) for b in value[1]) + ")"
        if name in ("ASSERT", "ASSERT_NOT"):
            direction, body = value
            inner = self.sequence(list(body), positive == (name == "ASSERT"), exact, behind=direction < 0)
            return f"(?{_LOOKAROUNDS[name, direction]}{inner})"
        if name == "ATOMIC_GROUP":
            return f"(?>{self.sequence(list(value), positive, True, behind=behind)})"
        if name == "GROUPREF" and (positive or exact):
            if exact:
                self.any_text = False  # two characters beyond ASCII are one NON_ASCII byte
            return f"\\g{{{value}}}"
        raise Untranslatable(name)

    def _uncertain(self, positive: bool, exact: bool, wider: str, narrower: str, ascii: str | None = None) -> str:
        """A construct that may or may not match a character beyond ASCII: `wider` lets the
        NON_ASCII byte through, `narrower` keeps it out, `ascii` (else `narrower`) is its
        exact writing for ASCII texts."""
        if exact:
            self.any_text = False
            return narrower if ascii is None else ascii
        return wider if positive else narrower

    def _class(self, items: list, positive: bool, exact: bool) -> str:
        negated = bool(items) and str(items[0][0]) == "NEGATE"
        ranges: list[tuple[int, int]] = []
        beyond_ascii = False  # whether the class names characters beyond ASCII, or a category
        named_beyond_ascii = False  # whether it names such characters itself
        for op, value in items[negated:]:
            name = str(op)
            if name == "CATEGORY":
                ranges.extend(_category(str(value)))
                beyond_ascii = True
                continue
            if name not in ("LITERAL", "RANGE"):
                raise Untranslatable(name)
            low, high = (value, value) if name == "LITERAL" else value
            named_beyond_ascii = named_beyond_ascii or high > 0x7F
            if low <= 0x7F:
                ranges.append((low, min(high, 0x7F)))
                beyond_ascii = beyond_ascii or self.case_blind and _has_letter(low, min(high, 0x7F))
        if named_beyond_ascii and self.case_blind:  # `[ſ]` takes `s`: the class may take anything
            if exact:
                raise Untranslatable("a case-blind class of characters beyond ASCII")
            return "[\\x00-\\xff]" if positive else "(?!)"
        beyond_ascii = beyond_ascii or named_beyond_ascii
        if beyond_ascii:  # it may or may not take a character beyond ASCII
            takes = self._uncertain(positive, exact, "yes", "no") == "yes"
        else:  # a negated class of ASCII takes every one; a class of ASCII, none
            takes = negated
        if takes != negated:
            ranges.append((NON_ASCII, NON_ASCII))
        if not ranges:
            return "[\\x00-\\xff]" if negated else "(?!)"
        body = "".join(_byte(low) if low == high else f"{_byte(low)}-{_byte(high)}" for low, high in ranges)
        return f"[{'^' if negated else ''}{body}]"


def _has_letter(low: int, high: int) -> bool:
    return any(chr(code).isalpha() for code in range(low, high + 1))


def _byte(code: int) -> str:
    return chr(code) if code <= 0x7F and chr(code).isalnum() else f"\\x{code:02x}"
