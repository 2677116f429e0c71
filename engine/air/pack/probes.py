"""A pack's runtime probes: the file `probes:` names in pack.yaml lists them, each a function of
a Python module beside that file, tied to the rows it decides, with a timeout.

Loading a pack reads the modules only as text: each probe's function must be defined at the
top of its module, which the parse shows. Nothing of them runs until `air check --runtime`
hands them to the probe worker, in the probed interpreter (see `air.runtime`).
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from air.pack.schemas import validate_document
from air.yamldoc import YamlDocument, load_yaml, read_bounded

DEFAULT_TIMEOUT = 120.0


@dataclass(frozen=True)
class Measure:
    """Rows a probe's matrix decides: by its entries whose name and variant match these globs, an
    entry passing when its outcome is one of `passing`."""

    rows: tuple[str, ...]
    names: tuple[str, ...] = ("*",)
    variants: tuple[str, ...] = ("*",)
    passing: tuple[str, ...] = ("pass",)


@dataclass(frozen=True)
class Probe:
    id: str
    title: str
    rows: tuple[str, ...]  # the ids of the rows it decides
    module: Path
    function: str
    line: int  # of the function's definition in its module
    timeout: float  # seconds
    shown: str  # the module as reports name it: <pack id>/<path in the pack>
    measures: tuple[Measure, ...] = ()  # rows its matrix decides


@dataclass(frozen=True)
class ProbeSuite:
    probes: tuple[Probe, ...]
    digest: str  # of the probes file and the modules, for the pack's digest


def load_probes(
    file: Path, pack_directory: Path, pack_id: str, row_ids: set[str], redirects: dict[str, str]
) -> ProbeSuite:
    """The probes `file` lists, each checked: its module a `.py` file beside `file` (or below it),
    its function defined there, its rows rows of the pack (by id, or an id they had before)."""
    document = load_yaml(file, str(file))
    validate_document(document, "probes")
    seen: set[str] = set()
    probes = []
    digest = hashlib.sha256(json.dumps(document.data, sort_keys=True).encode())
    functions: dict[Path, dict[str, int] | str] = {}  # each module read once: its functions' lines, or why none
    for number, data in enumerate(document.data["probes"]):
        at = ("probes", number)
        if data["id"] in seen:
            raise document.error(at + ("id",), f"duplicate probe id {data['id']!r}")
        seen.add(data["id"])
        module, function = _runnable(document, at + ("run",), file.parent, data["run"])
        if module not in functions:
            source = read_bounded(module, str(module))
            digest.update(source)
            functions[module] = _top_functions(module, source)
        rows = _rows(document, at + ("rows",), data.get("rows", []), row_ids, redirects)
        measures = tuple(
            Measure(
                _rows(document, at + ("measures", index, "rows"), measure["rows"], row_ids, redirects),
                tuple(measure.get("names", ("*",))),
                tuple(measure.get("variants", ("*",))),
                tuple(measure.get("passing", ("pass",))),
            )
            for index, measure in enumerate(data.get("measures", []))
        )
        if not rows and not measures:
            raise document.error(at, "decides no row: give it `rows`, or `measures` for the matrix it returns")
        probes.append(
            Probe(
                id=data["id"],
                title=data["title"],
                rows=rows,
                module=module,
                function=function,
                line=_definition_line(document, at + ("run",), module, functions[module], function),
                timeout=float(data.get("timeout", DEFAULT_TIMEOUT)),
                shown=f"{pack_id}/{module.relative_to(pack_directory).as_posix()}",
                measures=measures,
            )
        )
    return ProbeSuite(tuple(probes), "sha256:" + digest.hexdigest())


def _rows(
    document: YamlDocument, at: tuple, written: list[str], row_ids: set[str], redirects: dict[str, str]
) -> tuple[str, ...]:
    rows = []
    for index, name in enumerate(written):
        row_id = redirects.get(name, name)
        if row_id not in row_ids:
            raise document.error(at + (index,), f"no row {name!r} in the pack")
        rows.append(row_id)
    return tuple(rows)


def _runnable(document: YamlDocument, at: tuple, directory: Path, written: str) -> tuple[Path, str]:
    """`module.py:function`, the module a path below `directory`."""
    path, _, function = written.rpartition(":")
    relative = PurePosixPath(path)
    if relative.is_absolute() or ".." in relative.parts or relative.suffix != ".py":
        raise document.error(at, f"{written!r}: give MODULE.py:FUNCTION, the module beside the probes file or below it")
    module = directory / relative
    if not module.is_file() or module.is_symlink():
        raise document.error(at, f"{path!r}: no such module beside the probes file")
    return module, function


def _top_functions(module: Path, source: bytes) -> dict[str, int] | str:
    """The line of each function `source` defines at its top level, or why it does not parse."""
    try:
        tree = ast.parse(source, str(module))
    except (SyntaxError, ValueError) as error:
        return f"{module.name} does not parse: {error}"
    return {node.name: node.lineno for node in reversed(tree.body) if isinstance(node, ast.FunctionDef)}


def _definition_line(
    document: YamlDocument, at: tuple, module: Path, functions: dict[str, int] | str, function: str
) -> int:
    if isinstance(functions, str):
        raise document.error(at, functions)
    if function not in functions:
        raise document.error(at, f"{module.name} defines no function {function!r} at its top level")
    return functions[function]
