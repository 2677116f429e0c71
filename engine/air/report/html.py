"""The HTML report: one self-contained file, no external assets, for a browser or a CI page.

It holds the report's metadata, the readiness score and evidence coverage, an inline SVG chart
of the sections grouped by tier, the fix-first list, every row with its evidence (linked as
`EvidenceLinks` says) and filters for failing, unknown, N/A and verified rows (also chosen
by the page's address: `#filter=failing`), and the op × dtype matrix when runtime probes ran.
Every string from the report is escaped.
"""

from __future__ import annotations

from html import escape

from air.printable import printable
from air.report.diff import score_label
from air.report.links import NO_LINKS, EvidenceLinks
from air.results import Finding, ProbeResult, Report, RowResult, SectionResult, item_key
from air.scoring.fixes import fix_first, to_prove

MAX_FIXES = 10
BAR_WIDTH = 420  # px of a 100 % bar in the chart
BAR_HEIGHT, BAR_GAP, TIER_GAP, LABEL_WIDTH = 18, 6, 26, 300
FILTERS = (("all", "All"), ("failing", "Failing"), ("unknown", "Unknown"), ("na", "N/A"), ("verified", "Verified"))
OUTCOME_CLASS = {"pass": "ok", "fallback": "warn", "skipped": "off", "not run": "off"}

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 12px}h2{font-size:18px;margin:28px 0 10px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}dt{color:#57606a}dd{margin:0}
.cards{display:flex;gap:16px;margin:18px 0}.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:12px 18px}
.card .value{font-size:30px;font-weight:700}.low{color:#c62828}.mid{color:#b26a00}.high{color:#1a7f37}
table{border-collapse:collapse;width:100%;background:#fff}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4}code{font:12px ui-monospace,monospace;background:#eef1f4;padding:0 3px;border-radius:3px}
tr.failing td.points{color:#c62828;font-weight:700}tr.pass td.points{color:#1a7f37;font-weight:700}
#filters button{margin:0 6px 10px 0;padding:4px 12px;border:1px solid #8c959f;border-radius:14px;background:#fff;cursor:pointer}
#filters button.active{background:#1b1f24;color:#fff}
.matrix td{font-size:11px;text-align:center}.matrix td.ok{background:#dafbe1}.matrix td.warn{background:#fff8c5}
.matrix td.bad{background:#ffebe9}.matrix td.off{color:#8c959f}
svg text{font:12px system-ui,sans-serif}
"""

SCRIPT = """
(function(){
  var rows=document.querySelectorAll('#rows tbody tr');
  var buttons=document.querySelectorAll('#filters button');
  function show(filter){
    rows.forEach(function(row){
      var keep=filter==='all'||(filter==='verified'?row.dataset.verified==='true':row.dataset.status===filter);
      row.hidden=!keep;
    });
    buttons.forEach(function(button){button.classList.toggle('active',button.dataset.filter===filter);});
  }
  buttons.forEach(function(button){button.addEventListener('click',function(){show(button.dataset.filter);});});
  var chosen=/filter=(\\w+)/.exec(location.hash);
  show(chosen?chosen[1]:'all');
})();
"""


def render_html(report: Report, links: EvidenceLinks = NO_LINKS) -> str:
    title = f"{report.pack.framework_name} readiness: {report.backend.name}"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body><main>",
        f"<h1>{_e(title)}</h1>",
        _metadata(report),
        _cards(report),
        _chart(report.sections),
        _fixes(report),
        _rows(report, links),
        _matrices(report),
        f"</main><script>{SCRIPT}</script></body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def _metadata(report: Report) -> str:
    backend, source = report.backend, report.backend.source
    where = source.location + (f" @ {source.commit[:12]}" if source.commit else "")
    facts = [
        ("Backend", f"{backend.name} {backend.version or ''}".strip()),
        ("Source", f"{source.kind}: {where}"),
        ("Integration path", report.integration_path.title),
        ("Rule pack", f"{report.pack.id} {report.pack.version}"),
        ("Tool", f"air {report.tool_version}"),
        ("Date", report.date),
    ]
    return '<dl class="meta">' + "".join(f"<dt>{_e(name)}</dt><dd>{_e(value)}</dd>" for name, value in facts) + "</dl>"


def _cards(report: Report) -> str:
    unknown = sum(1 for row in report.rows if row.outcome == "unknown")
    return (
        '<div class="cards">'
        f'<div class="card" id="readiness"><div>Readiness</div>'
        f'<div class="value {_band(report.readiness)}">{report.readiness:.1f} %</div></div>'
        f'<div class="card" id="coverage"><div>Evidence coverage</div>'
        f'<div class="value">{report.coverage:.1f} %</div><div>{unknown} rows unknown</div></div>'
        "</div>"
    )


def _chart(sections: tuple[SectionResult, ...]) -> str:
    """Horizontal bars, one per section, under a heading per tier."""
    shapes, y = [], 0
    for tier in sorted({section.tier for section in sections}):
        y += TIER_GAP
        shapes.append(f'<text x="0" y="{y - 8}" font-weight="700">Tier {tier}</text>')
        for section in sorted((s for s in sections if s.tier == tier), key=lambda s: s.number):
            label = _e(f"{section.number}. {section.title}")
            shapes.append(f'<text x="0" y="{y + 13}">{label}</text>')
            shapes.append(f'<rect x="{LABEL_WIDTH}" y="{y}" width="{BAR_WIDTH}" height="{BAR_HEIGHT}" fill="#eef1f4"/>')
            if section.percent is None:
                shapes.append(f'<text x="{LABEL_WIDTH + 6}" y="{y + 13}" fill="#57606a">N/A</text>')
            else:
                width = round(BAR_WIDTH * section.percent / 100, 1)
                colour = {"low": "#e5534b", "mid": "#d4a72c", "high": "#2da44e"}[_band(section.percent)]
                shapes.append(
                    f'<rect class="bar" x="{LABEL_WIDTH}" y="{y}" width="{width}" height="{BAR_HEIGHT}" '
                    f'fill="{colour}"><title>{label}: {section.percent:.1f} %</title></rect>'
                )
                shapes.append(f'<text x="{LABEL_WIDTH + BAR_WIDTH + 8}" y="{y + 13}">{section.percent:.1f} %</text>')
            y += BAR_HEIGHT + BAR_GAP
    width = LABEL_WIDTH + BAR_WIDTH + 70
    return (
        f'<h2>Sections</h2><svg id="sections-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{y + 4}" viewBox="0 0 {width} {y + 4}" role="img" aria-label="Section scores by tier">'
        + "".join(shapes)
        + "</svg>"
    )


def _fixes(report: Report) -> str:
    fixes = fix_first(report.sections, report.rows)[:MAX_FIXES]
    items = "".join(
        f"<li><b>{_e(fix.row.item)}</b> {_e(fix.row.title)}: <b>+{fix.gain:.2f} pp</b>. {_e(_one_line(fix.row.remediation))}</li>"
        for fix in fixes
    )
    part = f'<h2>Fix first</h2><ol id="fix-first">{items}</ol>' if fixes else ""
    proving = to_prove(report.rows)
    if proving:
        checks = "".join(
            f"<li><b>{_e(row.item)}</b> {_e(row.title)}: <code>{_e(row.runtime_check)}</code></li>" for row in proving
        )
        part += f'<h2>Still to prove at runtime</h2><ul id="to-prove">{checks}</ul>'
    return part


def _rows(report: Report, links: EvidenceLinks) -> str:
    counts = {name: 0 for name, _label in FILTERS}
    body = []
    titles = {section.id: f"{section.number}. {section.title}" for section in report.sections}
    numbers = {section.id: section.number for section in report.sections}
    ordered = sorted(report.rows, key=lambda row: (numbers.get(row.section, 0), item_key(row.item)))
    for row in ordered:
        status = _status(row)
        counts["all"] += 1
        counts[status] = counts.get(status, 0) + 1
        counts["verified"] += row.runtime == "verified"
        body.append(
            f'<tr class="{status}" data-status="{status}" data-verified="{"true" if row.runtime == "verified" else "false"}">'
            f"<td>{_e(row.item)}</td><td>{_e(row.title)}<br><small>{_e(titles.get(row.section, row.section))}</small></td>"
            f'<td>P{row.priority}</td><td class="points">{score_label(row)}</td><td>{_evidence(row, links)}</td></tr>'
        )
    buttons = "".join(
        f'<button type="button" data-filter="{name}">{label} ({counts.get(name, 0)})</button>'
        for name, label in FILTERS
    )
    return (
        f'<h2>Checklist</h2><div id="filters" role="group" aria-label="Filter rows">{buttons}</div>'
        '<table id="rows"><thead><tr><th>Item</th><th>Row</th><th>Priority</th><th>Points</th><th>Evidence, reason and fix</th>'
        "</tr></thead><tbody>" + "".join(body) + "</tbody></table>"
    )


def _evidence(row: RowResult, links: EvidenceLinks) -> str:
    parts = ["<br>".join(_finding(finding, links) for finding in row.evidence)] if row.evidence else []
    if row.reason:
        parts.append(f"<i>{_e(row.reason)}</i>")
    if row.remediation and (row.outcome == "unknown" or (row.outcome == "scored" and row.points in (0, 1))):
        parts.append(f"Fix: {_e(_one_line(row.remediation))}")
    return "<br>".join(parts)


def _finding(finding: Finding, links: EvidenceLinks) -> str:
    shown = f"<code>{_e(finding.path)}:{finding.line}</code>"
    url = None if finding.trust in ("verified", "refuted") else links.url(finding.path, finding.line)
    if url:
        shown = f'<a href="{_e(url)}">{shown}</a>'
    snippet = _one_line(finding.snippet)
    trust = f" ({finding.trust})" if finding.trust in ("tests", "verified", "refuted") else ""
    return shown + (f" <code>{_e(snippet[:120])}</code>" if snippet else "") + trust


def _matrices(report: Report) -> str:
    if report.runtime is None:
        return ""
    return "".join(_matrix(probe) for probe in report.runtime.probes if probe.matrix)


def _matrix(probe: ProbeResult) -> str:
    """The whole op × variant matrix: a row per name, a column per variant."""
    variants = sorted({variant for _name, variant, _outcome, _detail in probe.matrix}, key=lambda v: (" " in v, v))
    cells: dict[str, dict[str, tuple[str, str]]] = {}
    for name, variant, outcome, detail in probe.matrix:
        cells.setdefault(name, {})[variant] = (outcome, detail)
    head = "".join(f"<th>{_e(variant)}</th>" for variant in variants)
    body = []
    for name, by_variant in cells.items():
        row = "".join(_matrix_cell(by_variant.get(variant)) for variant in variants)
        body.append(f"<tr><th><code>{_e(name)}</code></th>{row}</tr>")
    return (
        f'<h2>Runtime: {_e(probe.id)}</h2><p>{_e(probe.detail)}</p><table class="matrix" id="matrix-{_e(probe.id)}">'
        f"<thead><tr><th>Name</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _matrix_cell(entry: tuple[str, str] | None) -> str:
    if entry is None:
        return "<td></td>"
    outcome, detail = entry
    return f'<td class="{OUTCOME_CLASS.get(outcome, "bad")}" title="{_e(detail)}">{_e(outcome)}</td>'


def _status(row: RowResult) -> str:
    if row.outcome == "not_applicable":
        return "na"
    if row.outcome == "unknown" or row.points is None:
        return "unknown"
    return "pass" if row.points == 2 else "failing"


def _band(percent: float) -> str:
    return "high" if percent >= 80 else "mid" if percent >= 50 else "low"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _e(text: str) -> str:
    return escape(printable(text), quote=True)
