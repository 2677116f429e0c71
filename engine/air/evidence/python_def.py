"""`python_def`: function or class definitions, optionally deriving from given bases.

Definitions are read lexically in every scope (see `air.index.python_lexical`): a `def` or
`class` statement's head, with its bases resolved through the file's imports, is all this
kind needs, and reading it costs a fraction of a parse.

Options:
- `function` or `class`: globs on the name.
- `foreign_methods: false`: a method of a class deriving from another library's class (neither
  the tree's nor the standard library's), directly or through classes of its file, does not
  count: it implements that class's interface, not the module function the row asks for.
- `bases`: a class counts when one of its bases, resolved through the file's imports, is
  named (on its full name or its last component), or is a class of the tree that counts
  (`class Mine(Shared)` where `class Shared(Named)`), at any depth, or is the tree's own copy
  of a named base (a class of its name, without bases, in a module of its module's name).
- `overrides`: methods the class or one of its tree ancestors defines, as `cpp_class` reads
  them; a finding is at each method's `def` line.
- `bodies`: with `overrides`, `real` keeps a class only when each of them does something,
  `stub` only when one at least is a stub (see `air.evidence.stubs.is_python_stub`), the
  findings being then at the stubs. Those are the only methods whose files are parsed. With
  `function`, `real` keeps the functions that do something and `stub` the stubs (a
  `_is_in_bad_fork` that returns False whatever happens).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from air.evidence.base import (
    Clause,
    Context,
    Hint,
    Hit,
    as_list,
    enough,
    hit_at,
    last_component,
    literal_of,
    python_candidates,
)
from air.evidence.stubs import StubRules, is_python_stub
from air.index.model import PyDef, SourceFile
from air.index.python import function_bodies
from air.index.python_lexical import LexicalPython
from air.regex import GuardedPattern, compile_guarded

SUMMARY = "function or class definitions, optionally by base class"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "oneOf": [{"required": ["function"]}, {"required": ["class"]}],
    "properties": {
        "function": {"$ref": "#/$defs/names"},
        "class": {"$ref": "#/$defs/names"},
        "bases": {
            "$ref": "#/$defs/names",
            "description": "bases a class derives from, directly or through classes of the tree",
        },
        "overrides": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "description": "methods the class or a tree ancestor defines",
        },
        "bodies": {
            "enum": ["real", "stub"],
            "description": "with overrides: keep classes whose overrides do something (real), "
            "or whose overrides are there but one at least is a stub; with function: keep the "
            "functions that do something (real), or the stubs",
        },
        "foreign_methods": {
            "type": "boolean",
            "description": "false: a method of a class deriving from another library's class does not count",
        },
    },
    "dependentRequired": {"overrides": ["bases"]},
    "dependentSchemas": {"bodies": {"anyOf": [{"required": ["overrides"]}, {"required": ["function"]}]}},
}

MAX_DEPTH = 16
MAX_REEXPORTS = 4
CLASS_HINT = compile_guarded(r"\bclass\s").search


@dataclass(frozen=True)
class ClassSite:
    source: SourceFile
    definition: PyDef


def literals(spec: dict) -> list[tuple[str, ...]]:
    if "bases" in spec:
        return [(literal_of(base),) for base in as_list(spec["bases"])]
    keyword = "def" if "function" in spec else "class"
    return [(keyword, literal_of(name)) for name in as_list(spec.get("function") or spec["class"])]


def definition_hint(spec: dict) -> GuardedPattern:
    """`def NAME(` / `class NAME` written somewhere in the file: a file without it is not read.
    A name with wildcards is looked for by its longest literal part, anywhere in a name."""
    keyword = "def" if "function" in spec else "class"
    names = as_list(spec.get("function" if keyword == "def" else "class") or "*")
    return compile_guarded(rf"\b{keyword}\s+(?:{'|'.join(map(_name_hint, names))})")


def _name_hint(name: str) -> str:
    if not any(char in name for char in "*?["):
        return re.escape(name) + r"\b"
    literal = literal_of(name)
    return rf"\w*{re.escape(literal)}" if literal else r"\w"


def _prefilters(clause: Clause) -> tuple[list, list[Hint]]:
    """The literals and textual hints a file must show to be read for this clause."""
    return literals(clause.spec), [definition_hint(clause.spec).search]


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    if "bases" in clause.spec:
        return _derived_hits(clause, context)
    spec = clause.spec
    kind = "function" if "function" in spec else "class"
    names = as_list(spec.get(kind) or "*")
    bodies = spec.get("bodies")
    rules = StubRules(context.upstream.inert_calls)
    hits = []
    for source in python_candidates(clause, context, *_prefilters(clause), parse=False):
        defs = context.index.python_lexical(source).defs
        foreign = (
            set()
            if spec.get("foreign_methods", True)
            else _foreign_classes(defs, context.index.product_packages, context.index.modules)
        )
        for definition in defs:
            if definition.kind != kind or not any(fnmatchcase(last_component(definition.name), n) for n in names):
                continue
            if definition.name.rpartition(".")[0] in foreign:
                continue
            if bodies and definition_is_stub(context, source, definition, rules) != (bodies == "stub"):
                continue
            hits.append(hit_at(source, definition.line, {"NAME": definition.name}))
        if enough(clause, hits, context):
            break
    return hits


def _foreign_classes(defs: tuple[PyDef, ...], own: frozenset[str], modules: Mapping[str, str]) -> set[str]:
    """The classes of a file that derive from another library's class, or from a class of the
    tree's compiled extensions (`pkg._C._StreamBase`, whose module has no Python source),
    directly or through classes of the same file."""
    classes = {definition.name: definition for definition in defs if definition.kind == "class"}

    def is_foreign(base: str) -> bool:
        top = base.split(".", 1)[0]
        if "." not in base or top in sys.stdlib_module_names:
            return False
        return top not in own or base.rpartition(".")[0] not in modules

    foreign = {name for name, definition in classes.items() if any(map(is_foreign, definition.bases))}
    grown = True
    while grown:
        more = {name for name, d in classes.items() if name not in foreign and foreign.intersection(d.bases)}
        foreign |= more
        grown = bool(more)
    return foreign


def _derived_hits(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    names = as_list(spec.get("class") or "*")
    family = _memo_family(clause, context)
    hits = []
    for name, sites in sorted(family.items()):
        if "function" in spec or not any(fnmatchcase(name, glob) for glob in names):
            continue
        for site in sites:
            hits.extend(_site_hits(context, site, spec, family))
    return hits


def _memo_family(clause: Clause, context: Context) -> dict[str, list[ClassSite]]:
    bases = tuple(sorted(as_list(clause.spec["bases"])))
    key = ("python-family", bases, clause.scope, clause.files, clause.exclude)
    return context.memo(key, lambda: _family(clause, context, list(bases)))


def _family(clause: Clause, context: Context, bases: list[str]) -> dict[str, list[ClassSite]]:
    """The classes deriving from `bases`, directly or through classes of the tree, by name. A
    class deriving from the tree's own copy of one of `bases` derives from it too (see
    `_copied_bases`); the copy itself, whose methods are the original's, is not of the family."""
    found: dict[str, list[ClassSite]] = {}
    seen: set[tuple[str, int]] = set()
    literals: list[tuple[str, ...]] = [(literal_of(base),) for base in bases]
    copies = _copied_bases(clause, context, bases, literals)
    while literals:
        new_names: set[str] = set()
        for source in python_candidates(clause, context, literals, [CLASS_HINT], parse=False):
            for definition in context.index.python_lexical(source).defs:
                if definition.kind != "class" or (source.path, definition.line) in seen:
                    continue
                actual = tuple(_through_reexports(context, base) for base in definition.bases)
                if not (
                    _derives(actual, bases)
                    or any(last_component(b) in found for b in definition.bases)
                    or any(last_component(a) in copies for a in actual)
                ):
                    continue
                seen.add((source.path, definition.line))
                name = last_component(definition.name)
                if name not in found:
                    new_names.add(name)
                found.setdefault(name, []).append(ClassSite(source, definition))
        literals = [(name,) for name in sorted(new_names)]
    return found


