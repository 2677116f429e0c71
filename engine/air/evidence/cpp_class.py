"""`cpp_class`: C++ classes deriving from a base, directly, through classes of the tree or
through the framework's own classes.

Options:
- `derives_from`: the base class or classes. A class counts when one of its bases is a named
  class, a class of the tree that counts, or a class of the framework that derives from a
  named one (the framework's `upstream_classes`: `c10::DeviceAllocator` derives from
  `c10::Allocator`). A name written qualified (`torch::autograd::Function`) stands for that
  framework class and its descendants alone, an unqualified one for every framework class of
  that name. The bases a tree writes are compared on their last component, namespaces
  making one class visible under several (`at::Allocator` is `c10::Allocator`).
- `not_derives_from`: bases that disqualify: a class deriving from one of them (as
  `derives_from` reads it) does not count (`c10::Allocator`, but not `at::HostAllocator`).
- `name`: glob on the class name.
- `overrides`: member functions the class or one of its tree ancestors declares or defines;
  a member of a framework class never counts. `a|b` is either name, the first the class has
  (a method a framework release names otherwise). A finding is at each method's definition (its
  body in the class, or out of it: `Cls::m(...) {`), or at its declaration when the tree
  holds no body for it.
- `bodies`: `real` keeps a class only when each of `overrides` has a body that does
  something; `stub` only when all of them are there and one at least is a stub (see
  `air.evidence.stubs`), the findings being then at the stubs. Without `overrides`, the
  member functions of the class and of its tree ancestors are judged, constructors and
  destructors aside: `real` when one does something, `stub` when there are some and none
  does; a class without any member function is neither. A method whose body the tree does
  not hold counts as real.
- `placeholders`: names a stub returns: a body returning an expression that names one of
  them implements nothing of its own (a stream pool that always hands out
  `getDefaultStream(...)`).
- `constant_is_real`: a method that returns a constant implements it (`isBuilt()` answers a
  question settled when the backend is built).
- A member function declared without `override` or `final`, in a class that marks another
  of its member functions so, hides the framework's virtual of its name when it is `const`
  and the virtual is not, or the other way round (the framework's `upstream_classes.virtuals`):
  it is not that override, and the base's still runs. `hides: true` keeps a class when one of
  `overrides` is declared only so, the findings being at those declarations.
- A class the tree only declares (no member function body out of the class, and bodies for
  fewer than half of its member functions in it) does not count when the tree implements
  another class of the family: it is the header of a project the backend builds on (a copied
  `ProcessGroupX` it wraps), not the backend's own.
- `registered_by`: the class must reach a registration call or registrar object (found as
  `cpp_macro` finds them): named in its arguments, in the same file, or in the file that
  defines a function named in its arguments.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
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
from air.evidence.cpp_macro import CPP_LANGUAGES, invocations
from air.evidence.stubs import PLACEHOLDERS_SCHEMA, StubRules, clause_rules, declared_constants, is_stub
from air.index import CodeIndex
from air.index.cpp import body_statements, parameters_before
from air.index.model import CppClass, CppMethod, SourceFile, Span
from air.regex import compile_guarded, searching

SUMMARY = "classes deriving (transitively, also through the framework's own classes) from a base; `overrides` (cited at each method's definition; `a|b` is either name; a declaration hiding the framework's virtual is none), `bodies: real|stub` (stub overrides: empty, a constant or placeholder return, only a throw or failing check), `hides` (overrides declared only hiding the virtual), `placeholders`, `constant_is_real`, `not_derives_from`, `registered_by`"
TREE_WIDE = True
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["derives_from"],
    "properties": {
        "derives_from": {"$ref": "#/$defs/names"},
        "not_derives_from": {"$ref": "#/$defs/names"},
        "name": {"$ref": "#/$defs/names"},
        "overrides": {
            "type": "array",
            "items": {"type": "string", "pattern": "^[A-Za-z_~][\\w~]*(\\|[A-Za-z_~][\\w~]*)*$"},
        },
        "bodies": {
            "enum": ["real", "stub"],
            "description": "keep classes whose overrides do something (real), or whose "
            "overrides are there but one at least is a stub",
        },
        "placeholders": PLACEHOLDERS_SCHEMA,
        "constant_is_real": {"type": "boolean", "description": "a method returning a constant implements it"},
        "hides": {
            "type": "boolean",
            "description": "keep classes that declare one of `overrides` only with a signature hiding the "
            "framework's virtual (const where it is not, or not where it is, and not marked override)",
        },
        "registered_by": {"$ref": "#/$defs/names"},
    },
}

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
OBJECT_NAME = re.compile(r"\b(?!new\b)([A-Za-z_]\w*)\b(?! ?(?:\(|::|<|\{))")  # neither called, a scope nor a type
MAX_DEPTH = 16


@dataclass(frozen=True)
class ClassSite:
    source: SourceFile
    record: CppClass


@dataclass(frozen=True)
class Definition:
    """Where a member function is written: with its body, or (body None) only declared."""

    source: SourceFile
    line: int
    body: Span | None


@dataclass(frozen=True)
class Family:
    """The classes of the tree that derive from the named bases, by name; the names of the
    named bases and of the framework's classes deriving from them, whose members are never the
    tree's; and whether the virtual member functions of those framework classes, and of their
    ancestors, are const, by name."""

    classes: dict[str, list[ClassSite]]
    upstream: frozenset[str]
    virtuals: Mapping[str, frozenset[bool]]


def literals(spec: dict) -> list[str]:
    return [last_component(base) for base in as_list(spec["derives_from"])]


def upstream_literals(spec: dict, context: Context) -> list[str]:
    """The names of the framework's classes deriving from the named bases, which a class of
    the tree may name instead of them: literals of the prefilter too."""
    return sorted({last_component(name) for name in context.upstream.descendants(_roots(spec))})


def _roots(spec: dict, option: str = "derives_from") -> list[str]:
    """The bases an option names, as written."""
    return ["".join(base.split()) for base in as_list(spec[option])]


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    spec = clause.spec
    family = _memo_family(context, _roots(spec))
    excluded = _memo_family(context, _roots(spec, "not_derives_from")).classes if "not_derives_from" in spec else {}
    registered = _registered(context, spec, family) if "registered_by" in spec else None
    name_globs = as_list(spec.get("name", "*"))
    rules = clause_rules(spec, context.upstream)
    hits = []
    declared_only = _declared_only(context, family, tuple(sorted(_roots(spec))))
    for name, sites in sorted(family.classes.items()):
        if name in excluded or not any(fnmatchcase(name, glob) for glob in name_globs):
            continue
        if name in declared_only:
            continue  # another project's header, beside classes the tree implements
        if registered is not None and name not in registered:
            continue
        for site in sites:
            if in_clause_files(site.source.path, clause):
                hits.extend(_site_hits(context, site, spec, family, rules))
    return hits


def _declared_only(context: Context, family: Family, roots: tuple[str, ...]) -> frozenset[str]:
    """The classes of `family` the tree only declares (member functions, fewer than half of
    them with a body and none written out of the class) while it implements others: their
    bodies live in another project."""

    def find() -> frozenset[str]:
        declared, implements = set(), False
        for name, sites in family.classes.items():
            methods = [m for site in sites for m in site.record.methods]
            bodies = sum(m.body is not None for m in methods)
            if 2 * bodies >= len(methods):
                implements = implements or bodies > 0
            elif _out_of_class(context, name):  # looked for only where the class holds too few bodies
                implements = True
            else:
                declared.add(name)
        return frozenset(declared) if implements else frozenset()

    return context.memo(("declared only", roots), find)


def _memo_family(context: Context, roots: list[str]) -> Family:
    key = tuple(sorted(roots))
    return context.memo(("family", key), lambda: _family(context, list(key)))


def _registered(context: Context, spec: dict, family: Family) -> set[str]:
    registrars = tuple(as_list(spec["registered_by"]))
    key = ("registered", registrars, tuple(sorted(_roots(spec))))
    return context.memo(key, lambda: registered_classes(context.index, list(registrars), family.classes))


def _site_hits(context: Context, site: ClassSite, spec: dict, family: Family, rules: StubRules) -> list[Hit]:
    wanted = as_list(spec.get("overrides", []))
    bodies = spec.get("bodies")
    name = site.record.name
    if not wanted:
        if bodies is not None and _class_bodies(context, site, family, rules) != bodies:
            return []
        return [hit_at(site.source, site.record.line, {"CLASS": name})]
    if spec.get("hides"):
        hiding = [m for entry in wanted for m in _hiding(site.record, entry, family)]
        return [hit_at(site.source, m.line, {"CLASS": name, "METHOD": m.name}) for m in hiding]
    found = {entry: _written(context, site, entry, family) for entry in wanted}
    if not all(definitions for _method, definitions in found.values()):
        return []
    rules = _with_stub_members(context, site, family, rules) if bodies else rules
    stubs = [e for e in wanted if all(_stub(context, d, rules, found[e][0]) for d in found[e][1])] if bodies else []
    if (bodies == "real" and stubs) or (bodies == "stub" and not stubs):
        return []
    cited = [found[e] for e in (stubs if bodies == "stub" else wanted)]
    return [hit_at(d.source, d.line, {"CLASS": name, "METHOD": m}) for m, found_at in cited for d in [_cited(found_at)]]


def _written(context: Context, site: ClassSite, entry: str, family: Family) -> tuple[str, list[Definition]]:
    """The first method of `entry` (`a|b`: either) that the class has, with its definitions."""
    methods = entry.split("|")
    for method in methods:
        definitions = _definitions(context, site, method, family)
        if definitions:
            return method, definitions
    return methods[0], []


def _hiding(record: CppClass, entry: str, family: Family) -> list[CppMethod]:
    """The declarations of the first method of `entry` the class declares, when each of them
    hides the framework's virtual."""
    for method in entry.split("|"):
        if any(m.name == method for m in record.methods):
            return _hiding_declarations(record, method, family.virtuals)
    return []


