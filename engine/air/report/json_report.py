"""The JSON report: a plain mapping of the report model, and its inverse.

The output follows `schemas/report.schema.json`. Rendering is deterministic (sorted keys,
fixed indentation) and keeps full float precision.
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from typing import Any

from air.report.model import (
    Backend,
    Finding,
    IndexStats,
    IntegrationPath,
    Link,
    PackInfo,
    PathLabel,
    PathSignal,
    QuickReferenceEntry,
    Report,
    RowResult,
    SectionResult,
    Source,
)

TOOL_NAME = "air"


def render_json(report: Report) -> str:
    """Render the report as indented JSON with sorted keys and a trailing newline."""
    text = json.dumps(to_dict(report), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return text + "\n"


def to_dict(report: Report) -> dict[str, Any]:
    """Convert the report to JSON-ready data (dicts, lists, strings, numbers, None)."""
    return {
        "schema_version": report.schema_version,
        "tool": {"name": TOOL_NAME, "version": report.tool_version},
        "date": report.date,
        "pack": _plain(report.pack),
        "backend": _plain(report.backend),
        "integration_path": _plain(report.integration_path),
        "readiness": report.readiness,
        "coverage": report.coverage,
        "sections": _plain(report.sections),
        "rows": _plain(report.rows),
        "quick_reference": _plain(report.quick_reference),
        "sources": _plain(report.sources),
        "index": _index_to_dict(report.index),
    }


def from_dict(data: dict[str, Any]) -> Report:
    """Rebuild the report model from the data `to_dict` produces."""
    return Report(
        schema_version=data["schema_version"],
        tool_version=data["tool"]["version"],
        date=data["date"],
        pack=PackInfo(**{**data["pack"], "paths": tuple(PathLabel(**item) for item in data["pack"].get("paths", []))}),
        backend=_backend(data["backend"]),
        integration_path=_integration_path(data["integration_path"]),
        readiness=data["readiness"],
        coverage=data["coverage"],
        sections=tuple(SectionResult(**item) for item in data["sections"]),
        rows=tuple(_row(item) for item in data["rows"]),
        quick_reference=tuple(QuickReferenceEntry(**item) for item in data["quick_reference"]),
        sources=tuple(Link(**item) for item in data["sources"]),
        index=_index(data["index"]),
    )


def _plain(value: Any) -> Any:
    """Dataclasses become dicts keyed by field name and tuples become lists, recursively."""
    if is_dataclass(value):
        return {field.name: _plain(getattr(value, field.name)) for field in fields(value)}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def _index_to_dict(index: IndexStats) -> dict[str, Any]:
    stats = _plain(index)
    stats["skipped"] = [{"reason": reason, "count": count} for reason, count in index.skipped]
    return stats


def _findings(items: list[dict[str, Any]]) -> tuple[Finding, ...]:
    return tuple(Finding(**item) for item in items)


def _backend(data: dict[str, Any]) -> Backend:
    return Backend(**{**data, "source": Source(**data["source"])})


def _integration_path(data: dict[str, Any]) -> IntegrationPath:
    signals = tuple(
        PathSignal(name=item["name"], description=item["description"], evidence=_findings(item["evidence"]))
        for item in data["signals"]
    )
    return IntegrationPath(**{**data, "applies": tuple(data["applies"]), "signals": signals})


def _row(data: dict[str, Any]) -> RowResult:
    return RowResult(
        **{
            **data,
            "paths": tuple(data["paths"]),
            "evidence": _findings(data["evidence"]),
            "docs": tuple(data["docs"]),
        }
    )


def _index(data: dict[str, Any]) -> IndexStats:
    skipped = tuple((item["reason"], item["count"]) for item in data["skipped"])
    return IndexStats(**{**data, "skipped": skipped})
