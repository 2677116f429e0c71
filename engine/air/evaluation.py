"""The evaluation of one check: the integration path, every row, operator coverage, the test
inventory and upstream candidates, assembled into the report."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from functools import partial
from pathlib import Path, PurePosixPath

from air import __version__
from air.errors import InputError
from air.evidence import Evaluator
from air.evidence.base import Clause, Context
from air.graph.live_tests import LiveTests
from air.index import CodeIndex
from air.index.files import UNREAD_LANGUAGES, is_translation_unit, role_of
from air.index.vendored import Vendoring, own_use_literals, used_as_own
from air.pack.conditions import referenced_names
from air.pack.framework import QuickReference, Route
from air.pack.load import Pack, Row
from air.regular_file import resolved
from air.results import (
    BINARY_DIST,
    Backend,
    IndexStats,
    IntegrationPath,
    Link,
    PackInfo,
    PathLabel,
    QuickReferenceEntry,
    Report,
    RowResult,
    RuntimeRun,
    Source,
    Usage,
    report_date,
)
from air.run import Progress
from air.runtime import RuntimeOptions
from air.runtime.supervisor import ProbeRequest, run_probes
from air.scoring.backend import describe_backend, extended_packages
from air.scoring.formula import score
from air.scoring.operators import operator_coverage
from air.scoring.paths import detect_path, signal_results
from air.scoring.probes import with_measures, with_probes
from air.scoring.rows import Setting, evaluate_row
from air.scoring.test_inventory import test_inventory
from air.scoring.upstream import backend_names, find_candidates

MAX_LISTED_SKIPPED = 200


class Evaluation:
    """One check's evaluation of `pack` over `index`. `report` scans the tree for the literals
    that the pack's clauses and the check's own selections look for (while the tests are
    counted), parses the Python files the clauses read, works out the backend's identity, then
    evaluates every clause (each stage's work shared out among the check's workers) and
    assembles the report."""

    def __init__(self, pack: Pack, index: CodeIndex) -> None:
        self.pack, self.index = pack, index
        self.evaluator = Evaluator(
            Context(index, pack.symbols, pack.operators, pack.framework.cpp, pack.framework.upstream)
        )
        self.clauses = _clauses(pack)
        self.absent = AbsentCode.of(index, pack.framework.vendoring)

    def report(
        self,
        root: Path,
        say: Progress,
        source: Source | None,
        started: float,
        framework_version: str | None,
        runtime: RuntimeOptions | None = None,
    ) -> Report:
        pack, index, evaluator = self.pack, self.index, self.evaluator
        test_syntax = pack.test_syntax
        inventory = partial(test_inventory, index, test_syntax) if test_syntax else None
        tests = evaluator.select(self.clauses, self.absent.literals, alongside=inventory)
        evaluator.prepare(self.clauses)
        identified = partial(_identity, pack, evaluator, root, source, framework_version)
        # before the clauses are shared out: each worker would work it out again
        route, path, backend, names = self._identified(identified)
        evaluator.run_batched(self.clauses)
        evaluator.evaluate_all(self.clauses)
        say(f"integration path: {path.title}")
        target = backend.target_framework_version
        compiled = backend.source.kind == BINARY_DIST
        extensions = absent_extensions(index, pack.framework.native_modules) + absent_libraries(
            index, pack.framework.native_libraries
        )
        setting = Setting(
            route,
            pack.framework,
            target,
            compiled,
            self.absent.used(index) + extensions,
            extensions,
            unread_code(index),
            path.key,
            pack.framework.core_runtime_in_use(path.key, target, signal_results(pack.framework, evaluator)),
        )
        rows = tuple(evaluate_row(row, evaluator, setting) for row in pack.rows)
        operators = operator_coverage(pack, evaluator)
        upstream = find_candidates(pack.upstream, evaluator, names) if pack.upstream else None
        say(f"evaluated {len(rows)} rows in {time.perf_counter() - started:.2f}s")
        probed = _probed(pack, evaluator, runtime, rows, backend.name, say) if runtime else None
        if probed and pack.probes:
            measures = {probe.id: probe.measures for probe in pack.probes.probes if probe.measures}
            rows = with_measures(with_probes(rows, probed.probes), probed.probes, measures)
        result = score(pack.framework.sections, rows)
        return Report(
            tool_version=__version__,
            date=report_date(),
            pack=PackInfo(
                pack.id,
                pack.version,
                pack.digest,
                pack.framework.id,
                pack.framework.name,
                tuple(PathLabel(p.id, p.title, p.short) for p in pack.framework.paths),
                pack.framework.terms,
            ),
            backend=backend,
            integration_path=path,
            readiness=result.readiness,
            coverage=result.coverage,
            sections=result.sections,
            rows=rows,
            quick_reference=quick_reference(pack, rows, evaluator, route),
            sources=tuple(Link(title, url) for title, url in pack.framework.sources),
            index=index_stats(index),
            operators=operators,
            tests=tests,
            upstream=upstream,
            runtime=probed,
        )

    def _identified(self, identified: Callable[[], Identity]) -> Identity:
        """The backend's identity, with the names its tests use. It counts findings in product
        code alone: where a signal finds none there, its search in the tests is left to the
        workers (see `Evaluator.fallbacks_deferred`)."""
        test_syntax = self.pack.test_syntax
        with self.evaluator.fallbacks_deferred():
            if test_syntax and test_syntax.live:
                live_tests = LiveTests(self.index, test_syntax, partial(_names_in_tests, identified))
                self.evaluator.context.live_tests = live_tests
                live_tests.find_names()
            identity = identified()
            self.evaluator.context.device_names = device_names(self.pack, self.evaluator)
            return identity


def _probed(
    pack: Pack, evaluator: Evaluator, runtime: RuntimeOptions, rows: tuple[RowResult, ...], package: str, say: Progress
) -> RuntimeRun:
    """Run the pack's probes for the rows that apply, on the device `runtime` names or else the
    one the source registers."""
    session = pack.framework.probe_session
    if pack.probes is None or session is None:
        raise InputError(f"--runtime: pack {pack.id} has no probes")
    applying = {row.id for row in rows if row.outcome != "not_applicable"}
    probes = [
        probe
        for probe in pack.probes.probes
        if (set(probe.rows) | {row for measure in probe.measures for row in measure.rows}) & applying
    ]
    device = runtime.device or next(iter(device_names(pack, evaluator)), None)
    if device is None:
        raise InputError("--runtime: the source names no device; give --device NAME")
    say(f"runtime: {len(probes)} probes on device {device!r} in {runtime.python}")
    options = {
        "device": device,
        "import": runtime.module,
        "package": package,
        "ops": runtime.ops,
        "ops_budget": str(runtime.ops_budget),
    }
    environment, results = run_probes(ProbeRequest(runtime.python, session, options, runtime.budget), probes, say)
    named = device.partition(":")[0]  # a probe's title says <name> for the device's
    shown = tuple(replace(result, title=result.title.replace("<name>", named)) for result in results)
    return RuntimeRun(runtime.python, device, tuple(sorted(environment.items())), shown)


def _clauses(pack: Pack) -> list[Clause]:
    """The framework's signals, the rows' evidence and the upstream candidates' clauses."""
    clauses = list(pack.framework.signals.values()) + [c for r in pack.rows for c in r.evidence.values()]
    return clauses + [d.clause for d in pack.upstream]


