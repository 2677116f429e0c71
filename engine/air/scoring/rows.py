"""From evidence to row outcomes: points 2/1/0, N/A or unknown, each with findings and a reason."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from air.evidence import KINDS, Evaluator
from air.evidence.base import EXPANDED, Clause, ClauseResult, Coverage, Hit
from air.index.files import is_tooling
from air.pack.conditions import affirmed_names, referenced_names
from air.pack.framework import CoreRuntime, Framework, Route
from air.pack.load import NOT_ENCODED, Row
from air.results import Finding, RowResult
from air.versions import admits

MAX_FINDINGS_PER_ROW = 25
FULL_POINTS = 2  # a row that earns them has nothing left to fix
KEY_PLACEHOLDER = "<key>"  # in a remediation: the key the backend registers on
SHOWN_PER_CLAUSE = 3
MAX_LISTED = 20


DECLARATION_SUFFIXES = (".pyi",)  # stubs: they declare what a module defines elsewhere
SHOWN_ROLES = ("product", "tests", "docs")  # in the order their findings are shown
BINARY_REASON = "binary distribution: source not available"
RUNTIME_REMEDY = (
    "Nothing the source can show is missing: run `air check --runtime`, whose check of the row's "
    "behaviour on the device earns full credit when it passes."
)


@dataclass(frozen=True)
class Setting:
    """What a row's outcome depends on besides its evidence."""

    route: Route
    framework: Framework
    target_version: str | None = None  # the framework release the backend targets
    compiled: bool = False  # a binary distribution
    absent: tuple[str, ...] = ()  # the backend's own code the tree declares but does not contain
    absent_native: tuple[str, ...] = ()  # of it, compiled extensions with no C/C++ source in the tree
    unread: tuple[str, ...] = ()  # the backend's code in languages air does not read: "Rust (src/lib.rs)"
    key: str | None = None  # the dispatch key the verdict names
    core_runtime: CoreRuntime | None = None  # what the framework's core implements for that key

    @property
    def named_key(self) -> str | None:
        """The key the backend registers on: the verdict's, else that of the path its rows follow."""
        return self.key or next(
            (path.key for path in self.framework.paths if path.id in self.route.applies and path.key), None
        )

    @property
    def native_unseen(self) -> str:
        """Why the backend's C/C++ code cannot be read, or "" when it can."""
        if self.compiled:
            return BINARY_REASON
        if self.absent_native:
            return _absent_text("C/C++ code", self.absent_native)
        return _unread_text("C/C++ code", self.unread) if self.unread else ""


def evaluate_row(row: Row, evaluator: Evaluator, setting: Setting) -> RowResult:
    """The row's outcome (see `_outcome`), its remediation naming the backend's key where it
    says KEY_PLACEHOLDER."""
    result = _outcome(row, evaluator, setting)
    key = setting.named_key
    if key is None or KEY_PLACEHOLDER not in result.remediation:
        return result
    return replace(result, remediation=result.remediation.replace(KEY_PLACEHOLDER, key))


