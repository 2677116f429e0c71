"""`air pack test`: check a pack against its fixture trees.

Each fixture is a small tree with an `expected.yaml` (the outcome of listed rows, the path
verdict, fragments of reasons and of the remediations shown) and optional inline annotations in its files:
`air: expect <row-id>` says the next line (or the annotated line itself, when code precedes
the comment) must be among the row's findings; `air: first <row-id>` that it must be the first
finding shown, the strongest; `air: reject <row-id>` says it must not count for the row (it may
still be cited as a test). `name` in `expected.yaml` is the name the report gives the backend.
Both may name a row by an id it had before (the pack's `redirects`).

A row is tested when fixtures show both ends of its range: 2 and 0 for a row source can
decide, 1 and unknown for a row only a runtime check can decide (and 0 when it has a static
prerequisite). An untested row is a failure.

A pack that extends another is also checked against the fixtures of the packs it extends, for
the rows it inherits: those it neither defines again nor overrides in a field that can change
an outcome (`OUTCOME_FIELDS`). Their reasons and remediations are checked where it leaves the
row as it is. So a vendor pack needs fixtures only for the rows it adds or rescores.
"""

# No `from __future__ import annotations` here: it would bind `annotations`, the name of a function below.
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from air.index.files import DEFAULT_EXCLUDES, IndexOptions
from air.pack.load import Pack, Row
from air.pack.schemas import validate_document
from air.results import Report, RowResult
from air.run import check
from air.yamldoc import load_yaml

EXPECTED_FILE = "expected.yaml"
# The row fields whose change can change a row's outcome in a fixture.
OUTCOME_FIELDS = frozenset(
    {"evidence", "score", "requires", "runtime", "integration_paths", "framework_versions", "depends_on"}
)
ANNOTATION = re.compile(r"\bair:\s*(expect|first|reject)\s+([a-z0-9][a-z0-9, -]*)")
COMMENT_LEADERS = ("#", "//", "/*", "*", "<!--", "--")

Outcome = int | str


@dataclass(frozen=True)
class Annotation:
    kind: str  # expect | first | reject
    row: str
    path: str
    line: int
    written_at: int


@dataclass(frozen=True)
class FixtureSet:
    """The fixture trees of one pack of a chain, and the rows whose expectations they check
    (None: every row)."""

    directory: Path
    label: str  # put before each fixture's name: "" for the pack's own, else "<pack id>/"
    scored: frozenset[str] | None = None  # outcomes and cited lines
    worded: frozenset[str] | None = None  # fragments of reasons and remediations

    def fixtures(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.iterdir() if (p / EXPECTED_FILE).is_file())


@dataclass(frozen=True)
class RowCheck:
    """One row outcome a fixture expects, and what the check gave."""

    row: str
    item: str
    expected: Outcome
    actual: Outcome
    reason: str

    @property
    def passed(self) -> bool:
        return self.expected == self.actual


@dataclass
class FixtureResult:
    name: str
    failures: list[str] = field(default_factory=list)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    checks: list[RowCheck] = field(default_factory=list)  # each row outcome the fixture expects

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass
class PackTestResult:
    fixtures: list[FixtureResult]
    untested: list[str]

    @property
    def passed(self) -> bool:
        return not self.untested and all(f.passed for f in self.fixtures)


def outcome_of(row: RowResult) -> Outcome:
    if row.outcome == "not_applicable":
        return "n/a"
    if row.outcome == "unknown":
        return "unknown"
    assert row.points is not None  # a scored row has its points
    return row.points


def required_outcomes(row: Row) -> tuple[Outcome, ...]:
    """The outcomes fixtures must show: both ends of the row's range, and for a runtime row
    with a static prerequisite, also the 0 it scores without it."""
    if row.runtime_only:
        return (1, "unknown", 0) if row.requires is not None else (1, "unknown")
    return max(row.score), 0


