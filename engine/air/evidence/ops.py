"""`ops`: operator registrations of the tree (see `air.graph.operators`), with coverage of a list.

`of: [names]` finds the native kernels registered for the listed operators; a name is covered
by a kernel for any of its variants, the overloads the catalog groups with it by signature
(`add.Tensor` by `add.Tensor`, `add_.Tensor` or `add.out`; `max.dim` by `max.dim_max` but not by
`max.other`, another operation; see `Catalog.is_served`), and `a|b` is covered by either
(`_to_copy|_copy_from`: a cast works through either kernel). Listed operators that the
catalog says need no kernel of their own (composite) are left out of the coverage and listed
apart; `a|b` is such only when each of its alternatives is. A listed operator registered only
with a fallback kernel is counted as such, not as covered, and so is one registered only with a
stub kernel, whose body computes nothing (see `air.evidence.kernel_bodies`). With `not_body`,
a native kernel every definition of which matches that regex refuses its operators (a copy
kernel that checks both tensors have one dtype refuses casts): they count as missing, and the
coverage says which registration refused them, and why (`refusal`). A
definition is read with the bodies of the tree's functions it calls, two levels deep, after
it. One whose registration is unresolved (an op-list entry naming a template or file that is
not in the tree) leaves the coverage undecided unless a native kernel covers it.
Entries of op lists that no build or codegen file names are not counted; the coverage says
which listed operators such a list names ("not used by the build").
When a key of the pack's `fallback_keys` has a global fallback of the backend's own and none
reaching a CPU fallback function, every operator reaches that kernel: listed operators without
a native kernel of their own leave the coverage undecided (it needs a runtime check).
`fallback: global` finds global fallbacks instead (with `kernel: fallback`, only those whose
kernel reaches a CPU fallback function; with `kernel: native`, only the backend's own, such as
a tracer that captures every operator); `fallback: per_op` the operators registered with a
fallback kernel; `any: true` every registration of an operator of the catalog's namespace (on
the keys the clause's `where` allows), and with `namespaces: all` of any namespace (a backend's
own operators, a library's). Each hit captures OP, NAMESPACE, KEY, HOW and, when there is one,
VIA (the fallback function reached, the op list's template, or the stub or function an in-tree
key's kernel is known by), and FUNCTION (the kernel a C/C++ registration names, as written:
`my_add`, `torch::CppFunction::makeFallthrough()`).

Kernels of an in-tree key known by the framework's naming conventions (see
`air.graph.in_tree_kernels`) count as native; the coverage says how many of the covered
operators only they cover, bound to them by the framework's own op list rather than the tree.
"""

from __future__ import annotations

from collections.abc import Iterable

from air.errors import PackError
from air.evidence.base import (
    Clause,
    Context,
    Coverage,
    Hit,
    SpecChecks,
    apply_where,
    constraint_holds,
    hit_at,
    roles_for,
)
from air.evidence.kernel_bodies import KernelReader
from air.evidence.stubs import StubRules
from air.graph.catalog import Catalog, Served, family
from air.graph.host_fallback import called_functions
from air.graph.in_tree_kernels import HOWS as IN_TREE_HOWS
from air.graph.operators import (
    FALLBACK,
    NATIVE,
    STUB,
    UNRESOLVED,
    OperatorSyntax,
    Registration,
    Registrations,
    find_registrations,
    op_list_names,
    python_registration_files,
)
from air.index.cpp import CPP_LANGUAGES
from air.index.model import SourceFile
from air.regex import GuardedPattern, compile_guarded

