"""Calls in a C/C++ text: invocations of functions and macros by name, constructions of
objects of named classes, the block that follows a call, and every call inside a span."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator
from functools import lru_cache
from itertools import pairwise

from air.index.cpp.lexing import (
    CONTINUATION,
    NOT_FUNCTION_NAMES,
    Brackets,
    Lines,
    collapse,
    identifier_start,
    is_identifier_char,
    lexemes,
    occurrences,
    qualifier_start,
    skip_group,
    skip_space,
    skip_space_back,
    split_top_level,
)
from air.index.cpp.preprocessor import DefineSpans, without_directives
from air.index.model import CppBlockCall, CppCall, CppFacts, CppInclude

_MAX_ARGUMENT = 1024


class _LiteralSpans:
    """Tells whether offsets, asked in increasing order, lie inside a literal."""

    def __init__(self, text: str) -> None:
        self._lexemes = lexemes(text)
        self._start = self._end = 0
        self._past_end = len(text) + 1

    def holds(self, offset: int) -> bool:
        while self._end <= offset:
            _, self._start, self._end = next(self._lexemes, ("", self._past_end, self._past_end))
        return self._start <= offset


def find_calls(facts: CppFacts, names: Collection[str]) -> list[CppCall]:
    """Every invocation `NAME(args)` in `facts.stripped` whose last `::` component is
    one of `names` (plain identifiers). Reported in order of position, each with
    its name as written (qualification kept, whitespace removed), its arguments
    split at top-level commas and whitespace-collapsed, and the macro whose
    `#define` holds it. A `#define NAME(...)` is not a call of NAME, and calls
    whose parentheses never close are skipped. An argument is read from at most
    its first 1,024 characters of source, which bounds the work on deeply nested
    calls."""

    def read(text: str, _start: int, paren: int, brackets: Brackets) -> tuple[tuple[str, ...], int] | None:
        group = brackets.group(paren)
        return (_arguments(text, paren, group), group[0]) if group is not None else None

    return _invocations(facts, names, occurrences, read)


def _invocations(
    facts: CppFacts,
    names: Collection[str],
    sites: Callable[[str, str], Iterable[tuple[int, int]]],
    read: Callable[[str, int, int, Brackets], tuple[tuple[str, ...], int] | None],
) -> list[CppCall]:
    """The calls of `names` that `sites(text, name)` finds, as (start of the name, where its
    arguments are read from), in order of position: those outside literals and not the
    name of a `#define`, whose arguments `read` gives as (arguments, closing offset)."""
    text = facts.stripped
    occurrences = sorted(
        (start, after, name) for name in set(names) if name and name in text for start, after in sites(text, name)
    )
    if not occurrences:
        return []
    literals = _LiteralSpans(text)
    defines = DefineSpans(text)
    brackets = Brackets(text)
    lines = Lines(text)
    found = []
    for start, after, name in occurrences:
        if literals.holds(start) or defines.is_macro_name(start):
            continue
        invocation = read(text, start, after, brackets)
        if invocation is not None:
            args, close = invocation
            found.append(
                CppCall(lines.of(start), _written_name(text, start, name), args, defines.macro_at(start), close, start)
            )
    return found


_NOT_A_TYPE = frozenset("return else do case throw new delete goto co_return co_yield co_await".split())


def is_declared_at(text: str, start: int) -> bool:
    """Whether the name at `start` is declared or defined there, a type written before it
    (`void f(`, `T* f(`, `ns::T f(`), rather than called."""
    before = skip_space_back(text, qualifier_start(text, start))
    if before and text[before - 1] in "*&>":
        return True
    word = text[identifier_start(text, before) : before]
    return bool(word) and word not in _NOT_A_TYPE


def _arguments(text: str, opened: int, group: tuple[int, list[int]]) -> tuple[str, ...]:
    """The arguments of the bracket group opened at `opened`, each read from at most its
    first 1,024 characters and whitespace-collapsed; () when there are none."""
    close, commas = group
    separators = [opened, *commas, close]
    args = tuple(
        collapse(text[left + 1 : min(right, left + 1 + _MAX_ARGUMENT)]) for left, right in pairwise(separators)
    )
    return () if args == ("",) else args


def _written_name(text: str, start: int, name: str) -> str:
    """`name`, found at `start`, with the qualification written before it."""
    return "".join(CONTINUATION.sub("", text[qualifier_start(text, start) : start]).split()) + name


@lru_cache(maxsize=512)
def _construction_pattern(name: str) -> re.Pattern[str]:
    """`name` followed by what may begin a construction: template arguments, a brace, or a
    name and a bracket. It starts with the name, which lets the search skip ahead to it."""
    return re.compile(rf"{re.escape(name)}\b(?=\s*(?:<|\{{|[A-Za-z_][\w#]*\s*[({{]))")


_MACRO_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_BARE_DECLARATION = re.compile(r"[A-Za-z_][\w#]*\s*;")
_DECLARATOR = re.compile(r"\s*([A-Za-z_][\w#]*)\s*")
_NOT_CONSTRUCTED_AFTER = frozenset({"class", "struct", "union", "enum", "namespace", "friend", "typename"})


def find_constructions(facts: CppFacts, names: Collection[str]) -> list[CppCall]:
    """Every object of a class among `names` (plain identifiers) constructed with
    arguments, as a registrar object is: `Name var(args)`, `Name var{args}`,
    `Name{args}`, and with template arguments `Name<T> var(args)`, `Name<T>{args}` or
    `Name<T>(args)`. Template arguments come first in `args`, as a macro that wraps
    the registrar takes them: `Registrar<K> r(x)` reads as `Registrar(K, x)`, and
    `Registrar<K> r;` as `Registrar(K)`. A variable named by a macro,
    `Name MAKE_NAME(v)(args)`, counts too. Reported as
    `find_calls` reports calls; `Name(args)` is one of those, and a class definition
    (`struct Name {`), a function defined to return a `Name` and a construction
    without arguments are not constructions."""

    def sites(text: str, name: str) -> Iterator[tuple[int, int]]:
        for match in _construction_pattern(name).finditer(text):
            start = match.start()
            if start == 0 or not (is_identifier_char(text[start - 1]) or text[start - 1] == "~"):
                yield start, match.end()

    def read(text: str, start: int, end: int, brackets: Brackets) -> tuple[tuple[str, ...], int] | None:
        return None if _follows_keyword(text, start) else _construction_after(text, end, brackets)

    return _invocations(facts, names, sites, read)


def _follows_keyword(text: str, start: int) -> bool:
    before = skip_space_back(text, qualifier_start(text, start))
    return text[identifier_start(text, before) : before] in _NOT_CONSTRUCTED_AFTER


def _construction_after(text: str, pos: int, brackets: Brackets) -> tuple[tuple[str, ...], int] | None:
    """(arguments, offset of the closing bracket) of the construction written after a
    class name that ends at `pos`, or None if none is."""
    template: list[str] = []
    pos = skip_space(text, pos)
    if text.startswith("<", pos):
        after = skip_group(text, pos)
        if after is None:
            return None
        template = [collapse(part) for part in split_top_level(text[pos + 1 : after - 1])]
        pos = skip_space(text, after)
    opened = _construction_brackets(text, pos, brackets, templated=bool(template))
    if opened is None:
        bare = _BARE_DECLARATION.match(text, pos) if template else None
        return (tuple(template), bare.end() - 1) if bare else None
    group = brackets.group(opened)
    if group is None:
        return None
    args = tuple(template) + _arguments(text, opened, group)
    return (args, group[0]) if args else None


def _construction_brackets(text: str, pos: int, brackets: Brackets, templated: bool) -> int | None:
    """Where the arguments of a construction open, `pos` being just past the class name
    (and its template arguments): at once for a temporary, `Name{...}` (and
    `Name<T>(...)`), else after the variable's name."""
    if text.startswith("{", pos) or (templated and text.startswith("(", pos)):
        return pos
    declarator = _DECLARATOR.match(text, pos)
    if declarator is None or declarator[1] in NOT_FUNCTION_NAMES:
        return None
    opened = declarator.end()
    if not text.startswith(("(", "{"), opened):
        return None
    if text[opened] == "(" and _MACRO_NAME.fullmatch(declarator[1]):
        group = brackets.group(opened)
        following = skip_space(text, group[0] + 1) if group else len(text)
        if text.startswith(("(", "{"), following):
            return following  # `Name MACRO(v)(args)`: the macro names the variable
    if text[opened] == "(":
        group = brackets.group(opened)
        if group is None or text.startswith("{", skip_space(text, group[0] + 1)):
            return None  # `Name f(...) {`: a function returning a Name
    return opened