def _copied_bases(clause: Clause, context: Context, bases: list[str], literals: list[tuple[str, ...]]) -> set[str]:
    """The names of `bases` (of a module: `pkg.module.Base`) that the tree declares again, as a
    class of its own without bases in a module of the same name (`vendor/module.py`): a copy of
    the original, kept in the tree (a Dynamo device interface, copied to support older releases)."""
    modules = {last_component(base): base.split(".")[-2] for base in bases if base.count(".") >= 1}
    if not modules:
        return set()
    copies = set()
    for source in python_candidates(clause, context, literals, [CLASS_HINT], parse=False):
        stem = source.path.rpartition("/")[2].removesuffix(".py")
        for definition in context.index.python_lexical(source).defs:
            rootless = set(definition.bases) <= {"object"}
            if definition.kind == "class" and rootless and modules.get(definition.name) == stem:
                copies.add(definition.name)
    return copies


def _site_hits(context: Context, site: ClassSite, spec: dict, family: dict[str, list[ClassSite]]) -> list[Hit]:
    name = site.definition.name
    wanted = as_list(spec.get("overrides", []))
    if not wanted:
        return [hit_at(site.source, site.definition.line, {"NAME": name})]
    found = {method: _methods(context, site, method, family) for method in wanted}
    if not all(found.values()):
        return []
    bodies = spec.get("bodies")
    rules = StubRules(context.upstream.inert_calls)
    stubs = [m for m in wanted if all(definition_is_stub(context, s, d, rules) for s, d in found[m])] if bodies else []
    if (bodies == "real" and stubs) or (bodies == "stub" and not stubs):
        return []
    cited = stubs if bodies == "stub" else wanted
    return [hit_at(found[m][0][0], found[m][0][1].line, {"NAME": name, "METHOD": m}) for m in cited]