SUMMARY = "native kernels of listed operators, with `coverage()`; `fallback: global` or `per_op` for fallbacks, `any: true` for every registration"
TREE_WIDE = True
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "oneOf": [{"required": ["of"]}, {"required": ["fallback"]}, {"required": ["any"]}],
    "dependentRequired": {"namespaces": ["any"]},
    "properties": {
        "of": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "string",
                "pattern": "^[a-z_][a-z0-9_]*(\\.[A-Za-z0-9_]+)?(\\|[a-z_][a-z0-9_]*(\\.[A-Za-z0-9_]+)?)*$",
            },
        },
        "fallback": {
            "enum": ["global", "per_op"],
            "description": "global: the global fallbacks; per_op: operators registered with a fallback kernel",
        },
        "any": {"const": True, "description": "every registration of an operator, on the keys `where` allows"},
        "namespaces": {
            "enum": ["catalog", "all"],
            "description": "with any: the operators of the catalog's namespace (the default), or of every "
            "namespace (custom operators, a library's), which `where` may narrow by NAMESPACE",
        },
        "not_body": {
            "type": "string",
            "minLength": 1,
            "description": "with of: a native kernel whose every definition in the tree matches this "
            "regex (over its body) refuses the operators it is registered for: they count as missing",
        },
        "refusal": {
            "type": "string",
            "minLength": 1,
            "description": "with not_body: what such a kernel does, said where the coverage names it",
        },
        "kernel": {
            "enum": ["native", "fallback", "stub"],
            "description": "with fallback: global, only the global fallbacks whose kernel is "
            "the backend's own (native), reaches a CPU fallback function (fallback) "
            "or only fails (stub)",
        },
    },
}

MAX_UNRESOLVED_SHOWN = 5
CALLEE_DEPTH = 2


def validate(spec: dict, checks: SpecChecks) -> None:
    if "not_body" in spec:
        checks.pattern(("not_body",), spec["not_body"])
    if checks.operators is None:
        checks.refuse((), "`ops` evidence needs an `operators` section in pack.yaml")
    catalogs = checks.operators.catalogs
    unknown = [name for member in spec.get("of", ()) for name in member.split("|") if not catalogs.knows(name)]
    if unknown:
        checks.refuse(("of",), f"in no operator catalog of the pack: {', '.join(unknown)}")


def literals(spec: dict) -> list[str]:
    return []  # registrations are found once for the whole tree (see `registrations`)


def tree_literals(context: Context) -> list[str]:
    """The file names of the tree's possible op lists: the build files naming them are found
    in the check's one literal scan."""
    return context.memo(("op list names",), lambda: op_list_names(context.index))


def parsed_files(context: Context) -> list[SourceFile]:
    """The Python files `registrations` parses, whatever the clause: parsed with every other
    clause's files before any clause is evaluated."""
    return python_registration_files(context.index, _operator_syntax(context))


def registrations(context: Context) -> Registrations:
    syntax = _operator_syntax(context)
    upstream = context.upstream
    rules = StubRules(
        upstream.inert_calls,
        allocations=upstream.allocations,
        value_types=upstream.value_types,
        metadata_calls=upstream.metadata_calls,
    )
    bodies = KernelReader(context.index, rules, syntax.host_fallback, context.device_names)
    return context.memo(("operators", context.device_names), lambda: find_registrations(context.index, syntax, bodies))


def _operator_syntax(context: Context) -> OperatorSyntax:
    if context.operators is None:
        raise PackError("pack.yaml", "`ops` evidence needs an `operators` section in pack.yaml")
    return context.operators


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    found = registrations(context)
    fallback = clause.spec.get("fallback")
    if fallback == "global":
        kernel = clause.spec.get("kernel")
        chosen = tuple(r for r in found.fallbacks if kernel is None or r.kernel == kernel)
    elif fallback == "per_op":
        chosen = tuple(r for r in found.ops if r.kernel == FALLBACK)
    elif clause.spec.get("any"):
        chosen = found.ops + (found.elsewhere if clause.spec.get("namespaces") == "all" else ())
    else:
        chosen = _of_listed(found, clause, NATIVE, context)
    return _hits_of(chosen, context)


def _hits_of(registrations: Iterable[Registration], context: Context) -> list[Hit]:
    """The hits of `registrations`, each made once for every clause that finds it."""
    # by identity: the check's registrations live as long as the context
    made: dict[int, Hit] = context.memo(("registration hits",), dict)
    hits = []
    for registration in registrations:
        hit = made.get(id(registration))
        if hit is None:
            hit = made[id(registration)] = registration_hit(registration)
        hits.append(hit)
    return hits


