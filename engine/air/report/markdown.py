"""The Markdown report, for people to read.

Every string from the model is treated as plain text and escaped, so pack prose can never
break a table or turn into markup, and a file name can never put a control character into
the report (see `air.printable`). Numbers are shown with one decimal.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from air.printable import printable
from air.report.links import NO_LINKS, EvidenceLinks
from air.results import (
    Backend,
    Finding,
    IndexStats,
    Link,
    OperatorCoverage,
    Outcome,
    PackInfo,
    PathSignal,
    ProbeOutcome,
    ProbeResult,
    QuickReferenceEntry,
    Report,
    RowResult,
    RuntimeRun,
    SectionResult,
    Source,
    TestInventory,
    UpstreamCandidate,
    item_key,
)
from air.scoring.fixes import fix_first, to_prove

MAX_FIXES = 10
MAX_REMEDIATION = 160
MAX_MATRIX_FAILURES = 30
MAX_SKIP_REASONS = 25
MAX_FINDINGS = 3
MAX_SNIPPET = 80
DIGEST_LENGTH = 12
STRENGTH_PERCENT = 80.0
NONE = "—"

_MARKUP = re.compile(r"[\\`*\[\]<>|~&]")
# An underscore between two letters or digits cannot start or end emphasis; any other can.
_EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
_BACKTICK_RUNS = re.compile(r"`+")
_POINTS = {2: "2", 1: "1", 0: "0"}
_STATUS = {2: "✅ 2", 1: "◐ 1", 0: "❌ 0"}
_PROBE_OUTCOMES: tuple[ProbeOutcome, ...] = ("verified", "refuted", "error", "skipped")
_PROBE_STATUS = {"verified": "✅ verified", "refuted": "❌ refuted", "error": "💥 error", "skipped": "skipped"}
_USAGE = {"used": "✅ used", "unused": "❌ not used", "not_applicable": "N/A", "unknown": "unknown"}


def render_markdown(report: Report, links: EvidenceLinks = NO_LINKS) -> str:
    """Render the full report as Markdown, ending with a newline; citations link as `links` says."""
    blocks = [
        *_title(report),
        *_summary(report),
        *_section_scores(report),
        *_upstream_candidates(report.upstream),
        *_source_discovery(report, links),
        *_runtime(report.runtime),
        *_checklist(report, links),
        *_operators(report.operators, report.pack, links),
        *_test_inventory(report.tests),
        *_quick_reference(report.quick_reference),
        *_sources(report.sources),
    ]
    return "\n\n".join(blocks) + "\n"


# --- the parts, in order ------------------------------------------------


def _title(report: Report) -> list[str]:
    pack, backend, path = report.pack, report.backend, report.integration_path
    metadata = [
        ("Backend", markdown_text(backend.name)),
        ("Backend version", markdown_text(backend.version or "unknown")),
        ("Build metadata", _code(backend.metadata_file) if backend.metadata_file else markdown_text(NONE)),
        ("Integration path", markdown_text(path.title)),
        (_capitalized(pack.terms.key), markdown_text(path.key or NONE)),
        (f"{pack.framework_name} version targeted", _targeted(backend)),
        ("Source", _describe_source(backend.source)),
        ("Evaluation date", markdown_text(report.date)),
        ("Tool", markdown_text(f"air {report.tool_version}")),
        ("Rule pack", markdown_text(f"{pack.id} {pack.version}") + f" ({_code(_short_digest(pack.digest))})"),
    ]
    return [
        f"# {markdown_text(pack.framework_name)} readiness report: {markdown_text(backend.name)}",
        _table(("Field", "Value"), [(markdown_text(field), value) for field, value in metadata]),
    ]


def _summary(report: Report) -> list[str]:
    unknown = sum(1 for row in report.rows if row.outcome == "unknown")
    blocks = [
        "## Executive summary",
        f"**Readiness: {_number(report.readiness)} %**",
        f"Evidence coverage: {_number(report.coverage)} % of the applicable weight was decided "
        f"({_plural(unknown, 'row')} unknown)",
        f"Upstream candidates: {len(report.upstream) if report.upstream is not None else NONE}",
        "**Strengths**",
        _bullets(_strengths(report.sections)),
        *_fix_first(report),
        *_to_prove(report),
    ]
    if report.integration_path.note:
        blocks += ["**Integration path note**", markdown_text(report.integration_path.note)]
    return blocks


def _fix_first(report: Report) -> list[str]:
    """The rows whose fixing gains the most readiness, with the gain and the remediation."""
    fixes = fix_first(report.sections, report.rows)
    blocks = ["**Fix first**"]
    if not fixes:
        return blocks + ["Every scored row has full marks."]
    shown = [
        (
            str(rank),
            markdown_text(fix.row.item),
            markdown_text(fix.row.title),
            str(fix.row.points),
            _gain(fix.gain),
            markdown_text(_brief(fix.row.remediation)),
        )
        for rank, fix in enumerate(fixes[:MAX_FIXES], start=1)
    ]
    blocks.append(_table(("#", "Item", "Row", "Points", "Gain", "Remediation"), shown))
    if len(fixes) > MAX_FIXES:
        rest = fixes[MAX_FIXES:]
        blocks.append(
            f"… and {_plural(len(rest), 'more row')} short of full marks, {_gain(sum(fix.gain for fix in rest))} in all."
        )
    return blocks


def _to_prove(report: Report) -> list[str]:
    """The unknown rows a runtime check would decide: the commands that check them."""
    rows = to_prove(report.rows)
    if not rows:
        return []
    blocks = [
        "**Still to prove at runtime**",
        _bullets(f"{markdown_text(row.item)} {markdown_text(row.title)}: {_code(row.runtime_check)}" for row in rows),
    ]
    if report.runtime is None:
        blocks.append(
            "`air check --runtime` runs the pack's probes against the installed backend, which decide most of these."
        )
    return blocks


def _section_scores(report: Report) -> list[str]:
    blocks = ["## Section scores"]
    for tier in sorted({section.tier for section in report.sections}):
        sections = [section for section in _by_number(report.sections) if section.tier == tier]
        table = _table(("§", "Section", "Max Pts", "Earned", "%"), map(_score_cells, sections))
        blocks += [f"### Tier {tier}", table]
    blocks.append(f"Readiness: {_number(report.readiness)} %")
    return blocks


def _upstream_candidates(candidates: Sequence[UpstreamCandidate] | None) -> list[str]:
    blocks = ["## Upstream candidates"]
    if candidates is None:
        return blocks + ["This rule pack declares no upstream-candidate detectors."]
    if not candidates:
        return blocks + ["No detector found anything."]
    blocks.append(
        "Advisory, not scored. Generic: no cited file names the backend. Needs abstraction: every backend "
        "has the problem, but the code calls backend internals. Hardware-specific: not upstreamable."
    )
    rows = [
        (
            markdown_text(c.name),
            markdown_text(c.category),
            markdown_text(c.classification),
            markdown_text(c.description),
            markdown_text(c.framework_has),
            markdown_text(c.motivation),
            ", ".join(_code(f) for f in c.files)
            + (f" and {c.file_count - len(c.files)} more files" if c.file_count > len(c.files) else ""),
        )
        for c in candidates
    ]
    blocks.append(
        _table(("Candidate", "Category", "Class", "What it is", "What the framework has", "Motivation", "Files"), rows)
    )
    return blocks


def _source_discovery(report: Report, links: EvidenceLinks) -> list[str]:
    path = report.integration_path
    facts = [
        f"Source: {_describe_source(report.backend.source)}",
        _describe_index(report.index),
        f"Skipped files: {_describe_skipped(report.index.skipped)}",
        "Submodules declared but absent, so not analysed: "
        + (", ".join(_code(path) for path in report.index.absent_submodules) or NONE),
        "Build switches off by default, whose `#if` code a default build leaves out and is not read: "
        + (", ".join(markdown_text(switch) for switch in report.index.switches_off) or NONE),
        f"Integration path: **{markdown_text(path.title)}** ({markdown_text(report.pack.terms.key)}: {markdown_text(path.key or NONE)})",
    ]
    blocks = ["## Source discovery and path signals", _bullets(facts)]
    for header, listed in (
        ("Skipped directory", report.index.skipped_directories),
        ("Vendored directory read as the backend's own", report.index.vendored_read),
        ("Skipped file", report.index.skipped_files),
    ):
        if listed:
            blocks.append(_table((header, "Why"), ((_code(path), markdown_text(reason)) for path, reason in listed)))
    if path.note:
        blocks.append(markdown_text(path.note))
    if path.signals:
        blocks.append(
            _table(("Signal", "Description", "Evidence"), (_signal_cells(signal, links) for signal in path.signals))
        )
    else:
        blocks.append("No path signal fired.")
    return blocks


def _runtime(run: RuntimeRun | None) -> list[str]:
    if run is None:
        return []
    counts = Counter(probe.outcome for probe in run.probes)
    facts = [f"Probed interpreter: {_code(run.python)}", f"Device: {_code(run.device)}"]
    facts += [f"{_capitalized(fact)}: {markdown_text(value)}" for fact, value in run.environment if fact != "device"]
    facts.append(", ".join(f"{counts[outcome]} {outcome}" for outcome in _PROBE_OUTCOMES if counts[outcome]))
    rows = [
        (
            _code(probe.id),
            markdown_text(probe.title),
            _PROBE_STATUS[probe.outcome],
            _code(f"{probe.path}:{probe.line}"),
            markdown_text(probe.detail) or NONE,
        )
        for probe in run.probes
    ]
    blocks = ["## Runtime probes", _bullets(facts), _table(("Probe", "Shows", "Outcome", "Where", "Detail"), rows)]
    for probe in run.probes:
        if probe.matrix:
            blocks += _matrix(probe)
    return blocks


def _matrix(probe: ProbeResult) -> list[str]:
    """A sweep's matrix in brief: each variant (a dtype) with how many names (operators) had
    each outcome, then the first entries that did not pass; the JSON report has them all."""
    outcomes = sorted({outcome for _name, _variant, outcome, _detail in probe.matrix})
    by_variant: dict[str, Counter[str]] = {}
    for _name, variant, outcome, _detail in probe.matrix:
        by_variant.setdefault(variant, Counter())[outcome] += 1
    counts = [
        (_code(variant), *(str(tally[outcome]) for outcome in outcomes))
        for variant, tally in sorted(by_variant.items())
    ]
    failing = [entry for entry in probe.matrix if entry[2] not in ("pass", "not run")]
    shown = [
        (_code(name), _code(variant), markdown_text(outcome), markdown_text(detail) or NONE)
        for name, variant, outcome, detail in failing[:MAX_MATRIX_FAILURES]
    ]
    blocks = [
        f"### {_code(probe.id)}: {len(probe.matrix)} measured",
        _table(("Variant", *map(markdown_text, outcomes)), counts),
    ]
    if shown:
        more = len(failing) - len(shown)
        blocks += [_table(("Name", "Variant", "Outcome", "Detail"), shown)] + (
            [f"… and {more} more (JSON report)."] if more > 0 else []
        )
    return blocks


def _checklist(report: Report, links: EvidenceLinks) -> list[str]:
    """Per section, a narrow table of the rows' scores, then a note per row: its findings (the
    first few, the rest folded), the reason for its score and, when it falls short, the fix."""
    blocks = ["## Checklist"]
    labels = {path.id: path.short for path in report.pack.paths}
    for section in _by_number(report.sections):
        rows = sorted((row for row in report.rows if row.section == section.id), key=_row_order)
        blocks.append(f"### {section.number}. {markdown_text(section.title)} (Tier {section.tier})")
        blocks.append(_table(("Item", "Row", "Path", "Priority", "Points"), (_row_cells(row, labels) for row in rows)))
        notes = [note for note in (_row_note(row, links) for row in rows) if note]
        if notes:
            blocks.append(_bullets(notes))
    return blocks


def _operators(operators: OperatorCoverage | None, pack: PackInfo, links: EvidenceLinks) -> list[str]:
    if operators is None:
        return []
    core = markdown_text(_capitalized(pack.terms.core_operators))
    sources = ", ".join(f"{count} from {how}" for how, count in operators.by_source) or "none"
    facts = [
        f"Operators with a native kernel on the device's keys: {operators.registered} ({sources})",
        f"Operators registered with a per-op CPU fallback only: {operators.per_op_fallbacks}",
        f"Operators registered with a stub kernel only, which computes nothing: {operators.stubs}",
        f"{core} covered: {operators.core_covered} of {operators.core_total} "
        f"(catalog of {markdown_text(pack.framework_name)} {markdown_text(operators.catalog_version)}"
        + (f": {markdown_text(operators.catalog_basis)})" if operators.catalog_basis else ")"),
        "Global fallbacks: "
        + (", ".join(_finding(f, links) + f" on {markdown_text(f.evidence)}" for f in operators.fallbacks) or NONE),
    ]
    blocks = ["## Operator coverage", _bullets(facts)]
    rows = [
        (
            op.item,
            markdown_text(op.title),
            f"{'?' if op.undecided else op.covered}/{op.total}",
            _names(op.fallback),
            _names(op.stub),
            _names(op.missing),
            _names(op.composite),
        )
        for op in operators.categories
    ]
    blocks.append(
        _table(("#", "Category", "Native", "Per-op fallback", "Stub", "Missing", "Composite (no kernel needed)"), rows)
    )
    undecided = [f"{op.item}: {markdown_text(op.undecided)}" for op in operators.categories if op.undecided]
    if undecided:
        blocks.append("Coverage that cannot be told:\n\n" + _bullets(undecided))
    if operators.core_missing:
        more = operators.core_total - operators.core_covered - len(operators.core_missing)
        blocks.append(
            f"{core} without a kernel: " + _names(operators.core_missing) + (f" and {more} more" if more else "")
        )
    return blocks


def _test_inventory(tests: TestInventory | None) -> list[str]:
    if tests is None:
        return []
    markers = ", ".join(f"{_code(name)} ×{count}" for name, count in tests.markers) or NONE
    facts = [
        f"Test files: {tests.test_files}; Python tests: {tests.python_tests}; C++ tests: {tests.cpp_tests}",
        f"Shared test machinery used: {markers}",
        f"Skipped or expected to fail: {tests.skip_total}",
    ]
    blocks = ["## Test inventory", _bullets(facts)]
    if tests.skip_reasons:
        shown = tests.skip_reasons[:MAX_SKIP_REASONS]
        blocks.append(
            _table(("Skip reason", "Tests"), ((markdown_text(reason), str(count)) for reason, count in shown))
        )
    if tests.skips:
        listed = [
            (_code(f"{s.path}:{s.line}"), _code(s.decorator), markdown_text(s.reason) or NONE) for s in tests.skips
        ]
        more = tests.skip_total - len(tests.skips)
        blocks += [_table(("Where", "Skip", "Reason"), listed)] + ([f"… and {more} more."] if more > 0 else [])
    workflows = [(_code(w.path), ", ".join(w.signals) or NONE) for w in tests.ci]
    blocks.append(_table(("CI workflow", "Shows"), workflows) if workflows else "No CI workflow files found.")
    return blocks


def _names(names: Sequence[str]) -> str:
    return ", ".join(_code(name) for name in names) or NONE


def _quick_reference(entries: Sequence[QuickReferenceEntry]) -> list[str]:
    table = _table(("Entry", "Status", "Location", "Row"), map(_entry_cells, entries))
    return ["## Registration quick reference", table]


def _sources(links: Sequence[Link]) -> list[str]:
    blocks = ["## Sources"]
    if links:
        blocks.append(_bullets(f"[{markdown_text(link.title)}]({_url(link.url)})" for link in links))
    return blocks


# --- summaries ------------------------------------------------------------------


def _strengths(sections: Iterable[SectionResult]) -> list[str]:
    return [
        f"{markdown_text(section.title)}: {_number(section.percent)} %"
        for section in _by_number(sections)
        if section.percent is not None and section.percent >= STRENGTH_PERCENT
    ]


def _targeted(backend: Backend) -> str:
    pinned = markdown_text(backend.target_framework_version or "not pinned")
    return f"{pinned} (in {_code(backend.pin_file)})" if backend.pin_file else pinned


def _describe_source(source: Source) -> str:
    described = f"{markdown_text(source.kind)} {_code(source.location)}"
    facts = [f"commit {_code(source.commit)}"] if source.commit else []
    facts += [f"branch {_code(source.branch)}"] if source.branch else []
    facts += ["uncommitted changes"] if source.dirty else []
    facts += [f"describe {_code(source.describe)}"] if source.describe else []
    facts += [f"folder {_code(source.subdir)}"] if source.subdir else []
    return f"{described} ({', '.join(facts)})" if facts else described


def _short_digest(digest: str) -> str:
    _, _, hex_digits = digest.rpartition(":")
    return hex_digits[:DIGEST_LENGTH]


def _describe_index(index: IndexStats) -> str:
    return (
        f"Indexed files: {index.files} (product {index.product}, tests {index.tests}, docs {index.docs}), "
        f"{index.bytes} bytes"
    )


def _describe_skipped(skipped: Sequence[tuple[str, int]]) -> str:
    if not skipped:
        return "none"
    return ", ".join(f"{markdown_text(reason)}: {count}" for reason, count in skipped)


# --- table cells ----------------------------------------------------------------


def _score_cells(section: SectionResult) -> tuple[str, ...]:
    if section.percent is None:
        scores = (NONE, NONE, "N/A")
    else:
        scores = (_number(section.max_pts), _number(section.earned), _number(section.percent))
    return (str(section.number), markdown_text(section.title), *scores)


def _signal_cells(signal: PathSignal, links: EvidenceLinks) -> tuple[str, ...]:
    locations = ", ".join(_cited(finding, links) for finding in signal.evidence)
    return (markdown_text(signal.name), markdown_text(signal.description), locations or NONE)


def _entry_cells(entry: QuickReferenceEntry) -> tuple[str, ...]:
    location = _code(entry.location) if entry.location else NONE
    row = f"{_code(entry.row)} {_points(entry.outcome, entry.points, _STATUS)}"
    return (markdown_text(entry.entry), _USAGE[entry.status], location, row)


def _row_cells(row: RowResult, labels: dict[str, str]) -> tuple[str, ...]:
    return (
        markdown_text(row.item),
        markdown_text(row.title),
        markdown_text(", ".join(labels.get(path, path) for path in row.paths)) if row.paths else "all",
        f"P{row.priority}",
        _points(row.outcome, row.points, _POINTS),
    )


def _row_note(row: RowResult, links: EvidenceLinks) -> str:
    """**item** then its findings, the rest past MAX_FINDINGS folded, its reason and its fix."""
    parts = []
    if row.evidence:
        shown = ", ".join(_finding(finding, links) for finding in row.evidence[:MAX_FINDINGS])
        folded = row.evidence[MAX_FINDINGS:]
        if folded:
            rest = ", ".join(_finding(finding, links) for finding in folded)
            shown += f" <details><summary>{_plural(len(folded), 'more finding')}</summary>{rest}</details>"
        parts.append(shown)
    if row.reason:
        parts.append(f"*{markdown_text(row.reason)}*")
    if row.remediation and _needs_fix(row):
        parts.append(f"Fix: {markdown_text(row.remediation)}")
    return f"**{markdown_text(row.item)}** " + " — ".join(parts) if parts else ""


def _needs_fix(row: RowResult) -> bool:
    return row.outcome == "unknown" or (row.outcome == "scored" and row.points in (0, 1))


def _finding(finding: Finding, links: EvidenceLinks) -> str:
    shown = _cited(finding, links)
    snippet = _truncate(_one_line(finding.snippet))
    if snippet:
        shown += f" {_code(snippet)}"
    return f"{shown} ({finding.trust})" if finding.trust in ("tests", "verified", "refuted") else shown


def _cited(finding: Finding, links: EvidenceLinks) -> str:
    """`path:line`, linked where `links` can (a probe's finding cites the pack, never linked)."""
    shown = _code(_location(finding))
    url = None if finding.trust in ("verified", "refuted") else links.url(finding.path, finding.line)
    return f"[{shown}]({_url(url)})" if url else shown


def _location(finding: Finding) -> str:
    return f"{finding.path}:{finding.line}"


def _points(outcome: Outcome, points: int | None, labels: dict[int, str]) -> str:
    if outcome == "not_applicable":
        return "N/A"
    if outcome == "unknown" or points is None:
        return "unknown"
    return labels[points]


# --- Markdown primitives ----------------------------------------------------------


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = [_table_line(header), _table_line(["---"] * len(header))]
    lines += [_table_line(row) for row in rows]
    return "\n".join(lines)


def _table_line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _bullets(items: Iterable[str]) -> str:
    return "\n".join(f"- {item}" for item in items) or "- none"


def markdown_text(value: str) -> str:
    """Escape plain text for inline Markdown, on one line."""
    escaped = _MARKUP.sub(r"\\\g<0>", _one_line(value))
    return _EDGE_UNDERSCORE.sub(r"\\_", escaped)


def _code(value: str) -> str:
    """A code span that shows `value` verbatim, even inside a table cell."""
    body = _one_line(value)
    fence = "`" * (max(map(len, _BACKTICK_RUNS.findall(body)), default=0) + 1)
    padding = " " if body.startswith("`") or body.endswith("`") else ""
    # GitHub splits table cells on pipes before it parses code spans, so those are escaped.
    escaped = body.replace("|", r"\|")
    return f"{fence}{padding}{escaped}{padding}{fence}"


def _url(url: str) -> str:
    return printable(url).replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _capitalized(value: str) -> str:
    return value[:1].upper() + value[1:]


def _one_line(value: str) -> str:
    return printable(" ".join(value.split()))


def _truncate(value: str) -> str:
    return value if len(value) <= MAX_SNIPPET else value[: MAX_SNIPPET - 1] + "…"


def _number(value: float) -> str:
    return f"{value:.1f}"


def _gain(points: float) -> str:
    return f"+{points:.2f} pp"


def _brief(text: str) -> str:
    """The first sentence of `text`, at most MAX_REMEDIATION characters."""
    first, _, rest = _one_line(text).partition(". ")
    first += "." if rest else ""
    return first if len(first) <= MAX_REMEDIATION else first[: MAX_REMEDIATION - 1] + "…"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _by_number(sections: Iterable[SectionResult]) -> list[SectionResult]:
    return sorted(sections, key=lambda section: section.number)


def _row_order(row: RowResult) -> tuple[int, tuple[int, ...], str]:
    return row.priority, item_key(row.item), row.id
