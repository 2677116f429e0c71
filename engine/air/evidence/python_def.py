"""`python_def`: function or class definitions, optionally deriving from given bases.

Definitions are read lexically in every scope (see `air.index.python_lexical`): a `def` or
`class` statement's head, with its bases resolved through the file's imports, is all this
kind needs, and reading it costs a fraction of a parse.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

from air.evidence.base import (
    Clause,
    Context,
    Hint,
    Hit,
    as_list,
    enough,
    hit_at,
    last_component,
    literal_of,
    python_candidates,
)
from air.regex import GuardedPattern, compile_guarded


def literals(spec: dict) -> list[tuple[str, ...]]:
    if "bases" in spec:
        return [(literal_of(base),) for base in as_list(spec["bases"])]
    keyword = "def" if "function" in spec else "class"
    return [(keyword, literal_of(name)) for name in as_list(spec.get("function") or spec.get("class"))]


def definition_hint(spec: dict) -> GuardedPattern:
    """`def NAME(` / `class NAME` written somewhere in the file: a file without it is not read.
    A name with wildcards is looked for by its longest literal part, anywhere in a name."""
    keyword = "def" if "function" in spec else "class"
    names = as_list(spec.get("function" if keyword == "def" else "class") or "*")
    return compile_guarded(rf"\b{keyword}\s+(?:{'|'.join(map(_name_hint, names))})")


def _name_hint(name: str) -> str:
    if not any(char in name for char in "*?["):
        return re.escape(name) + r"\b"
    literal = literal_of(name)
    return rf"\w*{re.escape(literal)}" if literal else r"\w"


def _prefilters(clause: Clause) -> tuple[list, list[Hint]]:
    """The literals and textual hints a file must show to be read for this clause."""
    return literals(clause.spec), [definition_hint(clause.spec).search]


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    kind = "function" if "function" in spec else "class"
    names = as_list(spec.get(kind) or "*")
    bases = as_list(spec.get("bases", []))
    hits = []
    for source in python_candidates(clause, context, *_prefilters(clause), parse=False):
        for definition in context.index.python_lexical(source).defs:
            if definition.kind != kind:
                continue
            if not any(fnmatchcase(last_component(definition.name), name) for name in names):
                continue
            if bases and not _derives(definition.bases, bases):
                continue
            hits.append(hit_at(source, definition.line, {"NAME": definition.name}))
        if enough(clause, hits, context):
            break
    return hits


def _derives(actual: tuple[str, ...], wanted: list[str]) -> bool:
    return any(
        fnmatchcase(base, pattern) or fnmatchcase(last_component(base), pattern)
        for base in actual
        for pattern in wanted
    )
