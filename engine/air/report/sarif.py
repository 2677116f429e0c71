"""The SARIF 2.1.0 report, for code scanning (GitHub's among others).

One result per row that scores below full marks: at its first finding in the backend's tree,
or, for a gap that has none (nothing was found), at the backend's manifest, the build file
that names its distribution, line 1. A row with neither is left out of the results and
counted in the run's properties. `ruleId` is the row's stable id; its rule carries the
checklist item, the remediation and the first docs link as `helpUri`.
"""

from __future__ import annotations

import json
from typing import Any

from air.printable import printable
from air.results import Finding, Report, RowResult
from air.scoring.formula import MAX_POINTS

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RUNTIME_TRUST = ("verified", "refuted")  # findings of a probe: they cite the pack's files, not the tree's


def render_sarif(report: Report) -> str:
    gaps = [
        row for row in report.rows if row.outcome == "scored" and row.points is not None and row.points < MAX_POINTS
    ]
    manifest = report.backend.metadata_file or report.backend.pin_file
    located = [(row, _location(row, manifest, report.backend.source.subdir)) for row in gaps]
    results = [(row, location) for row, location in located if location is not None]
    rules = [_rule(row) for row, _location in results]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "air",
                        "version": report.tool_version,
                        "rules": rules,
                    }
                },
                "results": [_result(row, index, location) for index, (row, location) in enumerate(results)],
                "properties": {
                    "pack": f"{report.pack.id} {report.pack.version}",
                    "backend": printable(report.backend.name),
                    "readiness": round(report.readiness, 2),
                    "coverage": round(report.coverage, 2),
                    "rowsWithoutLocation": len(located) - len(results),
                },
            }
        ],
    }
    return json.dumps(log, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _location(row: RowResult, manifest: str | None, subdir: str | None) -> dict[str, Any] | None:
    """Where the row's result points: its first finding in the tree, else line 1 of the manifest."""
    finding = next((f for f in row.evidence if f.trust not in RUNTIME_TRUST), None)
    if finding is None and manifest is None:
        return None
    path, line = (finding.path, finding.line) if finding else (manifest or "", 1)
    uri = f"{subdir.strip('/')}/{path}" if subdir else path
    return {"physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": line}}}


def _rule(row: RowResult) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "id": row.id,
        "name": "".join(part.capitalize() for part in row.id.split("-")),
        "shortDescription": {"text": f"{row.item} {printable(_one_line(row.title))}"},
        "help": {"text": printable(_one_line(row.remediation)) or "See the row's documentation."},
        "defaultConfiguration": {"level": _level(row)},
        "properties": {"item": row.item, "section": row.section, "priority": row.priority},
    }
    if row.docs:
        rule["helpUri"] = row.docs[0]
    return rule


def _result(row: RowResult, index: int, location: dict[str, Any]) -> dict[str, Any]:
    cited = next((f for f in row.evidence if f.trust not in RUNTIME_TRUST), None)
    return {
        "ruleId": row.id,
        "ruleIndex": index,
        "level": _level(row),
        "message": {"text": _message(row, cited)},
        "locations": [location],
        "properties": {"points": row.points, "maxPoints": MAX_POINTS},
    }


def _message(row: RowResult, cited: Finding | None) -> str:
    where = "" if cited else " (nothing in the tree shows it; anchored to the manifest)"
    reason = printable(_one_line(row.reason)) or "no evidence"
    return f"{row.item} {printable(_one_line(row.title))}: {row.points} of {MAX_POINTS} points{where}. {reason}"


def _level(row: RowResult) -> str:
    if row.priority == 1 and row.points == 0:
        return "error"
    return "warning" if row.priority <= 2 else "note"


def _one_line(text: str) -> str:
    return " ".join(text.split())
