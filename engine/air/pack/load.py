"""Rule packs: load, validate, inherit (`extends`) and digest.

A pack is a directory with `pack.yaml` and row files (`rows/*.yaml` by default). Every
problem is reported as one line naming the file, the line and the YAML path. Row files may
write families of rows once (`air.pack.families`); clauses may name shared evidence (`use`) and
named constraints (`where: NAME`) of the pack or of the packs it extends. A pack that extends
another changes inherited rows with `overrides`, and `redirects` keeps old row ids working.

The paths a pack names stay inside it: row globs, `fixtures` and `operators.catalog` are
relative paths without `..` whose files, links resolved, lie in the pack directory. `extends`
names a shipped pack, or a pack beside this one (`../base`) or inside it; `framework` names a
shipped framework.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from air import __version__
from air.errors import PackError
from air.evidence import clause_from_data
from air.evidence.base import Clause
from air.graph.catalog import RELEASE_FIELD
from air.graph.operators import OperatorSyntax
from air.graph.test_syntax import TestSyntax
from air.pack.conditions import EvidenceResult, Node, measured_names
from air.pack.families import expand_families
from air.pack.framework import Framework, load_framework
from air.pack.probes import ProbeSuite, load_probes
from air.pack.schemas import defined_properties, validate_document
from air.pack.shipped import DEFAULT_FIXTURES, Refused, extended_pack, is_within, resolve_pack
from air.pack.validation import check_clause, checked_condition, checked_pattern
from air.results import item_key
from air.versions import is_range, satisfies
from air.yamldoc import YamlDocument, load_yaml

DEFAULT_ROW_GLOBS = ("rows/*.yaml",)
NOT_ENCODED = "not yet encoded"
RENAMED_FIELDS = {"paths": "integration_paths"}  # a row field's old name: its new one
_KIND_NAMES = {"evidence": "shared evidence", "constraints": "constraints"}


@dataclass(frozen=True)
class Detector:
    id: str
    title: str
    category: str
    classification: str  # the class when the cited code names the backend
    description: str
    framework_has: str
    motivation: str
    clause: Clause

    @classmethod
    def from_data(cls, data: dict[str, Any], evidence: dict[str, Any]) -> Detector:
        """A detector from its validated pack data, with its evidence already resolved."""
        return cls(
            id=data["id"],
            title=data["title"],
            category=data["category"],
            classification=data["classification"],
            description=data["description"],
            framework_has=data["framework_has"],
            motivation=data["motivation"],
            clause=clause_from_data(data["id"].replace("-", "_"), evidence),
        )


@dataclass(frozen=True)
class Note:
    when: Node
    say: str


@dataclass(frozen=True)
class Deprecation:
    evidence: str  # the row's clause that finds the deprecated API
    since: str  # the framework release that deprecated it
    instead: str  # what to use instead


@dataclass(frozen=True)
class Row:
    id: str
    item: str
    section: str
    title: str
    priority: int
    paths: tuple[str, ...]
    evidence: dict[str, Clause]
    score: dict[int, Node]
    score_text: dict[int, str]
    notes: tuple[Note, ...]
    runtime_command: str | None
    remediation: str  # shown unless one of `remedies` holds
    framework_versions: str
    docs: tuple[str, ...]
    remedies: tuple[Note, ...] = ()  # fixes for what the evidence shows, the first that holds shown
    requires: Node | None = None  # a runtime row's static prerequisite
    requires_text: str = ""
    depends_on: str | None = None  # the kind of code the row reads (kernels, ...)
    deprecated: tuple[Deprecation, ...] = ()  # evidence of deprecated APIs, which earns at most 1 from `since` on

    @property
    def encoded(self) -> bool:
        return bool(self.score)

    @property
    def runtime_only(self) -> bool:
        return self.runtime_command is not None

    @property
    def weight(self) -> float:
        return 1.0 / self.priority

    def level(self, results: Mapping[str, EvidenceResult]) -> tuple[int, bool]:
        """The first score level whose condition holds, and whether an earlier one was left
        undecided (which makes the row undecided, at 0)."""
        for level in sorted(self.score, reverse=True):
            truth = self.score[level].evaluate(results)
            if truth is None:
                return 0, True
            if truth:
                return level, False
        return 0, False


@dataclass(frozen=True)
class Pack:
    id: str
    version: str
    title: str
    directory: Path
    framework: Framework
    framework_versions: str
    rows: tuple[Row, ...]
    digest: str
    fixtures: Path
    operators: OperatorSyntax | None
    test_syntax: TestSyntax | None
    upstream: tuple[Detector, ...]
    symbols: dict[str, tuple[str, ...]]
    evidence: dict[str, dict] = field(default_factory=dict)  # shared definitions, as written
    constraints: dict[str, dict] = field(default_factory=dict)  # named capture constraints, as written
    parent: Pack | None = field(default=None, repr=False)  # the pack this one extends
    own_rows: frozenset[str] = frozenset()  # rows this pack's row files define (new, or in place of the parent's)
    overridden: dict[str, frozenset[str]] = field(default_factory=dict)  # row id: the fields `overrides` changes
    row_data: dict[str, dict] = field(default_factory=dict, repr=False)  # every row as written, families expanded
    redirects: dict[str, str] = field(default_factory=dict)  # an id rows no longer have: the row that has it now
    probes: ProbeSuite | None = None  # run by `air check --runtime`

    def resolved(self, row_id: str) -> str:
        """The id of the row `row_id` names: itself, or the id it was renamed to."""
        return self.redirects.get(row_id, row_id)

    def row(self, row_id: str) -> Row:
        """The row `row_id` names, also by an id it had before (`redirects`)."""
        wanted = self.resolved(row_id)
        found = next((row for row in self.rows if row.id == wanted), None)
        if found is None:
            raise KeyError(row_id)
        return found


@dataclass(frozen=True)
class _Names:
    """What a pack's clauses may name: symbol sets, shared evidence and named constraints, and
    the operator catalog."""

    symbols: dict[str, tuple[str, ...]]
    evidence: dict[str, dict]
    constraints: dict[str, dict]
    operators: OperatorSyntax | None


def load_pack(name_or_dir: str) -> Pack:
    """Load and validate a pack."""
    return _load(resolve_pack(name_or_dir), chain=())


def _load(directory: Path, chain: tuple[Path, ...]) -> Pack:
    if directory in chain:
        cycle = " -> ".join(str(p) for p in chain + (directory,))
        raise PackError(str(directory / "pack.yaml"), f"`extends` forms a cycle: {cycle}")
    header = load_yaml(directory / "pack.yaml")
    _prepare_overrides(header)
    validate_document(header, "pack")
    meta = header.data
    _check_versions(header)
    parent = _load(_parent_pack(header, directory), chain + (directory,)) if "extends" in meta else None
    framework = parent.framework if parent else load_framework(meta["framework"])
    if parent and parent.framework.id != meta["framework"]:
        raise header.error(("framework",), f"extends a pack of framework {parent.framework.id!r}")
    inherited = parent.symbols if parent else framework.symbols
    symbols = {**inherited, **{k: tuple(v) for k, v in meta.get("symbols", {}).items()}}
    operators = (
        _operators(header, directory, symbols) if "operators" in meta else (parent.operators if parent else None)
    )
    test_syntax = _test_syntax(header) if "test_inventory" in meta else (parent.test_syntax if parent else None)
    documents = [_row_document(row_file) for row_file in _row_files(directory, header)]
    names = _Names(
        symbols,
        _definitions("evidence", header, documents, parent),
        _definitions("constraints", header, documents, parent),
        operators,
    )
    for document in [header, *documents]:
        for name, clause in document.data.get("evidence", {}).items():
            _check_clause(document, ("evidence", name), clause, names)
    upstream = tuple(
        Detector.from_data(data, _check_clause(header, ("upstream", i, "evidence"), data["evidence"], names))
        for i, data in enumerate(meta.get("upstream", []))
    ) or (parent.upstream if parent else ())
    own = _own_rows(documents, framework, names)
    overridden = _overridden_rows(header, parent, set(own), framework, names)
    built = {**own, **{row_id: (row, data) for row_id, (row, data, _) in overridden.items()}}
    rows = {**({row.id: row for row in parent.rows} if parent else {}), **{i: row for i, (row, _) in built.items()}}
    _check_quick_reference(framework, rows)
    redirects = _redirects(header, parent, set(rows))
    probes = _probes(header, directory, meta["id"], framework, set(rows), redirects) if "probes" in meta else None
    probes = probes or (parent.probes if parent else None)
    digest_parts = [meta, framework.data, *(document.data for document in documents)]
    digest_parts += [probes.digest] if probes else []
    if operators:
        digest_parts += [hashlib.sha256(path.read_bytes()).hexdigest() for _release, path in operators.catalogs.files]
    return Pack(
        id=meta["id"],
        version=meta["version"],
        title=meta.get("title", meta["id"]),
        directory=directory,
        framework=framework,
        framework_versions=meta.get("framework_versions", ""),
        fixtures=_path_in_pack(header, ("fixtures",), directory, meta.get("fixtures", DEFAULT_FIXTURES)),
        operators=operators,
        test_syntax=test_syntax,
        upstream=upstream,
        symbols=symbols,
        evidence=names.evidence,
        constraints=names.constraints,
        rows=tuple(sorted(rows.values(), key=lambda r: item_key(r.item))),
        digest="sha256:"
        + hashlib.sha256(
            json.dumps(digest_parts + ([parent.digest] if parent else []), sort_keys=True, default=str).encode()
        ).hexdigest(),
        parent=parent,
        own_rows=frozenset(own),
        overridden={row_id: frozenset(fields) for row_id, (_, _, fields) in overridden.items()},
        row_data={**(parent.row_data if parent else {}), **{i: data for i, (_, data) in built.items()}},
        redirects=redirects,
        probes=probes,
    )


def _probes(
    header: YamlDocument, directory: Path, pack_id: str, framework: Framework, rows: set[str], redirects: dict[str, str]
) -> ProbeSuite:
    if framework.probe_session is None:
        raise header.error(("probes",), f"framework {framework.id!r} names no probe session to run probes in")
    file = _path_in_pack(header, ("probes",), directory, header.data["probes"])
    if not file.is_file():
        raise header.error(("probes",), f"{header.data['probes']!r}: no such file in the pack")
    return load_probes(file, directory, pack_id, rows, redirects)


def _own_rows(documents: list[YamlDocument], framework: Framework, names: _Names) -> dict[str, tuple[Row, dict]]:
    """The rows of the pack's row files, with the data each is built from."""
    rows: dict[str, tuple[Row, dict]] = {}
    for document in documents:
        if framework.section(document.data["section"]) is None:
            raise document.error(
                ("section",), f"unknown section {document.data['section']!r} of framework {framework.id!r}"
            )
        for number, data in enumerate(document.data["rows"]):
            section = data.get("section", document.data["section"])  # a row may name a section of its own
            if framework.section(section) is None:
                raise document.error(
                    ("rows", number, "section"), f"unknown section {section!r} of framework {framework.id!r}"
                )
            row = _row(document, ("rows", number), data, section, framework, names)
            if row.id in rows:
                raise document.error(("rows", number, "id"), f"duplicate row id {row.id!r}")
            rows[row.id] = (row, data)
    return rows


