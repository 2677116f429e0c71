"""`ops`: operator registrations of the tree (see `air.operators`), with coverage of a list.

`of: [names]` finds the registrations of the listed operators; a name covers its whole family
(`add` covers `add.Tensor`, `add_.Tensor`, `add.out`), and `a|b` is covered by either (`_to_copy|
_copy_from`: a cast works through either kernel). Listed operators that the catalog marks
composite need no kernel of their own: they are left out of the coverage and listed apart.
`fallback: true` finds global fallbacks instead, and `any: true` every registration of an
operator (on the keys the clause's `where` allows). Each hit captures OP, KEY and HOW.
"""

from __future__ import annotations

from air.errors import PackError
from air.evidence.base import Clause, Context, Coverage, Hit, hit_at
from air.operators import Registrations, family, find_registrations


def literals(spec: dict) -> list[str]:
    return []  # registrations are found once for the whole tree (see `registrations`)


def registrations(context: Context) -> Registrations:
    if context.operators is None:
        raise PackError("pack.yaml", "`ops` evidence needs an `operators` section in pack.yaml")
    return context.memo(("operators",), lambda: find_registrations(context.index, context.operators))


def evaluate(clause: Clause, context: Context) -> list[Hit]:
    found = registrations(context)
    if clause.spec.get("fallback"):
        chosen = found.fallbacks
    elif clause.spec.get("any"):
        chosen = found.ops
    else:
        families = {family(name) for member in clause.spec["of"] for name in alternatives(member)}
        chosen = tuple(r for r in found.ops if family(r.op) in families)
    return [hit_at(r.source, r.line, {"OP": r.op, "KEY": r.key, "HOW": r.how}) for r in chosen]


def measure(clause: Clause, hits: list[Hit], context: Context) -> Coverage | None:
    if "of" not in clause.spec:
        return None
    catalog = context.operators.catalog
    registered = {family(hit.capture("OP") or "") for hit in hits}
    listed = list(dict.fromkeys(clause.spec["of"]))
    composite = tuple(member for member in listed if catalog.is_composite(alternatives(member)[0]))
    needed = [member for member in listed if member not in composite]

    def covered(member: str) -> bool:
        return any(family(name) in registered for name in alternatives(member))

    return Coverage(
        covered=tuple(member for member in needed if covered(member)),
        missing=tuple(member for member in needed if not covered(member)),
        composite=composite,
    )


def alternatives(member: str) -> list[str]:
    return member.split("|")
