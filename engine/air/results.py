"""The immutable report model that every renderer reads. Nothing here re-reads the tree."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

SCHEMA_VERSION = "1.0"

Outcome = Literal["scored", "not_applicable", "unknown"]


def item_key(item: str) -> tuple[int, ...]:
    """A checklist item number's place in order: 8.2.9 before 8.2.10."""
    return tuple(int(part) for part in item.split(".") if part.isdigit())


Trust = Literal["verified", "refuted", "source", "tests", "declared"]  # verified/refuted: by a runtime probe
ProbeOutcome = Literal["verified", "refuted", "error", "skipped"]
Usage = Literal["used", "unused", "not_applicable", "unknown"]


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    snippet: str
    trust: Trust
    evidence: str = ""  # the name of the evidence clause that produced it


@dataclass(frozen=True)
class RowResult:
    id: str
    item: str
    section: str
    title: str
    priority: int
    paths: tuple[str, ...]  # empty: applies to every path
    outcome: Outcome
    points: int | None
    reason: str
    evidence: tuple[Finding, ...]
    remediation: str
    docs: tuple[str, ...]
    runtime: ProbeOutcome | None = None  # what the probes that decide the row showed, when any ran
    runtime_check: str = ""  # the pack's command that decides the row at runtime, when it gives one


@dataclass(frozen=True)
class SectionResult:
    id: str
    number: int
    title: str
    tier: int
    max_pts: float  # 0 when every row is N/A (the section is dropped)
    earned: float
    percent: float | None  # None when the section is dropped
    unknown_weight: float  # weight of unknown rows, for evidence coverage


@dataclass(frozen=True)
class PathSignal:
    name: str
    description: str
    evidence: tuple[Finding, ...]


@dataclass(frozen=True)
class IntegrationPath:
    id: str
    title: str
    key: str | None  # the key the backend registers on, as the framework's terms name it
    applies: tuple[str, ...]  # the row paths that apply under this verdict
    note: str
    signals: tuple[PathSignal, ...]  # only the signals that fired


BINARY_DIST = "binary dist"  # the source kind of a mostly compiled distribution


@dataclass(frozen=True)
class Source:
    kind: str  # "local", "git", "dist", BINARY_DIST, ...
    location: str
    commit: str | None = None
    branch: str | None = None
    dirty: bool | None = None  # tracked files differ from the commit; None when unknown
    describe: str | None = None  # `git describe --tags --always --dirty`
    subdir: str | None = None  # the folder of the repository that was analysed
    version: str | None = None  # the version the source itself declares (an installed distribution's)
    remote: str | None = None  # a local checkout's origin URL


@dataclass(frozen=True)
class Backend:
    name: str
    version: str | None
    source: Source
    target_framework_version: str | None  # from the backend's pins, e.g. ">=2.4,<2.6"
    metadata_file: str | None = None  # the build file that names the backend's distribution
    pin_file: str | None = None  # the file whose requirement gives target_framework_version


@dataclass(frozen=True)
class PathLabel:
    id: str
    title: str
    short: str  # shown in the checklist's Path column


@dataclass(frozen=True)
class Terms:
    """How the report names the framework's own concepts."""

    key: str = "key"  # what an integration path's key is, in running text
    core_operators: str = "core operators"  # the operators the pack's catalog flags core


@dataclass(frozen=True)
class PackInfo:
    id: str
    version: str
    digest: str
    framework: str
    framework_name: str
    paths: tuple[PathLabel, ...] = ()
    terms: Terms = Terms()


@dataclass(frozen=True)
class QuickReferenceEntry:
    entry: str
    row: str
    status: Usage
    location: str  # "path:line" where the backend's product code uses the mechanism, "" if nowhere
    points: int | None  # the row's
    outcome: Outcome


@dataclass(frozen=True)
class Link:
    title: str
    url: str


@dataclass(frozen=True)
class IndexStats:
    files: int
    product: int
    tests: int
    docs: int
    bytes: int
    skipped: tuple[tuple[str, int], ...]  # (reason, count), sorted by reason
    absent_submodules: tuple[str, ...] = ()  # declared in .gitmodules, but not in the tree
    skipped_files: tuple[tuple[str, str], ...] = ()  # (path, reason), the first ones by path
    skipped_directories: tuple[tuple[str, str], ...] = ()  # (directory, reason): excluded or vendored
    vendored_read: tuple[tuple[str, str], ...] = ()  # (directory, why): vendored, but the backend's own
    switches_off: tuple[str, ...] = ()  # build switches off by default, whose `#if` code is not read