def fixture_sets(pack: Pack) -> list[FixtureSet]:
    """The pack's own fixtures, then those of each pack it extends, nearest first, each for the
    rows that pack's fixtures still vouch for."""
    sets = [FixtureSet(pack.fixtures, "")]
    scored: frozenset[str] | None = None
    worded: frozenset[str] | None = None
    child, parent = pack, pack.parent
    while parent is not None:
        scored = _narrowed(scored, _same_outcome(child, parent))
        worded = _narrowed(worded, _as_written(child, parent))
        sets.append(FixtureSet(parent.fixtures, f"{parent.id}/", scored, worded))
        child, parent = parent, parent.parent
    return sets


def _same_outcome(pack: Pack, parent: Pack) -> frozenset[str]:
    """The rows `pack` inherits whose outcome its parent's fixtures still decide."""
    rescored = {row_id for row_id, fields in pack.overridden.items() if fields & OUTCOME_FIELDS}
    return _inherited(pack, parent) - rescored


def _as_written(pack: Pack, parent: Pack) -> frozenset[str]:
    """The rows `pack` inherits as its parent wrote them."""
    return _inherited(pack, parent) - set(pack.overridden)


def _inherited(pack: Pack, parent: Pack) -> frozenset[str]:
    return frozenset(row.id for row in parent.rows) - pack.own_rows


def _narrowed(rows: frozenset[str] | None, kept: frozenset[str]) -> frozenset[str]:
    return kept if rows is None else rows & kept


def run_pack_tests(
    pack: Pack, only: str | None = None, progress: Callable[[FixtureResult], None] | None = None
) -> PackTestResult:
    results = []
    for fixture_set in fixture_sets(pack):
        for directory in fixture_set.fixtures():
            if only and only not in (directory.name, fixture_set.label + directory.name):
                continue
            result = check_fixture(pack, directory, fixture_set)
            results.append(result)
            if progress:
                progress(result)
    untested = [] if only else untested_rows(pack, results)
    return PackTestResult(results, untested)


def check_fixture(pack: Pack, directory: Path, fixture_set: FixtureSet | None = None) -> FixtureResult:
    scope = fixture_set or FixtureSet(directory.parent, "")
    document = load_yaml(directory / EXPECTED_FILE)
    validate_document(document, "fixture")
    expected = document.data
    result = FixtureResult(scope.label + directory.name)
    known = {row.id for row in pack.rows}
    for row_id in list(expected["rows"]) + list(expected.get("reasons", {})) + list(expected.get("remediations", {})):
        if pack.resolved(row_id) not in known:
            result.failures.append(f"{EXPECTED_FILE}: no row {row_id!r} in pack {pack.id}")
    report = check(directory, pack, IndexOptions(excludes=DEFAULT_EXCLUDES + (EXPECTED_FILE,)))
    rows = {row.id: row for row in report.rows}
    _check_backend(report, expected, result)
    for row_id, want in _within(expected["rows"], scope.scored, pack):
        if row_id in rows:
            got = outcome_of(rows[row_id])
            result.checks.append(RowCheck(row_id, rows[row_id].item, want, got, rows[row_id].reason))
            if got == want:
                result.outcomes[row_id] = got
            else:
                result.failures.append(
                    f"{row_id} ({rows[row_id].item}): expected {want}, got {got}: {rows[row_id].reason}"
                )
    for row_id, fragment in _within(expected.get("reasons", {}), scope.worded, pack):
        if row_id in rows and fragment not in rows[row_id].reason:
            result.failures.append(f"{row_id}: reason lacks {fragment!r}: {rows[row_id].reason}")
    for row_id, fragment in _within(expected.get("remediations", {}), scope.worded, pack):
        if row_id in rows and fragment not in rows[row_id].remediation:
            result.failures.append(f"{row_id}: remediation lacks {fragment!r}: {rows[row_id].remediation}")
    for annotation in annotations(directory):
        annotation = replace(annotation, row=pack.resolved(annotation.row))
        if scope.scored is None or annotation.row in scope.scored:
            _check_annotation(annotation, rows, result)
    result.failures.extend(_unproven(report))
    return result