def _overridden_rows(
    header: YamlDocument,
    parent: Pack | None,
    own: set[str],
    framework: Framework,
    names: _Names,
) -> dict[str, tuple[Row, dict, dict]]:
    """The rows of the pack extended that `overrides` changes (named by their id, or an id they
    had before), each with its data and the fields changed: each field given replaces the
    parent's, and the row is built again (in this pack, with its names)."""
    overrides = header.data.get("overrides", {})
    if overrides and parent is None:
        raise header.error(("overrides",), "only a pack that `extends` another overrides rows")
    sections = {row.id: row.section for row in parent.rows} if parent else {}
    rows: dict[str, tuple[Row, dict, dict]] = {}
    for written, changes in overrides.items():
        at = ("overrides", written)
        row_id = parent.resolved(written) if parent else written
        if row_id in own:
            raise header.error(at, f"row {row_id!r} is defined by this pack's row files: change it there")
        if parent is None or row_id not in parent.row_data:
            raise header.error(
                at, f"no row {written!r} in {parent.id if parent else 'the pack extended'}, the pack this one extends"
            )
        data = {**parent.row_data[row_id], **changes}
        rows[row_id] = (_row(header, at, data, sections[row_id], framework, names), data, changes)
    return rows


def _redirects(header: YamlDocument, parent: Pack | None, rows: set[str]) -> dict[str, str]:
    """Ids rows had before, each with the id of the row that has it now: the parent's (those no
    row of this pack has taken) and this pack's `redirects`."""
    redirects = {old: new for old, new in (parent.redirects if parent else {}).items() if old not in rows}
    for old, new in header.data.get("redirects", {}).items():
        if old in rows:
            raise header.error(("redirects", old), f"{old!r} is the id of a row: only an id no row has redirects")
        if new not in rows:
            raise header.error(("redirects", old), f"{new!r} is not the id of a row of the pack")
        redirects[old] = new
    return redirects


