"""`air pack diff OLD NEW`: what changed between two versions of a pack, row by row, and the
semantic-version bump the change requires.

The bump a change requires, by what it does to the people who use the pack:

- major: a row is removed (with no redirect to another), or a row's priority or section
  changes: a threshold a team set on readiness can move without anything in their backend
  changing, and an id their configuration names can vanish;
- minor: a row is added or renamed (the old id redirected), or its integration paths, release
  range, evidence, score conditions, prerequisite or notes change: what it detects changes;
- patch: wording only (title, remediation, docs).

A pack's own bump (its `version`) smaller than the required one is a failure.

Both packs are read as written (pack.yaml and the row files, families expanded), not loaded:
a pack released by an earlier air may not pass today's schema, and its diff is still wanted.
A pack that extends another is compared by its own rows and its `overrides`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from air.pack.families import expand_families
from air.pack.load import DEFAULT_ROW_GLOBS
from air.pack.schemas import defined_properties
from air.results import item_key
from air.yamldoc import load_yaml

BUMPS = ("none", "patch", "minor", "major")
SHARED = ("evidence", "constraints", "symbols")
MAJOR_FIELDS = ("priority", "section")
PATCH_FIELDS = ("title", "remediation", "docs")


@dataclass(frozen=True)
class RowChange:
    id: str
    item: str
    change: str  # "added", "removed", "renamed from <id>", "changed"
    fields: tuple[str, ...] = ()  # the fields that changed
    bump: str = "patch"


@dataclass(frozen=True)
class PackDiff:
    old: str  # "<id> <version>"
    new: str
    rows: tuple[RowChange, ...]
    required: str  # the bump the changes require
    declared: str  # the bump between the two versions
    shared: tuple[str, ...] = ()  # shared definitions (evidence, constraints, symbol sets) that changed

    @property
    def under_bumped(self) -> bool:
        return BUMPS.index(self.declared) < BUMPS.index(self.required)


@dataclass(frozen=True)
class PackText:
    """A pack as written: what the diff compares."""

    id: str
    version: str
    rows: dict[str, dict[str, Any]]  # each row as written, with its file's section; each override too
    redirects: dict[str, str]
    shared: dict[str, dict[str, Any]]  # evidence, constraints, symbols: name -> definition


def read_pack(directory: Path) -> PackText:
    header = load_yaml(directory / "pack.yaml").data
    header = header if isinstance(header, dict) else {}
    rows: dict[str, dict[str, Any]] = {}
    shared: dict[str, dict[str, Any]] = {kind: dict(header.get(kind) or {}) for kind in SHARED}
    fields = defined_properties("row", "row")
    for glob in header.get("rows", DEFAULT_ROW_GLOBS):
        for path in sorted(directory.glob(glob)):
            document = expand_families(load_yaml(path), fields).data
            if not isinstance(document, dict):
                continue
            for kind in SHARED:
                shared[kind].update(document.get(kind) or {})
            for row in document.get("rows") or []:
                if isinstance(row, dict) and "id" in row:
                    rows[str(row["id"])] = {**row, "section": document.get("section")}
    for row_id, changes in (header.get("overrides") or {}).items():
        rows[str(row_id)] = {"item": "", "overrides": changes}
    return PackText(
        str(header.get("id", directory.name)),
        str(header.get("version", "0.0.0")),
        rows,
        {str(key): str(value) for key, value in (header.get("redirects") or {}).items()},
        shared,
    )


def diff_packs(old: PackText, new: PackText) -> PackDiff:
    old_rows, new_rows = old.rows, new.rows
    renamed_to = {old_id: new_id for old_id, new_id in new.redirects.items() if old_id in old_rows}
    changes: list[RowChange] = []
    for row_id, data in old_rows.items():
        if row_id in new_rows:
            fields = _changed_fields(data, new_rows[row_id])
            if fields:
                changes.append(RowChange(row_id, new_rows[row_id]["item"], "changed", fields, _bump(fields)))
        elif row_id in renamed_to and renamed_to[row_id] in new_rows:
            target = new_rows[renamed_to[row_id]]
            fields = _changed_fields(data, target)
            bump = max("minor", _bump(fields), key=BUMPS.index)
            changes.append(RowChange(renamed_to[row_id], target["item"], f"renamed from {row_id}", fields, bump))
        else:
            changes.append(RowChange(row_id, data["item"], "removed", (), "major"))
    renamed = {change.id for change in changes if change.change.startswith("renamed")}
    for row_id, data in new_rows.items():
        if row_id not in old_rows and row_id not in renamed:
            changes.append(RowChange(row_id, data["item"], "added", (), "minor"))
    changes.sort(key=lambda change: (item_key(change.item), change.id))
    shared = tuple(
        f"{kind} {name}"
        for kind in SHARED
        for name in sorted({*old.shared[kind], *new.shared[kind]})
        if _canonical(old.shared[kind].get(name)) != _canonical(new.shared[kind].get(name))
    )
    bumps = [change.bump for change in changes] + ["minor"] * bool(shared)
    required = max(bumps, key=BUMPS.index, default="none")
    return PackDiff(
        f"{old.id} {old.version}",
        f"{new.id} {new.version}",
        tuple(changes),
        required,
        _declared(old.version, new.version),
        shared,
    )


def _changed_fields(old: dict[str, Any], new: dict[str, Any]) -> tuple[str, ...]:
    keys = sorted({*old, *new} - {"id"})
    return tuple(key for key in keys if _canonical(old.get(key)) != _canonical(new.get(key)))


def _bump(fields: Iterable[str]) -> str:
    bump = "patch"
    for field in fields:
        if field in MAJOR_FIELDS:
            return "major"
        if field not in PATCH_FIELDS:
            bump = "minor"
    return bump


def _declared(old: str, new: str) -> str:
    before, after = _release(old), _release(new)
    if after[0] != before[0]:
        return "major" if after > before else "none"
    if after[1] != before[1]:
        return "minor" if after > before else "none"
    return "patch" if after > before else "none"


def _release(version: str) -> tuple[int, int, int]:
    parts = (version.split("-")[0].split("+")[0].split(".") + ["0", "0"])[:3]
    return int(parts[0]), int(parts[1]), int(parts[2])


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def render_pack_diff(diff: PackDiff, fmt: str = "markdown") -> str:
    if fmt == "json":
        data = {
            "old": diff.old,
            "new": diff.new,
            "required_bump": diff.required,
            "declared_bump": diff.declared,
            "rows": [change.__dict__ | {"fields": list(change.fields)} for change in diff.rows],
            "shared": list(diff.shared),
        }
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    lines = [
        f"# Pack diff: {diff.old} → {diff.new}",
        "",
        f"Required bump: **{diff.required}**; declared: **{diff.declared}**"
        + (" (too small)" if diff.under_bumped else "")
        + ".",
    ]
    for title, kind in (("Added", "added"), ("Removed", "removed"), ("Renamed", "renamed"), ("Changed", "changed")):
        listed = [change for change in diff.rows if change.change.startswith(kind)]
        if not listed:
            continue
        lines += ["", f"## {title}", ""]
        for change in listed:
            detail = f" ({change.change})" if kind == "renamed" else ""
            fields = f": {', '.join(change.fields)}" if change.fields else ""
            lines.append(f"- {change.item} `{change.id}`{detail}{fields} [{change.bump}]")
    if diff.shared:
        lines += ["", "## Shared definitions changed [minor]", ""] + [f"- {name}" for name in diff.shared]
    if not diff.rows and not diff.shared:
        lines += ["", "No row changed."]
    return "\n".join(lines) + "\n"


def changelog_entry(diff: PackDiff) -> str:
    """The pack's CHANGELOG.md entry for the change: its new version and each row changed."""
    version = diff.new.rsplit(" ", 1)[-1]
    sections = {"added": "Added", "renamed": "Renamed", "changed": "Changed", "removed": "Removed"}
    lines = [f"## {version}", ""]
    for kind, title in sections.items():
        listed = [change for change in diff.rows if change.change.startswith(kind)]
        if listed:
            lines += [f"### {title}", ""]
            lines += [
                f"- {change.item} `{change.id}`"
                + (f" ({change.change})" if kind == "renamed" else "")
                + (f": {', '.join(change.fields)}" if change.fields else "")
                for change in listed
            ]
            lines.append("")
    if diff.shared:
        lines += ["### Shared definitions changed", "", *(f"- {name}" for name in diff.shared), ""]
    return "\n".join(lines)
