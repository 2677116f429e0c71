"""`cpp_field`: values given to fields of a C struct, such as the entries of a function table.

Three spellings count: a member assignment `api->F = f;` or `api.F = f;` (through a chain of
members too: `api.version.F = 3`), and a designated initialiser `{.F = f, ...}`. An assignment
written in a function-like `#define` of the tree counts where the macro is expanded, with its
arguments substituted, also when another macro expands it (`FN_LIST(ASSIGN)` with
`#define ASSIGN(fn) api.fn = Impl_##fn;`). A null value (`nullptr`, `NULL`, `0`) sets nothing.

Captures FIELD (the field's name) and VALUE (the value, as written or expanded). With `bodies`,
the function a value names (a lambda, or a function of the tree by its last name component) is
judged on its body: `real` keeps a value unless every definition of its function is a stub (see
`air.evidence.stubs`: empty, only a throw or failing check, a constant or one of `placeholders`
returned); `stub` keeps the values whose function is one. A function the tree's macros define
(`#define STUB(f) PJRT_Error* Stub_##f(f##_Args*) { ... }` expanded for each entry of a list) is
judged on its expansion.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial

from air.evidence.base import Clause, Context, Hit, as_list, hit_at, in_clause_files, last_component
from air.evidence.stubs import PLACEHOLDERS_SCHEMA, StubRules, clause_rules, is_stub
from air.index import CodeIndex
from air.index.cpp import CPP_LANGUAGES, FunctionBodies, body_statements, builds, expand_macros, find_calls
from air.index.model import CppDefine, SourceFile

SUMMARY = "values given to C struct fields (`api->F = f`, `api.F = f`, designated `.F = f`), also through the tree's macros, as a function table is filled; captures FIELD and VALUE; `bodies: real|stub` judges the function a value names, with `placeholders`"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {
        "name": {"$ref": "#/$defs/names"},
        "bodies": {
            "enum": ["real", "stub"],
            "description": "keep values whose function does something (real), or is a stub",
        },
        "placeholders": PLACEHOLDERS_SCHEMA,
    },
}

NULL_VALUES = frozenset({"nullptr", "NULL", "0"})
MAX_VALUE_LENGTH = 20_000  # a value read further is not one
_ASSIGNING = re.compile(r"(?:\.|->)\s*(?P<field>[A-Za-z_]\w*)\s*=(?!=)")
_DEFINING = re.compile(r"##\s*(?P<field>[A-Za-z_]\w*)\s*(?:##\s*\w+\s*)?\([^()]*\)\s*\{")  # `Stub_##f(...) {`
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n\\]|\\[\s\S])*", re.MULTILINE)
_FUNCTION_NAME = re.compile(r"[&+*]?\s*(?P<name>(?:[A-Za-z_]\w*\s*::\s*)*[A-Za-z_]\w*)\s*(?:<[^;{}]*>)?")
_OPENING = {"(": ")", "[": "]", "{": "}"}

Assignment = tuple[SourceFile, int, str, str, str]  # file, line, field, value, macro expanded ("" if none)


def literals(spec: dict) -> list[str]:
    return [last_component(name) for name in as_list(spec["name"])]


def reads_only_cpp(spec: dict) -> bool:
    return True


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    fields = frozenset(literals(clause.spec))
    bodies = clause.spec.get("bodies")
    rules = clause_rules(clause.spec, context.upstream)

    def generated() -> FunctionBodies:
        return context.memo(("macro-defined functions",), lambda: _generated(context.index))

    hits = []
    for source, line, field, value, via in assignments(context, fields):
        if not in_clause_files(source.path, clause):
            continue
        if bodies is not None and _is_stub(context.index, value, rules, generated()) != (bodies == "stub"):
            continue
        captures = {"FIELD": field, "VALUE": value}
        if via:
            captures["VIA"] = via
        hits.append(hit_at(source, line, captures))
    return hits


def assignments(context: Context, fields: frozenset[str]) -> Iterator[Assignment]:
    """Every value given to one of `fields`, as written and through the tree's macros. Each file
    is read once for all fields, whichever clause asks first."""
    index = context.index
    assigning = context.memo(("assigning macros",), partial(_macros, index, _ASSIGNING))
    for source in index.select(sorted(fields | assigning), languages=CPP_LANGUAGES):
        found = context.memo(("field assignments", source.path), partial(_file_assignments, index, source, assigning))
        for line, field, text, start, via in found:
            value = _value(text, start) if field in fields else ""
            if value and value not in NULL_VALUES:
                yield source, line, field, value, via


def _file_assignments(
    index: CodeIndex, source: SourceFile, assigning: set[str]
) -> list[tuple[int, str, str, int, str]]:
    """(line, field, text, where the value starts in it, macro expanded or "") of every
    assignment to a field in the file: its values are read only for the fields a clause asks."""
    stripped = index.cpp_facts(source).stripped
    code = _DIRECTIVE.sub(lambda match: re.sub(r"[^\n]", " ", match[0]), stripped)
    found, line, counted = [], 1, 0
    for match in _ASSIGNING.finditer(code):  # in order: lines are counted from the previous match on
        line += code.count("\n", counted, match.start())
        counted = match.start()
        found.append((line, match["field"], code, match.end(), ""))
    for line, via, expanded in _expansions(index, source, assigning):
        found += [(line, match["field"], expanded, match.end(), via) for match in _ASSIGNING.finditer(expanded)]
    return found


def _expansions(index: CodeIndex, source: SourceFile, macros: set[str]) -> Iterator[tuple[int, str, str]]:
    """Where the file invokes one of `macros`, directly or by handing its name to a list macro:
    the line, the macro invoked and the invocation's expansion."""
    if not macros:
        return
    facts = index.cpp_facts(source)
    for call in find_calls(facts, frozenset(macros) | _macros_naming(facts.stripped, macros)):
        if call.in_define is not None:
            continue
        expanded = expand_macros(f"{call.name}({', '.join(call.args)})", lambda name: _lookup(index, source, name))
        if expanded is not None:
            yield call.line, last_component(call.name), expanded


