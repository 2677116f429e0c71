"""`graph`: questions answered by walking the dependency graph.

Two forms:
- `{from: {entry_point: GROUP}, reaches: {python_call: NAME}}`: a call of NAME in a file
  that the entry points of GROUP import, directly or transitively;
- `{from: {call_arg: {call: NAME, arg: N, keyword: K}}, exports: [FUNCTION, ...]}`: the object
  passed to NAME as argument N (or by keyword K, when given; K may list several) has each FUNCTION as an
  attribute, followed through the code that builds it (see `air.evidence.python_flow`): a
  module that defines or imports it, a module object built and given it by assignment, a
  class (its static and class methods, class attributes), an instance, what a factory
  function returns, what a helper is passed. `OBJ.__setattr__(NAME, VALUE)` is also found as
  `setattr(OBJ, NAME, VALUE)` and as `OBJ.NAME = VALUE`, the calls of it that Python makes.
  Option `bodies`: `real` keeps the functions found whose body does something, `stub` those
  whose body is a stub (see `air.evidence.stubs.is_python_stub`); an attribute that is not
  found at a `def` (a binding, a class) counts as real.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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
from air.evidence.python_def import definition_is_stub
from air.evidence.python_flow import ObjectMembers, Place
from air.evidence.stubs import StubRules
from air.graph.dependencies import DependencyGraph
from air.index import CodeIndex
from air.index.model import PyCall, SourceFile

_IDENTIFIER = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}
SUMMARY = "dependency-graph queries: what an entry point reaches, what the object bound as a module provides (followed through factories, module objects given attributes, classes, instances and helpers)"
TREE_WIDE = True
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["from"],
    "oneOf": [
        {"required": ["reaches"], "properties": {"from": {"required": ["entry_point"]}}},
        {"required": ["exports"], "properties": {"from": {"required": ["call_arg"]}}},
    ],
    "properties": {
        "from": {
            "type": "object",
            "additionalProperties": False,
            "minProperties": 1,
            "maxProperties": 1,
            "properties": {
                "entry_point": {"type": "string"},
                "call_arg": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["call"],
                    "properties": {
                        "call": {"$ref": "#/$defs/names"},
                        "arg": {"type": "integer", "minimum": 0},
                        "keyword": {
                            "description": "the argument's keyword, or its keywords in the calls that name it differently",
                            "oneOf": [
                                _IDENTIFIER,
                                {"type": "array", "minItems": 1, "items": _IDENTIFIER},
                            ],
                        },
                    },
                },
            },
        },
        "reaches": {
            "type": "object",
            "additionalProperties": False,
            "required": ["python_call"],
            "properties": {"python_call": {"$ref": "#/$defs/names"}},
        },
        "exports": {"$ref": "#/$defs/names"},
        "bodies": {
            "enum": ["real", "stub"],
            "description": "with exports: keep the functions found whose body does something "
            "(real), or is a stub (stub)",
        },
    },
    "dependentRequired": {"bodies": ["exports"]},
}

MAX_FLOW_DEPTH = 8
_SETATTR = "__setattr__"


def literals(spec: dict) -> list[str]:
    return []


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    graph = context.graph
    origin = clause.spec["from"]
    if "entry_point" in origin:
        return _reaches(clause, graph, origin["entry_point"], as_list(clause.spec["reaches"]["python_call"]))
    return _exports(clause, context, origin["call_arg"], as_list(clause.spec["exports"]))


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
                    target = graph.entry_target(entry)
                    hits.append(hit_at(source, call.line, {"ENTRY": target, "CALLEE": call.qualname}))
    return hits


def _exports(clause: Clause, context: Context, origin: dict, functions: list[str]) -> list[Hit]:
    """Where the objects passed to the calls of `origin` get `functions`. The calls and the
    answers found are shared by the clauses that ask about the same calls."""
    index, position, keywords = context.index, origin.get("arg", 0), as_list(origin.get("keyword", []))
    names, roles = as_list(origin["call"]), roles_for(clause)
    calls = context.memo(("graph-calls", tuple(names), roles), lambda: list(_calls(index, names, roles)))
    members = context.memo(("graph-members",), lambda: ObjectMembers(index, context.graph))
    bodies = clause.spec.get("bodies")
    hits = []
    for source, call in calls:
        given = dict(call.kwargs)
        bound = (
            call.args[position] if position < len(call.args) else next((given[k] for k in keywords if k in given), None)
        )
        if bound is None:
            continue
        for function in functions:
            found = members.member(source.path, call.line, bound, function, MAX_FLOW_DEPTH)
            if not found or not in_clause_files(found[0], clause):
                continue
            if bodies is None or (bodies == "stub") == _stub_at(context, members, found, function):
                hits.append(hit_at(index.by_path[found[0]], found[1], {"MODULE": bound, "FUNCTION": function}))
    return hits


def _stub_at(context: Context, members: ObjectMembers, place: Place, name: str, depth: int = MAX_FLOW_DEPTH) -> bool:
    """Whether the function found at `place` has a stub body: defined there, or bound there
    to a function defined elsewhere (`mod.name = impl.name`). False for anything else."""
    source = context.index.by_path[place[0]]
    definition = next((d for d in context.index.python_lexical(source).defs if d.line == place[1]), None)
    if definition is not None:
        rules = StubRules(context.upstream.inert_calls)
        return definition.kind == "function" and definition_is_stub(context, source, definition, rules)
    origin = members.origin(*place, name, depth) if depth > 0 else None
    return origin is not None and origin != place and _stub_at(context, members, origin, name, depth - 1)


def _calls(index: CodeIndex, names: list[str], roles: tuple[str, ...]) -> Iterator[tuple[SourceFile, PyCall]]:
    """The calls of `names` (globs allowed), read lexically. In product code,
    `OBJ.__setattr__(NAME, VALUE)` is also found in the two other spellings of setting an
    attribute, `setattr(OBJ, NAME, VALUE)` and `OBJ.NAME = VALUE`: a test that patches an
    attribute of the framework binds no device module, and looking for those spellings in a
    large suite costs more than the rest of the query."""
    for name in names:
        owner, _, method = name.rpartition(".")
        for source in index.select([name_literals(name)], languages=["python"], roles=roles):
            for call in index.python_lexical(source).calls_of(_word(method)):
                if fnmatchcase(call.qualname, name):
                    yield source, call
        product = tuple(role for role in roles if role == "product")
        if method == _SETATTR and owner and product:
            yield from _setattr_calls(index, owner, name, product)
            yield from _attribute_assignments(index, owner, product)


def _setattr_calls(
    index: CodeIndex, owner: str, name: str, roles: tuple[str, ...]
) -> Iterator[tuple[SourceFile, PyCall]]:
    """`setattr(OWNER, NAME, VALUE)`, as the call `OWNER.__setattr__(NAME, VALUE)` it makes."""
    for source in index.select([(*name_literals(owner), "setattr")], languages=["python"], roles=roles):
        for call in index.python_lexical(source).calls_of("setattr"):
            if call.qualname == "setattr" and call.args and fnmatchcase(f"{call.args[0]}.{_SETATTR}", name):
                yield source, PyCall(call.line, f"{call.args[0]}.{_SETATTR}", call.args[1:], call.kwargs)


def _attribute_assignments(index: CodeIndex, owner: str, roles: tuple[str, ...]) -> Iterator[tuple[SourceFile, PyCall]]:
    """`OWNER.NAME = VALUE` in any scope, as the call `OWNER.__setattr__(NAME, VALUE)` it makes.
    Only files that write `OWNER.NAME =` as such are read (an alias of OWNER is not seen)."""
    if _word(owner) != owner:
        return
    written = re.compile(rf"{re.escape(owner)}\.\w+[ \t]*(?::[^=\n]*)?=(?!=)")  # annotated or not
    for source in index.select([name_literals(owner)], languages=["python"], roles=roles):
        if not written.search(source.text):
            continue
        for scope in index.python_scopes(source):
            for binding in scope.bindings:
                target, _, attribute = binding.target.rpartition(".")
                if target == owner:
                    yield source, PyCall(binding.line, f"{owner}.{_SETATTR}", (attribute, binding.value), ())


def _word(name: str) -> str:
    """The name a lexical reading looks for: empty (every call) for a glob."""
    return "" if any(char in name for char in "*?[") else name


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    return False
