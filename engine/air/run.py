"""One check, end to end: index -> path -> rows -> score -> report model."""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

from air import __version__, cache
from air.detect import detect_path
from air.distribution import BINARY_DIST
from air.evaluate import evaluate_row
from air.evidence import Evaluator
from air.evidence.base import Context
from air.framework import QuickReference, Verdict
from air.index import CodeIndex, IndexOptions, build_index
from air.index.files import shown_path
from air.live_tests import LiveTests
from air.operator_summary import operator_coverage
from air.packs import Pack, Row, load_pack, pack_fingerprint, resolve_pack
from air.provenance import local_source
from air.regex import TIMED_OUT
from air.report.model import (
    Backend,
    IndexStats,
    Link,
    PackInfo,
    PathLabel,
    QuickReferenceEntry,
    Report,
    RowResult,
    Source,
    Usage,
)
from air.scoring import score
from air.test_inventory import test_inventory
from air.upstream import backend_names, find_candidates

Progress = Callable[[str], None]
MAX_LISTED_SKIPPED = 200


def check(root: Path, pack: Pack, options: IndexOptions | None = None, progress: Progress | None = None,
          source: Source | None = None, index: CodeIndex | None = None, framework_version: str | None = None) -> Report:
    """Check the tree at `root` (or its prebuilt `index`) against `pack`. `framework_version`
    overrides the framework release the backend's pins target."""
    say = progress or (lambda message: None)
    started = time.perf_counter()
    if index is None:
        index = _indexed(root, options, say)
    return _evaluate(root, pack, index, say, source, started, framework_version)


def check_tree(root: Path, pack_name: str, options: IndexOptions | None = None, progress: Progress | None = None,
               source: Source | None = None, framework_version: str | None = None, use_cache: bool = True) -> Report:
    """`check` with the pack named `pack_name`, answered from the result cache when the tree
    and the pack are unchanged since they were last checked together (see `air.cache`; the
    pack is then not even loaded), unless `use_cache` is off. Worker processes start reading
    the tree's code while the pack loads; they are ended at once when the check stops early."""
    say = progress or (lambda message: None)
    pack_dir = resolve_pack(pack_name)
    source = source or local_source(root)  # part of the key: the same files at another commit report it
    lines: list[str] = []
    index = _indexed(root, options, lines.append)
    key = cache.cache_key(index, pack_fingerprint(pack_dir), repr((source, framework_version))) if use_cache else None
    cached = cache.load(key, report_date()) if key else None
    if cached is not None:
        say("unchanged since it was last checked with this pack: report from the cache")
        return cached
    index.read_ahead()
    try:
        pack = load_pack(str(pack_dir))  # a broken pack fails here, before any progress is shown
        for line in lines:
            say(line)
        report = check(root, pack, options, progress, source, index=index, framework_version=framework_version)
    except BaseException:
        index.close(abandon=True)
        raise
    note = cache.store(key, report) if key and not _cut_short(report) else None
    if note:
        say(note)
    return report


def _cut_short(report: Report) -> bool:
    """Whether a search ran past its time budget: that depends on the machine's load, so such a
    report is not kept in the cache."""
    return any(TIMED_OUT in row.reason for row in report.rows)


def _indexed(root: Path, options: IndexOptions | None, say: Progress) -> CodeIndex:
    started = time.perf_counter()
    index = build_index(root, options)
    say(f"indexed {len(index.files)} files ({index.total_bytes / 1e6:.1f} MB), "
        f"skipped {len(index.skipped)} in {time.perf_counter() - started:.2f}s")
    return index


def _evaluate(root: Path, pack: Pack, index: CodeIndex, say: Progress, source: Source | None,
              started: float, framework_version: str | None) -> Report:
    evaluator = Evaluator(Context(index, pack.symbols, pack.operators))
    clauses = list(pack.framework.signals.values()) + [c for r in pack.rows for c in r.evidence.values()]
    clauses += [d.clause for d in pack.upstream]
    try:
        evaluator.prepare(clauses)
        if pack.test_syntax and pack.test_syntax.live:
            found_names = partial(_names_in_tests, pack, evaluator, root, source, framework_version)
            evaluator.context.live_tests = LiveTests(index, pack.test_syntax, found_names)
        tests = evaluator.evaluate_all(
            clauses, alongside=(lambda: test_inventory(index, pack.test_syntax)) if pack.test_syntax else None,
        )
        verdict, path = detect_path(pack.framework, evaluator)
        say(f"integration path: {path.title}")
        backend = describe_backend(index, root, pack, source, framework_version)
        names = backend_names(backend.name, device_names(pack, evaluator))
        target = backend.target_framework_version
        compiled = backend.source.kind == BINARY_DIST
        rows = tuple(evaluate_row(row, evaluator, verdict, pack.framework, target, compiled) for row in pack.rows)
        operators = operator_coverage(pack, evaluator)
        upstream = find_candidates(pack.upstream, evaluator, names) if pack.upstream else None
    except BaseException:
        index.close(abandon=True)
        raise
    index.close()
    result = score(pack.framework.sections, rows)
    say(f"evaluated {len(rows)} rows in {time.perf_counter() - started:.2f}s")
    return Report(
        tool_version=__version__,
        date=report_date(),
        pack=PackInfo(pack.id, pack.version, pack.digest, pack.framework.id, pack.framework.name,
                      tuple(PathLabel(p.id, p.title, p.short) for p in pack.framework.paths)),
        backend=backend,
        integration_path=path,
        readiness=result.readiness,
        coverage=result.coverage,
        sections=result.sections,
        rows=rows,
        quick_reference=quick_reference(pack, rows, evaluator, verdict),
        sources=tuple(Link(title, url) for title, url in pack.framework.sources),
        index=index_stats(index),
        operators=operators,
        tests=tests,
        upstream=upstream,
    )