def _outcome(row: Row, evaluator: Evaluator, setting: Setting) -> RowResult:
    """The row's outcome. A row of a path that does not apply under the route is N/A, and so is
    a row whose `framework_versions` excludes the release the backend targets (given, or the
    range its pins allow). When the backend's C/C++ code cannot be read (a binary distribution,
    or a compiled extension the tree imports with no C/C++ source to build it from), a row whose
    evidence is all C/C++ is unknown, and so is one with some C/C++ evidence that does not earn
    its top score, or whose prerequisite, absent, reads C/C++. A runtime row whose static
    prerequisite is absent scores 0. A row reading code of a kind (`depends_on`) while the tree
    declares code of the backend it does not contain (`absent`) is unknown, not 0, unless it
    earns its top score or is N/A. Evidence of an API deprecated by the release the backend may
    target (`deprecated`) earns at most 1."""
    not_applicable = _not_applicable(row, setting)
    if not_applicable:
        return _result(row, "not_applicable", None, not_applicable)
    if not row.encoded:
        return _result(row, "unknown", None, NOT_ENCODED)
    unseen = setting.native_unseen
    if unseen and all(_reads_only_cpp(clause) for clause in row.evidence.values()):
        return _result(row, "unknown", None, unseen)
    results = {name: evaluator.result(clause) for name, clause in row.evidence.items()}
    points, undecided = row.level(results)
    findings = findings_of(_strongest_first(row, results, points))
    notes = [note.say for note in row.notes if note.when.evaluate(results)]
    earned = points
    if not undecided:
        points, deprecated = _past_deprecations(row, results, setting, points)
        notes += deprecated
    fix = next((remedy.say for remedy in row.remedies if remedy.when.evaluate(results)), row.remediation)
    hidden = ""
    if row.depends_on and setting.absent:
        hidden = _absent_text(row.depends_on, setting.absent)
    elif row.depends_on and setting.unread:
        hidden = _unread_text(row.depends_on, setting.unread)
    core = setting.core_runtime.part(row.id, row.section) if setting.core_runtime else None
    if core is not None and (undecided or points < max(row.score)):
        elsewhere = f"{setting.framework.name} implements {core.provides} for the {setting.key} key, outside this tree"
        return _result(row, "unknown", None, join_reasons([elsewhere, *notes]), findings, fix)
    prerequisite = row.requires.evaluate(results) if row.requires is not None else True
    if prerequisite is False:
        reason = join_reasons([hidden, *notes, _without_prerequisite(row, results)])
        return _result(row, "unknown" if hidden else "scored", None if hidden else 0, reason, findings, fix)
    if undecided or prerequisite is None:
        reasons = sorted({r.undecided_reason for r in results.values() if not r.decided})
        return _result(
            row, "unknown", None, join_reasons(["could not be decided: " + "; ".join(reasons)] + notes), findings, fix
        )
    if points == 0 and row.runtime_command:
        reason = f"needs a runtime check (`{row.runtime_command}`); no static evidence"
        reasons = [reason, _only_in_tests(results), _only_where_tests_do_not_run(results)] + notes
        return _result(row, "unknown", None, join_reasons(reasons), findings, fix)
    coverage = [_coverage_text(r.clause.name, r.coverage) for r in results.values() if r.coverage is not None]
    reason = join_reasons(
        [*coverage, *notes, _explain(row, points, results, earned)]
    )  # before what was not found, not in its list
    if hidden and points < max(row.score):
        return _result(row, "unknown", None, join_reasons([hidden, reason]), findings, fix)
    if setting.compiled and points < max(row.score) and any(_reads_only_cpp(c) for c in row.evidence.values()):
        return _result(row, "unknown", None, join_reasons([unseen, reason]), findings, fix)
    if points == FULL_POINTS:
        fix = ""
    elif row.runtime_command and points == max(row.score):
        fix = RUNTIME_REMEDY  # all a source can show is there: the rest is the runtime check's
    return _result(row, "scored", points, reason, findings, fix)


def _past_deprecations(
    row: Row, results: Mapping[str, ClauseResult], setting: Setting, points: int
) -> tuple[int, list[str]]:
    """The row's points once the evidence of APIs deprecated by the release the backend targets
    earns at most 1 (see `Row.deprecated`), and what to use instead when that lowers them."""
    target, name = setting.target_version, setting.framework.name
    past = [d for d in row.deprecated if results[d.evidence].count() and _deprecated_for(d.since, target)]
    if not past:
        return points, []
    without = {**results, **{d.evidence: replace(results[d.evidence], hits=[]) for d in past}}
    alone, undecided = row.level(without)
    if undecided or alone >= points:
        return points, []
    return max(alone, min(points, 1)), [
        f"{results[d.evidence].clause.description()}: deprecated since {name} {d.since}; use {d.instead}" for d in past
    ]


def _deprecated_for(since: str, target: str | None) -> bool:
    """Whether a backend that targets `target` (a release, the range its pins allow, or None
    when it pins none, and so builds against the newest) may meet the deprecation."""
    return target is None or admits(f">={since}", target)


