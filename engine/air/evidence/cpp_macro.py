"""`cpp_macro`: invocations `NAME(args)` of macros or functions in C/C++, with captured arguments.

A NAME that is a class counts where an object of it is constructed with arguments, as a
registrar object is: `static NAME r(a, b);`, `NAME r{a, b}`, `auto r = NAME{a, b}`. The
template arguments of a class template come first, so `NAME<K> r(a)` captures as
`NAME(K, a)`, the way the macro that wraps such a registrar is written.

A call written inside a function-like `#define` of the tree counts where that macro is
invoked, with the invocation's arguments substituted, so a registration wrapped in a
backend's own macro is found at the line that expands it. A wrapper that is never
invoked registers nothing and yields nothing.

Likewise a call inside a function definition whose arguments name the function's own
parameters (`void register_on(torch::Library& m, c10::DispatchKey k) { ... dispatch(k, f) ... }`)
counts where the function is called, with the call's arguments substituted; a function the
tree never calls keeps the call as written. Wrappers of wrappers are followed up to
MAX_WRAPPER_DEPTH levels. A hit found through a wrapper captures VIA: the wrapper's name.
"""

from __future__ import annotations

import re
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
from air.index.cpp import CPP_LANGUAGES, block_span, expand_macro, find_calls, find_constructions, is_declared_at
from air.index.model import CppCall, CppDefine, CppFacts, SourceFile

SUMMARY = "macro or function invocations with captured arguments, through the backend's wrapper macros; objects of a registrar class constructed with arguments (`static Registrar<K> r(x);` captures as `Registrar(K, x)`)"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {"name": {"$ref": "#/$defs/names"}, "capture": {"$ref": "#/$defs/captures"}},
}

MAX_WRAPPER_DEPTH = 3
_IDENTIFIER = re.compile(r"(?<![\w:])[A-Za-z_]\w*(?!\w|\s*::)")

Invocation = tuple[SourceFile, int, tuple[str, ...], str]  # file, line, args, wrapper or ""


def literals(spec: dict) -> list[str]:
    return [last_component(name) for name in as_list(spec["name"])]


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    names = frozenset(literals(clause.spec))
    capture = clause.spec.get("capture", [])
    arguments = len(capture)
    found = context.memo(
        ("invocations", names, arguments),  # clauses that differ only in `where` share them
        lambda: list(invocations(context.index, names, arguments=arguments)),
    )
    hits = []
    for source, line, args, via in found:
        if not in_clause_files(source.path, clause):
            continue
        captures = {cap: args[i] for i, cap in enumerate(capture) if i < len(args)}
        if via:
            captures["VIA"] = via
        hits.append(hit_at(source, line, captures))
    return hits


def invocations(
    index: CodeIndex, names: frozenset[str], depth: int = 0, calls_only: bool = False, arguments: int | None = None
) -> Iterator[Invocation]:
    """Every invocation of `names`, wrappers expanded where they are called: macros always,
    functions when one of the first `arguments` arguments (all when None) names a parameter
    of theirs. With `calls_only`, what declares or defines a function of those names is left out."""
    for source in index.select(names, languages=CPP_LANGUAGES):
        facts = index.cpp_facts(source)
        expanded_functions: set[int] = set()
        for call in _invoked(facts, names):
            if calls_only and is_declared_at(facts.stripped, call.start):
                continue
            if call.in_define is not None:
                if depth < MAX_WRAPPER_DEPTH:
                    yield from _through_wrapper(index, source, call.in_define, names, depth)
                continue
            function = (
                _function_passing_parameters(index, source, call, arguments) if depth < MAX_WRAPPER_DEPTH else None
            )
            if function is not None and function.line in expanded_functions:
                continue
            through = list(_through_function(index, function, names, depth)) if function is not None else []
            if through and function is not None:
                expanded_functions.add(function.line)
                yield from through
            elif not _opens_an_empty_block(facts, call):
                yield source, call.line, call.args, ""


def _opens_an_empty_block(facts: CppFacts, call: CppCall) -> bool:
    """Whether `call` opens a `{ ... }` block holding no code: only comments, or only code a
    constant `#if 0` leaves out (`TORCH_LIBRARY_IMPL(aten, Key, m) { // m.impl(...) }`)."""
    block = block_span(facts, call)
    return block is not None and not facts.stripped[block[0] : block[1]].strip()


def _through_wrapper(
    index: CodeIndex, source: SourceFile, macro: str, names: frozenset[str], depth: int
) -> Iterator[Invocation]:
    defines = [define for where, define in index.defines.get(macro, []) if where.path == source.path]
    for define in defines:
        if define.params is None:
            continue
        for site, line, args, _via in invocations(index, frozenset([macro]), depth + 1):
            yield from _expanded_calls(site, line, define, args, names)


def _function_passing_parameters(
    index: CodeIndex, source: SourceFile, call: CppCall, arguments: int | None
) -> CppDefine | None:
    """The function whose body holds `call`, when the call's first `arguments` arguments (all
    when None) name its parameters."""
    args = call.args[:arguments]
    bodies = index.function_bodies(source)
    if not bodies.may_take(_IDENTIFIER.findall(" ".join(args))):
        return None
    function = bodies.around(call.start)
    if function is None:
        return None
    assert function.params is not None  # a function has parameters, unlike an object-like macro
    named = [param for param in function.params if param and param != "..."]
    if not named:
        return None
    mentioned = re.compile(r"\b(?:" + "|".join(map(re.escape, named)) + r")\b")
    return function if any(mentioned.search(arg) for arg in args) else None


def _through_function(index: CodeIndex, function: CppDefine, names: frozenset[str], depth: int) -> Iterator[Invocation]:
    for site, line, args, _via in invocations(index, frozenset([function.name]), depth + 1, calls_only=True):
        yield from _expanded_calls(site, line, function, args, names)


def _expanded_calls(
    site: SourceFile, line: int, wrapper: CppDefine, args: tuple[str, ...], names: frozenset[str]
) -> Iterator[Invocation]:
    for call in _invoked(CppFacts(stripped=expand_macro(wrapper, args)), names):
        yield site, line, call.args, wrapper.name


def _invoked(facts: CppFacts, names: frozenset[str]) -> list[CppCall]:
    """Calls of `names` and constructions of objects of them, in order of position."""
    return sorted(find_calls(facts, names) + find_constructions(facts, names), key=lambda call: call.end)


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    return True
