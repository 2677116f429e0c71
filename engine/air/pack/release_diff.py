"""What one pack says differently for two releases of its framework: the rows that apply to one
release and not the other (their `framework_versions`), and the operators the catalogs of the
two releases disagree on."""

from __future__ import annotations

import json
from dataclasses import dataclass

from air.errors import InputError
from air.graph.catalog import Catalog
from air.pack.load import Pack, Row
from air.versions import admits, is_release


@dataclass(frozen=True)
class ReleaseDiff:
    pack: str
    framework: str
    old: str
    new: str
    only_old: tuple[Row, ...]  # rows that apply to the old release and are N/A on the new one
    only_new: tuple[Row, ...]  # rows N/A on the old release that apply to the new one
    catalogs: tuple[str, str] | None  # the releases the catalogs checked against each were generated from
    ops_added: tuple[str, ...] = ()  # overloads in the new release's catalog, not the old one's
    ops_removed: tuple[str, ...] = ()  # overloads in the old release's catalog, not the new one's
    core_added: tuple[str, ...] = ()  # overloads of both, flagged core in the new one only
    core_removed: tuple[str, ...] = ()  # overloads of both, flagged core in the old one only


def diff_releases(pack: Pack, old: str, new: str) -> ReleaseDiff:
    """The rows of `pack` whose releases admit one of `old` and `new` and not the other. A
    release that is not one, or lies outside the pack's own range, is an input error."""
    name = pack.framework.name
    for release in (old, new):
        if not is_release(release):
            raise InputError(f"{release!r} is not a {name} release (e.g. 2.5 or 2.13.0)")
        if pack.framework_versions and not admits(pack.framework_versions, release):
            raise InputError(f"{pack.id} supports {name} {pack.framework_versions}; {release} is outside it")

    def applies(row: Row, release: str) -> bool:
        return not row.framework_versions or admits(row.framework_versions, release)

    only_old = tuple(row for row in pack.rows if applies(row, old) and not applies(row, new))
    only_new = tuple(row for row in pack.rows if applies(row, new) and not applies(row, old))
    if pack.operators is None:
        return ReleaseDiff(pack.id, name, old, new, only_old, only_new, None)
    before, after = (pack.operators.catalogs.catalog(release) for release in (old, new))
    both = set(before.ops) & set(after.ops)
    return ReleaseDiff(
        pack.id,
        name,
        old,
        new,
        only_old,
        only_new,
        (before.framework_version, after.framework_version),
        tuple(sorted(set(after.ops) - set(before.ops))),
        tuple(sorted(set(before.ops) - set(after.ops))),
        _core(after, both - _core_set(before)),
        _core(before, both - _core_set(after)),
    )


def _core_set(catalog: Catalog) -> set[str]:
    return {name for name, flags in catalog.ops.items() if "core" in flags}


def _core(catalog: Catalog, names: set[str]) -> tuple[str, ...]:
    return tuple(sorted(names & _core_set(catalog)))


def render_release_diff(diff: ReleaseDiff, fmt: str = "markdown") -> str:
    if fmt == "json":
        data = {
            "pack": diff.pack,
            "releases": [diff.old, diff.new],
            "only_old": [{"id": row.id, "item": row.item, "releases": row.framework_versions} for row in diff.only_old],
            "only_new": [{"id": row.id, "item": row.item, "releases": row.framework_versions} for row in diff.only_new],
            "catalogs": list(diff.catalogs) if diff.catalogs else None,
            "ops_added": list(diff.ops_added),
            "ops_removed": list(diff.ops_removed),
            "core_added": list(diff.core_added),
            "core_removed": list(diff.core_removed),
        }
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    lines = [f"# {diff.pack}: {diff.framework} {diff.old} → {diff.new}", ""]
    for title, rows in ((f"N/A on {diff.new}", diff.only_old), (f"N/A on {diff.old}", diff.only_new)):
        lines.append(f"## {title} ({len(rows)})")
        lines += [f"- {row.item} `{row.id}`: {row.title} (releases {row.framework_versions})" for row in rows] or [
            "- none"
        ]
        lines.append("")
    if diff.catalogs is not None:
        old_catalog, new_catalog = diff.catalogs
        if old_catalog == new_catalog:
            lines.append(f"Both releases are checked against one operator catalog, of {diff.framework} {old_catalog}.")
        else:
            lines.append(f"Operator catalogs: {diff.framework} {old_catalog} → {new_catalog}.")
            lines.append("")
            for title, names in (
                ("Operators added", diff.ops_added),
                ("Operators removed", diff.ops_removed),
                ("Newly core", diff.core_added),
                ("No longer core", diff.core_removed),
            ):
                lines += [f"## {title} ({len(names)})", ", ".join(f"`{name}`" for name in names) or "none", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
