"""The body of the kernel a Python registration names, as the statements the host-fallback
reader (`air.graph.host_fallback`) reads.

The kernel is the function the registration decorates (`@impl("ns::op", key)` over `def f`),
its kernel argument (`lib.impl("op", f, key)`), or what is given to the callable it returns
(`impl("ns::op", key)(f)`): a function the module defines at its top level, the one a
`functools.partial(f, ...)` binds, a lambda, or the function a factory of the module defines and
returns (`impl("ns::op", key)(unsupported("op"))`). Its statements are those of its body outside
inner blocks, each as source text: an assignment to several names is one statement per name,
and a lambda returns its expression; its body is kept too, for the stub reader. Nothing of the
tree is run.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import lru_cache
from typing import NamedTuple

from air.index.python_loops import callee_name, parsed_module

PARTIAL = frozenset({"partial", "functools.partial"})
_Function = ast.FunctionDef | ast.AsyncFunctionDef


class PythonKernel(NamedTuple):
    name: str  # "lambda" for a lambda
    statements: list[str]
    body: list[ast.stmt]  # a lambda's is the return of its expression


def kernel_statements(
    text: str, line: int, callee: str, position: int, keywords: tuple[str, ...]
) -> PythonKernel | None:
    """The kernel that the call of `callee` made on `line` registers, its kernel given as positional argument `position` or as one of `keywords`; None
    when the kernel is not a function of this module."""
    calls = _calls_by_line(text)
    if calls is None:
        return None
    functions, on_line = calls
    for node in on_line.get(line, ()):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_registers(decorator, line, callee) for decorator in node.decorator_list):
                return _function_kernel(node)
            continue
        if _registers(node, line, callee):
            given = _argument(node, position, keywords)
        elif _registers(node.func, line, callee) and node.args:
            given = node.args[0]
        else:
            continue
        if given is not None:
            return _kernel(given, functions)
    return None


@lru_cache(maxsize=8)  # a file registers many kernels: its calls are found once
def _calls_by_line(text: str) -> tuple[dict[str, _Function], dict[int, list[ast.Call | _Function]]] | None:
    """The module's top-level functions by name, and its calls and decorated functions by the
    line they (or a decorator) start on, in the order of a walk of the tree."""
    tree = parsed_module(text)
    if tree is None:
        return None
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    on_line: dict[int, list[ast.Call | _Function]] = defaultdict(list)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            on_line[node.lineno].append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for line in {decorator.lineno for decorator in node.decorator_list}:
                on_line[line].append(node)
    return functions, dict(on_line)


def _registers(node: ast.expr, line: int, callee: str) -> bool:
    return isinstance(node, ast.Call) and node.lineno == line and callee_name(node) == callee


def _argument(call: ast.Call, position: int, keywords: tuple[str, ...]) -> ast.expr | None:
    if position < len(call.args):
        return call.args[position]
    return next((given.value for given in call.keywords if given.arg in keywords), None)


def _kernel(given: ast.expr, functions: dict[str, _Function]) -> PythonKernel | None:
    if isinstance(given, ast.Lambda):
        returned = ast.Return(given.body)
        return PythonKernel("lambda", [ast.unparse(returned)], [returned])
    if isinstance(given, ast.Name) and given.id in functions:
        return _function_kernel(functions[given.id])
    if isinstance(given, ast.Call) and ast.unparse(given.func) in PARTIAL and given.args:
        return _kernel(given.args[0], functions)
    if isinstance(given, ast.Call) and isinstance(given.func, ast.Name) and given.func.id in functions:
        made = _made_function(functions[given.func.id])
        return _function_kernel(made) if made is not None else None
    return None


def _made_function(factory: _Function) -> _Function | None:
    """The function `factory` defines in its body and returns as its last statement."""
    last = factory.body[-1]
    if not isinstance(last, ast.Return) or not isinstance(last.value, ast.Name):
        return None
    defined = (node for node in factory.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return next((node for node in defined if node.name == last.value.id), None)


def _function_kernel(function: _Function) -> PythonKernel:
    return PythonKernel(function.name, _statements(function), function.body)


def _statements(function: _Function) -> list[str]:
    statements: list[str] = []
    for statement in function.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], ast.unparse(statement.value)
            names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            statements.extend(f"{ast.unparse(name)} = {value}" for name in names)
        elif isinstance(statement, (ast.Expr, ast.Return, ast.AugAssign, ast.AnnAssign, ast.Raise)):
            statements.append(ast.unparse(statement))
    return statements
