"""The JSON and Markdown renderers of the report model."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from air.report.json_report import from_dict, render_json, to_dict
from air.report.markdown import render_markdown
from air.results import (
    Finding,
    OperatorCoverage,
    Report,
    RowResult,
)
from helpers.reports import REPORT_VALIDATOR, SNIPPET_WITH_MARKUP, sample_report, sample_row
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator


@pytest.fixture
def report() -> Report:
    return sample_report()


@pytest.fixture
def markdown(report: Report) -> str:
    return render_markdown(report)


# --- JSON -------------------------------------------------------------------------


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(REPORT_VALIDATOR.schema)


def test_json_validates_against_the_schema(report: Report) -> None:
    REPORT_VALIDATOR.validate(json.loads(render_json(report)))


def test_json_round_trips_to_an_equal_model(report: Report) -> None:
    assert from_dict(to_dict(report)) == report
    assert from_dict(json.loads(render_json(report))) == report


def test_json_is_byte_identical_across_renders(report: Report) -> None:
    first = render_json(report)
    assert render_json(sample_report()) == first
    assert render_json(from_dict(json.loads(first))) == first


def test_json_layout(report: Report) -> None:
    text = render_json(report)
    data = json.loads(text)
    assert text.endswith("}\n")
    assert text.startswith('{\n  "backend": {')
    assert data["tool"] == {"name": "air", "version": "0.1.0"}
    assert data["readiness"] == 48.63157894736842
    assert data["index"]["skipped"] == [{"reason": "binary", "count": 2}, {"reason": "too-large", "count": 1}]
    assert data["rows"][0]["evidence"][0] == {
        "path": "csrc/register.cpp",
        "line": 12,
        "snippet": SNIPPET_WITH_MARKUP,
        "trust": "source",
        "evidence": "reg",
    }


def _set(path: tuple[str | int, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(data: dict[str, Any]) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


@pytest.mark.parametrize(
    "mutate",
    [
        _set(("rows", 0, "points"), 3),
        _set(("rows", 0, "id"), "Bad_Id"),
        _set(("rows", 0, "item"), "1.a"),
        _set(("rows", 0, "priority"), 4),
        _set(("rows", 0, "outcome"), "passed"),
        _set(("rows", 0, "points"), None),
        _set(("rows", 0, "evidence", 0, "trust"), "guessed"),
        _set(("rows", 0, "evidence", 0, "line"), 0),
        _set(("rows", 0, "extra"), True),
        _set(("sections", 0, "tier"), 4),
        _set(("sections", 0, "percent"), 100.5),
        _set(("sections", 0, "max_pts"), -1),
        _set(("readiness",), 101),
        _set(("coverage",), -0.1),
        _set(("schema_version",), 1),
        _set(("quick_reference", 1, "points"), 2),
        _set(("quick_reference", 0, "status"), "ticked"),
    ],
    ids=[
        "points-3",
        "bad-id",
        "bad-item",
        "priority-4",
        "bad-outcome",
        "scored-without-points",
        "bad-trust",
        "line-0",
        "extra-key",
        "tier-4",
        "percent-over-100",
        "negative-max",
        "readiness-101",
        "negative-coverage",
        "numeric-schema-version",
        "not-applicable-with-points",
        "unknown-usage",
    ],
)
def test_invalid_reports_fail_validation(report: Report, mutate: Callable[[dict[str, Any]], None]) -> None:
    data = copy.deepcopy(to_dict(report))
    mutate(data)
    assert not REPORT_VALIDATOR.is_valid(data)


# --- Markdown ---------------------------------------------------------------------

PARTS = [
    "# Flux readiness report: flux_widget",
    "## Executive summary",
    "## Section scores",
    "### Tier 1",
    "### Tier 2",
    "### Tier 3",
    "## Upstream candidates",
    "## Source discovery and path signals",
    "## Checklist",
    "## Registration quick reference",
    "## Sources",
]


def _lines(markdown: str) -> list[str]:
    return markdown.splitlines()


def _cells(line: str) -> list[str]:
    """Split a table line on its unescaped pipes."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]


def _table_after(markdown: str, heading: str) -> list[list[str]]:
    """The body rows of the first table under `heading`, split into cells."""
    lines = _lines(markdown)[_lines(markdown).index(heading) :]
    start = next(number for number, line in enumerate(lines) if line.startswith("|"))
    table = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        table.append(_cells(line))
    return table


def test_markdown_parts_come_in_order(markdown: str) -> None:
    lines = _lines(markdown)
    positions = [lines.index(part) for part in PARTS]
    assert positions == sorted(positions)
    assert markdown.endswith("\n") and not markdown.endswith("\n\n")


