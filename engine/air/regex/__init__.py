"""Regular expressions, from packs and air's own readers: compiled once, guarded against
catastrophic backtracking, matched by PCRE2 where that gives `re`'s results (ASCII text), and
otherwise searched from the only places a match can start when a literal says where those are.

Every search has a time budget (SEARCH_BUDGET seconds, or AIR_REGEX_BUDGET from the
environment): a search that runs past it ends with PatternTimeout, which leaves the clause that
ran it undecided. The deadline is a SIGALRM timer, honoured by `re` inside a search (it looks
for signals every few thousand steps, so a step that scans far delays it) and between the calls
a PCRE2 search makes. Within one call PCRE2's match limit (its default, which the JIT honours)
ends exponential backtracking, and `re` then searches instead; but a call that scans the text
from each of many positions, quadratic time, cannot be interrupted. So only patterns air ships
run on PCRE2 (tests/test_security_regex.py runs each on adversarial text); a pack's own
patterns are `distrust`ed when it is loaded, and run on `re`."""

from __future__ import annotations

import copyreg
import os
import re
import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

import pcre2

from air.regex.backtracking import backtracking_risk
from air.regex.native import AsciiMatch, compile_source, native_source

if TYPE_CHECKING:  # typeshed describes re._parser under its former name
    import sre_constants
    import sre_parse
else:
    try:
        import re._constants as sre_constants  # Python 3.11+
        import re._parser as sre_parse
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_constants
        import sre_parse

MIN_LITERAL = 3
CHARACTERS_PER_CANDIDATE = 64  # re scans about this many characters in the time of one match attempt
SEARCH_BUDGET = 5.0  # seconds one pattern may search one text
BUDGET_VARIABLE = "AIR_REGEX_BUDGET"


class UnsafePattern(ValueError):
    """A pattern whose matching time can grow exponentially, or as a high power, with the input."""


TIMED_OUT = "pattern timed out"


class PatternTimeout(Exception):
    """A search that ran past its time budget; `where` names the text (a file) once known."""

    def __init__(self, pattern: str, where: str = "") -> None:
        super().__init__(f"{TIMED_OUT} on {where or 'a text'}")
        self.pattern = pattern
        self.where = where


def distrust(pattern: str) -> None:
    """Keep `pattern` off PCRE2, whose searches cannot be interrupted: a pattern air does not
    ship may take quadratic time on a hostile text, and only `re` ends such a search on time."""
    _LEARNED.distrusted.add(pattern)


def alternatives(words: Iterable[str]) -> str:
    """`words` as literal alternatives of a pattern (`a|b\\.c`), or a pattern that matches
    nothing when there are none."""
    return "|".join(map(re.escape, words)) or "(?!)"


def inherit_trust(pattern: str, derived: str) -> None:
    """Distrust `derived`, a pattern built from `pattern` with literal text put in, as `pattern` is."""
    if pattern in _LEARNED.distrusted:
        _LEARNED.distrusted.add(derived)


def ship(pattern: str) -> None:
    """Mark `pattern` as one of air's own packs: tests/test_security_regex.py proves every such
    pattern free of the constructs the guard looks for, so compiling it skips that analysis
    (0.08 s over the shipped pack)."""
    _LEARNED.shipped.add(pattern)


@contextmanager
def searching(where: str) -> Iterator[None]:
    """Name `where` (the file searched) in a PatternTimeout raised within."""
    try:
        yield
    except PatternTimeout as timeout:
        raise PatternTimeout(timeout.pattern, where) from None


