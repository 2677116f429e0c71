"""Facts from C and C++ sources, read as text without a compiler.

Comments are blanked first, keeping every offset and line break, so a position in
the blanked text is the same position in the file; so are the branches that a constant
`#if 0`, `#if false` or `#if 1 ... #else` leaves out, with the directives that choose
them. Preprocessor directives, class
definitions, out-of-class member definitions and calls are then picked out by
linear-time scans. Malformed input never raises: what cannot be read is skipped.

`lexing` finds comments and literals and steps over names and brackets; `preprocessor`
blanks comments and dead branches, reads directives, expands macros and finds constants and
type aliases; `classes` reads classes and member functions, `functions` function bodies,
and `calls` calls and constructions. `extract_cpp` reads a file's facts in one pass.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache

from air.index.blanking import blank_spans
from air.index.cpp.calls import (
    block_span,
    calls_between,
    find_calls,
    find_constructions,
    includes_between,
    is_declared_at,
)
from air.index.cpp.classes import read_classes, read_method_defs
from air.index.cpp.functions import (
    FunctionBodies,
    always_fails,
    always_leaves,
    body_statements,
    parameter_names,
    parameters_before,
    reached,
)
from air.index.cpp.lexing import COMMENT_KINDS, Braces, Lines, is_name, lexemes
from air.index.cpp.preprocessor import (
    DIRECTIVE,
    INCLUDE_KEYWORDS,
    builds,
    dead_branches,
    directive_lines,
    expand_macro,
    expand_macros,
    find_constants,
    find_type_aliases,
    may_define_constant,
    read_define,
    read_include,
    resolve_alias,
    strip_comments,
)
from air.index.model import CppDefine, CppFacts, CppInclude

__all__ = [
    "CPP_LANGUAGES",
    "FunctionBodies",
    "block_span",
    "always_fails",
    "always_leaves",
    "body_statements",
    "parameter_names",
    "parameters_before",
    "reached",
    "calls_between",
    "builds",
    "dead_branches",
    "expand_macro",
    "expand_macros",
    "extract_cpp",
    "find_calls",
    "find_constants",
    "find_constructions",
    "find_type_aliases",
    "includes_between",
    "is_declared_at",
    "is_name",
    "may_define_constant",
    "resolve_alias",
    "strip_comments",
]

CPP_LANGUAGES = ("cpp", "template")  # the index languages read as C/C++


def extract_cpp(text: str, off: Collection[str] = ()) -> CppFacts:
    """Read a C or C++ source in one pass, as a build with the switches `off` off compiles it
    (see `strip_comments`). Never raises.

    - defines: object-like and function-like, continuation lines joined and the
      body whitespace-collapsed;
    - includes: `#include "x"` (system=False) and `#include <x>` (system=True);
    - classes: `class`/`struct` definitions with a body, export macros and
      attributes before the name skipped, bases without access specifiers or
      `virtual`, and the member functions declared or defined directly in the
      body, overloads included, destructors as `~Name`, operators left out, each
      with the braces of its body when it is defined there;
    - method_defs: out-of-class definitions `Cls::name(...) {`, including
      constructors (name == cls), destructors (`~Cls`) and `= default`, with the
      braces of their bodies. The scope written before `::name` is taken as the
      class, so a namespace-qualified free function definition is reported as well."""
    comments: list[tuple[int, int]] = []
    literals: list[tuple[int, int]] = []
    for kind, start, end in lexemes(text):
        (comments if kind in COMMENT_KINDS else literals).append((start, end))
    stripped = blank_spans(text, comments)
    dead = dead_branches(stripped, off=off)
    stripped = blank_spans(stripped, dead)
    lines = Lines(text)
    defines: list[CppDefine] = []
    includes: list[CppInclude] = []
    directive_spans: list[tuple[int, int]] = []
    for directive in directive_lines(DIRECTIVE, stripped):
        directive_spans.append(directive.span())
        if directive["keyword"] == "define":
            define = read_define(stripped, directive, lines)
            if define is not None:
                defines.append(define)
        elif directive["keyword"] in INCLUDE_KEYWORDS:
            include = read_include(stripped, directive, lines)
            if include is not None:
                includes.append(include)
    # Code without comments, literals or directives: what classes and bodies are read from.
    code = blank_spans(stripped, sorted(literals + directive_spans))
    object_like = {define.name for define in defines if define.params is None}
    braces = cache(lambda: Braces(code))  # matched once, when a class or a body needs them
    return CppFacts(
        stripped=stripped,
        defines=tuple(defines),
        includes=tuple(includes),
        classes=tuple(read_classes(code, lines, object_like, braces)),
        method_defs=tuple(read_method_defs(code, lines, braces)),
    )
