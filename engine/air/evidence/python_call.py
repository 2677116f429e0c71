"""`python_call`: calls resolved through the file's imports to a qualified name (globs allowed)."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from functools import lru_cache

from air.evidence.base import (
    Clause,
    Context,
    Hit,
    as_list,
    hit_at,
    last_component,
    literal_of,
    name_literals,
    python_candidates,
)


def literals(spec: dict) -> list[tuple[str, ...]]:
    return [name_literals(name) for name in as_list(spec["name"])]


@lru_cache(maxsize=256)
def call_hint(name: str) -> re.Pattern[str]:
    """The callee's last component written before `(`, after `@` (a decorator), or imported
    under another name: a file with none of these cannot call `name` and is not parsed."""
    last = literal_of(last_component(name))
    if not last:
        return re.compile("")
    word = re.escape(last)
    return re.compile(rf"\b{word}\s*\(|\b{word}\s+as\b|@[\w.\s]*\b{word}\b")


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    names = as_list(spec["name"])
    hints = [call_hint(name) for name in names]
    positional = spec.get("capture", [])
    keywords = spec.get("capture_keywords", {})
    hits = []
    for source in python_candidates(clause, context, literals(spec), hints):
        for call in context.index.python_facts(source).calls:
            if not any(fnmatchcase(call.qualname, name) for name in names):
                continue
            captures = {"CALLEE": call.qualname}
            captures.update({cap: call.args[i] for i, cap in enumerate(positional) if i < len(call.args)})
            given = dict(call.kwargs)
            captures.update({cap: given[kw] for kw, cap in keywords.items() if kw in given})
            hits.append(hit_at(source, call.line, captures))
    return hits