def _hiding_declarations(record: CppClass, method: str, virtuals: Mapping[str, frozenset[bool]]) -> list[CppMethod]:
    """The class's declarations of `method`, when it has some and each hides the framework's virtual."""
    declared = [m for m in record.methods if m.name == method]
    return declared if declared and all(_hides(m, record, virtuals) for m in declared) else []


def _hides(method: CppMethod, record: CppClass, virtuals: Mapping[str, frozenset[bool]]) -> bool:
    """Whether `method`, declared in `record`, hides a virtual of the framework instead of
    overriding it: not marked `override` in a class that marks others so, and const where every
    virtual of its name is not, or the other way round."""
    consts = virtuals.get(method.name, frozenset())
    return (
        bool(consts)
        and not method.overrides
        and method.const not in consts
        and any(other.overrides for other in record.methods)
    )


def _cited(definitions: list[Definition]) -> Definition:
    """The definition a finding shows: the first with a body, else the first declaration."""
    return min(definitions, key=lambda d: (d.body is None, d.source.path, d.line))


def _class_bodies(context: Context, site: ClassSite, family: Family, rules: StubRules) -> str | None:
    """ "real" when a member function of the class (or of a tree ancestor) does something,
    "stub" when it has some and none does, None when it has none."""
    members = _member_names(site, family)
    if not members:
        return None
    stub = all(all(_stub(context, d, rules, m) for d in _definitions(context, site, m, family)) for m in members)
    return "stub" if stub else "real"


