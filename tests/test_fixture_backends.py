"""End to end on our synthetic backends: path, dispatch key and every expected row outcome."""

from __future__ import annotations

import pytest
import yaml
from air.run import check
from conftest import FIXTURES

BACKENDS = ["pu1_full", "pu1_partial", "fork_style", "hybrid_patched", "compile_only"]


def outcome(row) -> object:
    if row.outcome == "not_applicable":
        return "n/a"
    if row.outcome == "unknown":
        return "unknown"
    return row.points


@pytest.fixture(scope="module", params=BACKENDS)
def checked(request, pack):
    root = FIXTURES / request.param
    expected = yaml.safe_load((root / "expected.yaml").read_text())
    return check(root, pack), expected


def test_integration_path(checked):
    report, expected = checked
    assert report.integration_path.id == expected["path"]
    assert report.integration_path.dispatch_key == expected["dispatch_key"]
    assert report.integration_path.signals, "the verdict must name the signals that fired"
    assert expected.get("note", "") in report.integration_path.note


def test_row_outcomes(checked):
    report, expected = checked
    rows = {row.id: row for row in report.rows}
    actual = {row_id: outcome(rows[row_id]) for row_id in expected["rows"]}
    assert actual == expected["rows"]


def test_reasons(checked):
    report, expected = checked
    rows = {row.id: row for row in report.rows}
    for row_id, fragment in expected.get("reasons", {}).items():
        assert fragment in rows[row_id].reason, (row_id, rows[row_id].reason)


def test_every_scored_point_has_evidence_and_every_gap_a_reason(checked):
    report, _expected = checked
    for row in report.rows:
        if row.points:
            assert row.evidence, row.id
            assert all(f.line >= 1 and f.snippet for f in row.evidence), row.id
        if row.outcome != "scored" or row.points != 2:
            assert row.reason, row.id


def test_docs_vendored_and_comments_never_count(pack):
    report = check(FIXTURES / "pu1_partial", pack)
    paths = {f.path for row in report.rows for f in row.evidence}
    assert not any(p.startswith(("docs/", "third_party/")) for p in paths)
    guard = next(r for r in report.rows if r.id == "guard-register-pu1")
    assert {f.line for f in guard.evidence if f.path == "csrc/guard_b.cpp"} == {3, 8}  # not the commented line 9


def test_empty_directory(tmp_path, pack):
    report = check(tmp_path, pack)
    assert report.integration_path.id == "none"
    assert report.readiness == 0
    assert len(report.rows) == 225
    scored = [r for r in report.rows if r.outcome == "scored"]
    assert scored and all(r.points == 0 for r in scored)
    assert all(r.reason for r in report.rows if r.outcome != "scored" or r.points != 2)


def test_unencoded_rows_are_unknown_with_reason(pack):
    report = check(FIXTURES / "pu1_full", pack)
    unencoded = [r for r in report.rows if r.section not in {
        "device-registration", "accelerator-hooks", "device-guard", "autoload", "memory"}]
    assert unencoded and all(r.outcome == "unknown" and r.reason == "not yet encoded" for r in unencoded)
    assert report.coverage < 100