def _not_applicable(row: Row, setting: Setting) -> str:
    """Why the row does not apply to this backend, or "" when it does."""
    if row.paths and not set(row.paths) & set(setting.route.applies):
        return _off_route(row, setting.route, setting.framework)
    target, name = setting.target_version, setting.framework.name
    if row.framework_versions and target and not admits(row.framework_versions, target):
        return f"applies to {name} {row.framework_versions}; this backend targets {name} {target}"
    return ""


def _without_prerequisite(row: Row, results: Mapping[str, ClauseResult]) -> str:
    """Why the prerequisite fails: what it wants and was not found, and what it reads only under
    `not` and was found."""
    assert row.requires is not None  # asked only when the row's prerequisite is false
    wanted = affirmed_names(row.requires)
    missing = _descriptions(results, sorted(wanted), found=False)
    excluding = _descriptions(results, sorted(referenced_names(row.requires) - wanted), found=True)
    reason = f"cannot work without its static prerequisite (`{row.requires_text}`), which is absent"
    reason += f"; not found: {'; '.join(missing)}" if missing else ""
    return reason + (f"; found, which it rules out: {'; '.join(excluding)}" if excluding else "")


def _descriptions(results: Mapping[str, ClauseResult], names: list[str], found: bool) -> list[str]:
    """The descriptions of the decided clauses of `names` that found something (or nothing)."""
    return [
        results[name].clause.description()
        for name in names
        if results[name].decided and bool(results[name].count()) == found
    ]


def _absent_text(kind: str, absent: tuple[str, ...]) -> str:
    places = ", ".join(absent[:MAX_LISTED]) + (
        f" and {len(absent) - MAX_LISTED} more" if len(absent) > MAX_LISTED else ""
    )
    return f"{kind} may live in {places}, not present"


def _unread_text(kind: str, unread: tuple[str, ...]) -> str:
    return f"{kind} may be written in {', '.join(unread)}, which air does not read"


def _off_route(row: Row, route: Route, framework: Framework) -> str:
    shorts = " / ".join(framework.path_short(p) for p in row.paths)
    reason = f"applies to {shorts} backends only; this one is {route.verdict.title}"
    withheld = [why for path, why in route.withheld if path in row.paths]
    return f"{reason}, and {'; '.join(withheld)}" if withheld else reason


def _coverage_text(name: str, coverage: Coverage) -> str:
    parts = [f"{name}: {len(coverage.covered)}/{coverage.total}"]
    if coverage.sources:
        parts[0] += f" ({'; '.join(coverage.sources)})"
    if coverage.fallback:
        parts.append(f"through a per-op fallback only: {_listed(coverage.fallback)}")
    if coverage.stub:
        parts.append(f"a stub kernel only, which computes nothing: {_listed(coverage.stub)}")
    if coverage.missing:
        parts.append(f"missing {_listed(coverage.missing)}")
    if coverage.composite:
        overridden = f" (registered all the same: {', '.join(coverage.overridden)})" if coverage.overridden else ""
        parts.append(f"composite, needing no kernel: {', '.join(coverage.composite)}{overridden}")
    if coverage.differentiated:
        parts.append(
            "needing no kernel, their forward being registered on a key that differentiates it: "
            + ", ".join(coverage.differentiated)
        )
    parts.extend(f"not counted: {why}" for why in coverage.ignored)
    return "; ".join(parts)


def _listed(names: tuple[str, ...]) -> str:
    more = f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else ""
    return ", ".join(names[:MAX_LISTED]) + more


def _reads_only_cpp(clause: Clause) -> bool:
    return bool(KINDS[clause.kind].reads_only_cpp(clause.spec if isinstance(clause.spec, dict) else {}))