def test_markdown_metadata(markdown: str) -> None:
    metadata = dict(_table_after(markdown, PARTS[0]))
    assert metadata["Backend version"] == "unknown"
    assert metadata["Widget key"] == "WidgetKey"
    assert metadata["Flux version targeted"] == "not pinned"
    assert metadata["Source"] == "git `https://example.org/flux_widget.git` (commit `abc123`)"
    assert metadata["Tool"] == "air 0.1.0"
    assert metadata["Rule pack"] == "flux-1.x 1.0.0 (`0123456789ab`)"


def test_markdown_summary(markdown: str) -> None:
    assert "**Readiness: 48.6 %**" in markdown
    assert "Evidence coverage: 87.5 % of the applicable weight was decided (1 row unknown)" in markdown
    assert "- Compiler: 100.0 %" in markdown
    assert _table_after(markdown, "**Fix first**") == [
        ["1", "1.2.9", "Row 1.2.9", "0", "+17.39 pp", "Register the key."],
        ["2", "1.1.1", "Row 1.1.1", "1", "+4.35 pp", "Implement row 1.1.1."],
    ]


def test_markdown_fix_first_is_capped_and_shows_the_first_sentence_of_a_remediation() -> None:
    fixes = tuple(sample_row(f"1.{number}", 1, "scored", 0, remediation="Do it. Then more.") for number in range(1, 13))
    markdown = render_markdown(replace(sample_report(), rows=fixes))
    table = _table_after(markdown, "**Fix first**")
    assert [cells[1] for cells in table] == [f"1.{number}" for number in range(1, 11)]
    assert {cells[5] for cells in table} == {"Do it."}
    assert "… and 2 more rows short of full marks, +34.78 pp in all." in markdown


def test_markdown_lists_the_runtime_checks_of_unknown_rows() -> None:
    rows = (
        sample_row("1.3", 1, "unknown", None, runtime_check="python -c 'probe()'"),
        sample_row("1.5", 1, "unknown", None),
    )
    markdown = render_markdown(replace(sample_report(), rows=rows))
    assert (
        "**Still to prove at runtime**\n\n- 1.3 Row 1.3: `python -c 'probe()'`\n\n`air check --runtime` runs"
        in markdown
    )
    assert "1.5 Row 1.5:" not in markdown


def test_markdown_section_scores(markdown: str) -> None:
    assert _table_after(markdown, "### Tier 1") == [["1", "Device \\| Management", "7.7", "4.7", "60.9"]]
    assert _table_after(markdown, "### Tier 3") == [["4", "Autoload", "—", "—", "N/A"]]
    assert "Readiness: 48.6 %" in _lines(markdown)


def test_markdown_rows_sorted_by_priority_then_item(markdown: str) -> None:
    table = _table_after(markdown, "### 1. Device \\| Management (Tier 1)")
    assert [row[0] for row in table] == ["1.2.9", "1.2.10", "1.3", "1.1.1", "1.4"]


def test_markdown_row_cells_and_notes(markdown: str) -> None:
    rows = {row[0]: row for row in _table_after(markdown, "### 1. Device \\| Management (Tier 1)")}
    assert rows["1.2.10"][2:] == ["all", "P1", "2"]
    assert rows["1.4"][2] == "external, fork"
    assert rows["1.3"][4] == "unknown"
    notes = {line.split("**")[1]: line for line in _lines(markdown) if line.startswith("- **")}
    assert notes["1.2.9"] == "- **1.2.9** *No registration found.* — Fix: Register the key."
    assert notes["1.1.1"].endswith(
        "`assert device.count() > 0` (tests) — *Only tests use it.* — Fix: Implement row 1.1.1."
    )
    assert notes["1.4"].count("csrc/register.cpp:12") == 4
    assert "<details><summary>1 more finding</summary>`csrc/register.cpp:12`" in notes["1.4"]
    assert "Fix:" not in notes["1.2.10"] + notes["1.4"]
    na_row = _table_after(markdown, "### 4. Autoload (Tier 3)")[0]
    assert na_row[4] == "N/A"
    widest = max(len(line) for line in _lines(markdown) if line.startswith("| "))
    assert widest < 200  # tables hold scores; the evidence is in the notes below them


def test_markdown_escapes_pipes_and_backticks_in_snippets(markdown: str) -> None:
    assert "`csrc/register.cpp:12` ``REGISTER(Key, a \\| b, `tick`)``" in markdown


