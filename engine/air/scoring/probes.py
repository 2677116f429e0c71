"""Runtime findings merged with the static ones, row by row.

A row the probes decide scores by them: 2 when every probe of it passed, 0 when one failed or
ended the interpreter ("registered but fails at runtime" when its static evidence earned
points). A probe that was skipped gives nothing: the row keeps its static outcome, and its
reason says why the probe did not run. Rows that do not apply stay N/A.

A row a probe's matrix decides (`measures`: the operators of a category, a dtype) scores by the
entries of its part that were measured: 2 when all pass (their outcome is one the part counts
as passing), 1 when some do, 0 when none does, and never more than its static evidence earned
(a kernel that runs through a CPU fallback is not a native one). A row that probes and a
matrix both decide earns the lower score, with both reasons.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from fnmatch import fnmatchcase

from air.pack.probes import Measure
from air.results import Finding, ProbeOutcome, ProbeResult, RowResult
from air.scoring.formula import MAX_POINTS
from air.scoring.rows import MAX_FINDINGS_PER_ROW, join_reasons

FAILURES = {"refuted": "fails", "error": "hangs or crashes"}
UNMEASURED = ("skipped", "not run")  # matrix outcomes that measured nothing
DECIDED = ("verified", *FAILURES)  # what probes that ran made of a row
SHOWN_FAILURES = 5


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
        return _unproven(row, [f"probe {probe.id} skipped ({probe.detail})" for probe in skipped])
    shown = "; ".join(f"probe {probe.id}: {probe.title}" for probe in probes)
    return replace(
        row,
        outcome="scored",
        points=MAX_POINTS,
        reason=f"verified at runtime: {shown}",
        evidence=evidence,
        runtime="verified",
    )


def _unproven(row: RowResult, notes: list[str]) -> RowResult:
    """`row` as the static pass decided it, with why its probes gave nothing."""
    return replace(row, reason=join_reasons([row.reason, *notes]), runtime="skipped")


def _finding(probe: ProbeResult) -> Finding:
    snippet = f"{probe.title}: {probe.detail}" if probe.detail else probe.title
    return Finding(
        probe.path, probe.line, snippet, "verified" if probe.outcome == "verified" else "refuted", f"probe {probe.id}"
    )


def with_measures(
    rows: Sequence[RowResult], probes: Sequence[ProbeResult], measures: Mapping[str, tuple[Measure, ...]]
) -> tuple[RowResult, ...]:
    """`rows`, those that a probe's matrix decides (its `measures`) scored by it."""
    parts: dict[str, list[tuple[ProbeResult, Measure]]] = defaultdict(list)
    for probe in probes:
        for measure in measures.get(probe.id, ()):
            for row_id in measure.rows:
                parts[row_id].append((probe, measure))
    return tuple(_measured(row, parts[row.id]) if row.id in parts else row for row in rows)


def _measured(row: RowResult, parts: list[tuple[ProbeResult, Measure]]) -> RowResult:
    if row.outcome == "not_applicable":
        return row
    probe = parts[0][0]
    measured = [
        (entry, entry[2] in measure.passing)
        for result, measure in parts
        for entry in result.matrix
        if _in_part(entry, measure) and entry[2] not in UNMEASURED
    ]
    if not measured:
        why = probe.detail if probe.outcome in ("skipped", "error") else "none of its part was measured"
        note = f"probe {probe.id} measured nothing of it ({why})"
        if row.runtime in DECIDED:  # its other probes did
            return replace(row, reason=join_reasons([row.reason, note]))
        return _unproven(row, [note])
    passed = sum(1 for _entry, passes in measured if passes)
    points = MAX_POINTS if passed == len(measured) else (1 if passed else 0)
    before = row.points if row.outcome == "scored" and row.points is not None else None
    final = min(points, before) if before is not None else points
    failing = [f"{entry[0]} ({entry[1]}): {entry[2]}" for entry, passes in measured if not passes]
    reason = f"measured by probe {probe.id}: {passed} of {len(measured)} pass"
    if failing:
        more = len(failing) - SHOWN_FAILURES
        reason += "; not passing: " + ", ".join(failing[:SHOWN_FAILURES]) + (f" and {more} more" if more > 0 else "")
    if row.runtime in DECIDED:  # its other probes decided it too: both stand
        reason = join_reasons([row.reason, reason])
    elif final < points:
        reason += f"; capped at {final} by the static evidence ({row.reason})"
    elif before is not None and before > points:
        reason = f"registered but fails at runtime: {reason}"
    outcome: ProbeOutcome = "verified" if points == MAX_POINTS else "refuted"
    if row.runtime in FAILURES:  # a probe of it failed: that stands
        outcome = row.runtime
    shown = f"{probe.title}: {passed} of {len(measured)} pass"
    proof = Finding(
        probe.path, probe.line, shown, "verified" if points == MAX_POINTS else "refuted", f"probe {probe.id}"
    )
    evidence = ((proof,) + row.evidence)[:MAX_FINDINGS_PER_ROW]
    return replace(row, outcome="scored", points=final, reason=reason, evidence=evidence, runtime=outcome)


def _in_part(entry: tuple[str, str, str, str], measure: Measure) -> bool:
    name, variant = entry[0], entry[1]
    return any(fnmatchcase(name, glob) for glob in measure.names) and any(
        fnmatchcase(variant, glob) for glob in measure.variants
    )
