"""Fix first: the rows whose fixing would raise readiness most, each with exactly the gain the
readiness formula gives it.

A row short of full marks in a section that counts gains, when fixed,

    (2 − points) · w / max_pts(section) × 100 × (1 / tier) / Σ (1 / tier of each section kept)

percentage points of readiness: readiness is linear in each row's points. Only rows scored
below 2 are fixes; an unknown row is first to be proven (see `to_prove`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from air.results import RowResult, SectionResult
from air.scoring.formula import MAX_POINTS

GAIN_DIGITS = 9  # gains equal to this many digits are ties, kept in the pack's order


@dataclass(frozen=True)
class Fix:
    row: RowResult
    gain: float  # readiness percentage points that full marks on the row would add


def fix_first(sections: Sequence[SectionResult], rows: Sequence[RowResult]) -> tuple[Fix, ...]:
    """Every row scored below full marks, the largest gain first (ties in the pack's order)."""
    kept = {section.id: section for section in sections if section.percent is not None and section.max_pts}
    tier_weights = sum(1 / section.tier for section in kept.values())
    fixes = []
    for row in rows:
        section = kept.get(row.section)
        if section is None or row.outcome != "scored" or row.points is None or row.points >= MAX_POINTS:
            continue
        share = (MAX_POINTS - row.points) / row.priority / section.max_pts
        fixes.append(Fix(row, share * 100 / section.tier / tier_weights))
    return tuple(sorted(fixes, key=lambda fix: -round(fix.gain, GAIN_DIGITS)))


def to_prove(rows: Sequence[RowResult]) -> tuple[RowResult, ...]:
    """The rows still unknown that a runtime check would decide, in the pack's order."""
    return tuple(row for row in rows if row.outcome == "unknown" and row.runtime_check)
