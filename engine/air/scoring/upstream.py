"""Upstream candidates: what the backend built that every backend could use if it lived in
the framework. Advisory, never scored.

A pack declares detectors (each an evidence clause with a category and what the framework
already has). Every detector that finds something becomes one candidate, classified by a
written rule over the files it cites:
- generic: no cited file names the backend (its package or device name), so the code could
  move into the framework unchanged;
- otherwise the detector's declared class: `needs-abstraction` (every backend has the problem
  but this code calls backend internals, so the framework needs a hook) or
  `hardware-specific` (not upstreamable).
"""

from __future__ import annotations

import re

from air.evidence import Evaluator
from air.graph.live_tests import naming_pattern
from air.index import CodeIndex
from air.pack.load import Detector
from air.results import UpstreamCandidate

MAX_FILES = 8


def find_candidates(
    detectors: tuple[Detector, ...], evaluator: Evaluator, backend_names: tuple[str, ...]
) -> tuple[UpstreamCandidate, ...]:
    index = evaluator.context.index
    naming = naming_pattern(backend_names)
    candidates = []
    for detector in detectors:
        hits = evaluator.result(detector.clause).counted()
        if not hits:
            continue
        files = sorted({hit.path for hit in hits})
        first_lines = {path: min(hit.line for hit in hits if hit.path == path) for path in files}
        specific = naming is not None and any(_names_backend(index, path, naming) for path in files)
        candidates.append(
            UpstreamCandidate(
                id=detector.id,
                name=detector.title,
                category=detector.category,
                classification=detector.classification if specific else "generic",
                description=detector.description,
                framework_has=detector.framework_has,
                motivation=detector.motivation,
                files=tuple(f"{path}:{first_lines[path]}" for path in files[:MAX_FILES]),
                file_count=len(files),
            )
        )
    return tuple(candidates)


def backend_names(
    packages: tuple[str | None, ...], device_names: tuple[str, ...], package_prefixes: tuple[str, ...]
) -> tuple[str, ...]:
    """The names by which code refers to this backend: its packages, each also without the
    longest of the framework's package prefixes it starts with, and the device names it registers."""
    names = set(device_names)
    for package in filter(None, packages):
        prefix = max((prefix for prefix in package_prefixes if package.startswith(prefix)), key=len, default="")
        names.update((package, package.removeprefix(prefix)))
    return tuple(sorted(name for name in names if len(name) >= 2))


def _names_backend(index: CodeIndex, path: str, naming: re.Pattern[str]) -> bool:
    source = index.by_path.get(path)
    return source is not None and naming.search(index.code_text(source)) is not None
