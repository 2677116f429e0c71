"""The engine's packages follow the data flow, and imports point one way along it.

A check flows source → index → graph → evidence → pack → runtime → scoring → report; the commands on top
(`cli`, `run`, `cache`, `packtest`) drive the stages, and every stage may use the foundation
modules at the top of `air` (errors, results, regex, yamldoc, ...). A module may import from
its own layer and from the layers before it, never from one after it: an import that points
back is a seam in the wrong place.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "engine" / "air"
FLOW = ("source", "index", "graph", "evidence", "pack", "runtime", "scoring", "report")
COMMANDS = frozenset({"cli", "run", "evaluation", "cache", "packtest", "__main__"})


def layer_of(module: str) -> int:
    """0 for the foundation, then one per stage of the flow, and last the commands."""
    parts = module.split(".")
    if parts[0] != "air" or len(parts) == 1:
        return 0
    if parts[1] in FLOW:
        return 1 + FLOW.index(parts[1])
    if parts[1] in COMMANDS:
        return 1 + len(FLOW)
    return 0


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def air_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import of an air module, at any depth, type-only ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("air"):
            names = [f"{node.module}.{alias.name}" for alias in node.names] if node.module == "air" else [node.module]
            found.extend((node.lineno, name) for name in names)
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names if alias.name.startswith("air"))
    return found


ENGINE_FILES = sorted(PACKAGE.rglob("*.py"))


def test_every_stage_is_a_package():
    for stage in FLOW:
        assert (PACKAGE / stage / "__init__.py").is_file(), stage


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda path: module_name(path))
def test_imports_point_along_the_flow(path):
    importer = module_name(path)
    backwards = [
        f"line {line}: {importer} imports {imported}"
        for line, imported in air_imports(path)
        if imported != "air.__version__" and layer_of(imported) > layer_of(importer)
    ]
    assert backwards == []


def test_the_layer_rule_catches_an_import_that_points_back():
    assert layer_of("air.source.locate") < layer_of("air.index.files") < layer_of("air.report.markdown")
    assert layer_of("air.results") == 0 < layer_of("air.source.tree")
    assert layer_of("air.run") > layer_of("air.report.output")
