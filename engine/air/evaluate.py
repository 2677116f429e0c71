"""From evidence to row outcomes: points 2/1/0, N/A or unknown, each with findings and a reason."""

from __future__ import annotations

from collections.abc import Mapping

from air.evidence import Evaluator
from air.evidence.base import ClauseResult, Hit
from air.expr import affirmed_names
from air.framework import Framework, Verdict
from air.packs import NOT_ENCODED, Row
from air.report.model import Finding, RowResult
from air.versions import admits

MAX_FINDINGS_PER_ROW = 25
SHOWN_PER_CLAUSE = 3
MAX_LISTED = 20


BINARY_REASON = "binary distribution: source not available"
CPP_LANGUAGES = {"cpp", "template"}


def evaluate_row(row: Row, evaluator: Evaluator, verdict: Verdict, framework: Framework,
                 target_version: str | None = None, compiled: bool = False) -> RowResult:
    """The row's outcome. `target_version` is the framework release the backend targets (given,
    or the range its pins allow); a row whose `framework_versions` excludes it is N/A. With
    `compiled` (a binary distribution), a row whose evidence is all C/C++ is unknown."""
    if row.paths and not set(row.paths) & set(verdict.applies):
        shorts = " / ".join(framework.path_short(p) for p in row.paths)
        return _result(row, "not_applicable", None, f"applies to {shorts} backends only; this one is {verdict.title}")
    if row.framework_versions and target_version and not admits(row.framework_versions, target_version):
        return _result(row, "not_applicable", None, f"applies to {framework.name} {row.framework_versions}; "
                                                    f"this backend targets {framework.name} {target_version}")
    if not row.encoded:
        return _result(row, "unknown", None, NOT_ENCODED)
    if compiled and all(_reads_only_cpp(clause) for clause in row.evidence.values()):
        return _result(row, "unknown", None, BINARY_REASON)
    results = {name: evaluator.result(clause) for name, clause in row.evidence.items()}
    points, undecided = _decide(row, results)
    findings = findings_of(results.values())
    notes = [note.say for note in row.notes if note.when.evaluate(results)]
    if undecided:
        reasons = sorted({r.undecided_reason for r in results.values() if not r.decided})
        return _result(row, "unknown", None, _join(["could not be decided: " + "; ".join(reasons)] + notes), findings)
    if points == 0 and row.runtime_command:
        reason = f"needs a runtime check (`{row.runtime_command}`); no static evidence"
        reasons = [reason, _only_in_tests(results), _only_where_tests_do_not_run(results)] + notes
        return _result(row, "unknown", None, _join(reasons), findings)
    coverage = [_coverage_text(r) for r in results.values() if r.coverage is not None]
    return _result(row, "scored", points, _join(coverage + [_explain(row, points, results)] + notes), findings)


def _coverage_text(result: ClauseResult) -> str:
    coverage = result.coverage
    parts = [f"{result.clause.name}: {len(coverage.covered)}/{coverage.total}"]
    if coverage.missing:
        shown = ", ".join(coverage.missing[:MAX_LISTED])
        more = f" and {len(coverage.missing) - MAX_LISTED} more" if len(coverage.missing) > MAX_LISTED else ""
        parts.append(f"missing {shown}{more}")
    if coverage.composite:
        parts.append(f"composite, needing no kernel: {', '.join(coverage.composite)}")
    return "; ".join(parts)


def _reads_only_cpp(clause) -> bool:
    spec = clause.spec if isinstance(clause.spec, dict) else {}
    if clause.kind in ("cpp_macro", "cpp_class"):
        return True
    if clause.kind == "text":
        return set(spec.get("languages", ())) <= CPP_LANGUAGES and bool(spec.get("languages"))
    return clause.kind == "structural" and spec.get("language") == "cpp"


def _decide(row: Row, results: Mapping[str, ClauseResult]) -> tuple[int, bool]:
    """The first level whose condition holds; undecided when an earlier level is unknown."""
    for level in sorted(row.score, reverse=True):
        truth = row.score[level].evaluate(results)
        if truth is None:
            return 0, True
        if truth:
            return level, False
    return 0, False


def _explain(row: Row, points: int, results: Mapping[str, ClauseResult]) -> str:
    if points == 2:
        return ""
    parts = []
    if points and 2 in row.score:
        parts.append(f"partial: `{row.score_text[points]}` holds, `{row.score_text[2]}` does not")
    elif points:
        parts.append(f"partial: `{row.score_text[points]}` holds; static evidence earns at most 1")
        if row.runtime_command:
            parts.append(f"full credit needs a runtime check (`{row.runtime_command}`)")
    wanted = set().union(*(affirmed_names(condition) for condition in row.score.values()))
    missing = [r.clause.description() for name, r in results.items() if name in wanted and r.decided and r.count() == 0]
    if missing:
        parts.append("not found: " + "; ".join(missing))
    parts.append(_only_in_tests(results))
    parts.append(_only_where_tests_do_not_run(results))
    return _join(parts)


def _only_where_tests_do_not_run(results: Mapping[str, ClauseResult]) -> str:
    places = [f"{hit.path}:{hit.line}" for r in results.values() if r.count() == 0 for hit in r.not_run]
    if not places:
        return ""
    return (f"found in tests only where no test runs on the device ({_shown(places)}): skipped, in a helper "
            "module, or in a file that never names the backend")


def _shown(places: list[str]) -> str:
    more = len(places) - SHOWN_PER_CLAUSE
    return ", ".join(places[:SHOWN_PER_CLAUSE]) + (f" and {more} more" if more > 0 else "")


def _only_in_tests(results: Mapping[str, ClauseResult]) -> str:
    places = [f"{hit.path}:{hit.line}" for r in results.values() if r.count() == 0 for hit in r.test_only_hits()]
    if not places:
        return ""
    return f"found only in tests ({_shown(places)}), which does not count as implementation"


def findings_of(results) -> tuple[Finding, ...]:
    findings = []
    for result in results:
        for hit in result.counted():
            findings.append(finding_of(hit, result.clause.name))
        for hit in result.test_only_hits():
            findings.append(finding_of(hit, result.clause.name))
    findings.sort(key=lambda f: (f.trust != "source", f.path, f.line, f.evidence))
    unique: dict[tuple[str, int], Finding] = {}
    for finding in findings:  # one finding per line, the first clause's name kept
        unique.setdefault((finding.path, finding.line), finding)
    return tuple(list(unique.values())[:MAX_FINDINGS_PER_ROW])


def finding_of(hit: Hit, evidence: str) -> Finding:
    return Finding(hit.path, hit.line, hit.snippet, "tests" if hit.role == "tests" else "source", evidence)


def _join(parts: list[str]) -> str:
    return "; ".join(part for part in parts if part)


def _result(row: Row, outcome, points, reason: str, findings: tuple[Finding, ...] = ()) -> RowResult:
    return RowResult(
        id=row.id, item=row.item, section=row.section, title=row.title, priority=row.priority, paths=row.paths,
        outcome=outcome, points=points, reason=reason, evidence=findings, remediation=row.remediation, docs=row.docs,
    )