def _member_names(site: ClassSite, family: Family, depth: int = 0) -> list[str]:
    """The member functions of the class at `site` and of its tree ancestors, constructors
    and destructors aside."""
    names = [m.name for m in site.record.methods if m.name != site.record.name and not m.name.startswith("~")]
    for parent in _parents(site, family) if depth < MAX_DEPTH else ():
        names += _member_names(parent, family, depth + 1)
    return list(dict.fromkeys(names))


def _parents(site: ClassSite, family: Family) -> list[ClassSite]:
    """The sites of the tree classes the class at `site` derives from, framework classes aside."""
    parents = [base_name(base) for base in site.record.bases]
    return [parent for name in parents if name not in family.upstream for parent in family.classes.get(name, [])]


def _definitions(context: Context, site: ClassSite, method: str, family: Family, depth: int = 0) -> list[Definition]:
    """Where `method` of the class at `site` is written: its bodies, in the class or out of
    it; else its declarations there; else what a tree ancestor has."""
    if _hiding_declarations(site.record, method, family.virtuals):
        return []
    own = [Definition(site.source, m.line, m.body) for m in site.record.methods if m.name == method]
    defined = [d for d in own if d.body is not None] + _out_of_class(context, site.record.name).get(method, [])
    if defined or own:
        return defined or own
    for parent in _parents(site, family) if depth < MAX_DEPTH else ():
        inherited = _definitions(context, parent, method, family, depth + 1)
        if inherited:
            return inherited
    return []


def _out_of_class(context: Context, cls: str) -> dict[str, list[Definition]]:
    """The out-of-class definitions `cls::name(...) {` of the tree, by method name."""

    def find() -> dict[str, list[Definition]]:
        found: dict[str, list[Definition]] = defaultdict(list)
        for source in context.index.select([f"{cls}::"], languages=CPP_LANGUAGES):
            for definition in context.index.cpp_facts(source).method_defs:
                if definition.cls == cls:
                    found[definition.name].append(Definition(source, definition.line, definition.body))
        return dict(found)

    return context.memo(("out-of-class", cls), find)


def _stub(context: Context, definition: Definition, rules: StubRules, method: str) -> bool:
    if definition.body is None:
        return False
    stripped = context.index.cpp_facts(definition.source).stripped
    constants = context.memo(("declared-constants", definition.source.path), lambda: declared_constants(stripped))
    given = frozenset(parameters_before(stripped, definition.body[0])) | constants
    return is_stub(body_statements(stripped, definition.body), replace(rules, own_name=method, unchanged=given))


def _with_stub_members(context: Context, site: ClassSite, family: Family, rules: StubRules) -> StubRules:
    """`rules` where a call of a stub member function of the class (or of a tree ancestor) is a
    placeholder too: found once per class."""

    def find() -> StubRules:
        members = _member_names(site, family)
        stubs = frozenset(m for m in members if _all_stubs(context, _definitions(context, site, m, family), rules, m))
        return replace(rules, stub_members=stubs)

    return context.memo(("stub-members", site.source.path, site.record.line, rules), find)