class GuardedPattern:
    """A compiled pattern. `re` scans for a match from every position, fast only when the
    pattern opens with a literal; pack patterns mostly open with `\\b`, a lookbehind or a `^(?=...)`
    line test instead. When every match starts with one of a few literals (after such zero-width
    tests), or at the start of a line holding one, or at the start of a line that passes the
    pattern's own line test, only those positions are tried, with `re.match`: the matches are
    exactly those `re.finditer` gives, found in a fraction of the time. ASCII text is matched
    by PCRE2 (see `air.regex.native`) unless `native` is off, with the same results again."""

    def __init__(self, pattern: str, parsed, native: bool = True) -> None:
        self.pattern = pattern
        self._tree = parsed
        self._on_pcre2 = native

    @cached_property
    def _plan(self) -> tuple[list[str] | None, list[str] | None, re.Pattern[str] | None]:
        """Where `re` tries the pattern: after one of its start literals, at the start of a line
        holding one of its first-line literals, or of a line passing its line test; or (all
        None) everywhere, by `re`'s own scan. Worked out when first searched with `re`: most
        patterns only ever run on PCRE2."""
        items = list(self._tree)
        plain = self._tree.state.flags & (re.IGNORECASE | re.DOTALL) or _leading_literal(items) >= MIN_LITERAL
        starts = None if plain else _long_enough(_start_literals(items))  # re finds a leading literal fast itself
        line_literals = None if plain or starts else _first_line_literals(items)
        searched = plain or starts or line_literals or self._tree.state.flags & re.VERBOSE
        return starts, line_literals, None if searched else _line_test(self.pattern, items)

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.MULTILINE)  # when first searched: loading a pack only parses it

    @cached_property
    def _native(self) -> pcre2.Pattern | None:
        if not self._on_pcre2 or self.pattern in _LEARNED.distrusted:
            return None
        return compile_source(_LEARNED.native_source(self.pattern, self._tree))

    def finditer(self, text: str) -> Iterator[re.Match[str] | AsciiMatch]:
        """The matches of `finditer`, all found within the time budget."""
        with _Deadline(self.pattern):
            if text.isascii() and self._native is not None:
                try:  # a PCRE2 limit falls back to re
                    return iter([AsciiMatch(match) for match in self._native.finditer(text.encode("ascii"))])
                except pcre2.LibraryError:
                    pass
            return iter(list(self._guarded(text)))

    def search(self, text: str) -> re.Match[str] | AsciiMatch | None:
        """The first match, found within the time budget."""
        with _Deadline(self.pattern):
            if text.isascii() and self._native is not None:
                try:
                    match = self._native.search(text.encode("ascii"))
                    return None if match is None else AsciiMatch(match)
                except pcre2.LibraryError:
                    pass
            return next(self._guarded(text), None)

    def _guarded(self, text: str) -> Iterator[re.Match[str]]:
        candidates = self._candidates(text) if any(self._plan) else None
        if candidates is None:
            yield from self.regex.finditer(text)
            return
        resume = 0
        for start in candidates:
            if start < resume:
                continue  # inside the previous match: matches do not overlap
            match = self.regex.match(text, start)
            if match is not None:
                resume = max(match.end(), start + 1)
                yield match

    def _candidates(self, text: str) -> list[int] | None:
        """Positions where a match may start, ascending: where a start literal occurs, or the
        start of each line holding a first-line literal or passing the line test. None when
        there are so many that re's own scan is faster."""
        found = set()
        limit = len(text) // CHARACTERS_PER_CANDIDATE
        starts, line_literals, line_test = self._plan
        if line_test is not None:
            match = line_test.search(text)
            while match is not None:
                found.add(text.rfind("\n", 0, match.start()) + 1)
                if len(found) > limit:
                    return None
                match = line_test.search(text, _next_line(text, match.start()))
            return sorted(found)
        literals = starts or line_literals
        assert literals is not None  # with no line test, `_guarded` asks only when there are literals
        for literal in literals:
            position = text.find(literal)
            while position >= 0:
                found.add(position if starts else text.rfind("\n", 0, position) + 1)
                if len(found) > limit:
                    return None
                position = text.find(literal, position + 1 if starts else _next_line(text, position))
        return sorted(found)


def _next_line(text: str, position: int) -> int:
    """The start of the line after the one holding `position`; the text's end on its last line.
    Once a line is a candidate, the rest of it is not searched again."""
    end = text.find("\n", position)
    return len(text) if end < 0 else end + 1


@lru_cache(maxsize=1)
def search_budget() -> float:
    """SEARCH_BUDGET, or the positive number of seconds AIR_REGEX_BUDGET holds."""
    try:
        budget = float(os.environ.get(BUDGET_VARIABLE, SEARCH_BUDGET))
    except ValueError:
        return SEARCH_BUDGET
    return budget if 0 < budget < float("inf") else SEARCH_BUDGET


