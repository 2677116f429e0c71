"""What a check prints: the summary box on standard output, coloured only for a terminal, and
with --quiet nothing but the line that says why --fail-under failed."""

from __future__ import annotations

from dataclasses import replace

from air.report.terminal import render_summary
from air.scoring.fixes import fix_first
from helpers.cli import air
from helpers.paths import FIXTURES
from helpers.reports import sample_report, sample_row

FULL = FIXTURES / "pu1_full"


def test_the_box_shows_readiness_coverage_sections_by_tier_and_the_top_fixes():
    report = sample_report()
    lines = render_summary(report).splitlines()
    assert len({len(line) for line in lines}) == 1 and len(lines[0]) == 80
    assert lines[1].startswith("│ flux_widget: readiness 48.6 %")
    assert lines[2].startswith("│ Fork; evidence coverage 87.5 %; 1 row unknown")
    tiers = [line for line in lines if line.startswith("│ Tier ")]
    assert [line.split()[2] for line in tiers] == ["1", "2", "3"]
    assert "│   1 Device | Management" in render_summary(report)
    assert lines[lines.index(tiers[2]) + 1].split()[-4:] == ["—", "—", "N/A", "│"]
    fixes = [line for line in lines if line.startswith("│ 1. ") or line.startswith("│ 2. ")]
    assert [line.split()[2] for line in fixes] == [fix.row.item for fix in fix_first(report.sections, report.rows)]
    assert fixes[0].rstrip(" │").endswith("+17.39 pp")
    assert lines[lines.index(fixes[0]) + 1].startswith("│    Register the key.")  # its remediation, under it


def test_only_five_fixes_are_shown_and_long_titles_are_clipped():
    rows = tuple(sample_row(f"1.{n}", 1, "scored", 0, title="A very long title " * 8) for n in range(1, 9))
    lines = render_summary(replace(sample_report(), rows=rows)).splitlines()
    fixes = [line for line in lines if line[2:4] in {f"{n}." for n in range(1, 9)}]
    assert len(fixes) == 5 and all("…" in line and len(line) == 80 for line in fixes)
    long = replace(rows[0], remediation="Do this. " * 30)
    remedy = render_summary(replace(sample_report(), rows=(long,))).splitlines()
    assert any(line.startswith("│    Do this. Do this.") and line.endswith("… │") for line in remedy)


def test_colour_is_added_only_when_asked_and_ascii_frames_hold_only_ascii():
    report = sample_report()
    assert "\x1b[" not in render_summary(report)
    assert "\x1b[31m\x1b[1m48.6 %" in render_summary(report, colour=True)  # below 50 %: red
    framed = render_summary(report, unicode=False)
    assert framed.isascii() and framed.startswith("+---") and "| flux_widget: readiness 48.6 %" in framed


def test_a_check_prints_the_box_and_quiet_prints_nothing(tmp_path):
    shown = air("check", "--format", "json", "--output", "r.json", str(FULL), cwd=tmp_path)
    assert shown.returncode == 0 and "torch_full: readiness " in shown.stdout.splitlines()[1]
    assert "Fix first" in shown.stdout and "\x1b[" not in shown.stdout  # not a terminal: no colour
    quiet = air("check", "-q", "--format", "json", "--output", "r.json", str(FULL), cwd=tmp_path)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_fail_under_says_why_in_one_line_even_when_quiet(tmp_path):
    failed = air("check", "-q", "--fail-under", "99", "--format", "json", "--output", "r.json", str(FULL), cwd=tmp_path)
    assert failed.returncode == 1 and failed.stdout == ""
    [line] = failed.stderr.splitlines()
    assert line.startswith("torch_full: readiness ") and line.endswith(" % is below --fail-under 99 %")
