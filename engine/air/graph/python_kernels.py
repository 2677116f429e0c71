"""The body of the kernel a Python registration names, as the statements the host-fallback
reader (`air.graph.host_fallback`) reads.

The kernel is the function the registration decorates (`@impl("ns::op", key)` over `def f`),
its kernel argument (`lib.impl("op", f, key)`), or what is given to the callable it returns
(`impl("ns::op", key)(f)`): a function the module defines at its top level, the one a
`functools.partial(f, ...)` binds, or a lambda. Its statements are those of its body outside
inner blocks, each as source text: an assignment to several names is one statement per name,
and a lambda returns its expression. Nothing of the tree is run.
"""

from __future__ import annotations

import ast

from air.index.python_loops import parsed_module

PARTIAL = frozenset({"partial", "functools.partial"})


def kernel_statements(
    text: str, line: int, callee: str, position: int, keywords: tuple[str, ...]
) -> tuple[str, list[str]] | None:
    """The name and statements of the kernel that the call of `callee` made on `line`
    registers, its kernel given as positional argument `position` or as one of `keywords`; None
    when the kernel is not a function of this module."""
    tree = parsed_module(text)
    if tree is None:
        return None
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            _registers(decorator, line, callee) for decorator in node.decorator_list
        ):
            return node.name, _statements(node)
        if not isinstance(node, ast.Call):
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


def _registers(node: ast.expr, line: int, callee: str) -> bool:
    if not isinstance(node, ast.Call) or node.lineno != line:
        return False
    func = node.func
    return (func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "") == callee


def _argument(call: ast.Call, position: int, keywords: tuple[str, ...]) -> ast.expr | None:
    if position < len(call.args):
        return call.args[position]
    return next((given.value for given in call.keywords if given.arg in keywords), None)


def _kernel(
    given: ast.expr, functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
) -> tuple[str, list[str]] | None:
    if isinstance(given, ast.Lambda):
        return "lambda", [f"return {ast.unparse(given.body)}"]
    if isinstance(given, ast.Name) and given.id in functions:
        return given.id, _statements(functions[given.id])
    if isinstance(given, ast.Call) and ast.unparse(given.func) in PARTIAL and given.args:
        return _kernel(given.args[0], functions)
    return None


def _statements(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    statements: list[str] = []
    for statement in function.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], ast.unparse(statement.value)
            names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            statements.extend(f"{ast.unparse(name)} = {value}" for name in names)
        elif isinstance(statement, (ast.Expr, ast.Return, ast.AugAssign, ast.AnnAssign, ast.Raise)):
            statements.append(ast.unparse(statement))
    return statements
