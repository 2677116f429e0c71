"""The values a Python name may take where the module says so without running anything.

At a line of a file, a name stands for:
- when it is a parameter of the function around that line: the values a `parametrize("a, b",
  [(1, 2), ...])` decorator of that function gives it (a test's `atol=atol`), and nothing known
  otherwise, since a caller may pass any value whatever the default;
- otherwise what the module binds it to at its top level (`NAME = {...}`, `A, B = 1, 2`), or
  the tree's module it imports the name from binds (`from .utils import TYPE_MAP`,
  `from . import utils` then `utils.TYPE_MAP`).
Each value is given as its source text, a name followed through a few bindings; a literal
(a constant, a container) ends the search. When one of the values is not known, none is.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from air.index.python_loops import dotted_name, parsed_module

if TYPE_CHECKING:
    from air.index import CodeIndex

MAX_HOPS = 4
_LITERALS = (ast.Constant, ast.Dict, ast.List, ast.Tuple, ast.Set, ast.UnaryOp)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def bound_values(index: CodeIndex, path: str, name: str, line: int | None = None) -> tuple[str, ...] | None:
    """The source texts of the values `name` (`NAME`, `module.NAME`) may take at `line` of the
    Python file `path` (at its top level when `line` is None); None when one is not known."""
    name = name.strip()
    source = index.by_path.get(path)
    if _DOTTED.fullmatch(name) is None or source is None or source.language != "python":
        return None
    tree = parsed_module(source.text)
    function = _function_around(tree, line) if tree is not None and line is not None else None
    if function is not None and name in _parameters(function):
        given = _parameter_values(function, name)
        values = [_value_of(index, path, source.text, node) for node in given or ()]
        return tuple(v for found in values if found is not None for v in found) if given and all(values) else None
    return _module_value(index, path, name, 0)


def _module_value(index: CodeIndex, path: str, name: str, hops: int) -> tuple[str, ...] | None:
    source = index.by_path.get(path)
    if hops >= MAX_HOPS or source is None or source.language != "python":
        return None
    first, _, rest = name.partition(".")
    value = _module_binding(source.text, first) if not rest else None
    if value is not None:
        return _value_of(index, path, source.text, value, hops + 1)
    found = _imported(index, path, first, rest)
    return _module_value(index, *found, hops + 1) if found is not None else None


def _value_of(index: CodeIndex, path: str, text: str, node: ast.expr, hops: int = 0) -> tuple[str, ...] | None:
    if isinstance(node, _LITERALS):
        segment = ast.get_source_segment(text, node)
        return (segment,) if segment is not None else None
    if isinstance(node, (ast.Name, ast.Attribute)) and (dotted := dotted_name(node)):
        return _module_value(index, path, dotted, hops)
    return None


def _module_binding(text: str, name: str) -> ast.expr | None:
    """The value of the last top-level binding of `name`: `name = value`, or its place in
    `a, name = x, value`."""
    tree = parsed_module(text)
    found = None
    for statement in tree.body if tree is not None else ():
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        value = getattr(statement, "value", None)
        for target in targets:
            if isinstance(target, ast.Name) and target.id == name:
                found = value
            elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
                found = next((v for t, v in zip(target.elts, value.elts) if dotted_name(t) == name), found)
    return found


def _imported(index: CodeIndex, path: str, first: str, rest: str) -> tuple[str, str] | None:
    """(path, name) of the tree's module that `first` of the file `path` is imported from, and
    the name there: `from m import X` gives m's X; `import m as u`, `from p import m` give m's `rest`."""
    for imported in index.python_facts(index.by_path[path]).imports:
        if imported.alias != first:
            continue
        if imported.name is None:
            module, name = imported.module, rest
        elif f"{imported.module}.{imported.name}" in index.modules:
            module, name = f"{imported.module}.{imported.name}", rest
        else:
            module, name = imported.module, ".".join(filter(None, (imported.name, rest)))
        target = index.modules.get(module)
        return (target, name) if target is not None and name else None
    return None


def _function_around(tree: ast.Module, line: int) -> _Function | None:
    innermost = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            if innermost is None or node.lineno >= innermost.lineno:
                innermost = node
    return innermost


def _parameters(function: _Function) -> list[str]:
    arguments = function.args
    return [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


def _parameter_values(function: _Function, name: str) -> list[ast.expr] | None:
    """The expressions a parameter takes from the parametrize decorators of its function; None
    when one gives it values that cannot be read."""
    found: list[ast.expr] = []
    for decorator in function.decorator_list:
        parametrized = _parametrized(decorator, name)
        if parametrized is None:
            return None
        found.extend(parametrized)
    return found


def _parametrized(decorator: ast.expr, name: str) -> list[ast.expr] | None:
    """The values a `parametrize(names, values)` decorator gives `name`; None when they cannot be read."""
    if not (
        isinstance(decorator, ast.Call)
        and dotted_name(decorator.func).endswith("parametrize")
        and len(decorator.args) >= 2
    ):
        return []
    names, values = decorator.args[0], decorator.args[1]
    if isinstance(names, ast.Constant) and isinstance(names.value, str):
        listed = [part.strip() for part in names.value.split(",") if part.strip()]
    elif isinstance(names, (ast.List, ast.Tuple)):
        listed = [n.value for n in names.elts if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    else:
        return []
    if name not in listed:
        return []
    if not isinstance(values, (ast.List, ast.Tuple)):
        return None
    position = listed.index(name)
    if len(listed) == 1:
        return list(values.elts)
    rows = [row for row in values.elts if isinstance(row, (ast.Tuple, ast.List)) and len(row.elts) == len(listed)]
    return [row.elts[position] for row in rows] if len(rows) == len(values.elts) else None
