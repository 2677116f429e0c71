"""`python_call`: calls resolved through the file's imports to a qualified name (globs allowed)."""

from __future__ import annotations

from fnmatch import fnmatchcase

from air.evidence.base import Clause, Context, Hit, as_list, hit_at, in_clause_files, name_literals, roles_for


def literals(spec: dict) -> list[tuple[str, ...]]:
    return [name_literals(name) for name in as_list(spec["name"])]


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    names = as_list(spec["name"])
    positional = spec.get("capture", [])
    keywords = spec.get("capture_keywords", {})
    hits = []
    for source in context.index.select(literals(spec), languages=["python"], roles=roles_for(clause)):
        if not in_clause_files(source.path, clause):
            continue
        for call in context.index.python_facts(source).calls:
            if not any(fnmatchcase(call.qualname, name) for name in names):
                continue
            captures = {"CALLEE": call.qualname}
            captures.update({cap: call.args[i] for i, cap in enumerate(positional) if i < len(call.args)})
            given = dict(call.kwargs)
            captures.update({cap: given[kw] for kw, cap in keywords.items() if kw in given})
            hits.append(hit_at(source, call.line, captures))
    return hits
