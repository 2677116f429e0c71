"""`python_assign`: module-level assignments and setattr calls on an imported module's attributes."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from functools import lru_cache

from air.evidence.base import Clause, Context, Hit, as_list, hit_at, in_clause_files, name_literals, roles_for


def literals(spec: dict) -> list[tuple[str, ...]]:
    return [name_literals(target) for target in as_list(spec["target"])]


@lru_cache(maxsize=256)
def assignment_hint(target: str) -> re.Pattern[str]:
    """A cheap textual test that a file may assign an attribute of `target`'s owner:
    `Owner.attr = ...`, `setattr(...)` or `__setattr__(...)`. Files failing it are not parsed."""
    parts = target.split(".")
    owner = parts[-2] if len(parts) > 1 else parts[0]
    if any(char in owner for char in "*?["):
        return re.compile("")
    return re.compile(rf"\b{re.escape(owner)}\.\w+\s*=(?!=)|setattr\s*\(|__setattr__\s*\(")


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    targets = as_list(clause.spec["target"])
    hints = [assignment_hint(target) for target in targets]
    hits = []
    for source in context.index.select(literals(clause.spec), languages=["python"], roles=roles_for(clause)):
        if not in_clause_files(source.path, clause) or not any(h.search(source.text) for h in hints):
            continue
        for assign in context.index.python_facts(source).assigns:
            if any(fnmatchcase(assign.target, target) for target in targets):
                hits.append(hit_at(source, assign.line, {"TARGET": assign.target, "VALUE": assign.value}))
    return hits
