"""Vendored directories: copies of other projects, skipped unless they hold the backend's own code.

A vendored unit is a directory directly below a directory that holds vendored code
(`third_party/op-plugin`); files directly in such a directory form a unit of their own
(`third_party`). A path belongs to the innermost unit it lies in, so the upstream copies a
vendored project carries in turn (`third_party/op-plugin/third_party/googletest`) are units of
their own. A unit is the backend's own, and read like the rest of the tree, when

- it is not named after an upstream project (`upstream`, also with a suffix: `kineto_mlu`), and
- one of its code files matches `own_pattern` (comments blanked), found only in the files that
  hold one of `own_prefilter`, or it holds a Python package the product imports as a module of
  one of its own packages (`from pkg import name`, `pkg.name`).

Every other unit is skipped, with its reason (also one whose search ran past its time budget). Only the files of units that are not named after
an upstream project are read to decide, and searched for literals only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from ahocorasick_rs import AhoCorasick

from air.index import cpp, python
from air.index.blanking import blank_spans
from air.index.model import SourceFile
from air.regex import PatternTimeout, compile_guarded, searching

PACKAGE_MARKER = "__init__.py"
_PATH_MARKS = '"</'
_INCLUDE = re.compile(r"[^\S\n]*#[^\S\n]*include[^\S\n]*")  # what precedes an included path on its line


@dataclass(frozen=True)
class Vendoring:
    """How vendored copies of other projects are told from the backend's own code."""

    directories: tuple[str, ...] = ("third_party",)
    upstream: tuple[str, ...] = ()
    own_prefilter: tuple[str, ...] = ()
    own_pattern: str | None = None
    own_describe: str = "registers for a device key"
    files: tuple[str, ...] = ()  # globs of the names of files that copy the framework's own (a C API header)

    @classmethod
    def from_data(cls, data: Mapping) -> Vendoring:
        own = data.get("own_code", {})
        return cls(
            directories=tuple(data["directories"]),
            upstream=tuple(data.get("upstream", ())),
            own_prefilter=tuple(own.get("prefilter", ())),
            own_pattern=own.get("pattern"),
            own_describe=own.get("describe", cls.own_describe),
            files=tuple(data.get("files", ())),
        )

    def upstream_file(self, rel: str) -> str | None:
        """The glob of `files` that `rel`'s name matches: a copy of an upstream file, wherever it is."""
        name = PurePosixPath(rel).name
        return next((glob for glob in self.files if fnmatchcase(name, glob)), None)

    def unit_of(self, rel: str) -> str | None:
        """The innermost vendored unit `rel` lies in, None when it lies in none."""
        parts = rel.split("/")
        for position in range(len(parts) - 2, -1, -1):
            if parts[position] in self.directories:
                return "/".join(parts[: position + 2 if position + 2 < len(parts) else position + 1])
        return None

    def upstream_name(self, directory: str) -> str | None:
        """The upstream project a directory is named after (`kineto_mlu` -> `kineto`), if any."""
        name = _normal(PurePosixPath(directory).name)
        return next(
            (
                project
                for project in self.upstream
                if name == _normal(project) or name.startswith(_normal(project) + "-")
            ),
            None,
        )


@dataclass(frozen=True)
class Decision:
    unit: str
    own: bool
    reason: str


def decide(
    units: Mapping[str, list[SourceFile]], product: Iterable[SourceFile], vendoring: Vendoring
) -> list[Decision]:
    """Whether each unit (with the files read from it) is the backend's own, and why."""
    imported = _imported_packages(units, product)
    return [_decision(unit, files, imported.get(unit, ""), vendoring) for unit, files in sorted(units.items())]


def _decision(unit: str, files: list[SourceFile], imported: str, vendoring: Vendoring) -> Decision:
    upstream = vendoring.upstream_name(unit)
    if upstream is not None:
        return Decision(unit, False, f"vendored copy of {upstream}, an upstream project")
    try:
        registration = _registration(files, vendoring)
    except PatternTimeout as timeout:
        return Decision(unit, False, f"vendored; not read: {timeout}")
    if registration:
        return Decision(unit, True, f"{vendoring.own_describe} ({registration})")
    if imported:
        return Decision(unit, True, f"the product imports it as a module of its own ({imported})")
    return Decision(
        unit,
        False,
        f"vendored; nothing in it {vendoring.own_describe}, and the product imports none of it as a module of its own",
    )