def registration_hit(registration: Registration) -> Hit:
    captures = {
        "OP": registration.op,
        "NAMESPACE": registration.namespace,
        "KEY": registration.key,
        "HOW": registration.how,
    }
    if registration.via:
        captures["VIA"] = registration.via
    if registration.function:
        captures["FUNCTION"] = registration.function
    return hit_at(registration.source, registration.line, captures)


def _of_listed(found: Registrations, clause: Clause, kernel: str, context: Context) -> tuple[Registration, ...]:
    """The registrations with kernels of the kind `kernel` of the listed operators' variants,
    less the native kernels `not_body` refuses."""
    refusing = clause.spec.get("not_body") if kernel == NATIVE else None
    return tuple(
        registration
        for registration in _listed_registrations(found, clause, kernel, context)
        if not (refusing and _refuses(registration.function, refusing, context))
    )


def _listed_registrations(found: Registrations, clause: Clause, kernel: str, context: Context) -> list[Registration]:
    catalog = _operator_syntax(context).catalog
    listed = [name for member in clause.spec["of"] for name in alternatives(member)]
    families = {base for name in listed for base in catalog.variant_families(name)}
    return [
        registration
        for registration in found.of_families(families, kernel)
        if any(catalog.is_served(name, registrations_served([registration], catalog)) for name in listed)
    ]


def _refuses(function: str, pattern: str, context: Context) -> bool:
    """Whether every definition the tree holds of the kernel `function` matches `pattern`
    (one that the tree does not define refuses nothing)."""
    name = function.rpartition("::")[2]
    if not name:
        return False
    key = ("refusing kernel", name, pattern)
    return context.memo(key, lambda: _every_body_matches(name, compile_guarded(pattern), context))


def _every_body_matches(name: str, pattern: GuardedPattern, context: Context) -> bool:
    bodies = [_with_callees(function.body, context) for function in context.index.definitions(name)]
    return bool(bodies) and all(pattern.search(body) is not None for body in bodies)


def _with_callees(body: str, context: Context) -> str:
    """`body` followed by the bodies of the functions of the tree it calls, and of those they
    call, `CALLEE_DEPTH` levels deep: a check written in a helper (`check_same_dtype(dst, src)`)
    refuses as if written in the kernel."""
    texts, seen, calling = [body], set(), [body]
    for _level in range(CALLEE_DEPTH):
        names = list(dict.fromkeys(name for text in calling for name in called_functions(text) if name not in seen))
        seen.update(names)
        context.index.find_literals(names, languages=CPP_LANGUAGES, roles=("product",))  # one pass for them all
        calling = [function.body for name in names for function in context.index.definitions(name)]
        texts.extend(calling)
    return "\n".join(texts)


def measure(clause: Clause, hits: list[Hit], context: Context) -> Coverage | None:
    if "of" not in clause.spec:
        return None
    catalog = _operator_syntax(context).catalog
    found = registrations(context)
    native = _served(hits, catalog)
    fallback = _served(_kept(_of_listed(found, clause, FALLBACK, context), clause, context), catalog)
    stubbed = _served(_kept(_of_listed(found, clause, STUB, context), clause, context), catalog)
    unresolved = _kept(_of_listed(found, clause, UNRESOLVED, context), clause, context)
    listed, absent = _in_catalog(list(dict.fromkeys(clause.spec["of"])), catalog)
    composite = tuple(member for member in listed if all(map(catalog.is_composite, alternatives(member))))
    differentiated = [m for m in _differentiated(listed, found, context) if not _covers(m, native, catalog)]
    needed = [member for member in listed if member not in composite and member not in differentiated]
    covered = [member for member in needed if _covers(member, native, catalog)]
    uncertain = [
        member for member in needed if member not in covered and _covers(member, _served(unresolved, catalog), catalog)
    ]
    captured = _capturing_fallback(found, context)
    if captured is not None:
        uncertain = [member for member in needed if member not in covered]
    served = [member for member in needed if member not in covered + uncertain and _covers(member, fallback, catalog)]
    stubs = [
        member for member in needed if member not in covered + uncertain + served and _covers(member, stubbed, catalog)
    ]
    return Coverage(
        covered=tuple(covered),
        missing=tuple(_missing_of(needed, covered + uncertain + served + stubs)),
        composite=composite,
        overridden=tuple(member for member in composite if _covers(member, native, catalog)),
        differentiated=tuple(differentiated),
        fallback=tuple(served),
        stub=tuple(stubs),
        unresolved=tuple(uncertain),
        undecided=_captured(uncertain, captured)
        if captured is not None
        else _undecided(uncertain, unresolved, catalog),
        sources=_op_lists(hits) + _bound_by_the_framework(covered, hits, catalog),
        ignored=_unused_lists(_missing_of(needed, covered + uncertain + served + stubs), found, clause, context)
        + ((f"{_shown(absent)}: no such operator in release {catalog.framework_version}",) if absent else ())
        + _refused(found, clause, context),
    )