def _methods(
    context: Context, site: ClassSite, method: str, family: dict[str, list[ClassSite]], depth: int = 0
) -> list[tuple[SourceFile, PyDef]]:
    """Where `method` of the class at `site` is defined: in the class (a `def`, or a name its
    body binds: `synchronize = staticmethod(torch.foo.synchronize)`), else in the nearest tree
    ancestor that defines it."""
    qualified = f"{site.definition.name}.{method}"
    lexical = context.index.python_lexical(site.source)
    own = [(site.source, d) for d in lexical.defs if d.name == qualified]
    bound = None if own else _bound_in_class(lexical, site.definition, method)
    if bound is not None:
        own = [(site.source, PyDef(bound, "function", qualified))]
    if own or depth >= MAX_DEPTH:
        return own
    for base in site.definition.bases:
        for parent in family.get(last_component(base), []):
            inherited = _methods(context, parent, method, family, depth + 1)
            if inherited:
                return inherited
    return []


def _bound_in_class(lexical: LexicalPython, cls: PyDef, name: str) -> int | None:
    """The line where the body of the class `cls` binds `name` by assignment, at its own level."""
    lines = lexical.code.split("\n")
    head = lines[cls.line - 1]
    outer = len(head) - len(head.lstrip())
    binding = re.compile(rf"(?P<indent>[ \t]*){re.escape(name)}[ \t]*(?::[^=\n]*)?=(?!=)")
    level = None
    for number in range(cls.line, len(lines)):
        line = lines[number]
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= outer:
            return None
        level = indent if level is None else level
        found = binding.match(line)
        if found is not None and len(found["indent"]) == level:
            return number + 1
    return None


def definition_is_stub(context: Context, source: SourceFile, definition: PyDef, rules: StubRules) -> bool:
    """Whether the function defined by `definition` in `source` has a stub body (a name bound by
    assignment has no body, and is none)."""
    bodies = context.memo(("python-bodies", source.path), lambda: function_bodies(source.text))
    return is_python_stub(bodies.get(definition.name, ()), rules)


def _through_reexports(context: Context, base: str) -> str:
    """`base` as the module of the tree it is imported from binds it: a compatibility module
    that imports a library's class (under the same name, in any branch of an `if` or `try`,
    the first one kept) stands for that class, through up to MAX_REEXPORTS such modules."""
    for _ in range(MAX_REEXPORTS):
        module, _dot, name = base.rpartition(".")
        path = context.index.modules.get(module)
        if path is None:
            break
        bound = context.index.python_lexical(context.index.by_path[path]).aliases.get(name)
        if bound is None or bound == base:
            break
        base = bound
    return base


def _derives(actual: tuple[str, ...], wanted: list[str]) -> bool:
    return any(
        fnmatchcase(base, pattern) or fnmatchcase(last_component(base), pattern)
        for base in actual
        for pattern in wanted
    )


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    return False