_BLOCK_CALL = re.compile(
    r"(?<![\w.])(?<!::)(?<!->)(?P<callee>[A-Za-z_]\w*(?:\s*(?:\.|->|::)[A-Za-z_]\w*)*)\s*(?P<paren>\()\s*"
    r'(?:(?:[A-Za-z_]\w*\s*\(\s*)?"(?P<literal>[^"\\\n]*)")?'
)


def block_span(facts: CppFacts, call: CppCall) -> tuple[int, int] | None:
    """(start, end) of the inside of the `{ ... }` block that directly follows `call` (as in
    `TORCH_LIBRARY_IMPL(aten, Key, m) { m.impl("op", f); }`), None if no block follows; an
    unclosed block runs to the end of the text."""
    text = facts.stripped
    opened = skip_space(text, call.end + 1) if call.end >= 0 else len(text)
    if opened >= len(text) or text[opened] != "{":
        return None
    group = Brackets(text).group(opened)
    return opened + 1, group[0] if group else len(text)


def calls_between(facts: CppFacts, start: int = 0, end: int | None = None) -> list[CppBlockCall]:
    """The calls of `facts.stripped` from `start` to `end` (the whole text by default), nested
    ones too, in order, leaving out what preprocessor directives write: each with its first
    argument when that is a string literal, also one wrapped in a macro call (`NAME("op")`),
    else "", and its arguments as `find_calls` splits them."""
    text = without_directives(facts.stripped)
    lines = Lines(text)
    brackets = Brackets(text)
    found = []
    for match in _BLOCK_CALL.finditer(text, start, len(text) if end is None else end):
        paren = match.start("paren")
        group = brackets.group(paren)
        close = group[0] if group else -1
        args = _arguments(text, paren, group) if group else ()
        callee = "".join(match["callee"].split())
        found.append(CppBlockCall(lines.of(match.start()), callee, match["literal"] or "", args, match.start(), close))
    return found


def includes_between(facts: CppFacts, start: int, end: int) -> list[CppInclude]:
    """The `#include`s of `facts` written from `start` to `end`."""
    lines = Lines(facts.stripped)
    first, last = lines.of(start), lines.of(end)
    return [include for include in facts.includes if first <= include.line <= last]