def _within(expected: dict[str, Any], rows: frozenset[str] | None, pack: Pack) -> list[tuple[str, Any]]:
    """The expectations of the rows in `rows` (every row: None), by the id each row has now."""
    named = [(pack.resolved(row_id), value) for row_id, value in expected.items()]
    return [(row_id, value) for row_id, value in named if rows is None or row_id in rows]


def _check_backend(report: Report, expected: dict, result: FixtureResult) -> None:
    verdict = report.integration_path
    if "path" in expected and verdict.id != expected["path"]:
        result.failures.append(f"path: expected {expected['path']}, got {verdict.id}")
    if "key" in expected and verdict.key != expected["key"]:
        result.failures.append(f"key: expected {expected['key']}, got {verdict.key}")
    if "name" in expected and report.backend.name != expected["name"]:
        result.failures.append(f"name: expected {expected['name']}, got {report.backend.name}")
    if "note" in expected and expected["note"] not in verdict.note:
        result.failures.append(f"path note lacks {expected['note']!r}: {verdict.note!r}")


def _check_annotation(annotation: Annotation, rows: dict[str, RowResult], result: FixtureResult) -> None:
    where = f"{annotation.path}:{annotation.written_at}"
    row = rows.get(annotation.row)
    if row is None:
        result.failures.append(f"{where}: annotation names no row of the pack: {annotation.row!r}")
        return
    cited = [f for f in row.evidence if f.path == annotation.path and f.line == annotation.line]
    if annotation.kind == "expect" and not cited:
        result.failures.append(
            f"{where}: expected {annotation.row} to cite line {annotation.line}; it cites "
            + (", ".join(f"{f.path}:{f.line}" for f in row.evidence) or "nothing")
        )
    if annotation.kind == "reject" and any(f.trust != "tests" for f in cited):
        result.failures.append(f"{where}: {annotation.row} must not count line {annotation.line}")
    first = row.evidence[0] if row.evidence else None
    if annotation.kind == "first" and (first is None or (first.path, first.line) != (annotation.path, annotation.line)):
        shown = f"{first.path}:{first.line}" if first else "nothing"
        result.failures.append(
            f"{where}: expected {annotation.row} to cite line {annotation.line} first; it cites {shown}"
        )


def _unproven(report: Report) -> Iterator[str]:
    for row in report.rows:
        if row.points and not row.evidence:
            yield f"{row.id}: scores {row.points} without a finding"
        if (row.outcome != "scored" or row.points != 2) and not row.reason:
            yield f"{row.id}: {outcome_of(row)} without a reason"


def annotations(directory: Path) -> Iterator[Annotation]:
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and p.name != EXPECTED_FILE):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        relative = path.relative_to(directory).as_posix()
        for number, text in enumerate(lines, start=1):
            match = ANNOTATION.search(text)
            if not match:
                continue
            target = number if _code_before(text[: match.start()]) else _next_code_line(lines, number)
            for row_id in re.split(r"[,\s]+", match.group(2).strip()):
                yield Annotation(match.group(1), row_id, relative, target, number)


def _code_before(prefix: str) -> bool:
    stripped = prefix.strip()
    for leader in COMMENT_LEADERS:
        stripped = stripped.removesuffix(leader).strip()
    return bool(stripped)


def _next_code_line(lines: list[str], number: int) -> int:
    for following in range(number, len(lines)):
        text = lines[following]
        if text.strip() and not ANNOTATION.search(text):
            return following + 1
    return number


def untested_rows(pack: Pack, results: list[FixtureResult]) -> list[str]:
    seen: dict[str, set[Outcome]] = defaultdict(set)
    for result in results:
        for row_id, got in result.outcomes.items():
            seen[row_id].add(got)
    missing = []
    for row in pack.rows:
        if not row.encoded:
            missing.append(f"{row.id} ({row.item}): not encoded")
            continue
        lacking = [str(level) for level in required_outcomes(row) if level not in seen[row.id]]
        if lacking:
            missing.append(f"{row.id} ({row.item}): no fixture where it scores {' or '.join(lacking)}")
    return missing