# `signal.getsignal` turns the handler into an enum member where it can; asked of a function,
# that raises and catches an exception, which costs more than many a search it guards.
_handler_of = getattr(signal, "_signal", signal).getsignal


class _Deadline:
    """Raise PatternTimeout in the searching code once the budget is spent. Signals reach only
    the main thread, which is where air searches (in each of its processes); elsewhere a
    search runs without a deadline. A class rather than a generator: it wraps every search."""

    __slots__ = ("pattern", "armed")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.armed = False

    def __enter__(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        _Alarm.pattern = self.pattern
        if _handler_of(signal.SIGALRM) is not _Alarm.ring:
            signal.signal(signal.SIGALRM, _Alarm.ring)
        signal.setitimer(signal.ITIMER_REAL, search_budget())
        self.armed = True

    def __exit__(self, *_exception: object) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)


class _Alarm:
    """The SIGALRM handler: it ends the search under way."""

    pattern = ""

    @staticmethod
    def ring(_signal: int, _frame) -> None:
        raise PatternTimeout(_Alarm.pattern)


@lru_cache(maxsize=1024)
def compile_guarded(pattern: str, native: bool = True) -> GuardedPattern:
    """Compile `pattern`, refusing one that can backtrack catastrophically (see
    `air.regex.backtracking`: `(a+)+`, `(a|aa)*`, `\\w*\\w*!`). With `native` off the pattern stays
    with `re`, which builds match objects faster: right for patterns that match on many lines
    (every import of a file), not for those that seldom do."""
    parsed = _parse(pattern)
    risk = None if pattern in _LEARNED.shipped else backtracking_risk(parsed)
    if risk is not None:
        raise UnsafePattern(f"pattern {pattern!r} can backtrack catastrophically: {risk}")
    return GuardedPattern(pattern, parsed, native)


@lru_cache(maxsize=1024)
def required_literals(pattern: str) -> tuple[str, ...]:
    """Literals one of which every match contains: the longest literal run of the pattern, or
    one run per branch of an alternation (`\\.backward\\(|gradcheck` -> [".backward(", "gradcheck"]).
    Empty when no such set of literals of at least MIN_LITERAL characters exists."""
    parsed = _parse(pattern)
    if parsed.state.flags & re.IGNORECASE:
        return ()
    return tuple(_required(list(parsed.data)) or ())


class Learned:
    """What air knows of patterns: which it ships and which it distrusts (see `ship` and
    `distrust`), and what it works out from a pattern's text alone, once per pattern: `re`'s
    parse (as a MULTILINE pattern), read by the guard, the literal analyses and the
    translations alike, none of which changes it; and the PCRE2 source of its translation. Kept
    with a loaded pack (see `air.pack.compiled`), so that a check that takes
    the pack knows all its loading taught."""

    def __init__(self) -> None:
        self.shipped: set[str] = set()
        self.distrusted: set[str] = set()
        self.parses: dict[str, sre_parse.SubPattern] = {}
        self.native_sources: dict[str, bytes | None] = {}

    def parse(self, pattern: str) -> sre_parse.SubPattern:
        parsed = self.parses.get(pattern)
        if parsed is None:
            parsed = self.parses[pattern] = sre_parse.parse(pattern, re.MULTILINE)
        return parsed

    def native_source(self, pattern: str, parsed: sre_parse.SubPattern) -> bytes | None:
        if pattern not in self.native_sources:
            self.native_sources[pattern] = native_source(parsed)
        return self.native_sources[pattern]

    def translate_all(self) -> None:
        """Work out the translations of every pattern parsed so far."""
        for pattern, parsed in list(self.parses.items()):
            self.native_source(pattern, parsed)

    def adopt(self, other: Learned) -> None:
        """Take what `other` (worked out in another process) knows as known here."""
        self.shipped |= other.shipped
        self.distrusted |= other.distrusted
        self.parses.update(other.parses)
        self.native_sources.update(other.native_sources)


_LEARNED = Learned()


