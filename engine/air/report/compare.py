"""`air compare A.json B.json ...`: backends side by side, the compatibility card across
platforms. Each backend's readiness and evidence coverage, every section's percentage, and
the rows on which they do not all agree."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from air.printable import printable
from air.report.diff import score_label, table_cell
from air.results import Report, RowResult, item_key


@dataclass(frozen=True)
class Comparison:
    backends: tuple[str, ...]  # each report's backend, with its version or commit
    readiness: tuple[float, ...]
    coverage: tuple[float, ...]
    sections: tuple[tuple[str, tuple[float | None, ...]], ...]  # "§N Title", each backend's percent
    rows: tuple[tuple[str, str, str, tuple[str, ...]], ...]  # (item, id, title, each backend's score)


def compare_reports(reports: Sequence[Report]) -> Comparison:
    sections: dict[str, dict[int, float | None]] = {}
    order: dict[str, int] = {}
    for index, report in enumerate(reports):
        for section in report.sections:
            label = f"§{section.number} {section.title}"
            order[label] = section.number
            sections.setdefault(label, {})[index] = section.percent
    rows: dict[str, dict[int, RowResult]] = {}
    for index, report in enumerate(reports):
        for row in report.rows:
            rows.setdefault(row.id, {})[index] = row
    differing = []
    for row_id, by_report in rows.items():
        scores = tuple(score_label(by_report.get(index)) for index in range(len(reports)))
        if len(set(scores)) > 1:
            shown = next(iter(by_report.values()))
            differing.append((shown.item, row_id, shown.title, scores))
    differing.sort(key=lambda entry: item_key(entry[0]))
    return Comparison(
        tuple(_name(report) for report in reports),
        tuple(report.readiness for report in reports),
        tuple(report.coverage for report in reports),
        tuple(
            (label, tuple(values.get(index) for index in range(len(reports))))
            for label, values in sorted(sections.items(), key=lambda item: order[item[0]])
        ),
        tuple(differing),
    )


def render_comparison_markdown(comparison: Comparison) -> str:
    names = [table_cell(name) for name in comparison.backends]
    header = "| | " + " | ".join(names) + " |"
    rule = "| --- |" + " --- |" * len(names)
    lines = ["# air compare", "", header, rule]
    lines.append("| **Readiness** | " + " | ".join(f"**{value:.1f} %**" for value in comparison.readiness) + " |")
    lines.append("| Evidence coverage | " + " | ".join(f"{value:.1f} %" for value in comparison.coverage) + " |")
    lines += [
        f"| {table_cell(label)} | " + " | ".join("N/A" if value is None else f"{value:.1f}" for value in values) + " |"
        for label, values in comparison.sections
    ]
    lines += ["", f"## Rows that differ ({len(comparison.rows)})", ""]
    if comparison.rows:
        lines += ["| Item | Row | " + " | ".join(names) + " |", "| --- | --- |" + " --- |" * len(names)]
        lines += [
            f"| {item} | {table_cell(title)} (`{row_id}`) | " + " | ".join(scores) + " |"
            for item, row_id, title, scores in comparison.rows
        ]
    else:
        lines.append("Every row scores the same.")
    return "\n".join(lines) + "\n"


def render_comparison_html(comparison: Comparison) -> str:
    """The comparison as one self-contained page: the same tables as the Markdown one."""
    names = "".join(f"<th>{_e(name)}</th>" for name in comparison.backends)
    summary = [
        "<tr><th>Readiness</th>"
        + "".join(f"<td><b>{value:.1f} %</b></td>" for value in comparison.readiness)
        + "</tr>",
        "<tr><th>Evidence coverage</th>"
        + "".join(f"<td>{value:.1f} %</td>" for value in comparison.coverage)
        + "</tr>",
        *(
            f"<tr><th>{_e(label)}</th>"
            + "".join(f"<td>{'N/A' if value is None else f'{value:.1f}'}</td>" for value in values)
            + "</tr>"
            for label, values in comparison.sections
        ),
    ]
    rows = "".join(
        f"<tr><td>{_e(item)}</td><td>{_e(title)} <code>{_e(row_id)}</code></td>"
        + "".join(f"<td>{_e(score)}</td>" for score in scores)
        + "</tr>"
        for item, row_id, title, scores in comparison.rows
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>air compare</title><style>'
        "body{font:14px system-ui,sans-serif;margin:24px}table{border-collapse:collapse;margin-bottom:24px}"
        "th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left}"
        "</style></head><body><h1>air compare</h1>"
        f'<table id="summary"><thead><tr><th></th>{names}</tr></thead><tbody>{"".join(summary)}</tbody></table>'
        f"<h2>Rows that differ ({len(comparison.rows)})</h2>"
        f'<table id="differing"><thead><tr><th>Item</th><th>Row</th>{names}</tr></thead><tbody>{rows}</tbody></table>'
        "</body></html>\n"
    )


def _e(text: str) -> str:
    return escape(printable(text), quote=True)


def render_comparison_json(comparison: Comparison) -> str:
    data: dict[str, Any] = {
        "backends": [
            {"name": name, "readiness": readiness, "coverage": coverage}
            for name, readiness, coverage in zip(comparison.backends, comparison.readiness, comparison.coverage)
        ],
        "sections": [{"section": label, "percent": list(values)} for label, values in comparison.sections],
        "rows": [
            {"item": item, "id": row_id, "title": title, "scores": list(scores)}
            for item, row_id, title, scores in comparison.rows
        ],
    }
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _name(report: Report) -> str:
    backend = report.backend
    detail = backend.version or (backend.source.commit or "")[:12]
    return f"{backend.name} {detail}".strip()
