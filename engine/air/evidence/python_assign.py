"""`python_assign`: module-level assignments and setattr calls on an imported module's attributes."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from functools import lru_cache

from air.index.model import SourceFile
from air.evidence.base import (
    Hint,
    Clause,
    Context,
    Hit,
    as_list,
    hit_at,
    name_literals,
    enough,
    parsed_python,
    python_candidates,
)


def literals(spec: dict) -> list[tuple[str, ...]]:
    return [name_literals(target) for target in as_list(spec["target"])]


@lru_cache(maxsize=256)
def assignment_hint(target: str) -> re.Pattern[str]:
    """A cheap textual test that a file may assign an attribute of `target`'s owner:
    `Owner.attr = ...`, `setattr(Owner, ...)` or `Owner.__setattr__(...)`, with the owner
    spelled out. Files failing it are not parsed."""
    parts = target.split(".")
    owner = parts[-2] if len(parts) > 1 else parts[0]
    if any(char in owner for char in "*?["):
        return re.compile("")
    name = re.escape(owner)
    return re.compile(rf"\b{name}\.\w+\s*=(?!=)|setattr\s*\(\s*[\w.]*\b{name}\s*,|\b{name}\.__setattr__\s*\(")


def candidates(clause: Clause, context: Context) -> list[SourceFile]:
    return python_candidates(clause, context, *_prefilters(clause))


def _prefilters(clause: Clause) -> tuple[list, list[Hint]]:
    return literals(clause.spec), [assignment_hint(target).search for target in as_list(clause.spec["target"])]


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    targets = as_list(clause.spec["target"])
    hits = []
    for source in parsed_python(clause, context, *_prefilters(clause)):
        for assign in context.index.python_facts(source).assigns:
            if any(fnmatchcase(assign.target, target) for target in targets):
                hits.append(hit_at(source, assign.line, {"TARGET": assign.target, "VALUE": assign.value}))
        if enough(clause, hits):
            break
    return hits
