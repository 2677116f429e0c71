"""`file`: files whose path matches a glob, optionally containing a literal or a regular expression."""

from __future__ import annotations

from air.evidence.base import Clause, Context, Hit, as_list, hit_at, in_clause_files, may_count
from air.index.files import matches_glob
from air.regex import compile_guarded, searching


def literals(spec: dict) -> list[str]:
    return [spec["contains"]] if "contains" in spec else []


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    globs = tuple(as_list(spec["glob"]))
    regex = compile_guarded(spec["matches"]) if "matches" in spec else None
    hits = []
    for source in context.index.select(literals(spec), include_docs=clause.scope == "all"):
        if not matches_glob(source.path, globs) or not in_clause_files(source.path, clause):
            continue
        if not may_count(source, clause, context):
            continue
        line = 1
        if "contains" in spec:
            line = source.text.count("\n", 0, source.text.index(spec["contains"])) + 1
        if regex is not None:
            with searching(source.path):
                match = regex.search(source.text)
            if match is None:
                continue
            line = source.text.count("\n", 0, match.start()) + 1
        hits.append(hit_at(source, line, {"PATH": source.path}))
    return hits