def _names_in_tests(pack: Pack, evaluator: Evaluator, root: Path, source: Source | None,
                    framework_version: str | None) -> tuple[str, ...]:
    """The names by which the backend's tests name it: its package, its device names, its
    dispatch key. Asked for by the first clause that reads tests, in whichever process."""
    _verdict, path = detect_path(pack.framework, evaluator)
    backend = describe_backend(evaluator.context.index, root, pack, source, framework_version)
    names = backend_names(backend.name, device_names(pack, evaluator))
    return names + ((path.dispatch_key,) if path.dispatch_key else ())


def device_names(pack: Pack, evaluator: Evaluator) -> tuple[str, ...]:
    """The device names the backend registers: NAME captures of the framework's path signals."""
    names = {
        hit.capture("NAME").strip().strip("\"'")
        for clause in pack.framework.signals.values()
        for hit in evaluator.result(clause).counted()
        if hit.capture("NAME")
    }
    return tuple(sorted(name for name in names if name.isidentifier()))


def report_date() -> str:
    """Today in UTC, or the date of SOURCE_DATE_EPOCH when it is set (reproducible reports)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    moment = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch.isdigit() else datetime.now(timezone.utc)
    return moment.date().isoformat()


def describe_backend(index: CodeIndex, root: Path, pack: Pack, source: Source | None,
                     framework_version: str | None = None) -> Backend:
    source = source or local_source(root)
    name = version = target = None
    package = (pack.framework.package or "").lower()
    for source_file, facts in index.build:
        if source_file.role != "product":
            continue  # an example's or a test's setup.py does not describe the backend
        name = name or facts.project_name
        version = version or facts.version
        for requirement in facts.requirements:
            if package and requirement.name == package and requirement.spec and target is None:
                target = requirement.spec
    return Backend(
        name=name or shown_path(root.resolve().name),
        version=version or source.version or _tagged_version(source),
        source=source,
        target_framework_version=framework_version or target,
    )


def _tagged_version(source: Source) -> str | None:
    """The tag `git describe` names, when the commit is tagged or descends from a tag."""
    described = re.match(r"^(.+?)(?:-\d+-g[0-9a-f]+)?(?:-dirty)?$", source.describe) if source.describe else None
    if described is None or re.fullmatch(r"[0-9a-f]{7,40}", described.group(1)):
        return None  # --always printed a bare commit: there is no tag
    return described.group(1)


def quick_reference(pack: Pack, rows: tuple[RowResult, ...], evaluator: Evaluator,
                    verdict: Verdict) -> tuple[QuickReferenceEntry, ...]:
    """Each mechanism of the framework's quick reference, used when one of its clauses finds it
    in product code (not when its row earns points by other means, nor in tests or docs)."""
    results = {row.id: row for row in rows}
    definitions = {row.id: row for row in pack.rows}
    entries = []
    for reference in pack.framework.quick_reference:
        row = results.get(reference.row)
        if row is None:
            continue
        status, location = _usage(reference, definitions[reference.row], row, evaluator, verdict)
        entries.append(QuickReferenceEntry(reference.entry, row.id, status, location, row.points, row.outcome))
    return tuple(entries)


def _usage(reference: QuickReference, definition: Row, row: RowResult, evaluator: Evaluator,
           verdict: Verdict) -> tuple[Usage, str]:
    if row.outcome == "not_applicable" or reference.paths and not set(reference.paths) & set(verdict.applies):
        return "not_applicable", ""
    results = [evaluator.result(definition.evidence[name]) for name in reference.evidence]
    found = sorted((hit.path, hit.line) for result in results for hit in result.counted() if hit.role == "product")
    if found:
        return "used", f"{found[0][0]}:{found[0][1]}"
    return ("unknown" if any(not result.decided for result in results) else "unused"), ""


def index_stats(index: CodeIndex) -> IndexStats:
    roles = Counter(f.role for f in index.files)
    skipped = Counter(s.reason for s in index.skipped)
    return IndexStats(
        files=len(index.files), product=roles["product"], tests=roles["tests"], docs=roles["docs"],
        bytes=index.total_bytes, skipped=tuple(sorted(skipped.items())), absent_submodules=absent_submodules(index),
        skipped_files=tuple(sorted((s.path, s.reason) for s in index.skipped))[:MAX_LISTED_SKIPPED],
    )


_SUBMODULE_PATH = re.compile(r"(?m)^[^\S\n]*path\s*=\s*(\S(?:[^\n]*\S)?)[^\S\n]*$")


def absent_submodules(index: CodeIndex) -> tuple[str, ...]:
    """Submodules `.gitmodules` declares whose directory is missing or empty: code the check
    cannot see (a backend's kernels often live in one)."""
    declared = index.by_path.get(".gitmodules")
    if declared is None:
        return ()
    root = index.root.resolve()
    absent = []
    for path in sorted({match.group(1).strip("/") for match in _SUBMODULE_PATH.finditer(declared.text)}):
        directory = (root / path).resolve()
        if root not in directory.parents:
            continue  # a path that leaves the tree is not the tree's business
        try:
            empty = not directory.is_dir() or next(directory.iterdir(), None) is None
        except OSError:
            empty = True
        if empty:
            absent.append(path)
    return tuple(absent)