def _prepare_overrides(header: YamlDocument) -> None:
    """Each override as the schema reads a row: score levels as text, renamed fields refused."""
    overrides = header.data.get("overrides") if isinstance(header.data, dict) else None
    for row_id, changes in overrides.items() if isinstance(overrides, dict) else ():
        _refuse_renamed_fields(header, ("overrides", row_id), changes)
        _row_levels_as_text(header, ("overrides", row_id), changes)


def _row_document(row_file: Path) -> YamlDocument:
    """A row file, its families expanded, validated."""
    document = expand_families(load_yaml(row_file, _shown(row_file)), defined_properties("row", "row"))
    rows = document.data.get("rows") if isinstance(document.data, dict) else None
    for number, row in enumerate(rows if isinstance(rows, list) else []):
        _refuse_renamed_fields(document, ("rows", number), row)
    _score_levels_as_text(document)
    validate_document(document, "row")
    return document


def _refuse_renamed_fields(document: YamlDocument, path: tuple, row) -> None:
    for old, new in RENAMED_FIELDS.items():
        if isinstance(row, dict) and old in row:
            raise document.error(path + (old,), f"`{old}` is now `{new}`: rename the key")


def _definitions(kind: str, header: YamlDocument, documents: list[YamlDocument], parent: Pack | None) -> dict:
    """The `kind` definitions (`evidence`, `constraints`) of pack.yaml and the row files, each name
    defined once, over those of the pack extended (which the pack's own rows may redefine)."""
    own: dict = {}
    for document in [header, *documents]:
        for name, definition in document.data.get(kind, {}).items():
            if name in own:
                raise document.error((kind, name), f"{_KIND_NAMES[kind]} {name!r} is defined twice")
            own[name] = definition
    return {**(getattr(parent, kind) if parent else {}), **own}


