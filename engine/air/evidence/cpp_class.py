"""`cpp_class`: C++ classes deriving (transitively, through classes of the tree) from a base.

Options: `name` (glob on the class name), `overrides` (member functions the class or one
of its in-tree ancestors defines), `registered_by` (the class must reach a registration
call: named in its arguments, in the same file, or in the file that defines a function
named in its arguments).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from air.evidence.base import (
    Clause,
    Context,
    Hit,
    as_list,
    hit_at,
    in_clause_files,
    last_component,
)
from air.evidence.cpp_macro import invocations
from air.index import CodeIndex
from air.index.model import CppClass, SourceFile

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class ClassSite:
    source: SourceFile
    record: CppClass


def literals(spec: dict) -> list[str]:
    return [last_component(base) for base in as_list(spec["derives_from"])]


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    index = context.index
    roots = set(literals(spec))
    descendants = context.memo(("derived", tuple(sorted(roots))), lambda: derived_classes(index, roots))
    wanted_methods = as_list(spec.get("overrides", []))
    name_globs = as_list(spec.get("name", "*"))
    registered = None
    if "registered_by" in spec:
        registrars = tuple(as_list(spec["registered_by"]))
        registered = context.memo(("registered", registrars, tuple(sorted(roots))),
                                  lambda: registered_classes(index, list(registrars), descendants))
    hits = []
    for name, sites in sorted(descendants.items()):
        if not any(fnmatchcase(name, glob) for glob in name_globs):
            continue
        if registered is not None and name not in registered:
            continue
        methods = context.memo(("methods", name, tuple(sorted(roots))),
                               lambda name=name: inherited_methods(index, name, descendants, roots))
        if not all(method in methods for method in wanted_methods):
            continue
        for site in sites:
            if in_clause_files(site.source.path, clause):
                hits.append(hit_at(site.source, site.record.line, {"CLASS": name}))
    return hits


def base_name(base: str) -> str:
    return last_component(base.split("<", 1)[0].strip())


def derived_classes(index: CodeIndex, roots: set[str]) -> dict[str, list[ClassSite]]:
    """Every class of the tree that derives from one of `roots`, directly or through tree classes."""
    found: dict[str, list[ClassSite]] = {}
    known = set(roots)
    frontier = set(roots)
    seen: set[tuple[str, int]] = set()
    while frontier:
        new_names: set[str] = set()
        for literal in sorted(frontier):
            for source, record in index.classes(literal):
                if (source.path, record.line) in seen or not any(base_name(b) in known for b in record.bases):
                    continue
                seen.add((source.path, record.line))
                found.setdefault(record.name, []).append(ClassSite(source, record))
                if record.name not in known:
                    new_names.add(record.name)
        known |= new_names
        frontier = new_names
    return found


def inherited_methods(
    index: CodeIndex, name: str, classes: dict[str, list[ClassSite]], roots: set[str], depth: int = 0
) -> set[str]:
    """Member functions of `name` and of its tree ancestors below the root interfaces."""
    methods: set[str] = set()
    for site in classes.get(name, []):
        methods.update(site.record.methods)
        if depth < 16:
            for base in site.record.bases:
                parent = base_name(base)
                if parent not in roots and parent in classes:
                    methods |= inherited_methods(index, parent, classes, roots, depth + 1)
    for source in index.select([f"{name}::"], languages=["cpp", "template"]):
        methods.update(d.name for d in index.cpp_facts(source).method_defs if d.cls.split("::")[-1] == name)
    return methods


def registered_classes(index: CodeIndex, registrars: str | list[str], classes: dict[str, list[ClassSite]]) -> set[str]:
    names = frozenset(last_component(r) for r in as_list(registrars))
    registered: set[str] = set()
    for source, _line, args, _via in invocations(index, names):
        tokens = set(IDENTIFIER.findall(" ".join(args)))
        registered |= tokens & classes.keys()
        registered |= _named_in(index.code_text(source), classes)
        for token in tokens - classes.keys():
            for definer in _definers(index, token):
                registered |= _named_in(index.code_text(definer), classes)
    return registered


def _named_in(text: str, classes: dict[str, list[ClassSite]]) -> set[str]:
    return {name for name in classes if re.search(rf"\b{re.escape(name)}\b", text)}


def _definers(index: CodeIndex, function: str) -> list[SourceFile]:
    """Files that define a function `function(...) {`."""
    call = rf"\b{re.escape(function)}\s*\("  # a scan for the `)` stops at the next call: linear on `f(f(f(...`
    pattern = re.compile(rf"{call}(?:(?!{call})[^;{{}}])*\)\s*(?:const\s*)?(?:noexcept\s*)?\{{")
    return [s for s in index.select([function], languages=["cpp", "template"]) if pattern.search(s.text)]