def _parse(pattern: str) -> sre_parse.SubPattern:
    return _LEARNED.parse(pattern)


def learned() -> Learned:
    """What this process has learnt of patterns so far, every translation worked out."""
    _LEARNED.translate_all()
    return _LEARNED


def adopt_learned(other: Learned) -> None:
    """Take what `other` (learnt in another process) knows of patterns as known here."""
    _LEARNED.adopt(other)


def _named_constant(name: str) -> Any:
    return getattr(sre_constants, name)


# A parse's opcodes are named constants that pickle cannot rebuild by value: each is rebuilt
# as the module's constant of the same name.
copyreg.pickle(type(sre_constants.LITERAL), lambda constant: (_named_constant, (constant.name,)))


def _required(items: list) -> list[str] | None:
    """The best set of alternatives that a match of the sequence `items` must contain."""
    candidates: list[list[str]] = []
    run: list[str] = []
    for op, value in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(value))
            continue
        candidates.append(["".join(run)])
        run = []
        inner = None
        if name == "SUBPATTERN" and not (value[1] & re.IGNORECASE):
            inner = _required(list(value[-1]))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and value[0] >= 1:
            inner = _required(list(value[-1]))
        elif name == "BRANCH":
            branches = [_required(list(branch)) for branch in value[1]]
            required = [branch for branch in branches if branch]
            if len(required) == len(branches):
                inner = sorted({literal for branch in required for literal in branch})
        if inner:
            candidates.append(inner)
    candidates.append(["".join(run)])
    return _most_selective([c for c in candidates if c and min(map(len, c)) >= MIN_LITERAL])


def _most_selective(candidates: list[list[str] | None]) -> list[str] | None:
    """Of sets of literals that each say where a match may be, the one that rules out most:
    longer literals, and fewer of them."""
    usable = [c for c in candidates if c]
    return max(usable, key=lambda c: (min(map(len, c)), -len(c))) if usable else None


_ZERO_WIDTH = ("AT", "ASSERT", "ASSERT_NOT")


def _leading_literal(items: list) -> int:
    """How many literal characters the pattern opens with."""
    count = 0
    while count < len(items) and str(items[count][0]) == "LITERAL":
        count += 1
    return count


def _long_enough(literals: list[str] | None) -> list[str] | None:
    return literals if literals and min(map(len, literals)) >= MIN_LITERAL else None


def _start_literals(items: list) -> list[str] | None:
    """Literals one of which every match starts with, zero-width tests before them skipped
    (`\\b(?:assert\\w*|allclose)` -> ["allclose", "assert"]); None when there is no such set."""
    for position, (op, value) in enumerate(items):
        name = str(op)
        if name in _ZERO_WIDTH:
            continue
        rest = items[position + 1 :]
        if name == "LITERAL":
            run = position
            while run < len(items) and str(items[run][0]) == "LITERAL":
                run += 1
            literal = "".join(chr(code) for _op, code in items[position:run])
            following = _start_literals(items[run:])
            return [literal + tail for tail in following] if following else [literal]
        if name == "SUBPATTERN" and not value[1] & re.IGNORECASE:
            return _start_literals(list(value[-1]) + rest)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = value
            # taken once at most, what follows comes next; taken more often, the body again may
            taken = _start_literals(list(body) + rest) if high == 1 else _start_literals(list(body))
            skipped = _start_literals(rest) if low == 0 else []
            return None if taken is None or skipped is None else sorted(set(taken + skipped))
        if name == "BRANCH":
            found = []
            for branch in value[1]:
                literals = _start_literals(list(branch) + rest)
                if literals is None:
                    return None
                found.extend(literals)
            return sorted(set(found))
        return None
    return None


def _first_line_literals(items: list) -> list[str] | None:
    """For a pattern that starts at a line start (`^`), literals one of which the match's first
    line holds: required by a positive lookahead that cannot leave the line, or by the part
    consumed before anything that can match a line break. None when there is no such set."""
    if not items or str(items[0][0]) != "AT" or str(items[0][1]) != "AT_BEGINNING":
        return None
    candidates = []
    consumed = []
    for op, value in items[1:]:
        name = str(op)
        if name == "ASSERT" and value[0] == 1 and not _may_match_newline(value[1]):
            candidates.append(_required(list(value[1])))
        elif name in _ZERO_WIDTH:
            continue
        elif _may_match_newline([(op, value)]):
            break
        else:
            consumed.append((op, value))
    candidates.append(_required(consumed))
    return _most_selective(candidates)