def _explain(row: Row, points: int, results: Mapping[str, ClauseResult], earned: int) -> str:
    """Why the row earns `points` and not more; `earned` is what it would earn were no
    evidence deprecated."""
    if points == 2:
        return ""
    parts = []
    if earned > points:
        parts.append(f"`{row.score_text[earned]}` holds only through deprecated evidence, which earns at most 1")
    elif points and 2 in row.score:
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
    return join_reasons(parts)


def _only_where_tests_do_not_run(results: Mapping[str, ClauseResult]) -> str:
    places = [f"{hit.path}:{hit.line}" for r in results.values() if r.count() == 0 for hit in r.not_run]
    if not places:
        return ""
    return (
        f"found in tests only where no test runs on the device ({_shown(places)}): skipped, in a helper "
        "module, or in a file that never names the backend"
    )


def _shown(places: list[str]) -> str:
    more = len(places) - SHOWN_PER_CLAUSE
    return ", ".join(places[:SHOWN_PER_CLAUSE]) + (f" and {more} more" if more > 0 else "")


def _only_in_tests(results: Mapping[str, ClauseResult]) -> str:
    places = [f"{hit.path}:{hit.line}" for r in results.values() if r.count() == 0 for hit in r.test_only_hits()]
    if not places:
        return ""
    return f"found only in tests ({_shown(places)}), which does not count as implementation"


def _strongest_first(row: Row, results: Mapping[str, ClauseResult], points: int) -> list[ClauseResult]:
    """The row's clause results, strongest first: those the condition that earned the row's
    points names, then those of each higher level before those of lower ones, then the rest;
    in the row's order within each."""
    levels = ([points] if points in row.score else []) + sorted(row.score, reverse=True)
    named = [referenced_names(row.score[level]) for level in levels]

    def strength(name: str) -> int:
        return next((rank for rank, names in enumerate(named) if name in names), len(named))

    return [results[name] for name in sorted(results, key=strength)]


def findings_of(results: Iterable[ClauseResult]) -> tuple[Finding, ...]:
    """The findings of `results`, given strongest first, the first shown the strongest: a
    stronger clause's before a weaker one's (so what earned the points comes before a
    prerequisite's evidence); within a clause, product code before tests and docs, the package's
    own code before its developers' tooling (`tools/`, `scripts/`), then a definition before a
    declaration of it in a stub, what a macro's definition shows before the places that expand it
    (see `air.evidence.text`); then by place. One finding per line, the strongest clause's name
    kept."""
    unique: dict[tuple[str, int], Finding] = {}
    for result in results:
        shown = [hit for hit in result.counted() + result.test_only_hits() if hit.role in SHOWN_ROLES]
        for hit in sorted(shown, key=_rank):  # a stable sort: in place order within a rank
            place = (hit.path, hit.line)
            if place not in unique:
                unique[place] = finding_of(hit, result.clause.name)
                if len(unique) == MAX_FINDINGS_PER_ROW:
                    return tuple(unique.values())
    return tuple(unique.values())


def _rank(hit: Hit) -> tuple[int, bool, bool, bool]:
    """Where a finding stands within its clause's (see `findings_of`): lower first."""
    return (
        SHOWN_ROLES.index(hit.role),
        is_tooling(hit.path),
        hit.path.endswith(DECLARATION_SUFFIXES),
        EXPANDED in dict(hit.captures),
    )


def finding_of(hit: Hit, evidence: str) -> Finding:
    return Finding(hit.path, hit.line, hit.snippet, "tests" if hit.role == "tests" else "source", evidence)


def join_reasons(parts: list[str]) -> str:
    """The reasons given, in order, the empty ones left out."""
    return "; ".join(part for part in parts if part)


def _result(
    row: Row, outcome, points, reason: str, findings: tuple[Finding, ...] = (), remediation: str | None = None
) -> RowResult:
    return RowResult(
        id=row.id,
        item=row.item,
        section=row.section,
        title=row.title,
        priority=row.priority,
        paths=row.paths,
        outcome=outcome,
        points=points,
        reason=reason,
        evidence=findings,
        remediation=row.remediation if remediation is None else remediation,
        docs=row.docs,
        runtime_check=row.runtime_command or "",
    )