def test_markdown_tables_keep_their_shape(markdown: str) -> None:
    """Every line of a table splits into as many cells as its header, so no cell leaks a pipe."""
    tables: list[list[str]] = [[]]
    for line in _lines(markdown):
        if line.startswith("|"):
            tables[-1].append(line)
        elif tables[-1]:
            tables.append([])
    for table in filter(None, tables):
        assert {len(_cells(line)) for line in table} == {len(_cells(table[0]))}


def test_markdown_truncates_long_snippets() -> None:
    finding = Finding("a.py", 1, "x" * 200, "source")
    row = sample_row("1.1.1", 1, "scored", 2, evidence=(finding,))
    markdown = render_markdown(replace(sample_report(), rows=(row,)))
    assert "`" + "x" * 79 + "…`" in markdown


def test_markdown_quick_reference_and_sources(markdown: str) -> None:
    table = _table_after(markdown, "## Registration quick reference")
    assert table == [
        ["Register the key", "✅ used", "`csrc/register.cpp:12`", "`row-1-2-10` ✅ 2"],
        ["Autoload entry point", "N/A", "—", "`row-4-1` N/A"],
    ]
    assert "- [Backend guide](https://example.org/guide)" in markdown


def test_markdown_source_discovery(markdown: str) -> None:
    assert "- Indexed files: 10 (product 7, tests 2, docs 1), 2048 bytes" in markdown
    assert "- Skipped files: binary: 2, too-large: 1" in markdown
    assert "- Integration path: **Fork** (widget key: WidgetKey)" in markdown
    assert _table_after(markdown, "## Source discovery and path signals")[0] == [
        "enum-value",
        "A new dispatch key value",
        "`csrc/register.cpp:12`",
    ]


def test_markdown_names_the_core_operators_and_the_catalog_in_the_framework_terms(report: Report) -> None:
    operators = OperatorCoverage("1.2.0", "", 3, (("block", 3),), 1, 2, ("mul",), (), ())
    markdown = render_markdown(replace(report, operators=operators))
    assert "- Core flux operators covered: 1 of 2 (catalog of Flux 1.2.0)" in markdown
    assert "Core flux operators without a kernel: `mul`" in markdown


def test_markdown_says_how_many_core_operators_the_list_leaves_out(report: Report) -> None:
    operators = OperatorCoverage(
        "1.2.0", "the release the backend targets (1.2)", 3, (("block", 3),), 1, 5, ("mul", "div"), (), ()
    )
    markdown = render_markdown(replace(report, operators=operators))
    assert "Core flux operators without a kernel: `mul`, `div` and 2 more" in markdown
    assert "(catalog of Flux 1.2.0: the release the backend targets (1.2))" in markdown


def test_markdown_is_deterministic(report: Report) -> None:
    assert render_markdown(report) == render_markdown(from_dict(json.loads(render_json(report))))


# --- round trip over generated rows -------------------------------------------------

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
_findings = st.builds(
    Finding,
    path=_text,
    line=st.integers(min_value=1, max_value=10**6),
    snippet=_text,
    trust=st.sampled_from(["verified", "source", "tests", "declared"]),
    evidence=_text,
)
_outcomes = st.one_of(
    st.tuples(st.just("scored"), st.integers(min_value=0, max_value=2)),
    st.tuples(st.just("not_applicable"), st.none()),
    st.tuples(st.just("unknown"), st.sampled_from([None, 0])),
)


@st.composite
def _rows(draw: st.DrawFn) -> RowResult:
    outcome, points = draw(_outcomes)
    return draw(
        st.builds(
            RowResult,
            id=st.from_regex(r"[a-z0-9]+(-[a-z0-9]+)*", fullmatch=True),
            item=st.from_regex(r"[0-9]+(\.[0-9]+)*", fullmatch=True),
            section=_text,
            title=_text,
            priority=st.integers(min_value=1, max_value=3),
            paths=st.lists(_text, max_size=3).map(tuple),
            outcome=st.just(outcome),
            points=st.just(points),
            reason=_text,
            evidence=st.lists(_findings, max_size=4).map(tuple),
            remediation=_text,
            docs=st.lists(_text, max_size=2).map(tuple),
        )
    )


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(_rows(), max_size=5).map(tuple))
def test_generated_rows_round_trip_through_json(rows: tuple[RowResult, ...]) -> None:
    report = replace(sample_report(), rows=rows)
    data = json.loads(json.dumps(to_dict(report), ensure_ascii=False))
    REPORT_VALIDATOR.validate(data)
    assert from_dict(data) == report
    render_markdown(report)
