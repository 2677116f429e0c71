"""What one pack says differently for two releases of its framework: the rows that apply to one
release and not the other (their `framework_versions`), and the operator catalog both are
checked against."""

from __future__ import annotations

import json
from dataclasses import dataclass

from air.errors import InputError
from air.graph.operators import Catalog
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
    catalog: str | None  # the release the pack's operator catalog was generated from


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

    catalog = Catalog.load(pack.operators.catalog_path).framework_version if pack.operators else None
    return ReleaseDiff(
        pack.id,
        name,
        old,
        new,
        tuple(row for row in pack.rows if applies(row, old) and not applies(row, new)),
        tuple(row for row in pack.rows if applies(row, new) and not applies(row, old)),
        catalog,
    )


def render_release_diff(diff: ReleaseDiff, fmt: str = "markdown") -> str:
    if fmt == "json":
        data = {
            "pack": diff.pack,
            "releases": [diff.old, diff.new],
            "only_old": [{"id": row.id, "item": row.item, "releases": row.framework_versions} for row in diff.only_old],
            "only_new": [{"id": row.id, "item": row.item, "releases": row.framework_versions} for row in diff.only_new],
            "catalog": diff.catalog,
        }
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    lines = [f"# {diff.pack}: {diff.framework} {diff.old} → {diff.new}", ""]
    for title, rows in ((f"N/A on {diff.new}", diff.only_old), (f"N/A on {diff.old}", diff.only_new)):
        lines.append(f"## {title} ({len(rows)})")
        lines += [f"- {row.item} `{row.id}`: {row.title} (releases {row.framework_versions})" for row in rows] or [
            "- none"
        ]
        lines.append("")
    if diff.catalog is not None:
        lines.append(
            f"Both releases are checked against the operator catalog of {diff.framework} {diff.catalog}, the one "
            "the pack ships: it cannot tell operators added or removed between them."
        )
    return "\n".join(lines).rstrip("\n") + "\n"
