"""`air explain ROW` and `air rules`: what a pack's rows check, why they matter, how they are
detected, how to fix them and where the docs are, all read from the pack, as text, Markdown
or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from air.pack.load import Pack, Row
from air.report.markdown import markdown_text

PRIORITIES = {1: "must have", 2: "should have", 3: "nice to have"}


def find_row(pack: Pack, wanted: str) -> Row | None:
    """The row whose id or checklist item is `wanted` (an id the row had before, too)."""
    wanted = pack.redirects.get(wanted, wanted)
    return next((row for row in pack.rows if wanted in (row.id, row.item)), None)


def select_rows(
    pack: Pack, section: str | None = None, priority: int | None = None, path: str | None = None
) -> list[Row]:
    """The pack's rows in one section (by id or number), of one priority, applying on one path."""
    numbers = {spec.id: str(spec.number) for spec in pack.framework.sections}
    return [
        row
        for row in pack.rows
        if (section is None or section in (row.section, numbers.get(row.section)))
        and (priority is None or row.priority == priority)
        and (path is None or not row.paths or path in row.paths)
    ]


def explanation(pack: Pack, row: Row) -> dict[str, Any]:
    section = next(spec for spec in pack.framework.sections if spec.id == row.section)
    tiers = sorted({spec.tier for spec in pack.framework.sections})
    return {
        "id": row.id,
        "item": row.item,
        "title": row.title,
        "pack": f"{pack.id} {pack.version}",
        "section": {"id": section.id, "number": section.number, "title": section.title, "tier": section.tier},
        "priority": row.priority,
        "paths": list(row.paths),
        "framework_versions": row.framework_versions,
        "why": (
            f"Priority {row.priority} ({PRIORITIES.get(row.priority, 'weighted')}): weight 1/{row.priority} among "
            f"the rows of §{section.number} {section.title}, a tier-{section.tier} section; readiness averages "
            f"the sections' percentages weighted 1/tier ({', '.join(f'tier {tier}: 1/{tier}' for tier in tiers)})."
        ),
        "detection": [
            {"evidence": name, "describe": clause.describe or clause.kind, "kind": clause.kind, "scope": clause.scope}
            for name, clause in row.evidence.items()
        ],
        "scoring": {str(points): text for points, text in sorted(row.score_text.items(), reverse=True)},
        "deprecated": [
            f"{d.evidence}: deprecated since {pack.framework.name} {d.since} (earns at most 1 from then on); use {d.instead}"
            for d in row.deprecated
        ],
        "requires": row.requires_text,
        "runtime_check": row.runtime_command or "",
        "probes": _probes_of(pack, row),
        "remediation": " ".join(row.remediation.split()),
        "docs": list(row.docs),
    }


def _probes_of(pack: Pack, row: Row) -> list[str]:
    """The pack's probes that decide `row`, directly or by a part of what they measure."""
    probes = pack.probes.probes if pack.probes else ()
    return [
        f"{probe.id}: {probe.title}"
        for probe in probes
        if row.id in probe.rows or any(row.id in measure.rows for measure in probe.measures)
    ]


def render_explanation(data: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    markdown = fmt == "markdown"
    shown = markdown_text if markdown else str
    heading = f"{data['item']} {shown(data['title'])} ({data['id']})"
    section = data["section"]
    lines = [f"# {heading}" if markdown else heading, ""]
    facts = [
        ("Pack", data["pack"]),
        ("Section", f"§{section['number']} {section['title']} (tier {section['tier']})"),
        ("Priority", str(data["priority"])),
        ("Paths", ", ".join(data["paths"]) or "every path"),
        ("Releases", data["framework_versions"] or "every release the pack supports"),
    ]
    lines += [f"- **{name}:** {shown(value)}" if markdown else f"{name + ':':<10}{value}" for name, value in facts]
    parts: list[tuple[str, Sequence[str]]] = [
        ("Why it matters", [data["why"]]),
        ("How it is detected", [f"{item['evidence']}: {item['describe']}" for item in data["detection"]]),
        ("How it scores", [f"{points}: {text}" for points, text in data["scoring"].items()]),
        ("Deprecated evidence", data["deprecated"]),
        ("Needs first", [data["requires"]] if data["requires"] else []),
        ("Runtime check", [data["runtime_check"]] if data["runtime_check"] else []),
        ("Decided by the probes of `air check --runtime`", data["probes"]),
        ("How to fix it", [data["remediation"]]),
        ("Docs", data["docs"]),
    ]
    for title, entries in parts:
        if entries:
            lines += ["", f"## {title}" if markdown else f"{title}:"]
            as_text = (lambda link: f"<{link}>") if title == "Docs" else shown
            lines += [f"- {as_text(entry)}" if markdown else f"  {entry}" for entry in entries]
    return "\n".join(lines) + "\n"


def render_rules(rows: Sequence[Row], fmt: str) -> str:
    if fmt == "json":
        listed = [
            {"item": row.item, "id": row.id, "priority": row.priority, "paths": list(row.paths), "title": row.title}
            for row in rows
        ]
        return json.dumps(listed, indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        lines = ["| Item | Id | P | Paths | Title |", "| --- | --- | --- | --- | --- |"]
        lines += [
            f"| {row.item} | `{row.id}` | P{row.priority} | {_paths(row)} | {markdown_text(row.title)} |"
            for row in rows
        ]
        return "\n".join(lines) + "\n"
    return "".join(f"{row.item:<8} P{row.priority}  {row.id:<40} {_paths(row):<14} {row.title}\n" for row in rows)


def _paths(row: Row) -> str:
    return ", ".join(row.paths) or "all"


def render_docs(pack: Pack) -> dict[str, str]:
    """The pack's reference pages: `index.md`, and `<row id>.md` for each row."""
    pages = {f"{row.id}.md": render_explanation(explanation(pack, row), "markdown") for row in pack.rows}
    lines = [
        f"# {pack.id} {pack.version}: rules",
        "",
        f"{len(pack.rows)} rows, generated by `air docs {pack.id}` from the pack's data.",
    ]
    for section in sorted(pack.framework.sections, key=lambda section: section.number):
        rows = [row for row in pack.rows if row.section == section.id]
        if not rows:
            continue
        lines += ["", f"## {section.number}. {section.title} (tier {section.tier})", ""]
        lines += [
            f"- [{row.item} {markdown_text(row.title)}]({row.id}.md) (P{row.priority}, {_paths(row)})" for row in rows
        ]
    pages["index.md"] = "\n".join(lines) + "\n"
    return pages
