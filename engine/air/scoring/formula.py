"""The readiness formula.

- Row weight w = 1 / priority; every row's maximum is 2 points.
- Section: max_pts = Σ 2·w over rows that are not N/A; earned = Σ points·w;
  percent = earned / max_pts × 100. A section whose rows are all N/A is dropped.
- Readiness = Σ percent·(1/tier) / Σ (1/tier) over the sections kept.
- Unknown rows earn 0; their weight is reported as unverified. Evidence coverage is the
  weight of scored rows over the weight of all rows that are not N/A.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from air.pack.framework import Section
from air.results import RowResult, SectionResult

MAX_POINTS = 2


@dataclass(frozen=True)
class Score:
    sections: tuple[SectionResult, ...]
    readiness: float
    coverage: float


def score(sections: Sequence[Section], rows: Sequence[RowResult]) -> Score:
    results = []
    decided_weight = applicable_weight = 0.0
    for spec in sections:
        applicable = [r for r in rows if r.section == spec.id and r.outcome != "not_applicable"]
        max_pts = sum(MAX_POINTS / r.priority for r in applicable)
        earned = sum((r.points or 0) / r.priority for r in applicable)
        unknown = sum(1 / r.priority for r in applicable if r.outcome == "unknown")
        weight = sum(1 / r.priority for r in applicable)
        applicable_weight += weight
        decided_weight += weight - unknown
        percent = earned / max_pts * 100 if max_pts else None
        results.append(SectionResult(spec.id, spec.number, spec.title, spec.tier, max_pts, earned, percent, unknown))
    kept = [(s.percent, s.tier) for s in results if s.percent is not None]
    tier_weights = sum(1 / tier for _percent, tier in kept)
    readiness = sum(percent * (1 / tier) for percent, tier in kept) / tier_weights if tier_weights else 0.0
    coverage = decided_weight / applicable_weight * 100 if applicable_weight else 0.0
    return Score(tuple(results), readiness, coverage)
