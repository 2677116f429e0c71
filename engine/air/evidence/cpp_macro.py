"""`cpp_macro`: invocations `NAME(args)` of macros or functions in C/C++, with captured arguments.

A NAME that is a class counts where an object of it is constructed with arguments, as a
registrar object is: `static NAME r(a, b);`, `NAME r{a, b}`, `auto r = NAME{a, b}`. The
template arguments of a class template come first, so `NAME<K> r(a)` captures as
`NAME(K, a)`, the way the macro that wraps such a registrar is written.

A call written inside a function-like `#define` of the tree counts where that macro is
invoked, with the invocation's arguments substituted, so a registration wrapped in a
backend's own macro is found at the line that expands it. A wrapper that is never
invoked registers nothing and yields nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from air.evidence.base import (
    Clause,
    Context,
    Hit,
    as_list,
    hit_at,
    in_clause_files,
    last_component,
)
from air.index import CodeIndex
from air.index.cpp import expand_macro, find_calls, find_constructions
from air.index.model import CppCall, CppFacts, SourceFile

CPP_LANGUAGES = ("cpp", "template")
MAX_WRAPPER_DEPTH = 3


def literals(spec: dict) -> list[str]:
    return [last_component(name) for name in as_list(spec["name"])]


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    names = frozenset(literals(clause.spec))
    capture = clause.spec.get("capture", [])
    hits = []
    for source, line, args, via in invocations(context.index, names):
        if not in_clause_files(source.path, clause):
            continue
        captures = {cap: args[i] for i, cap in enumerate(capture) if i < len(args)}
        if via:
            captures["VIA"] = via
        hits.append(hit_at(source, line, captures))
    return hits


def invocations(
    index: CodeIndex, names: frozenset[str], depth: int = 0
) -> Iterator[tuple[SourceFile, int, tuple[str, ...], str]]:
    """(file, line, args, wrapper macro or "") for every invocation of `names`, wrappers expanded."""
    for source in index.select(names, languages=CPP_LANGUAGES):
        for call in _invoked(index.cpp_facts(source), names):
            if call.in_define is None:
                yield source, call.line, call.args, ""
            elif depth < MAX_WRAPPER_DEPTH:
                yield from _through_wrapper(index, source, call.in_define, names, depth)


def _through_wrapper(
    index: CodeIndex, source: SourceFile, macro: str, names: frozenset[str], depth: int
) -> Iterator[tuple[SourceFile, int, tuple[str, ...], str]]:
    defines = [define for where, define in index.defines.get(macro, []) if where.path == source.path]
    for define in defines:
        if define.params is None:
            continue
        for site, line, args, _via in invocations(index, frozenset([macro]), depth + 1):
            expanded = CppFacts(stripped=expand_macro(define, args))
            for call in _invoked(expanded, names):
                yield site, line, call.args, macro


def _invoked(facts: CppFacts, names: frozenset[str]) -> list[CppCall]:
    """Calls of `names` and constructions of objects of them, in order of position."""
    return sorted(find_calls(facts, names) + find_constructions(facts, names), key=lambda call: call.end)
