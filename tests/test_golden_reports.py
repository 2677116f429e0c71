"""Golden files: every renderer's output for one fixed result set, byte for byte. A change to a
renderer shows here as a diff of its golden file; `AIR_UPDATE_GOLDEN=1` writes them anew (read
the diff before committing it)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from air.report.badge import render_badge
from air.report.html import render_html
from air.report.json_report import render_json
from air.report.junit import render_junit
from air.report.links import evidence_links
from air.report.markdown import render_markdown
from air.report.sarif import render_sarif
from air.report.terminal import render_summary
from air.results import Finding, ProbeResult, Report, RuntimeRun, Source
from helpers.paths import REPO_ROOT
from helpers.reports import sample_report, sample_row

GOLDEN = REPO_ROOT / "tests" / "golden"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def golden_report() -> Report:
    """The sample report from a GitHub checkout, with a runtime run and a row a probe decided."""
    report = sample_report()
    source = Source("git", "https://github.com/acme/flux_widget.git", COMMIT)
    probe_finding = Finding("flux-1.x/probes/device.py", 4, "device strings work: ok", "verified", "probe strings")
    rows = (
        *report.rows,
        sample_row("1.5", 2, "scored", 2, evidence=(probe_finding,), runtime="verified", reason="verified at runtime"),
        sample_row("1.6", 2, "unknown", None, runtime_check="python -c 'import flux; flux.sync()'"),
    )
    matrix = (
        ("add", "float32", "pass", ""),
        ("add", "float16", "mismatch", "largest difference 0.01"),
        ("add", "float32 backward", "pass", ""),
        ("mul", "float32", "fallback", "no kernel of its own for aten::mul.out"),
    )
    probes = (
        ProbeResult("strings", "device strings work", ("row-1-5",), "verified", "ok", "flux-1.x/probes/device.py", 4),
        ProbeResult("sweep", "ops match the CPU", (), "refuted", "4 entries", "flux-1.x/probes/ops.py", 9, matrix),
    )
    runtime = RuntimeRun("/usr/bin/python3", "widget", (("python", "3.11.2"), ("torch", "2.13.0")), probes)
    return replace(report, backend=replace(report.backend, source=source), rows=rows, runtime=runtime)


def rendered() -> dict[str, str]:
    report = golden_report()
    links = evidence_links(report.backend.source)
    return {
        "report.md": render_markdown(report, links),
        "report.html": render_html(report, links),
        "report.json": render_json(report),
        "report.sarif": render_sarif(report),
        "report.junit.xml": render_junit(report),
        "report.badge.json": render_badge(report),
        "summary.txt": render_summary(report),
    }


@pytest.mark.parametrize("name", sorted(rendered()))
def test_each_renderer_matches_its_golden_file(name):
    text = rendered()[name]
    golden = GOLDEN / name
    if os.environ.get("AIR_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.is_file(), f"no golden file {golden}: run with AIR_UPDATE_GOLDEN=1"
    assert text == Path(golden).read_text(encoding="utf-8")