_NEWLINE_CATEGORIES = {"CATEGORY_SPACE", "CATEGORY_NOT_WORD", "CATEGORY_NOT_DIGIT", "CATEGORY_LINEBREAK"}


def _may_match_newline(items, dotall: bool = False) -> bool:
    """Whether any part of a parsed pattern may match or look at a line break, or at the
    ends of the text (`\\A`, `\\Z`); unknown constructs count as yes."""
    for op, value in items:
        name = str(op)
        if name == "LITERAL":
            found = value == ord("\n")
        elif name == "NOT_LITERAL":
            found = value != ord("\n")
        elif name == "ANY":
            found = dotall
        elif name == "IN":
            negated = any(str(o) == "NEGATE" for o, _ in value)
            member = any(
                (str(o) == "LITERAL" and v == ord("\n"))
                or (str(o) == "RANGE" and v[0] <= ord("\n") <= v[1])
                or (str(o) == "CATEGORY" and str(v) in _NEWLINE_CATEGORIES)
                for o, v in value
            )
            found = member != negated
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            found = _may_match_newline(value[2], dotall)
        elif name == "SUBPATTERN":
            found = _may_match_newline(value[-1], dotall or bool(value[1] & re.DOTALL))
        elif name == "BRANCH":
            found = any(_may_match_newline(branch, dotall) for branch in value[1])
        elif name in ("ASSERT", "ASSERT_NOT"):
            found = _may_match_newline(value[1], dotall)
        elif name == "AT":
            found = str(value) in ("AT_BEGINNING_STRING", "AT_END_STRING")
        else:
            found = True
        if found:
            return True
    return False


_ANYTHING_ON_THE_LINE = ("[^\\n]*?", "[^\\n]*", ".*?", ".*")


def _line_test(pattern: str, items: list) -> re.Pattern[str] | None:
    """For a pattern opening with a line test `^(?=A|B...)` that cannot leave the line, a
    pattern matching somewhere in exactly the lines that pass it: `(?=[^\\n]*?X)` holds at a
    line's start when X matches anywhere on the line, so X is searched instead, which `re`
    does without retrying the test from every line start. None for other patterns."""
    if len(items) < 2 or str(items[0][1]) != "AT_BEGINNING" or str(items[1][0]) != "ASSERT":
        return None
    direction, body = items[1][1]
    end = _group_end(pattern, 1) if pattern.startswith("^(?=") else None
    if direction != 1 or end is None or _may_match_newline(body):
        return None
    tests = []
    for branch in _alternatives(pattern[4 : end - 1]):
        prefix = next((p for p in _ANYTHING_ON_THE_LINE if branch.startswith(p)), None)
        tests.append(f"(?:{branch[len(prefix) :]})" if prefix else f"^(?:{branch})")
    try:
        return re.compile("|".join(tests), re.MULTILINE)
    except re.error:
        return None


def _structure(pattern: str) -> Iterator[tuple[int, str]]:
    """(index, character) of each `(`, `)` and `|` that is syntax: not escaped, not in a class."""
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            index += pattern.startswith("^", index + 1)
            index += pattern.startswith("]", index + 1)  # a `]` first in a class is one of its characters
        elif char in "()|":
            yield index, char
        index += 1


def _group_end(pattern: str, start: int) -> int | None:
    """The index just after the `)` that closes the group opened at `start`."""
    depth = 0
    for index, char in _structure(pattern[start:]):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return start + index + 1
    return None


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of `pattern`."""
    cuts, depth = [], 0
    for index, char in _structure(pattern):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "|" and depth == 0:
            cuts.append(index)
    bounds = [-1, *cuts, len(pattern)]
    return [pattern[left + 1 : right] for left, right in zip(bounds, bounds[1:])]