Identity = tuple[Route, IntegrationPath, Backend, tuple[str, ...]]


def _identity(
    pack: Pack, evaluator: Evaluator, root: Path, source: Source | None, framework_version: str | None
) -> Identity:
    """The backend's integration path, description and names, worked out once per process."""

    def identify() -> Identity:
        route, path = detect_path(pack.framework, evaluator)
        backend = describe_backend(
            evaluator.context.index,
            root,
            pack.framework.package,
            source,
            framework_version,
            registering_files(pack, evaluator, route),
            pack.framework.release_declarations,
        )
        if pack.operators is not None:  # before any operator is read: the release picks the catalog
            evaluator.context.operators = pack.operators.for_target(backend.target_framework_version)
        prefixes = pack.framework.package_prefixes
        devices = device_names(pack, evaluator)
        extended = () if devices else extended_packages(evaluator.context.index, prefixes)
        names = backend_names((backend.name, *extended), devices, prefixes)
        return route, path, backend, names

    return evaluator.context.memo(("identity",), identify)


def _names_in_tests(identified: Callable[[], Identity]) -> tuple[str, ...]:
    """The names by which the backend's tests name it: its package, its device names, the key
    of its integration path. Asked for by the first clause that reads tests, in whichever process."""
    _route, path, _backend, names = identified()
    return names + ((path.key,) if path.key else ())