def _refused(found: Registrations, clause: Clause, context: Context) -> tuple[str, ...]:
    """The native kernels registered for the listed operators that `not_body` refuses, each
    named at its registration, with why."""
    refusing = clause.spec.get("not_body")
    if not refusing:
        return ()
    why = clause.spec.get("refusal", "its body refuses the operation")
    return tuple(
        f"{registration.op} at {registration.source.path}:{registration.line}, whose kernel {registration.function}: {why}"
        for registration in _listed_registrations(found, clause, NATIVE, context)
        if _refuses(registration.function, refusing, context)
    )


def _in_catalog(listed: list[str], catalog: Catalog) -> tuple[list[str], list[str]]:
    """The listed operators the catalog knows (of `a|b`, either), and those it does not: the
    release the backend targets has not got them yet, or no longer."""
    known = [member for member in listed if any(map(catalog.knows, alternatives(member)))]
    return known, [member for member in listed if member not in known]


def _differentiated(listed: list[str], found: Registrations, context: Context) -> list[str]:
    """The listed backward operators (named as their forward with the pack's `backward_suffix`:
    `native_layer_norm_backward`) whose forward is registered on one of the pack's
    `differentiating_keys`: that kernel differentiates it, so the backward is never dispatched
    to the device."""
    syntax = _operator_syntax(context)
    keys, suffix = syntax.differentiating_keys, syntax.backward_suffix
    if not keys or not suffix:
        return []
    forwards = {family(r.op) for r in found.ops if constraint_holds(r.key, {"symbol": keys}, context, r.source.path)}
    differentiated = []
    for member in listed:
        names = [family(name) for name in alternatives(member)]
        if all(name.endswith(suffix) and name.removesuffix(suffix) in forwards for name in names):
            differentiated.append(member)
    return differentiated


def _capturing_fallback(found: Registrations, context: Context) -> Registration | None:
    """The first global fallback of the backend's own on a key of the pack's `fallback_keys`,
    when none there reaches a CPU fallback function."""
    keys = _operator_syntax(context).fallback_keys
    on_keys = [r for r in found.fallbacks if keys and constraint_holds(r.key, {"symbol": keys}, context, r.source.path)]
    if any(r.kernel == FALLBACK for r in on_keys):
        return None
    return next((r for r in on_keys if r.kernel == NATIVE), None)


def _captured(uncertain: list[str], fallback: Registration) -> str:
    if not uncertain:
        return ""
    return (
        f"every operator reaches {fallback.via}, the backend's own global kernel "
        f"({fallback.source.path}:{fallback.line}), so {_shown(uncertain)} may run through it; "
        "per-op coverage needs --runtime"
    )


def _missing_of(needed: list[str], found: list[str]) -> list[str]:
    return [member for member in needed if member not in found]


def _unused_lists(missing: list[str], found: Registrations, clause: Clause, context: Context) -> tuple[str, ...]:
    """For each op list no build file names, the missing listed operators it names."""
    catalog = _operator_syntax(context).catalog
    named: dict[str, list[str]] = {}
    for hit in _kept(found.unused, clause, context):
        for member in missing:
            if _covers(member, _served([hit], catalog), catalog):
                named.setdefault(hit.path, []).append(member)
    return tuple(
        f"op list {path} names {_shown(list(dict.fromkeys(members)))} but is not used by the build"
        for path, members in sorted(named.items())
    )