def _score_levels_as_text(document: YamlDocument) -> None:
    """`score: {2: ..., 1: ...}` has integer keys in YAML; the schema (JSON) names them as text."""
    rows = document.data.get("rows") if isinstance(document.data, dict) else None
    for number, row in enumerate(rows if isinstance(rows, list) else []):
        _row_levels_as_text(document, ("rows", number), row)


def _row_levels_as_text(document: YamlDocument, path: tuple, row) -> None:
    if isinstance(row, dict) and isinstance(row.get("score"), dict):
        row["score"] = {str(level): text for level, text in row["score"].items()}
        for level in row["score"]:
            line = document.lines.get(path + ("score", int(level)) if level.isdigit() else ())
            if line:
                document.lines[path + ("score", level)] = line


def _check_versions(header: YamlDocument) -> None:
    meta = header.data
    for key in ("requires_air", "framework_versions"):
        if key in meta and not is_range(meta[key]):
            raise header.error((key,), f"not a version range: {meta[key]!r} (e.g. '>=0.1,<1')")
    if not satisfies(__version__, meta["requires_air"]):
        raise header.error(("requires_air",), f"needs air {meta['requires_air']}, this is air {__version__}")


def _row_files(directory: Path, header: YamlDocument) -> list[Path]:
    """The row files the pack's globs match: at least one, unless the pack extends another and
    names no globs (it may only change rows of its parent)."""
    globs = header.data.get("rows", DEFAULT_ROW_GLOBS)
    files = set()
    for number, glob in enumerate(globs):
        _path_in_pack(header, ("rows", number), directory, glob)
        for path in directory.glob(glob):
            if path.is_file():
                files.add(_path_in_pack(header, ("rows", number), directory, str(path.relative_to(directory))))
    if not files and ("rows" in header.data or "extends" not in header.data):
        raise header.error(("rows",), f"no row files match {', '.join(globs)}")
    return sorted(files)


def _parent_pack(header: YamlDocument, directory: Path) -> Path:
    """The pack `extends` names (see `extended_pack`), or the error at its line."""
    try:
        return extended_pack(directory, header.data["extends"])
    except Refused as refused:
        raise header.error(("extends",), str(refused)) from None


