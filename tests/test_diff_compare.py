"""`air diff` between two checks of one backend, and `air compare` across backends, both from
JSON reports."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers.cli import air
from helpers.paths import FIXTURES

FULL = FIXTURES / "pu1_full"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The full fixture checked, then checked again without its device guard; and the toy example."""
    work = tmp_path_factory.mktemp("reports")
    shutil.copytree(FULL, work / "torch_full")
    check = ["check", "-q", "--no-cache", "--format", "json", "--output"]
    assert air(*check, "before.json", str(work / "torch_full"), cwd=work).returncode == 0
    (work / "torch_full" / "csrc" / "FullGuard.cpp").unlink()
    assert air(*check, "after.json", str(work / "torch_full"), cwd=work).returncode == 0
    assert air(*check, "other.json", str(FIXTURES / "compile_only"), cwd=work).returncode == 0
    return work


def test_diff_shows_the_rows_lost_the_findings_removed_and_the_readiness_delta(reports):
    done = air("diff", "before.json", "after.json", "--format", "json", cwd=reports)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    before, after = (json.loads((reports / name).read_text()) for name in ("before.json", "after.json"))
    assert data["readiness"] == {
        "old": before["readiness"],
        "new": after["readiness"],
        "delta": after["readiness"] - before["readiness"],
    }
    assert data["regressed"] and data["readiness"]["delta"] < 0
    lost = {row["id"] for row in data["rows"] if row["delta"] < 0}
    assert "guard-register-pu1" in lost and not any(row["delta"] > 0 for row in data["rows"])
    points = {row["id"]: row["points"] for row in before["rows"]}
    for row in data["rows"]:
        assert row["before"] == str(points[row["id"]]) or points[row["id"]] is None
    guard = next(row for row in data["rows"] if row["id"] == "guard-register-pu1")
    assert guard["removed"] and all(text.startswith("csrc/FullGuard.cpp:") for text in guard["removed"])


def test_diff_in_markdown_and_its_regression_exit(reports):
    markdown = air("diff", "before.json", "after.json", cwd=reports)
    assert markdown.returncode == 0
    assert "\n## Rows lost\n" in markdown.stdout and "| guard-register-pu1" not in markdown.stdout
    assert "(`guard-register-pu1`)" in markdown.stdout and "  - removed csrc/FullGuard.cpp:" in markdown.stdout
    failing = air("diff", "before.json", "after.json", "--fail-on-regression", "--output", "d.md", cwd=reports)
    assert failing.returncode == 1 and failing.stderr.startswith("air: regression: readiness ")
    improving = air("diff", "after.json", "before.json", "--fail-on-regression", "--output", "d.md", cwd=reports)
    assert improving.returncode == 0
    same = air("diff", "before.json", "before.json", cwd=reports)
    assert same.stdout.endswith("No row, finding or operator count changed.\n")


def test_compare_puts_backends_side_by_side_with_the_rows_that_differ(reports):
    done = air("compare", "before.json", "other.json", "--format", "json", cwd=reports)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    first, second = (json.loads((reports / name).read_text()) for name in ("before.json", "other.json"))
    assert [backend["readiness"] for backend in data["backends"]] == [first["readiness"], second["readiness"]]
    assert len(data["sections"]) == len(first["sections"])
    differing = {row["id"] for row in data["rows"]}
    scores = (
        {row["id"]: (row["points"], row["outcome"]) for row in first["rows"]},
        {row["id"]: (row["points"], row["outcome"]) for row in second["rows"]},
    )
    assert differing == {row_id for row_id in scores[0] if scores[0][row_id] != scores[1][row_id]}
    markdown = air("compare", "before.json", "other.json", cwd=reports).stdout
    assert markdown.startswith("# air compare\n") and f"## Rows that differ ({len(differing)})" in markdown
    page = air("compare", "before.json", "other.json", "--format", "html", cwd=reports).stdout
    assert page.startswith("<!doctype html>") and f"<h2>Rows that differ ({len(differing)})</h2>" in page
    assert page.count("<tr><td>") == len(differing) and "src=" not in page


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (["before.json", "missing.json"], "missing.json: cannot read a JSON report"),
        (["before.json", "broken.json"], "broken.json: cannot read a JSON report"),
        (["before.json", "alien.json"], "alien.json: not an air JSON report"),
    ],
)
def test_a_file_that_is_not_a_report_is_a_one_line_error(reports, files, message):
    (reports / "broken.json").write_text("{")
    (reports / "alien.json").write_text('{"runs": []}')
    for command in ("diff", "compare"):
        done = air(command, *files, cwd=reports)
        assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
