"""The framework APIs a pack names, for `air pack verify-apis`: the Python names its clauses
call or assign (those under the framework's package, `torch.` for PyTorch) and the C++ names
(macros and functions its `cpp_macro` clauses match, base classes and methods its `cpp_class`
clauses look for), each with the rows that name it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from air.pack.load import Pack, Row

PYTHON_NAME_KEYS = {"python_call": ("name",), "python_assign": ("target",)}


@dataclass
class ApiUse:
    kind: str  # "python", "cpp name", "cpp class", "cpp method"
    rows: set[str] = field(default_factory=set)
    alternatives: list[tuple[str, ...]] = field(default_factory=list)  # the names a clause takes instead


def pack_apis(pack: Pack) -> dict[str, ApiUse]:
    """Each API the pack's rows name, by name (a glob for Python names that end in one)."""
    package = pack.framework.package
    found: dict[str, ApiUse] = defaultdict(lambda: ApiUse(""))
    for row in pack.rows:
        for kind, group in _groups(row, package):
            for name in group:
                use = found[name]
                use.kind = use.kind or kind
                use.rows.add(row.id)
                use.alternatives.append(group)
    return dict(sorted(found.items()))


def _groups(row: Row, package: str | None) -> list[tuple[str, tuple[str, ...]]]:
    """The names each of the row's clauses looks for, a group per clause field: any one of a
    group is enough for the clause."""
    groups: list[tuple[str, tuple[str, ...]]] = []
    for clause in row.evidence.values():
        spec = clause.spec if isinstance(clause.spec, dict) else {}
        for key in PYTHON_NAME_KEYS.get(clause.kind, ()):
            names = [name for name in _listed(spec.get(key)) if package and name.startswith(f"{package}.")]
            groups.append(("python", tuple(name.removesuffix(".*") for name in names)))
        if clause.kind == "cpp_macro":
            groups.append(("cpp name", tuple(n.rsplit("::", 1)[-1] for n in _listed(spec.get("name")) if "*" not in n)))
        if clause.kind == "cpp_class":
            groups += [("cpp class", (name.rsplit("::", 1)[-1],)) for name in _listed(spec.get("derives_from"))]
            groups += [("cpp method", tuple(method.split("|"))) for method in _listed(spec.get("overrides"))]
    return [(kind, names) for kind, names in groups if names]


def _listed(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