def _path_in_pack(document: YamlDocument, key: tuple, directory: Path, written: str) -> Path:
    """`written`, a path relative to the pack that `key` names, as a path in the pack directory.
    An absolute path, a `..` or a link resolving outside the pack directory is an error at `key`."""
    if PurePosixPath(written).is_absolute() or ".." in PurePosixPath(written).parts:
        raise document.error(key, f"{written!r} leaves the pack directory (give a path inside it, without '..')")
    path = directory / written
    if not is_within(os.path.realpath(path), os.path.realpath(directory)):
        raise document.error(key, f"{written!r} leads through a link out of the pack directory")
    return path


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _row(document, path, data, section, framework, names: _Names) -> Row:
    for index, route in enumerate(data.get("integration_paths", [])):
        if route not in {p.id for p in framework.paths}:
            raise document.error(path + ("integration_paths", index), f"unknown integration path {route!r}")
    evidence = {}
    for name, clause in data.get("evidence", {}).items():
        resolved = _check_clause(document, path + ("evidence", name), clause, names)
        evidence[name] = clause_from_data(name, resolved)
    if "framework_versions" in data and not is_range(data["framework_versions"]):
        raise document.error(path + ("framework_versions",), f"not a version range: {data['framework_versions']!r}")
    for number, entry in enumerate(data.get("deprecated", ())):
        if entry["evidence"] not in evidence:
            raise document.error(
                path + ("deprecated", number, "evidence"), f"no evidence {entry['evidence']!r} in the row"
            )
    if "runtime" in data and "2" in data.get("score", {}):
        raise document.error(path + ("score", "2"), "a row with a runtime check earns at most 1 from static evidence")
    if "requires" in data and "runtime" not in data:
        raise document.error(
            path + ("requires",),
            "only a row with a runtime check has a static prerequisite; "
            "a static row says what it needs in its score conditions",
        )
    score, score_text = {}, {}
    for level, text in data.get("score", {}).items():
        score[int(level)] = checked_condition(document, path + ("score", level), text, evidence)
        score_text[int(level)] = text
        for name in measured_names(score[int(level)], "coverage"):
            if "of" not in evidence[name].spec:
                raise document.error(path + ("score", level), f"coverage({name}) needs an `ops` clause with `of`")
    notes = tuple(
        Note(checked_condition(document, path + ("notes", i, "when"), note["when"], evidence), note["say"])
        for i, note in enumerate(data.get("notes", []))
    )
    remediation, remedies = _remediation(document, path, data["remediation"], evidence)
    requires = (
        checked_condition(document, path + ("requires",), data["requires"], evidence) if "requires" in data else None
    )
    return Row(
        id=data["id"],
        item=data["item"],
        section=section,
        title=data["title"],
        priority=data["priority"],
        paths=tuple(data.get("integration_paths", ())),
        evidence=evidence,
        score=score,
        score_text=score_text,
        notes=notes,
        runtime_command=data.get("runtime", {}).get("command"),
        remediation=remediation,
        framework_versions=data.get("framework_versions", ""),
        docs=tuple(data["docs"]),
        remedies=remedies,
        requires=requires,
        requires_text=data.get("requires", ""),
        depends_on=data.get("depends_on"),
        deprecated=tuple(Deprecation(d["evidence"], d["since"], d["instead"]) for d in data.get("deprecated", ())),
    )


def _remediation(document, path: tuple, written: str | list, evidence) -> tuple[str, tuple[Note, ...]]:
    """The fix shown by default, and those shown instead when their condition holds."""
    if isinstance(written, str):
        return written, ()
    *conditional, fallback = written
    if "when" in fallback:
        raise document.error(
            path + ("remediation", len(conditional), "when"),
            "the last remediation is the one shown otherwise: it takes no `when`",
        )
    remedies = []
    for number, remedy in enumerate(conditional):
        if "when" not in remedy:
            raise document.error(path + ("remediation", number), "only the last remediation may omit `when`")
        when = checked_condition(document, path + ("remediation", number, "when"), remedy["when"], evidence)
        remedies.append(Note(when, remedy["say"]))
    return fallback["say"], tuple(remedies)


