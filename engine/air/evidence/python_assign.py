"""`python_assign`: assignments and setattr calls on an imported module's attributes.

The target is resolved through the file's imports (`from pkg.mod import Cls; Cls.attr = v` is
`pkg.mod.Cls.attr`). In product code an assignment counts in any scope, a function's body
included (`def install(): pkg.Cls.attr = v`), in every spelling `PyScope.bindings` records;
in tests, module-level statements and setattr calls only, read without a parse.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from functools import lru_cache

from air.evidence.base import (
    Clause,
    Context,
    Hint,
    Hit,
    as_list,
    enough,
    hit_at,
    name_literals,
    python_sources,
)
from air.index.model import PyAssign, PythonFacts, SourceFile
from air.index.python_lexical import LexicalPython
from air.regex import GuardedPattern, compile_guarded

SUMMARY = "module-level assignments and `setattr` on an imported module's attributes"
READS_SCOPES = True  # a product clause reads the assignments of every scope of its files
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["target"],
    "properties": {"target": {"$ref": "#/$defs/names"}},
}


def literals(spec: dict) -> list[tuple[str, ...]]:
    return [name_literals(target) for target in as_list(spec["target"])]


@lru_cache(maxsize=256)
def assignment_hint(target: str) -> GuardedPattern:
    """A cheap textual test that a file may assign an attribute of `target`'s owner:
    `Owner.attr = ...`, `setattr(Owner, ...)` or `Owner.__setattr__(...)`, with the owner
    spelled out, or an import of the owner under another name (`import Owner as O`). Files
    failing it are not parsed."""
    parts = target.split(".")
    owner = parts[-2] if len(parts) > 1 else parts[0]
    if any(char in owner for char in "*?["):
        return compile_guarded("")
    name = re.escape(owner)
    return compile_guarded(
        rf"\b{name}\.\w+\s*=(?!=)|setattr\s*\(\s*[\w.]*\b{name}\s*,|\b{name}\.__setattr__\s*\("
        rf"|\bimport\b[^\n]*\b{name}[ \t]+as[ \t]+\w"
    )


def prefilters(clause: Clause) -> tuple[list, list[Hint]]:
    """The literals and textual hints a file must show to be read for this clause."""
    return literals(clause.spec), [assignment_hint(target).search for target in as_list(clause.spec["target"])]


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    targets = as_list(clause.spec["target"])
    hits = []
    for source, facts in python_sources(clause, context, *prefilters(clause)):
        for assign in _assignments(clause, context, source, facts):
            if any(fnmatchcase(assign.target, target) for target in targets):
                hits.append(hit_at(source, assign.line, {"TARGET": assign.target, "VALUE": assign.value}))
        if enough(clause, hits, context):
            break
    return hits


def _assignments(
    clause: Clause, context: Context, source: SourceFile, facts: PythonFacts | LexicalPython
) -> list[PyAssign]:
    """The file's module-level assignments, with those of every other scope in product code,
    in line order."""
    if clause.scope == "tests":
        return list(facts.assigns)
    scoped = (binding for scope in context.index.python_scopes(source) for binding in scope.bindings)
    return sorted({(a.line, a.target): a for a in (*facts.assigns, *scoped)}.values(), key=lambda a: (a.line, a.target))


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    return False
