"""The JSON schema every report must satisfy, and one fixed report to render."""

from __future__ import annotations

import json
from typing import Any

from air.results import (
    Backend,
    Finding,
    IndexStats,
    IntegrationPath,
    Link,
    PackInfo,
    PathSignal,
    QuickReferenceEntry,
    Report,
    RowResult,
    SectionResult,
    Source,
    Terms,
)
from jsonschema import Draft202012Validator

from helpers.paths import REPO_ROOT

REPORT_SCHEMA = REPO_ROOT / "schemas" / "report.schema.json"
REPORT_VALIDATOR = Draft202012Validator(json.loads(REPORT_SCHEMA.read_text(encoding="utf-8")))


SNIPPET_WITH_MARKUP = "REGISTER(Key, a | b, `tick`)"
REPOSITORY = "https://example.org/flux_widget.git"


def sample_row(item: str, priority: int, outcome: str, points: int | None, **overrides: Any) -> RowResult:
    fields = {
        "id": "row-" + item.replace(".", "-"),
        "item": item,
        "section": "device",
        "title": f"Row {item}",
        "priority": priority,
        "paths": (),
        "outcome": outcome,
        "points": points,
        "reason": "",
        "evidence": (),
        "remediation": f"Implement row {item}.",
        "docs": (),
    }
    return RowResult(**{**fields, **overrides})


def sample_report() -> Report:
    """One fixed result set: every renderer's tests and golden files are made from it."""
    source_finding = Finding("csrc/register.cpp", 12, SNIPPET_WITH_MARKUP, "source", "reg")
    test_finding = Finding("tests/test_device.py", 3, "assert device.count() > 0", "tests", "probe")
    rows = (
        sample_row("1.2.10", 1, "scored", 2, evidence=(source_finding,)),
        sample_row("1.2.9", 1, "scored", 0, reason="No registration found.", remediation="Register the key."),
        sample_row("1.1.1", 2, "scored", 1, evidence=(source_finding, test_finding), reason="Only tests use it."),
        sample_row("1.3", 1, "unknown", None, reason="Decided only at run time."),
        sample_row(
            "1.4",
            3,
            "scored",
            2,
            paths=("external", "fork"),
            evidence=(source_finding,) * 4,
            docs=("https://example.org/docs",),
        ),
        sample_row("12.1", 1, "scored", 2, section="compile", evidence=(test_finding,)),
        sample_row("4.1", 1, "not_applicable", None, section="autoload", paths=("external",), reason="Fork path only."),
    )
    return Report(
        tool_version="0.1.0",
        date="2026-08-01",
        pack=PackInfo(
            "flux-1.x",
            "1.0.0",
            "sha256:" + "0123456789abcdef" * 4,
            "flux",
            "Flux",
            terms=Terms("widget key", "core flux operators"),
        ),
        backend=Backend("flux_widget", None, Source("git", REPOSITORY, "abc123"), None),
        integration_path=IntegrationPath(
            id="fork",
            title="Fork",
            key="WidgetKey",
            applies=("fork",),
            note="Detected from the dispatch key enum.",
            signals=(PathSignal("enum-value", "A new dispatch key value", (source_finding,)),),
        ),
        readiness=48.63157894736842,
        coverage=87.5,
        sections=(
            SectionResult("compile", 12, "Compiler", 2, 2.0, 2.0, 100.0, 0.0),
            SectionResult("device", 1, "Device | Management", 1, 23 / 3, 14 / 3, 1400 / 23, 1.0),
            SectionResult("autoload", 4, "Autoload", 3, 0.0, 0.0, None, 0.0),
        ),
        rows=rows,
        quick_reference=(
            QuickReferenceEntry("Register the key", "row-1-2-10", "used", "csrc/register.cpp:12", 2, "scored"),
            QuickReferenceEntry("Autoload entry point", "row-4-1", "not_applicable", "", None, "not_applicable"),
        ),
        sources=(Link("Backend guide", "https://example.org/guide"),),
        index=IndexStats(10, 7, 2, 1, 2048, skipped=(("binary", 2), ("too-large", 1))),
    )
