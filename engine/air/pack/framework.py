"""Framework definitions: sections and tiers, integration paths and their signals, report text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from air.errors import PackError
from air.evidence import clause_from_data
from air.evidence.base import Clause, UpstreamCode
from air.index.cpp import extract_cpp
from air.index.cpp_names import CppVocabulary
from air.index.vendored import Vendoring
from air.pack.conditions import EvidenceResult, Node
from air.pack.schemas import validate_document
from air.pack.shipped import framework_dir
from air.pack.validation import check_clause, checked_condition, checked_pattern
from air.results import Terms
from air.source.locate import KnownBackend
from air.versions import admits
from air.yamldoc import YamlDocument, YamlPath, load_yaml

COUNT_PLACEHOLDER = re.compile(r"\{count:([a-z_][a-z0-9_]*)\}")  # in a verdict's note


@dataclass(frozen=True)
class Section:
    id: str
    number: int
    title: str
    tier: int


@dataclass(frozen=True)
class PathKind:
    id: str
    title: str
    short: str
    key: str | None = None  # the key a backend on this path registers on, when the path has one


@dataclass(frozen=True)
class ConditionalPath:
    """A path whose rows apply under a verdict only when `when` holds over the signals."""

    path: str
    when: Node
    otherwise: str  # why its rows are N/A when `when` does not hold


@dataclass(frozen=True)
class Verdict:
    id: str
    title: str
    when: Node | None  # None: the fallback verdict
    applies: tuple[str, ...]
    applies_if: tuple[ConditionalPath, ...]
    key: str | None
    key_captures: tuple[tuple[str, str], ...]  # (signal, CAPTURE), the first that names a key wins
    note: str

    def route(self, signals: Mapping[str, EvidenceResult]) -> Route:
        """The paths whose rows apply under this verdict, given the results of the signals."""
        applies, withheld = list(self.applies), []
        for conditional in self.applies_if:
            if conditional.when.evaluate(signals):
                applies.append(conditional.path)
            else:
                withheld.append((conditional.path, conditional.otherwise))
        return Route(self, tuple(applies), tuple(withheld))


@dataclass(frozen=True)
class Route:
    """The verdict reached for a tree, and the paths whose rows apply under it."""

    verdict: Verdict
    applies: tuple[str, ...]
    withheld: tuple[tuple[str, str], ...]  # (path, why its rows do not apply under this verdict)


@dataclass(frozen=True)
class CorePart:
    """A part of the runtime the framework's core implements for an in-tree key, and the rows
    (named, or by section) it answers."""

    provides: str
    rows: frozenset[str]
    sections: frozenset[str]

    def answers(self, row_id: str, section: str) -> bool:
        return row_id in self.rows or section in self.sections


@dataclass(frozen=True)
class CoreRuntime:
    """What the framework's core implements for the in-tree keys `keys`, unless the tree brings
    a runtime of its own for the key (`unless`, over the signals)."""

    keys: frozenset[str]
    parts: tuple[CorePart, ...]
    framework_versions: str | None = None  # the releases whose core has them
    unless: Node | None = None

    def part(self, row_id: str, section: str) -> CorePart | None:
        """The part that answers the row, if any."""
        return next((part for part in self.parts if part.answers(row_id, section)), None)


@dataclass(frozen=True)
class QuickReference:
    """An entry of the registration quick reference: a mechanism, the row that checks it, and
    the row's evidence clauses that are the mechanism itself (the row may earn points by other
    means)."""

    entry: str
    row: str
    evidence: tuple[str, ...]
    paths: tuple[str, ...]  # the integration paths it belongs to; empty: those of its row


@dataclass(frozen=True)
class ReleaseDeclaration:
    """Where a backend may name the framework release it builds against: `pattern`, with a
    VERSION group, in a file whose name matches one of `files`."""

    describe: str
    files: tuple[str, ...]
    pattern: str


@dataclass(frozen=True)
class Framework:
    id: str
    name: str
    package: str | None
    package_prefixes: tuple[str, ...]  # of its backends' package names: `<prefix>NAME` is the backend NAME
    sections: tuple[Section, ...]
    paths: tuple[PathKind, ...]
    symbols: dict[str, tuple[str, ...]]
    signals: dict[str, Clause]
    verdicts: tuple[Verdict, ...]
    sources: tuple[tuple[str, str], ...]
    quick_reference: tuple[QuickReference, ...]
    upstream: UpstreamCode
    data: dict  # the validated definition, for the pack digest
    document: YamlDocument = field(compare=False, repr=False)  # to point errors at the definition
    cpp: CppVocabulary = CppVocabulary()
    vendoring: Vendoring = Vendoring()
    terms: Terms = Terms()
    release_declarations: tuple[ReleaseDeclaration, ...] = ()  # strongest first
    native_modules: tuple[str, ...] = ()  # globs of the last component of a compiled extension module's name
    native_libraries: tuple[str, ...] = ()  # globs of the file names of the shared libraries a backend registers
    probe_session: Path | None = None  # the module that starts a probe run (see `air.runtime`)
    headers: str | None = None  # the folder of the installed package that holds its C++ headers
    core_runtime: tuple[CoreRuntime, ...] = ()

    def core_runtime_in_use(
        self, key: str | None, target: str | None, signals: Mapping[str, EvidenceResult]
    ) -> CoreRuntime | None:
        """The core runtime of the in-tree key `key` the backend runs on, if any: one of a
        release it may target (`target`: a release, the range its pins allow, or None for the
        newest), unless the signals show the backend brings its own."""
        return next(
            (
                runtime
                for runtime in self.core_runtime
                if key in runtime.keys
                and (target is None or runtime.framework_versions is None or admits(runtime.framework_versions, target))
                and not (runtime.unless is not None and runtime.unless.evaluate(signals))
            ),
            None,
        )

    def section(self, section_id: str) -> Section | None:
        return next((s for s in self.sections if s.id == section_id), None)

    def path_short(self, path_id: str) -> str:
        return next((p.short for p in self.paths if p.id == path_id), path_id)


def load_framework(name: str) -> Framework:
    """Load a framework and validate it against its schema."""
    directory = framework_dir(name)
    main = directory / "framework.yaml"
    if not main.is_file():
        raise PackError(str(main), f"unknown framework {name!r}")
    document = load_yaml(main)
    if not isinstance(document.data, dict):
        raise document.error((), "must be a mapping")
    merged, origins = dict(document.data), dict.fromkeys(document.data, document)
    for include in document.data.get("include", []):
        part = load_yaml(directory / include)
        if not isinstance(part.data, dict):
            raise part.error((), "must be a mapping")
        for key, value in part.data.items():
            if key in merged:
                raise part.error((key,), f"key {key!r} is already defined in {origins[key].source}")
            merged[key], origins[key] = value, part
    combined = _Combined(document.source, merged, origins)
    validate_document(combined, "framework")
    return _build(combined, directory)


class _Combined(YamlDocument):
    """A framework split over several files: errors point into the file that holds the key."""

    def __init__(self, source: str, data: dict, origins: dict[str, YamlDocument]) -> None:
        super().__init__(source, data, {})
        self.origins = origins

    def error(self, path: YamlPath, message: str) -> PackError:
        origin = self.origins.get(path[0]) if path else None
        return (origin or YamlDocument(self.source, self.data, {})).error(path, message)


def _build(document: _Combined, directory: Path) -> Framework:
    data = document.data
    session = directory / data["probe_session"] if "probe_session" in data else None
    if session is not None and not session.is_file():
        raise document.error(("probe_session",), f"no module {data['probe_session']!r} in {directory}")
    for name, clause in data.get("signals", {}).items():
        check_clause(document, ("signals", name), clause, operators=None)
    signals = {name: clause_from_data(name, clause) for name, clause in data.get("signals", {}).items()}
    verdicts = []
    for number, verdict in enumerate(data["verdicts"]):
        when = None
        if "when" in verdict:
            when = checked_condition(document, ("verdicts", number, "when"), verdict["when"], signals.keys())
        elif number != len(data["verdicts"]) - 1:
            raise document.error(("verdicts", number), "only the last verdict may omit `when`")
        for name in COUNT_PLACEHOLDER.findall(verdict.get("note", "")):
            if name not in signals:
                raise document.error(("verdicts", number, "note"), f"{{count:{name}}} names no signal")
        key = verdict.get("key")
        written = key["capture"] if isinstance(key, dict) else []
        captures = tuple(
            (signal, capture)
            for signal, _, capture in (
                named.partition(".") for named in ([written] if isinstance(written, str) else written)
            )
        )
        for signal, _capture in captures:
            if signal not in signals:
                raise document.error(("verdicts", number, "key"), f"unknown signal {signal!r}")
        verdicts.append(
            Verdict(
                id=verdict["id"],
                title=verdict["title"],
                when=when,
                applies=tuple(verdict["applies"]),
                applies_if=_conditional_paths(document, number, verdict, signals.keys(), data["paths"]),
                key=key if isinstance(key, str) else None,
                key_captures=captures,
                note=verdict.get("note", ""),
            )
        )
    if verdicts[-1].when is not None:
        raise document.error(("verdicts",), "the last verdict must omit `when` (it is the fallback)")
    return Framework(
        id=data["id"],
        name=data["name"],
        package=data.get("package"),
        package_prefixes=tuple(data.get("package_prefixes", ())),
        sections=tuple(Section(**s) for s in data["sections"]),
        paths=tuple(PathKind(**p) for p in data["paths"]),
        symbols={k: tuple(v) for k, v in data.get("symbols", {}).items()},
        signals=signals,
        verdicts=tuple(verdicts),
        sources=tuple((s["title"], s["url"]) for s in data.get("sources", [])),
        quick_reference=_quick_reference(document),
        data=data,
        document=document,
        vendoring=_vendoring(document),
        terms=Terms(**data.get("terms", {})),
        cpp=_cpp_vocabulary(document, data.get("cpp", {})),
        release_declarations=_release_declarations(document),
        native_modules=tuple(data.get("native_modules", ())),
        native_libraries=tuple(data.get("native_libraries", ())),
        probe_session=session,
        headers=data.get("headers"),
        core_runtime=tuple(
            CoreRuntime(
                frozenset(runtime["keys"]),
                tuple(
                    CorePart(part["provides"], frozenset(part.get("rows", ())), frozenset(part.get("sections", ())))
                    for part in runtime["parts"]
                ),
                runtime.get("framework_versions"),
                checked_condition(document, ("core_runtime", number, "unless"), runtime["unless"], signals.keys())
                if "unless" in runtime
                else None,
            )
            for number, runtime in enumerate(data.get("core_runtime", ()))
        ),
        upstream=UpstreamCode(
            bases={name: tuple(bases) for name, bases in data.get("upstream_classes", {}).get("bases", {}).items()},
            virtuals={
                name: {kind: tuple(methods) for kind, methods in by_kind.items()}
                for name, by_kind in data.get("upstream_classes", {}).get("virtuals", {}).items()
            },
            inert_calls=tuple(data.get("inert_calls", ())),
            allocations=tuple(data.get("allocations", ())),
            value_types=frozenset(data.get("value_types", ())),
            metadata_calls=tuple(data.get("metadata_calls", ())),
            fixed_values=tuple(sorted(data.get("fixed_values", {}).items())),
        ),
    )


def _cpp_vocabulary(document: YamlDocument, data: dict) -> CppVocabulary:
    """The constant types and header macros a framework names for reading C/C++; each macro is
    written as its `#define` line."""
    macros = {}
    for number, line in enumerate(data.get("macros", [])):
        defines = extract_cpp(line).defines
        if len(defines) != 1:
            raise document.error(("cpp", "macros", number), "must be one `#define NAME(...) body` line")
        macros[defines[0].name] = defines[0]
    return CppVocabulary(frozenset(data.get("constant_types", ())), macros)


def _release_declarations(document: YamlDocument) -> tuple[ReleaseDeclaration, ...]:
    declarations = document.data.get("release_declarations", [])
    for number, declaration in enumerate(declarations):
        checked_pattern(document, ("release_declarations", number, "pattern"), declaration["pattern"])
    return tuple(ReleaseDeclaration(d["describe"], tuple(d["files"]), d["pattern"]) for d in declarations)


def _vendoring(document: YamlDocument) -> Vendoring:
    if "vendored" not in document.data:
        return Vendoring()
    own = document.data["vendored"].get("own_code")
    if own is not None:
        checked_pattern(document, ("vendored", "own_code", "pattern"), own["pattern"])
    return Vendoring.from_data(document.data["vendored"])


def _conditional_paths(
    document: YamlDocument, number: int, verdict: dict, signals, paths: list
) -> tuple[ConditionalPath, ...]:
    known = {path["id"] for path in paths}
    conditional = []
    for path_id, rule in verdict.get("applies_if", {}).items():
        where = ("verdicts", number, "applies_if", path_id)
        if path_id not in known:
            raise document.error(where, f"unknown path {path_id!r}")
        when = checked_condition(document, where + ("when",), rule["when"], signals)
        conditional.append(ConditionalPath(path_id, when, rule["otherwise"]))
    return tuple(conditional)


def _quick_reference(document: _Combined) -> tuple[QuickReference, ...]:
    paths = {path["id"] for path in document.data["paths"]}
    entries = []
    for number, data in enumerate(document.data.get("quick_reference", [])):
        unknown = sorted(set(data.get("paths", ())) - paths)
        if unknown:
            raise document.error(("quick_reference", number, "paths"), f"unknown path {unknown[0]!r}")
        entries.append(
            QuickReference(data["entry"], data["row"], tuple(data["evidence"]), tuple(data.get("paths", ())))
        )
    return tuple(entries)


def known_backends(directory: Path) -> tuple[KnownBackend, ...]:
    """The known backends a framework lists in its `backends.yaml`, if it has one."""
    path = directory / "backends.yaml"
    if not path.is_file():
        return ()
    document = load_yaml(path)
    validate_document(document, "backends")
    return tuple(
        KnownBackend(
            item["name"],
            tuple(item.get("aliases", ())),
            item["vendor"],
            item["url"],
            item.get("ref"),
            item.get("subdir"),
        )
        for item in document.data["backends"]
    )
