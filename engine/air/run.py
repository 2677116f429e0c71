"""One check, end to end: the tree indexed, then answered from the result cache when the tree
and the pack are unchanged, or else evaluated (`air.evaluation`) and the report cached."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from air import cache
from air.collection import rare_collections
from air.executor import Executor, Watch
from air.index import CodeIndex, IndexOptions, build_index
from air.index.vendored import Vendoring
from air.pack.shipped import (
    framework_vendoring,
    pack_fingerprint,
    pack_framework,
    refuse_release_outside,
    resolve_pack,
)
from air.regex import TIMED_OUT
from air.results import Report, Source, report_date
from air.source import snapshot
from air.source.provenance import local_source

if TYPE_CHECKING:
    from air.evaluation import Evaluation
    from air.pack.load import Pack
    from air.runtime import RuntimeOptions

Progress = Callable[[str], None]
FROM_THE_CACHE = "unchanged since it was last checked with this pack: report from the cache"


@rare_collections()
def check(
    root: Path,
    pack: Pack,
    options: IndexOptions | None = None,
    progress: Progress | None = None,
    source: Source | None = None,
    index: CodeIndex | None = None,
    framework_version: str | None = None,
) -> Report:
    """Check the tree at `root` (or its prebuilt `index`) against `pack`. `framework_version`
    overrides the framework release the backend's pins target."""
    say = progress or (lambda message: None)
    started = time.perf_counter()
    if index is None:
        index = _indexed(root, _with_vendoring(options, pack.framework.vendoring), say, Executor())
    return _evaluation(pack, index).report(root, say, source, started, framework_version)


@rare_collections()
def check_tree(
    root: Path,
    pack_name: str,
    options: IndexOptions | None = None,
    progress: Progress | None = None,
    provenance: Callable[[], Source] | None = None,
    framework_version: str | None = None,
    use_cache: bool = True,
    runtime: RuntimeOptions | None = None,
    watch: Watch | None = None,
) -> Report:
    """`check` with the pack named `pack_name`, answered from the result cache when the tree
    and the pack are unchanged since they were last checked together (see `air.cache`; the
    pack is then not even loaded), unless `use_cache` is off or the check runs probes
    (`runtime`: what they show depends on the environment, not the tree). The check's worker processes
    start reading the tree's code while the pack loads. `provenance` says where the code came
    from (by default, its git facts); it is asked once, when the cache is first looked up. A tree
    that looks as it did when last read (see `air.source.snapshot`) is not read again."""
    say = progress or (lambda message: None)
    pack_dir = resolve_pack(pack_name)
    if framework_version is not None:
        refuse_release_outside(pack_dir, framework_version)
    fingerprint = pack_fingerprint(pack_dir) if use_cache and runtime is None else None
    # part of the key: the same files at another commit report it
    source = functools.cache(provenance or functools.partial(local_source, root))
    tree = snapshot.snapshot_name(root, repr((fingerprint, options))) if fingerprint else None
    recorded = snapshot.recorded_index(root, tree) if tree else None
    if fingerprint and recorded:
        cached = cache.load(cache.cache_key(recorded, fingerprint, repr((source(), framework_version))), report_date())
        if cached is not None:
            say(FROM_THE_CACHE)
            return cached
    lines: list[str] = []
    vendoring = framework_vendoring(pack_framework(str(pack_dir)))
    index = _indexed(root, _with_vendoring(options, vendoring), lines.append, Executor(watch=watch))
    key = None
    if fingerprint and tree:
        digest = cache.index_digest(index)
        if index.reading and digest != recorded:
            snapshot.record(tree, index.reading, digest)
        key = cache.cache_key(digest, fingerprint, repr((source(), framework_version)))
        cached = cache.load(key, report_date())
        if cached is not None:
            say(FROM_THE_CACHE)
            return cached
    started = time.perf_counter()
    evaluation = index.read_ahead(
        lambda: _evaluation(_loaded(pack_dir, fingerprint), index)
    )  # a broken pack fails here
    for line in lines:
        say(line)
    report = evaluation.report(root, say, source(), started, framework_version, runtime)
    note = cache.store(key, report) if key and not _cut_short(report) else None
    if note:
        say(note)
    return report


def _loaded(pack_dir: Path, fingerprint: str | None) -> Pack:
    from air.pack.compiled import load_kept  # loaded only when the cache cannot answer, as workers start

    return load_kept(pack_dir, fingerprint or pack_fingerprint(pack_dir))


def _evaluation(pack: Pack, index: CodeIndex) -> Evaluation:
    from air.evaluation import Evaluation  # the stages a check runs, not loaded when the cache answers

    return Evaluation(pack, index)


def _with_vendoring(options: IndexOptions | None, vendoring: Vendoring) -> IndexOptions:
    """`options` with the framework's rules for vendored code, unless vendored code is read anyway."""
    options = options or IndexOptions()
    return options if options.include_vendored else replace(options, vendoring=vendoring)


def _cut_short(report: Report) -> bool:
    """Whether a search ran past its time budget: that depends on the machine's load, so such a
    report is not kept in the cache."""
    return any(TIMED_OUT in row.reason for row in report.rows) or any(
        TIMED_OUT in reason for _directory, reason in report.index.skipped_directories
    )


def _indexed(root: Path, options: IndexOptions | None, say: Progress, executor: Executor) -> CodeIndex:
    started = time.perf_counter()
    index = build_index(root, options, executor)
    say(
        f"indexed {len(index.files)} files ({index.total_bytes / 1e6:.1f} MB), "
        f"skipped {len(index.skipped)} in {time.perf_counter() - started:.2f}s"
    )
    return index
