"""The report's operator coverage: what the backend registers, against the pack's catalog."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from air.evidence import Evaluator
from air.evidence.base import constraint_holds, hit_at
from air.evidence.ops import registrations, registrations_served
from air.graph.operators import FALLBACK, NATIVE, STUB
from air.pack.load import Pack
from air.results import OperatorCategory, OperatorCoverage
from air.scoring.rows import finding_of

MAX_CORE_MISSING = 60


def operator_coverage(pack: Pack, evaluator: Evaluator) -> OperatorCoverage | None:
    context = evaluator.context
    syntax = context.operators
    if syntax is None:
        return None
    found = registrations(context)
    on_device = {"symbol": syntax.kernel_keys}
    device = [r for r in found.ops if constraint_holds(r.key, on_device, context, r.source.path)]
    kernels = [r for r in device if r.kernel == NATIVE]
    native = {r.op for r in kernels}
    fallback_only = {r.op for r in device if r.kernel == FALLBACK} - native
    catalog = syntax.catalog
    served = registrations_served(kernels, catalog)
    core = catalog.core
    core_missing = tuple(name for name in core if not catalog.is_served(name, served))
    return OperatorCoverage(
        catalog_version=catalog.framework_version,
        catalog_basis=syntax.catalog_basis,
        registered=len(native),
        by_source=tuple(sorted(Counter(r.how for r in kernels).items())),
        core_covered=len(core) - len(core_missing),
        core_total=len(core),
        core_missing=core_missing[:MAX_CORE_MISSING],
        fallbacks=tuple(
            finding_of(hit_at(r.source, r.line), r.key)
            for r in found.fallbacks
            if constraint_holds(r.key, on_device, context, r.source.path)
        ),
        categories=tuple(_categories(pack, evaluator)),
        per_op_fallbacks=len(fallback_only),
        stubs=len({r.op for r in device if r.kernel == STUB} - native - fallback_only),
    )


def _categories(pack: Pack, evaluator: Evaluator) -> Iterator[OperatorCategory]:
    for row in pack.rows:
        for clause in row.evidence.values():
            if clause.kind != "ops" or "of" not in clause.spec:
                continue
            coverage = evaluator.result(clause).coverage
            if coverage is None:  # its search ran past its time budget: the row says so, as unknown
                break
            yield OperatorCategory(
                row.item,
                row.title,
                len(coverage.covered),
                coverage.total,
                coverage.missing,
                coverage.composite,
                coverage.fallback,
                coverage.stub,
                coverage.undecided,
            )
            break