@dataclass(frozen=True)
class OperatorCategory:
    item: str
    title: str
    covered: int  # operators with a native kernel
    total: int
    missing: tuple[str, ...]  # neither a native kernel nor a per-op fallback
    composite: tuple[str, ...]
    fallback: tuple[str, ...] = ()  # registered only with a per-op fallback kernel
    stub: tuple[str, ...] = ()  # registered only with a stub kernel, which computes nothing
    undecided: str = ""  # why the category's coverage cannot be told, if it cannot


@dataclass(frozen=True)
class OperatorCoverage:
    """The operators the backend registers kernels for, measured against the pack's catalog."""

    catalog_version: str
    catalog_basis: str  # why the check reads the catalog of that release ("" when the pack has one catalog)
    registered: int  # distinct operators with a native kernel on the device's keys
    by_source: tuple[tuple[str, int], ...]  # ("block" | "python" | "op list", native registrations)
    core_covered: int
    core_total: int
    core_missing: tuple[str, ...]
    fallbacks: tuple[Finding, ...]
    categories: tuple[OperatorCategory, ...]
    per_op_fallbacks: int = 0  # distinct operators registered on the device's keys with a fallback kernel only
    stubs: int = 0  # distinct operators registered on the device's keys with a stub kernel only


@dataclass(frozen=True)
class SkippedTest:
    path: str
    line: int
    decorator: str  # the skip decorator or call as written
    reason: str  # "" when none is given


@dataclass(frozen=True)
class CiWorkflow:
    path: str
    signals: tuple[str, ...]  # the pack's CI signals the file shows


@dataclass(frozen=True)
class TestInventory:
    """The backend's own tests, read statically."""

    test_files: int
    python_tests: int
    cpp_tests: int
    markers: tuple[tuple[str, int], ...]  # shared test machinery used, with its number of uses
    skip_total: int
    skip_reasons: tuple[tuple[str, int], ...]  # most frequent first
    skips: tuple[SkippedTest, ...]  # the first ones, in file order
    ci: tuple[CiWorkflow, ...]


@dataclass(frozen=True)
class UpstreamCandidate:
    """Something the backend built that could serve every backend from the framework itself."""

    id: str
    name: str
    category: str
    classification: str  # generic | needs-abstraction | hardware-specific
    description: str
    framework_has: str
    motivation: str
    files: tuple[str, ...]  # "path:line" of the first finding in each file, the first few files
    file_count: int


@dataclass(frozen=True)
class ProbeResult:
    """What one runtime probe showed: `verified` (it passed), `refuted` (it failed), `error` (it
    hung or ended the interpreter), or `skipped` (it could not run; never credit)."""

    id: str
    title: str
    rows: tuple[str, ...]
    outcome: ProbeOutcome
    detail: str  # what it returned, why it failed or was skipped
    path: str  # its module, as <pack id>/<path in the pack>
    line: int  # where it failed; else its definition
    matrix: tuple[tuple[str, str, str, str], ...] = ()  # what a sweep measured: (name, variant, outcome, detail)


@dataclass(frozen=True)
class RuntimeRun:
    """The probes `--runtime` ran, and the environment they ran in."""

    python: str  # the probed interpreter
    device: str
    environment: tuple[tuple[str, str], ...]  # (fact, value): versions of Python, the framework, the backend
    probes: tuple[ProbeResult, ...]


@dataclass(frozen=True)
class Report:
    tool_version: str
    date: str  # ISO date, pinned by SOURCE_DATE_EPOCH
    pack: PackInfo
    backend: Backend
    integration_path: IntegrationPath
    readiness: float
    coverage: float
    sections: tuple[SectionResult, ...]
    rows: tuple[RowResult, ...]
    quick_reference: tuple[QuickReferenceEntry, ...]
    sources: tuple[Link, ...]
    index: IndexStats
    operators: OperatorCoverage | None = None
    tests: TestInventory | None = None
    upstream: tuple[UpstreamCandidate, ...] | None = None  # None when the pack declares no detectors
    runtime: RuntimeRun | None = None  # None unless the check ran its probes (--runtime)
    schema_version: str = SCHEMA_VERSION


def report_date() -> str:
    """Today in UTC, or the date of SOURCE_DATE_EPOCH when it is set (reproducible reports)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    moment = datetime.fromtimestamp(int(epoch), UTC) if epoch.isdigit() else datetime.now(UTC)
    return moment.date().isoformat()
