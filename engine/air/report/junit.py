"""The JUnit XML report, for CI test dashboards: a test suite per section, a test case per row.
A row at full marks passes; one at 0 or 1 fails, with its reason; one that is N/A or unknown
is skipped, with why."""

from __future__ import annotations

from xml.etree import ElementTree

from air.printable import printable
from air.results import Report, RowResult
from air.scoring.formula import MAX_POINTS


def render_junit(report: Report) -> str:
    suites = ElementTree.Element(
        "testsuites", name=_text(f"air {report.pack.id} {report.pack.version}: {report.backend.name}")
    )
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for section in sorted(report.sections, key=lambda section: section.number):
        rows = [row for row in report.rows if row.section == section.id]
        suite = ElementTree.SubElement(suites, "testsuite", name=_text(f"{section.number} {section.title}"))
        counts = {"tests": len(rows), "failures": 0, "skipped": 0}
        for row in rows:
            verdict = _case(suite, report.pack.id, row)
            if verdict:
                counts[verdict] += 1
        suite.attrib.update({key: str(value) for key, value in counts.items()})
        for key, value in counts.items():
            totals[key] += value
    suites.attrib.update({key: str(value) for key, value in totals.items()})
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"


def _case(suite: ElementTree.Element, pack_id: str, row: RowResult) -> str | None:
    """Add the row's test case to `suite`; its verdict when it did not pass ("failures", "skipped")."""
    case = ElementTree.SubElement(
        suite, "testcase", classname=_text(f"{pack_id}.{row.section}"), name=_text(f"{row.item} {row.title} [{row.id}]")
    )
    reason = _text(row.reason)
    if row.outcome == "not_applicable":
        ElementTree.SubElement(case, "skipped", message=f"N/A: {reason}")
        return "skipped"
    if row.outcome == "unknown" or row.points is None:
        ElementTree.SubElement(case, "skipped", message=f"unknown: {reason}")
        return "skipped"
    if row.points < MAX_POINTS:
        failure = ElementTree.SubElement(case, "failure", message=f"{row.points} of {MAX_POINTS} points: {reason}")
        failure.text = _text(f"Remediation: {row.remediation}")
        return "failures"
    return None


def _text(text: str) -> str:
    return printable(" ".join(text.split()))
