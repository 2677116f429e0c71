"""The HTML report: one self-contained file holding the score, the chart, the fixes, every row
with filters and, after --runtime, the op × dtype matrix; and, in headless Chromium, a page
that renders them and whose filters work."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from air.report.html import render_html
from air.results import ProbeResult, RuntimeRun
from helpers.browser import browser, screenshot, seen_in_browser
from helpers.cli import air
from helpers.paths import FIXTURES
from helpers.reports import sample_report

FULL = FIXTURES / "pu1_full"


class Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(page)
    return parser.tags


def test_the_page_is_self_contained_and_holds_every_row():
    report = sample_report()
    page = render_html(report)
    found = tags(page)
    assert not [tag for tag, attrs in found if tag in ("link", "img", "iframe") or (tag == "script" and "src" in attrs)]
    assert [attrs["data-status"] for tag, attrs in found if tag == "tr" and "data-status" in attrs] == [
        "failing"
        if row.points in (0, 1) and row.outcome == "scored"
        else {"not_applicable": "na", "unknown": "unknown"}.get(row.outcome, "pass")
        for row in sorted(
            report.rows,
            key=lambda row: (
                {"device": 1, "autoload": 4, "compile": 12}[row.section],
                tuple(map(int, row.item.split("."))),
            ),
        )
    ]
    assert '<div class="value low">48.6 %</div>' in page
    assert page.count('<rect class="bar"') == 2  # the two sections that count; Autoload is N/A
    assert '<ol id="fix-first"><li><b>1.2.9</b> Row 1.2.9: <b>+17.39 pp</b>. Register the key.</li>' in page
    assert [attrs["data-filter"] for tag, attrs in found if tag == "button"] == [
        "all",
        "failing",
        "unknown",
        "na",
        "verified",
    ]


def test_text_from_the_tree_is_escaped():
    report = sample_report()
    hostile = replace(report.backend, name="<script>alert(1)</script>")
    page = render_html(replace(report, backend=hostile))
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_matrix_is_shown_after_runtime():
    matrix = (("add", "float32", "pass", ""), ("add", "float32 backward", "mismatch", "largest difference 0.01"))
    probe = ProbeResult("opinfo-sweep", "ops", (), "refuted", "2 entries", "p/opinfo.py", 3, matrix)
    page = render_html(replace(sample_report(), runtime=RuntimeRun("python", "toy", (), (probe,))))
    table = page[page.index('<table class="matrix" id="matrix-opinfo-sweep">') :]
    assert "<th>float32</th><th>float32 backward</th>" in table
    assert '<td class="bad" title="largest difference 0.01">mismatch</td>' in table


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("html")
    done = air("check", "-q", "--format", "html", "--output", "report.html", str(FULL), cwd=work)
    assert done.returncode == 0, done.stderr
    return work / "report.html"


needs_browser = pytest.mark.skipif(browser() is None, reason="no Chromium here (.ci/run installs it)")


@needs_browser
def test_in_a_browser_the_score_chart_and_rows_render_and_every_filter_works(page, tmp_path):
    seen = seen_in_browser(page, tmp_path)
    assert re.fullmatch(r"\d+\.\d %", seen["score"])
    assert seen["chart"] > 300 and seen["bars"] >= 10
    assert seen["rows"] == seen["shownAtLoad"] == 225
    assert set(seen["filters"]) == {"all", "failing", "unknown", "na", "verified"}
    for filter_seen in seen["filters"].values():
        assert filter_seen["active"] and filter_seen["shown"] == filter_seen["wanted"]
    assert 0 < seen["filters"]["failing"]["shown"] < seen["rows"]


@needs_browser
def test_in_a_browser_the_address_chooses_the_filter_and_a_screenshot_is_taken(page, tmp_path):
    seen = seen_in_browser(page, tmp_path, "#filter=na")
    assert seen["shownAtLoad"] == seen["filters"]["na"]["wanted"] > 0
    picture = Path(os.environ.get("AIR_SCREENSHOT") or tmp_path / "report.png")
    assert screenshot(page, picture) > 50_000  # a page of text and bars, not a blank one
