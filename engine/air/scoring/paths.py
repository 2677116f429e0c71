"""Integration-path detection: the framework's signals, then the first verdict whose condition holds."""

from __future__ import annotations

from collections import Counter

from air.evidence import Evaluator
from air.evidence.base import ClauseResult
from air.pack.framework import COUNT_PLACEHOLDER, Framework, Route
from air.results import IntegrationPath, PathSignal
from air.scoring.rows import findings_of


def detect_path(framework: Framework, evaluator: Evaluator) -> tuple[Route, IntegrationPath]:
    """The first verdict whose condition holds over the framework's signals, with the paths
    whose rows apply under it (its `applies_if` paths only when their condition holds)."""
    results = signal_results(framework, evaluator)
    verdict = next(v for v in framework.verdicts if v.when is None or v.when.evaluate(results))
    route = verdict.route(results)
    fired = tuple(
        PathSignal(name, result.clause.description(), findings_of([result])[:10])
        for name, result in sorted(results.items())
        if result.count()
    )
    key = verdict.key
    for signal, capture in verdict.key_captures:
        values = [(value, hit.path) for hit in results[signal].counted() if (value := hit.capture(capture))]
        if values:  # the key most registrations name: a few may write it otherwise (c10::kHPU for HPU)
            keys = Counter(evaluator.context.resolve(*value).split("::")[-1] for value in values)
            key = max(keys, key=keys.__getitem__)
            break
    note = COUNT_PLACEHOLDER.sub(lambda m: str(results[m.group(1)].count()), verdict.note)
    return route, IntegrationPath(verdict.id, verdict.title, key, route.applies, note, fired)


def signal_results(framework: Framework, evaluator: Evaluator) -> dict[str, ClauseResult]:
    """The result of each of the framework's path signals, by name."""
    return {name: evaluator.result(clause) for name, clause in framework.signals.items()}
