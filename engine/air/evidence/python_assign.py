"""`python_assign`: module-level assignments and setattr calls on an imported module's attributes."""

from __future__ import annotations

from fnmatch import fnmatchcase

from air.evidence.base import Clause, Context, Hit, as_list, hit_at, in_clause_files


def literals(spec: dict) -> list[str]:
    return sorted({target.split(".")[0] for target in as_list(spec["target"])})


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    targets = as_list(clause.spec["target"])
    hits = []
    for source in context.index.select(literals(clause.spec), languages=["python"]):
        if not in_clause_files(source.path, clause):
            continue
        for assign in context.index.python_facts(source).assigns:
            if any(fnmatchcase(assign.target, target) for target in targets):
                hits.append(hit_at(source, assign.line, {"TARGET": assign.target, "VALUE": assign.value}))
    return hits