def _value(code: str, start: int) -> str:
    """The expression from `start` to the `;`, `,` or closing bracket that ends it, or to the end
    of `code` (a macro's expansion, whose `;` follows the invocation)."""
    closing: list[str] = []
    end = min(len(code), start + MAX_VALUE_LENGTH)
    for position in range(start, end):
        char = code[position]
        if char in _OPENING:
            closing.append(_OPENING[char])
        elif closing and char == closing[-1]:
            closing.pop()
        elif not closing and char in ";,)]}":
            end = position
            break
    else:
        if closing or end < len(code):
            return ""
    return " ".join(code[start:end].split())


def _macros(index: CodeIndex, pattern: re.Pattern[str]) -> set[str]:
    """The tree's function-like macros whose body matches `pattern` at a name (its `field`
    group) that one of their parameters gives."""
    found = set()
    for name, defined in index.defines.items():
        for _source, define in defined:
            params = {param for param in define.params or () if param}
            if any(match["field"] in params for match in pattern.finditer(define.body)):
                found.add(name)
    return found


def _macros_naming(code: str, macros: set[str]) -> frozenset[str]:
    """Macros invoked with one of `macros` as an argument (an X-macro list)."""
    names = "|".join(map(re.escape, sorted(macros)))
    pattern = re.compile(rf"\b(?P<list>[A-Za-z_]\w*)\s*\(\s*(?:{names})\s*\)")
    return frozenset(match["list"] for match in pattern.finditer(code))


def _lookup(index: CodeIndex, source: SourceFile, name: str) -> CppDefine | None:
    defined = index.defines.get(name)
    if not defined:
        return None
    return next((define for where, define in defined if where.path == source.path), defined[0][1])


def _generated(index: CodeIndex) -> FunctionBodies:
    """The functions that the tree's macros define where they are expanded, as one text."""
    defining = _macros(index, _DEFINING)
    if not defining:
        return FunctionBodies("")
    literals = sorted(defining)
    expansions = [
        expanded
        for source in index.select(literals, languages=CPP_LANGUAGES)
        for _line, _via, expanded in _expansions(index, source, defining)
    ]
    return FunctionBodies("\n".join(expansions))


def _is_stub(index: CodeIndex, value: str, rules: StubRules, generated: FunctionBodies) -> bool:
    """Whether the function `value` names does nothing: a lambda by its body, a function of the
    tree by every definition of it; a value the tree does not define is not judged a stub."""
    if value.lstrip("+ ").startswith("["):
        opened, closed = value.find("{"), value.rfind("}")
        return opened >= 0 and is_stub(body_statements(value, (opened, closed)), rules)
    named = _FUNCTION_NAME.fullmatch(value)
    if named is None:
        return False
    name = last_component("".join(named["name"].split()))
    definitions = [
        body_statements(body, (0, len(body) - 1))
        for function in [*index.definitions(name), *generated.defined(name)]
        for body in ("{" + build + "}" for build in builds(function.body))
    ]
    return bool(definitions) and all(is_stub(statements, rules) for statements in definitions)
