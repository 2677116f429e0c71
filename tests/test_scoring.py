"""The readiness formula, with the check figures computed over the real pack's rows."""

from __future__ import annotations

import pytest
from air.pack.framework import Section
from air.results import RowResult
from air.scoring.fixes import fix_first, to_prove
from air.scoring.formula import score
from helpers.packs import declared_rows


def row(section: str, priority: int, outcome: str = "scored", points: int | None = 0, paths=()) -> RowResult:
    return RowResult(f"r-{section}-{priority}", "1", section, "t", priority, paths, outcome, points, "", (), "", ())


def as_if(pack, path: str, full_tier: int) -> list[RowResult]:
    """Every row of `pack` as a backend on `path` with 100 % on `full_tier` and 0 % elsewhere."""
    tiers = {s.id: s.tier for s in pack.framework.sections}
    rows = []
    for r in pack.rows:
        if r.paths and path not in r.paths:
            rows.append(
                RowResult(r.id, r.item, r.section, r.title, r.priority, r.paths, "not_applicable", None, "", (), "", ())
            )
        else:
            points = 2 if tiers[r.section] == full_tier else 0
            rows.append(
                RowResult(r.id, r.item, r.section, r.title, r.priority, r.paths, "scored", points, "", (), "", ())
            )
    return rows


def test_check_figure_privateuse1(pack):
    result = score(pack.framework.sections, as_if(pack, "privateuse1", full_tier=1))
    assert round(result.readiness, 1) == 48.6
    assert result.coverage == 100


def test_check_figure_fork(pack):
    result = score(pack.framework.sections, as_if(pack, "fork", full_tier=1))
    assert round(result.readiness, 1) == 45.5


@pytest.mark.parametrize("path", ["privateuse1", "fork"])
def test_a_sections_max_points_are_two_per_priority_over_the_rows_of_the_path(pack, path):
    declared = [r for r in declared_rows() if not r.get("integration_paths") or path in r["integration_paths"]]
    result = score(pack.framework.sections, as_if(pack, path, full_tier=0))
    maxima = {s.id: s.max_pts for s in result.sections}
    assert maxima == pytest.approx(
        {s.id: sum(2 / r["priority"] for r in declared if r["section"] == s.id) for s in pack.framework.sections}
    )


def test_rows_keep_the_sections_and_paths_their_files_declare(pack):
    loaded = {r.id: (r.section, r.priority, r.paths) for r in pack.rows}
    declared = {r["id"]: (r["section"], r["priority"], tuple(r.get("integration_paths", ()))) for r in declared_rows()}
    assert loaded == declared
    assert any(paths for _section, _priority, paths in loaded.values())  # some rows apply on one path only


def test_weights_na_and_unknown():
    sections = [Section("a", 1, "A", 1), Section("b", 2, "B", 3), Section("c", 3, "C", 2)]
    rows = [
        row("a", 1, points=2),  # 2 of 2
        row("a", 2, points=1),  # 0.5 of 1
        row("a", 3, "unknown", None),  # 0 of 2/3, unverified
        row("b", 1, points=0),
        row("c", 1, "not_applicable", None),
    ]
    result = score(sections, rows)
    a, b, c = result.sections
    assert a.max_pts == pytest.approx(2 + 1 + 2 / 3)
    assert a.earned == pytest.approx(2.5)
    assert a.unknown_weight == pytest.approx(1 / 3)
    assert c.percent is None and c.max_pts == 0  # every row N/A: dropped
    expected = (a.percent * 1 + b.percent / 3) / (1 + 1 / 3)
    assert result.readiness == pytest.approx(expected)
    assert result.coverage == pytest.approx((1 + 0.5 + 1) / (1 + 0.5 + 1 / 3 + 1) * 100)


def test_nothing_applicable_scores_zero():
    result = score([Section("a", 1, "A", 1)], [row("a", 1, "not_applicable", None)])
    assert result.readiness == 0 and result.coverage == 0


def mixed(pack) -> list[RowResult]:
    """The pack's rows with every kind of outcome: points 0, 1 and 2, unknown and N/A in turn."""
    rows = []
    for number, r in enumerate(pack.rows):
        outcome, points = [("scored", 0), ("scored", 1), ("scored", 2), ("unknown", None), ("not_applicable", None)][
            number % 5
        ]
        check = "python -c 'probe()'" if number % 2 else ""
        rows.append(
            RowResult(
                r.id, r.item, r.section, r.title, r.priority, r.paths, outcome, points, "", (), "", (), None, check
            )
        )
    return rows


def test_a_fix_gains_exactly_what_full_marks_on_its_row_add_to_readiness(pack):
    rows = mixed(pack)
    before = score(pack.framework.sections, rows)
    fixes = fix_first(before.sections, rows)
    assert {fix.row.id for fix in fixes} == {r.id for r in rows if r.outcome == "scored" and r.points < 2}
    gains = [round(fix.gain, 9) for fix in fixes]
    assert gains == sorted(gains, reverse=True)
    for fix in fixes:
        fixed = [RowResult(**{**r.__dict__, "points": 2}) if r is fix.row else r for r in rows]
        gained = score(pack.framework.sections, fixed).readiness - before.readiness
        assert gained == pytest.approx(fix.gain, abs=1e-9)


def test_ties_keep_the_pack_order_and_unknown_rows_with_a_check_are_to_prove(pack):
    section = pack.framework.sections[0].id
    rows = [row(section, 1, points=0), row(section, 1, points=0), row(section, 2, points=1)]
    rows = [RowResult(**{**r.__dict__, "id": f"r{n}"}) for n, r in enumerate(rows)]
    fixes = fix_first(score(pack.framework.sections, rows).sections, rows)
    assert [fix.row.id for fix in fixes] == ["r0", "r1", "r2"]
    assert fixes[0].gain == fixes[1].gain == 4 * fixes[2].gain
    unknown = [r for r in mixed(pack) if r.outcome == "unknown"]
    assert to_prove(mixed(pack)) == tuple(r for r in unknown if r.runtime_check)
