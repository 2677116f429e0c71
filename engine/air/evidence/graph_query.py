"""`graph`: questions answered by walking the dependency graph.

Two forms:
- `{from: {entry_point: GROUP}, reaches: {python_call: NAME}}`: a call of NAME in a file
  that the entry points of GROUP import, directly or transitively;
- `{from: {call_arg: {call: NAME, arg: N}}, exports: [FUNCTION, ...]}`: the module passed as
  argument N of NAME defines (or re-exports through an import) each FUNCTION.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

from air.evidence.base import (
    Clause,
    Context,
    Hit,
    as_list,
    hit_at,
    in_clause_files,
    name_literals,
    roles_for,
)
from air.graph import DependencyGraph
from air.index import CodeIndex

MAX_REEXPORT_DEPTH = 4


def literals(spec: dict) -> list[str]:
    return []


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    graph = context.graph
    origin = clause.spec["from"]
    if "entry_point" in origin:
        return _reaches(clause, graph, origin["entry_point"], as_list(clause.spec["reaches"]["python_call"]))
    return _exports(clause, context.index, graph, origin["call_arg"], as_list(clause.spec["exports"]))


def _reaches(clause: Clause, graph: DependencyGraph, group: str, names: list[str]) -> list[Hit]:
    index = graph.index
    hits = []
    for entry in graph.entry_points(group):
        for path in graph.reachable([entry]):
            source = index.by_path[path]
            if source.language != "python" or not in_clause_files(path, clause):
                continue
            if not any(all(part in source.text for part in name_literals(name)) for name in names):
                continue
            for call in index.python_facts(source).calls:
                if any(fnmatchcase(call.qualname, name) for name in names):
                    target = graph.graph.nodes[entry]["target"]
                    hits.append(hit_at(source, call.line, {"ENTRY": target, "CALLEE": call.qualname}))
    return hits


_THIS_MODULE = re.compile(r"^sys\.modules\[\s*__name__\s*\]$")  # the calling module binds itself


def _exports(clause: Clause, index: CodeIndex, graph: DependencyGraph, origin: dict, functions: list[str]) -> list[Hit]:
    names = as_list(origin["call"])
    position = origin.get("arg", 0)
    hits = []
    for source in index.select([name_literals(n) for n in names], languages=["python"], roles=roles_for(clause)):
        for call in index.python_facts(source).calls:
            if position >= len(call.args) or not any(fnmatchcase(call.qualname, n) for n in names):
                continue
            module = call.args[position]
            module_path = source.path if _THIS_MODULE.match(module) else graph.module_file(module)
            if module_path is None:
                continue
            for function in functions:
                found = _definition(index, graph, module_path, function, MAX_REEXPORT_DEPTH)
                if found and in_clause_files(found[0], clause):
                    captures = {"MODULE": call.args[position], "FUNCTION": function}
                    hits.append(hit_at(index.by_path[found[0]], found[1], captures))
    return hits


def _definition(index: CodeIndex, graph: DependencyGraph, path: str, name: str, depth: int) -> tuple[str, int] | None:
    """Where the module at `path` gets `name`: its own definition, or the one it imports
    (both read lexically: a module's definitions and imports need no parse)."""
    facts = index.python_lexical(index.by_path[path])
    for definition in facts.defs:
        if definition.name == name:
            return path, definition.line
    if depth == 0:
        return None
    for imported in facts.imports:
        if imported.alias != name and imported.name != "*":
            continue
        if imported.name is None:
            continue
        target = graph.module_file(imported.module)
        if target and target != path:
            found = _definition(index, graph, target, imported.name if imported.name != "*" else name, depth - 1)
            if found:
                return found
    return None