def _operators(header: YamlDocument, directory: Path, symbols: dict) -> OperatorSyntax:
    _path_in_pack(header, ("operators", "catalog"), directory, header.data["operators"]["catalog"])
    for name in (
        "op_list_header_keys",
        "op_list_key_fields",
        "op_list_template_fields",
        "op_list_on_fields",
        "op_list_off_fields",
    ):
        if name in header.data["operators"]:
            checked_pattern(header, ("operators", name), header.data["operators"][name])
    syntax = OperatorSyntax.from_data(header.data["operators"], directory, symbols)
    if syntax.kernel_keys not in symbols:
        raise header.error(("operators", "kernel_keys"), f"unknown symbol set {syntax.kernel_keys!r}")
    if syntax.python_fake and "fake" not in syntax.python_arguments:
        raise header.error(("operators", "python_arguments"), "python_fake needs the arguments of `fake` calls")
    for name in ("fallback_keys", "differentiating_keys"):
        keys = header.data["operators"].get(name)
        if keys is not None and keys not in symbols:
            raise header.error(("operators", name), f"unknown symbol set {keys!r}")
    in_tree_keys = header.data["operators"].get("in_tree_kernels", {}).get("keys")
    if in_tree_keys is not None and in_tree_keys not in symbols:
        raise header.error(("operators", "in_tree_kernels", "keys"), f"unknown symbol set {in_tree_keys!r}")
    catalog = header.data["operators"]["catalog"]
    if RELEASE_FIELD in posixpath.dirname(catalog):
        raise header.error(("operators", "catalog"), f"{RELEASE_FIELD} may stand only in the file's name: {catalog!r}")
    for _release, path in syntax.catalogs.files:
        _path_in_pack(header, ("operators", "catalog"), directory, path.relative_to(directory).as_posix())
    if not syntax.catalogs.files or not all(path.is_file() for _release, path in syntax.catalogs.files):
        raise header.error(("operators", "catalog"), f"no operator catalog in the pack matches {catalog!r}")
    return syntax


def _check_quick_reference(framework: Framework, rows: dict[str, Row]) -> None:
    """Each quick-reference entry names evidence its row has (entries for rows a pack leaves
    out are left out of its reports)."""
    for number, reference in enumerate(framework.quick_reference):
        row = rows.get(reference.row)
        missing = sorted(set(reference.evidence) - set(row.evidence)) if row else []
        if missing:
            raise framework.document.error(
                ("quick_reference", number, "evidence"), f"row {reference.row!r} has no evidence named {missing[0]!r}"
            )


def _test_syntax(header: YamlDocument) -> TestSyntax:
    data = header.data["test_inventory"]
    for label, pattern in data["ci_signals"].items():
        checked_pattern(header, ("test_inventory", "ci_signals", label), pattern)
    live = data.get("live", {})
    for name in ("device_skip", "device_only"):
        if name in live:
            checked_pattern(header, ("test_inventory", "live", name), live[name])
    for number, pattern in enumerate(live.get("skip_list_entries", ())):
        checked_pattern(header, ("test_inventory", "live", "skip_list_entries", number), pattern)
    return TestSyntax.from_data(data)


def _check_clause(document, path, clause: dict, names: _Names) -> dict:
    """The clause at `path` with its shared definition (`use`) and named constraints resolved."""
    if "use" in clause:
        if clause["use"] not in names.evidence:
            raise document.error(path + ("use",), f"no shared evidence named {clause['use']!r}")
        extra = {k: v for k, v in clause.items() if k != "use"}
        clause = {**names.evidence[clause["use"]], **extra}
    if "where" in clause:
        clause = {**clause, "where": _where(document, path + ("where",), clause["where"], names.constraints)}
    for capture, constraint in clause.get("where", {}).items():
        for operator in ("symbol", "not_symbol"):
            if operator in constraint and constraint[operator] not in names.symbols:
                raise document.error(
                    path + ("where", capture, operator), f"unknown symbol set {constraint[operator]!r}"
                )
    check_clause(document, path, clause, names.operators)
    return clause


def _where(document, path: tuple, written: str | list | dict, constraints: dict[str, dict]) -> dict:
    """A clause's capture constraints: a map, the name of constraints the pack defines, or a list
    of both, merged in order."""
    parts = written if isinstance(written, list) else [written]
    where: dict = {}
    for index, part in enumerate(parts):
        at = path + (index,) if isinstance(written, list) else path
        if isinstance(part, str):
            if part not in constraints:
                raise document.error(at, f"no constraints named {part!r}")
            part = constraints[part]
        for capture, constraint in part.items():
            if capture in where:
                raise document.error(at, f"capture {capture} is constrained twice")
            where[capture] = dict(constraint)
    return where