def _kept(registrations: tuple[Registration, ...], clause: Clause, context: Context) -> list[Hit]:
    """The hits of `registrations` that the clause's `where` and scope keep."""
    roles = roles_for(clause)
    return [hit for hit in apply_where(_hits_of(registrations, context), clause, context) if hit.role in roles]


def _served(hits: list[Hit], catalog: Catalog) -> Served:
    """What the operators `hits` register serve (see `Catalog.is_served`): a kernel of an
    in-tree key known by its name serves its whole family, the name telling no more."""
    ops = [(hit.capture("OP") or "", hit.capture("HOW") in IN_TREE_HOWS) for hit in hits]
    return catalog.served((op for op, _ in ops), by_family=(op for op, named in ops if named))


def registrations_served(registrations: Iterable[Registration], catalog: Catalog) -> Served:
    """What `registrations` serve (see `Catalog.is_served`), as `_served` reads their hits."""
    registrations = list(registrations)
    return catalog.served(
        (r.op for r in registrations), by_family=(r.op for r in registrations if r.how in IN_TREE_HOWS)
    )


def _covers(member: str, served: Served, catalog: Catalog) -> bool:
    return any(catalog.is_served(name, served) for name in alternatives(member))


def _undecided(uncertain: list[str], unresolved: list[Hit], catalog: Catalog) -> str:
    """Why the coverage cannot be decided: op lists name, for operators no native kernel
    covers, templates or files that are not in the tree."""
    absent: dict[tuple[str, str], list[str]] = {}
    for hit in unresolved:
        members = [member for member in uncertain if _covers(member, _served([hit], catalog), catalog)]
        if members:
            absent.setdefault((hit.path, hit.capture("VIA") or ""), []).extend(members)
    return "; ".join(
        f"{path} names {via}, which is not in the tree, for {_shown(list(dict.fromkeys(members)))}"
        for (path, via), members in sorted(absent.items())
    )


def _shown(names: list[str]) -> str:
    more = len(names) - MAX_UNRESOLVED_SHOWN
    return ", ".join(names[:MAX_UNRESOLVED_SHOWN]) + (f" and {more} more" if more > 0 else "")


def _bound_by_the_framework(covered: list[str], hits: list[Hit], catalog: Catalog) -> tuple[str, ...]:
    """How many of the covered operators only kernels of an in-tree key known by their names
    cover, which the framework's own op list binds to their operators."""
    named = [hit for hit in hits if hit.capture("HOW") in IN_TREE_HOWS]
    registered = _served([hit for hit in hits if hit.capture("HOW") not in IN_TREE_HOWS], catalog)
    only_named = [member for member in covered if not _covers(member, registered, catalog)]
    if not only_named:
        return ()
    keys = sorted({hit.capture("KEY") or "" for hit in named})
    hows = [how for how in IN_TREE_HOWS if any(hit.capture("HOW") == how for hit in named)]
    return (
        f"{len(only_named)} by the names of kernels of {', '.join(keys)} ({', '.join(hows)}), "
        "which the framework's own op list binds to their operators, not the tree",
    )


def _op_lists(hits: list[Hit]) -> tuple[str, ...]:
    """The op lists that registered covered operators, each with the templates named."""
    templates: dict[str, set[str]] = {}
    for hit in hits:
        if hit.capture("HOW") == "op list":
            via = hit.capture("VIA") or ""
            templates.setdefault(hit.path, set()).update(part.strip() for part in via.split(",") if part.strip())
    return tuple(
        f"op list {path}" + (f" ({', '.join(sorted(names))})" if names else "")
        for path, names in sorted(templates.items())
    )


def alternatives(member: str) -> list[str]:
    return member.split("|")


def reads_only_cpp(spec: dict) -> bool:
    """Whether a clause of this spec reads C/C++ alone (and so tells nothing about a compiled distribution)."""
    return False
