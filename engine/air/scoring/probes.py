"""Runtime findings merged with the static ones, row by row.

A row the probes decide scores by them: 2 when every probe of it passed, 0 when one failed or
ended the interpreter ("registered but fails at runtime" when its static evidence earned
points). A probe that was skipped gives nothing: the row keeps its static outcome, and its
reason says why the probe did not run. Rows that do not apply stay N/A.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from air.results import Finding, ProbeResult, RowResult
from air.scoring.formula import MAX_POINTS
from air.scoring.rows import MAX_FINDINGS_PER_ROW

FAILURES = {"refuted": "fails", "error": "hangs or crashes"}


def with_probes(rows: Sequence[RowResult], probes: Sequence[ProbeResult]) -> tuple[RowResult, ...]:
    deciding: dict[str, list[ProbeResult]] = defaultdict(list)
    for probe in probes:
        for row_id in probe.rows:
            deciding[row_id].append(probe)
    return tuple(_merged(row, deciding[row.id]) if row.id in deciding else row for row in rows)


def _merged(row: RowResult, probes: list[ProbeResult]) -> RowResult:
    if row.outcome == "not_applicable":
        return row
    ran = [probe for probe in probes if probe.outcome != "skipped"]
    evidence = (tuple(_finding(probe) for probe in ran) + row.evidence)[:MAX_FINDINGS_PER_ROW]
    failed = next((probe for probe in probes if probe.outcome in FAILURES), None)
    if failed is not None:
        claimed = "registered but " if row.outcome == "scored" and row.points else ""
        reason = f"{claimed}{FAILURES[failed.outcome]} at runtime: probe {failed.id}: {failed.detail}"
        return replace(row, outcome="scored", points=0, reason=reason, evidence=evidence, runtime=failed.outcome)
    skipped = [probe for probe in probes if probe.outcome == "skipped"]
    if skipped:
        said = "; ".join(f"probe {probe.id} skipped ({probe.detail})" for probe in skipped)
        return replace(row, reason=f"{row.reason}; {said}" if row.reason else said, runtime="skipped")
    shown = "; ".join(f"probe {probe.id}: {probe.title}" for probe in probes)
    return replace(
        row,
        outcome="scored",
        points=MAX_POINTS,
        reason=f"verified at runtime: {shown}",
        evidence=evidence,
        runtime="verified",
    )


def _finding(probe: ProbeResult) -> Finding:
    snippet = f"{probe.title}: {probe.detail}" if probe.detail else probe.title
    return Finding(
        probe.path, probe.line, snippet, "verified" if probe.outcome == "verified" else "refuted", f"probe {probe.id}"
    )