def device_names(pack: Pack, evaluator: Evaluator) -> tuple[str, ...]:
    """The device names the backend registers: NAME captures of the framework's path signals,
    worked out once."""

    def find() -> tuple[str, ...]:
        names = {
            captured.strip().strip("\"'")
            for clause in pack.framework.signals.values()
            for hit in evaluator.result(clause).counted()
            if (captured := hit.capture("NAME"))
        }
        return tuple(sorted(name for name in names if name.isidentifier()))

    return evaluator.context.memo(("device-names",), find)


def registering_files(pack: Pack, evaluator: Evaluator, route: Route) -> tuple[str, ...]:
    """The product files where the backend registers its device (or its compile backend): those
    of the signals the verdict reached reads (every signal, for a verdict without a condition)
    that name the device (capture NAME), or, when none does, of all those signals. A signal of
    another path never names the backend: a compile backend shipped beside a device package."""
    condition = route.verdict.when
    deciding = referenced_names(condition) if condition is not None else set(pack.framework.signals)
    naming: set[str] = set()
    found: set[str] = set()
    for name, clause in pack.framework.signals.items():
        if name not in deciding:
            continue
        for hit in evaluator.result(clause).counted():
            if hit.role == "product":
                (naming if hit.capture("NAME") else found).add(hit.path)
    return tuple(sorted(naming or found))


def quick_reference(
    pack: Pack, rows: tuple[RowResult, ...], evaluator: Evaluator, route: Route
) -> tuple[QuickReferenceEntry, ...]:
    """Each mechanism of the framework's quick reference, used when one of its clauses finds it
    in product code (not when its row earns points by other means, nor in tests or docs)."""
    results = {row.id: row for row in rows}
    definitions = {row.id: row for row in pack.rows}
    entries = []
    for reference in pack.framework.quick_reference:
        row = results.get(reference.row)
        if row is None:
            continue
        status, location = _usage(reference, definitions[reference.row], row, evaluator, route)
        entries.append(QuickReferenceEntry(reference.entry, row.id, status, location, row.points, row.outcome))
    return tuple(entries)


def _usage(
    reference: QuickReference, definition: Row, row: RowResult, evaluator: Evaluator, route: Route
) -> tuple[Usage, str]:
    if row.outcome == "not_applicable" or reference.paths and not set(reference.paths) & set(route.applies):
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
        files=len(index.files),
        product=roles["product"],
        tests=roles["tests"],
        docs=roles["docs"],
        bytes=index.total_bytes,
        skipped=tuple(sorted(skipped.items())),
        absent_submodules=absent_submodules(index),
        skipped_files=tuple(sorted((s.path, s.reason) for s in index.skipped))[:MAX_LISTED_SKIPPED],
        skipped_directories=tuple(sorted(index.skipped_directories)),
        vendored_read=tuple(sorted(index.vendored_read)),
        switches_off=tuple(f"{name} ({where})" for name, where in index.build_switches.items()),
    )


