"""`air diff OLD.json NEW.json`: what changed between two checks of one backend. Rows whose
score or outcome changed, the readiness delta, the findings each row gained or lost (a finding
is its file and snippet: a line that moved is the same finding) and the operator coverage
delta. Something got worse when readiness fell or a row lost points."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from air.printable import printable
from air.results import Report, RowResult, item_key

SHOWN_FINDINGS = 5


@dataclass(frozen=True)
class RowChange:
    id: str
    item: str
    title: str
    before: str  # its points, "N/A", "unknown" or "absent"
    after: str
    delta: int  # points gained (negative: lost)
    added: tuple[str, ...]  # findings new in NEW, as path:line snippet
    removed: tuple[str, ...]


@dataclass(frozen=True)
class ReportDiff:
    old: str  # the checks, named by backend and source
    new: str
    readiness: tuple[float, float]
    coverage: tuple[float, float]
    rows: tuple[RowChange, ...]
    operators: tuple[tuple[str, int | None, int | None], ...]  # (measure, before, after) that changed

    @property
    def regressed(self) -> bool:
        return self.readiness[1] < self.readiness[0] or any(change.delta < 0 for change in self.rows)


def diff_reports(old: Report, new: Report) -> ReportDiff:
    before = {row.id: row for row in old.rows}
    after = {row.id: row for row in new.rows}
    changes = []
    for row_id in [*before, *(row_id for row_id in after if row_id not in before)]:
        change = _row_change(before.get(row_id), after.get(row_id))
        if change is not None:
            changes.append(change)
    return ReportDiff(
        _named(old),
        _named(new),
        (old.readiness, new.readiness),
        (old.coverage, new.coverage),
        tuple(changes),
        _operator_changes(old, new),
    )


def _row_change(old: RowResult | None, new: RowResult | None) -> RowChange | None:
    shown = old or new
    assert shown is not None
    old_findings, new_findings = _findings(old), _findings(new)
    added = tuple(text for key, text in new_findings.items() if key not in old_findings)
    removed = tuple(text for key, text in old_findings.items() if key not in new_findings)
    state_before, state_after = score_label(old), score_label(new)
    if state_before == state_after and not added and not removed:
        return None
    delta = ((new.points or 0) if new else 0) - ((old.points or 0) if old else 0)
    return RowChange(shown.id, shown.item, shown.title, state_before, state_after, delta, added, removed)


def score_label(row: RowResult | None) -> str:
    """A row's score as reports show it: its points, N/A, unknown, or absent (no such row)."""
    if row is None:
        return "absent"
    if row.outcome == "not_applicable":
        return "N/A"
    return "unknown" if row.outcome == "unknown" or row.points is None else str(row.points)


def _findings(row: RowResult | None) -> dict[tuple[str, str], str]:
    if row is None:
        return {}
    return {(f.path, f.snippet): f"{f.path}:{f.line} {f.snippet}" for f in row.evidence}


def _operator_changes(old: Report, new: Report) -> tuple[tuple[str, int | None, int | None], ...]:
    a, b = old.operators, new.operators
    pairs = [
        (name, getattr(a, field) if a else None, getattr(b, field) if b else None)
        for name, field in (
            ("operators with a native kernel", "registered"),
            ("core operators covered", "core_covered"),
            ("operators with only a per-op fallback", "per_op_fallbacks"),
        )
    ]
    categories_a = {c.item: c for c in a.categories} if a else {}
    categories_b = {c.item: c for c in b.categories} if b else {}
    for item in sorted({*categories_a, *categories_b}, key=item_key):
        category = categories_b.get(item) or categories_a[item]
        pairs.append(
            (
                f"{item} {category.title}: native kernels",
                categories_a[item].covered if item in categories_a else None,
                categories_b[item].covered if item in categories_b else None,
            )
        )
    return tuple(pair for pair in pairs if pair[1] != pair[2])


def _named(report: Report) -> str:
    source = report.backend.source
    at = f" at {source.commit[:12]}" if source.commit else ""
    return f"{report.backend.name}{at} ({report.date})"


def render_diff_markdown(diff: ReportDiff) -> str:
    old_readiness, new_readiness = diff.readiness
    lines = [
        f"# air diff: {printable(diff.old)} → {printable(diff.new)}",
        "",
        f"Readiness: {old_readiness:.1f} % → {new_readiness:.1f} % ({new_readiness - old_readiness:+.1f} pp); "
        f"evidence coverage {diff.coverage[0]:.1f} % → {diff.coverage[1]:.1f} %.",
    ]
    for title, wanted in (("Rows gained", 1), ("Rows lost", -1), ("Rows whose outcome changed", 0)):
        changes = [
            change
            for change in diff.rows
            if (change.delta > 0) - (change.delta < 0) == wanted and change.before != change.after
        ]
        if not changes:
            continue
        lines += ["", f"## {title}", "", "| Item | Row | Before | After |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {change.item} | {table_cell(change.title)} (`{change.id}`) | {change.before} | {change.after} |"
            for change in changes
        ]
    found = [change for change in diff.rows if change.added or change.removed]
    if found:
        lines += ["", "## Findings", ""]
        for change in found:
            lines.append(f"- {change.item} `{change.id}`:")
            lines += [f"  - added {table_cell(text)}" for text in change.added[:SHOWN_FINDINGS]]
            lines += [f"  - removed {table_cell(text)}" for text in change.removed[:SHOWN_FINDINGS]]
            hidden = max(0, len(change.added) - SHOWN_FINDINGS) + max(0, len(change.removed) - SHOWN_FINDINGS)
            if hidden:
                lines.append(f"  - and {hidden} more")
    if diff.operators:
        lines += ["", "## Operator coverage", "", "| Measure | Before | After |", "| --- | --- | --- |"]
        lines += [f"| {table_cell(name)} | {_count(old)} | {_count(new)} |" for name, old, new in diff.operators]
    if not diff.rows and not diff.operators:
        lines += ["", "No row, finding or operator count changed."]
    return "\n".join(lines) + "\n"


def render_diff_json(diff: ReportDiff) -> str:
    data: dict[str, Any] = {
        "old": diff.old,
        "new": diff.new,
        "readiness": {
            "old": diff.readiness[0],
            "new": diff.readiness[1],
            "delta": diff.readiness[1] - diff.readiness[0],
        },
        "coverage": {"old": diff.coverage[0], "new": diff.coverage[1]},
        "regressed": diff.regressed,
        "rows": [
            change.__dict__ | {"added": list(change.added), "removed": list(change.removed)} for change in diff.rows
        ],
        "operators": [{"measure": name, "old": old, "new": new} for name, old, new in diff.operators],
    }
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def table_cell(text: str) -> str:
    return printable(" ".join(text.split())).replace("|", "\\|")


def _count(value: int | None) -> str:
    return "—" if value is None else str(value)