def _all_stubs(context: Context, definitions: list[Definition], rules: StubRules, method: str) -> bool:
    return bool(definitions) and all(_stub(context, d, rules, method) for d in definitions)


def base_name(base: str) -> str:
    return last_component(base.split("<", 1)[0].strip())


def _family(context: Context, roots: list[str]) -> Family:
    upstream = context.upstream.descendants(roots)
    names = frozenset({last_component(root) for root in roots} | {last_component(name) for name in upstream})
    virtuals = context.upstream.virtual_constness(upstream)
    return Family(derived_classes(context.index, names, context.upstream.namespaces), names, virtuals)


def derived_classes(
    index: CodeIndex, roots: frozenset[str], namespaces: frozenset[str] = frozenset()
) -> dict[str, list[ClassSite]]:
    """Every class of the tree that derives from one of the framework classes `roots`, directly
    or through tree classes. A root written qualified counts only in one of the framework's
    `namespaces` (when it knows them): `other::Allocator` is another library's class."""
    found: dict[str, list[ClassSite]] = {}
    known: set[str] = set()
    frontier = set(roots)
    seen: set[tuple[str, int]] = set()

    def in_family(base: str) -> bool:
        name = base_name(base)
        return name in known or (name in roots and _in_namespaces(base, namespaces))

    while frontier:
        new_names: set[str] = set()
        for source, record in index.classes(sorted(frontier)):
            if (source.path, record.line) in seen or not any(in_family(b) for b in record.bases):
                continue
            seen.add((source.path, record.line))
            found.setdefault(record.name, []).append(ClassSite(source, record))
            if record.name not in known:
                new_names.add(record.name)
        known |= new_names
        frontier = new_names
    return found


def _in_namespaces(base: str, namespaces: frozenset[str]) -> bool:
    """Whether `base`, as written, may name a class of the framework's `namespaces`: unqualified,
    or qualified from one of them (`::c10::Allocator`, `at::Allocator`)."""
    qualifier = base.split("<", 1)[0].strip().lstrip(":").rpartition("::")[0]
    return not qualifier or not namespaces or qualifier.split("::", 1)[0].strip() in namespaces


def registered_classes(index: CodeIndex, registrars: str | list[str], classes: dict[str, list[ClassSite]]) -> set[str]:
    """The classes a registration call or registrar object reaches: named in its arguments,
    in its file, in the file that defines a function it names, or as the type of an object
    it names (`static MyHooks hooks;` ... `Register(&hooks)`)."""
    names = frozenset(last_component(r) for r in as_list(registrars))
    registered: set[str] = set()
    for source, _line, args, _via in invocations(index, names):
        tokens = set(IDENTIFIER.findall(" ".join(args)))
        registered |= tokens & classes.keys()
        registered |= _named_in(index.code_text(source), classes)
        for token in tokens - classes.keys():
            for definer in _definers(index, token):
                registered |= _named_in(index.code_text(definer), classes)
        for name in set(OBJECT_NAME.findall(" ".join(args))) - classes.keys():
            registered |= _types_of(index, name, classes)
    return registered


def _named_in(text: str, classes: dict[str, list[ClassSite]]) -> set[str]:
    return {name for name in classes if re.search(rf"\b{re.escape(name)}\b", text)}


def _types_of(index: CodeIndex, name: str, classes: dict[str, list[ClassSite]]) -> set[str]:
    """The classes an object `name` is declared with: `Cls name;`, `static Cls* name = ...`,
    `std::unique_ptr<Cls> name`."""
    if not classes:
        return set()
    named = "|".join(re.escape(cls) for cls in sorted(classes))
    declaration = compile_guarded(rf"\b({named})\b[^;=(){{}}\n]*\b{re.escape(name)}\b")
    found: set[str] = set()
    for source in index.select([name], languages=CPP_LANGUAGES):
        with searching(source.path):
            found.update(match.group(1) for match in declaration.finditer(index.code_text(source)))
    return found


def _definers(index: CodeIndex, function: str) -> list[SourceFile]:
    """Files that define a function `function(...) {`."""
    call = rf"\b{re.escape(function)}\s*\("  # a scan for the `)` stops at the next call: linear on `f(f(f(...`
    pattern = compile_guarded(rf"{call}(?:(?!{call})[^;{{}}])*\)\s*(?:const\s*)?(?:noexcept\s*)?\{{")
    found = []
    for source in index.select([function], languages=CPP_LANGUAGES):
        with searching(source.path):
            if pattern.search(source.text):
                found.append(source)
    return found


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    return True