@dataclass(frozen=True)
class AbsentCode:
    """The absent submodules that may hold code of the backend's own (not named after an
    upstream project: a missing googletest hides nothing the rows read), each with the names
    the product would use its code under."""

    names: dict[str, frozenset[str]]  # submodule path -> its name, also with `_` for `-`
    owners: frozenset[str]  # the product's outermost Python packages

    @classmethod
    def of(cls, index: CodeIndex, vendoring: Vendoring) -> AbsentCode:
        names = {
            path: frozenset({PurePosixPath(path).name, PurePosixPath(path).name.replace("-", "_")})
            for path in absent_submodules(index)
            if vendoring.upstream_name(path) is None
        }
        owners = index.product_packages if names else frozenset()
        return cls(names, owners)

    @property
    def literals(self) -> dict[str, str]:
        return own_use_literals(sorted(set().union(*self.names.values())), sorted(self.owners)) if self.names else {}

    def used(self, index: CodeIndex) -> tuple[str, ...]:
        """The submodules whose code the product uses as its own, under their names: headers it
        includes (`#include "op_plugin/..."` for `third_party/op-plugin`) or a module it
        imports as one of its packages' (`torch_x.op_plugin`). The literals were scanned for."""
        literals = self.literals
        if not literals:
            return ()
        candidates = index.select(literals, languages=["python", "cpp", "template"], roles=["product"])
        used = used_as_own(candidates, sorted(set(literals.values())), sorted(self.owners))
        return tuple(f"submodule {path}" for path, spelled in self.names.items() if spelled & used.keys())


def absent_extensions(index: CodeIndex, names: tuple[str, ...]) -> tuple[str, ...]:
    """Compiled extension modules of the backend's own packages (named as `names` say) that
    its Python imports but the tree neither holds nor can build, having no C/C++ product code:
    a checkout of a package's Python alone. What they register cannot be seen."""
    if not names or _has_cpp_product(index):
        return ()
    known, packages = index.modules, index.package_dirs
    found: dict[str, str] = {}
    for source in index.files:
        if source.language != "python" or source.role != "product":
            continue
        for item in index.python_lexical(source).imports:
            imported = f"{item.module}.{item.name}".lstrip(".") if item.name else ""
            for module in (imported, item.module):
                parent, _, last = module.rpartition(".")
                own = parent in known or (parent == "" and "" in packages)  # of a package of the tree
                if module and module not in known and own and any(fnmatchcase(last, name) for name in names):
                    found.setdefault(module, f"{source.path}:{item.line}")
    return tuple(f"compiled extension {module} (imported at {at})" for module, at in sorted(found.items()))


def _has_cpp_product(index: CodeIndex) -> bool:
    """Whether the product has C/C++ code that builds: then its compiled parts are in the tree."""
    return any(f.role == "product" and is_translation_unit(f.path) for f in index.files)


def unread_code(index: CodeIndex) -> tuple[str, ...]:
    """The product's code in languages air does not read ("Rust (src/lib.rs and 2 more files)"),
    when the tree has no C/C++ product code: what it implements cannot be seen."""
    if _has_cpp_product(index):
        return ()
    by_language: dict[str, list[str]] = {}
    for path in index.unread:
        if role_of(path) == "product":
            by_language.setdefault(UNREAD_LANGUAGES[PurePosixPath(path).suffix.lower()], []).append(path)
    return tuple(
        f"{language} ({paths[0]}{f' and {len(paths) - 1} more files' if len(paths) > 1 else ''})"
        for language, paths in sorted(by_language.items())
    )


_QUOTED_NAME = re.compile(r"""["']([\w.+-]++)["']""")


def absent_libraries(index: CodeIndex, names: tuple[str, ...]) -> tuple[str, ...]:
    """Shared libraries (named as `names` say) that the product's Python loads by file name
    while the tree has no C/C++ product code to build them from: a package that registers a
    library built in another repository. What they implement cannot be seen."""
    if not names or _has_cpp_product(index):
        return ()
    found: dict[str, str] = {}
    for source in index.files:
        if source.language != "python" or source.role != "product":
            continue
        code = index.code_text(source)
        for match in _QUOTED_NAME.finditer(code):
            if any(fnmatchcase(match[1], name) for name in names):
                found.setdefault(match[1], f"{source.path}:{code.count(chr(10), 0, match.start()) + 1}")
    return tuple(f"shared library {library} (named at {at})" for library, at in sorted(found.items()))


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
        directory = resolved(root / path)
        if directory is None or root not in directory.parents:
            continue  # a path that leaves the tree is not the tree's business
        try:
            empty = not directory.is_dir() or next(directory.iterdir(), None) is None
        except OSError:
            empty = True
        if empty:
            absent.append(path)
    return tuple(absent)