def _registration(files: list[SourceFile], vendoring: Vendoring) -> str:
    """ "path:line" of the first file of the unit that matches the own-code pattern, or ""."""
    if vendoring.own_pattern is None:
        return ""
    pattern = compile_guarded(vendoring.own_pattern)
    for source in files:
        if source.language not in ("cpp", "template", "python"):
            continue
        if not any(literal in source.text for literal in vendoring.own_prefilter):
            continue
        code = _without_comments(source)
        with searching(source.path):
            match = pattern.search(code)
        if match is not None:
            return f"{source.path}:{_line_of(code, match.start())}"
    return ""


def _without_comments(source: SourceFile) -> str:
    if source.language == "python":
        return blank_spans(source.text, python.literal_spans(source.text)[1])
    return cpp.strip_comments(source.text)


def _imported_packages(units: Mapping[str, list[SourceFile]], product: Iterable[SourceFile]) -> dict[str, str]:
    """Units holding a Python package that product code imports as a module of its own, with
    the import found."""
    names: dict[str, list[str]] = {}
    for unit, files in units.items():
        for name in _package_names(unit, files):
            names.setdefault(name, []).append(unit)
    if not names:
        return {}
    python = [source for source in product if source.language == "python"]
    found: dict[str, str] = {}
    for name, evidence in used_as_own(python, names, top_packages(source.path for source in python)).items():
        for unit in names[name]:
            found.setdefault(unit, evidence)
    return found


def own_use_literals(names: Iterable[str], owners: Iterable[str]) -> dict[str, str]:
    """The literals that show code using one of `names` as its own, each with its name: the
    start of a header's path included from under it (`"name/`, `<name/`), and its import as a module of one of
    the `owners` packages (`owner.name`, `from owner import name`)."""
    literals = {}
    for name in names:
        literals[f'"{name}/'] = literals[f"<{name}/"] = name
        for owner in owners:
            literals[f"{owner}.{name}"] = literals[f"from {owner} import {name}"] = name
    return literals


def used_as_own(files: Iterable[SourceFile], names: Iterable[str], owners: Iterable[str]) -> dict[str, str]:
    """The names of `names` whose code `files` use as their own, each with the first use found:
    C/C++ that includes a header from under it (`#include "name/..."`), Python that imports it as
    a module of one of `owners` (`from owner import name`, `owner.name`). One literal search."""
    wanted = own_use_literals(names, owners)
    literals = sorted(wanted)
    automaton = AhoCorasick(literals)
    found: dict[str, str] = {}
    for source in files:
        for number, start, end in automaton.find_matches_as_indexes(source.text):
            literal = literals[number]
            if wanted[literal] not in found and _is_use(source, literal, start, end):
                shown = literal.strip(_PATH_MARKS)
                found[wanted[literal]] = f"{source.path}:{_line_of(source.text, start)}: {shown}"
    return found


def _is_use(source: SourceFile, literal: str, start: int, end: int) -> bool:
    if literal.startswith(('"', "<")):
        line_start = source.text.rfind("\n", 0, start) + 1
        return source.language in ("cpp", "template") and _INCLUDE.fullmatch(source.text, line_start, start) is not None
    return source.language == "python" and _is_whole(source.text, start, end)


def top_packages(paths: Iterable[str]) -> set[str]:
    """Names of the outermost Python packages among `paths` (directories with __init__.py)."""
    packages = {str(PurePosixPath(path).parent) for path in paths if PurePosixPath(path).name == PACKAGE_MARKER}
    return {
        PurePosixPath(package).name
        for package in packages
        if package != "." and str(PurePosixPath(package).parent) not in packages
    }


def _package_names(unit: str, files: list[SourceFile]) -> set[str]:
    inside = [source.path[len(unit) + 1 :] for source in files if source.path.startswith(unit + "/")]
    return {
        name
        for name in (PurePosixPath(path).parent.name for path in inside if PurePosixPath(path).name == PACKAGE_MARKER)
        if name.isidentifier()
    }


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _is_whole(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] begins a dotted name and ends one of its components."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_")


def _normal(name: str) -> str:
    return re.sub(r"[_.\s]+", "-", name.lower())
