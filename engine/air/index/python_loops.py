"""The strings a call's argument takes when it is built from loop variables over literal data.

A registration written once in a loop stands for one registration per value:
`for k, v in OPS.items(): impl(k.replace("a.", "a::"), key)(v)`, `for dim in [2, 3]:
impl(f"ns::pool{dim}d", key)`. A loop counts when its iterable is literal data, or a name bound
to literal data at module level, read as it is, through `.items()`, `.keys()`, `enumerate()`,
`range()` of constants, `sorted()` and its kin, merged (`{**A, **B}`) or comprehended from such
data, or the keys of a mapping a call builds from it (`table(OPS).items()`); its target a name
or a tuple of names. The argument is evaluated for every binding of the loops around the call
(constants, loop variables, names the loop body assigns before the call, f-strings, `+` and
`str.replace` with constant arguments); a binding it cannot be evaluated with gives nothing.

A name the loop iterates may also be a registry: a module-level container the module (or the
module it is imported from) fills with `NAME.append(...)` or `NAME[key] = ...`, its values
literal, or the parameters of the functions around the filling statement, bound by the
module's calls of those functions with literal arguments or with the parameters of a wrapper
called so (`register("ns::op")(fn)`, where `register` appends `(op_name, fn)`;
`unary("neg")`, where `unary` calls `register(f"ns::{name}", ...)`).

Literal data may hold references to objects (`ns.ops.add`, its first name resolved through a
module-level alias such as `ops = pkg.ops`): whatever an expression reads from one reference
alone (`str(op._schema)`, `op.name()`) stands for the reference's dotted name. Nothing of the
tree is run.
"""

from __future__ import annotations

import ast
import builtins
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

MAX_BINDINGS = 4096
MAX_WRAPPER_DEPTH = 2  # register("op") called by a helper called by another, with literals
MAX_IMPORT_DEPTH = 2  # a registry imported from a module that imports it in turn
_UNKNOWN = object()  # a value the loops bind that is not literal data (a dict's values)
_CONTAINERS = (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
_SAME_ELEMENTS = frozenset({"sorted", "reversed", "list", "tuple", "set", "frozenset"})


@dataclass(frozen=True)
class _Reference:
    """An object literal data names by a dotted path (`pkg.ops.add`), aliases resolved."""

    dotted: str


# A name a module imports -> the text of the module it comes from, and its name there.
Imported = Callable[[str], tuple[str, str] | None]


def loop_argument_values(
    text: str, line: int, callee: str, position: int, imported: Imported | None = None
) -> tuple[str, ...]:
    """The strings positional argument `position` of the calls of `callee` (a function's or a
    method's name) made on `line` takes over the bindings of the `for` loops around them,
    sorted; () when it names anything else. `imported` finds the modules of the registries
    the file imports."""
    facts = _facts(text)
    if facts is None:
        return ()
    module = _Scope(facts, facts.constants, imported)
    found: set[str] = set()
    for call, loops, function in _calls_in_loops(facts.tree, line):
        if position >= len(call.args) or not loops or callee_name(call) != callee:
            continue
        scope = module.within(function, loops[0].lineno) if function is not None else module
        for environment in _bindings(loops, scope, line):
            value = _evaluate(call.args[position], environment)
            if isinstance(value, _Reference):
                value = value.dotted
            if isinstance(value, str):
                found.add(value)
    return tuple(sorted(found))


@lru_cache(maxsize=8)  # a file registering in several loops is parsed once
def parsed_module(text: str) -> ast.Module | None:
    """The syntax tree of a Python module's text, None when it does not parse."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@lru_cache(maxsize=8)  # read once for all the loops of a file, and for every file importing a registry
def _facts(text: str) -> _ModuleFacts | None:
    tree = parsed_module(text)
    return None if tree is None else _ModuleFacts(tree)


class _ModuleFacts:
    """What loops read in a module, found once: its module-level constants, its nodes with the
    functions around them, the values its registries are filled with, its calls by name."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.constants = _bound_constants(tree.body)

    @cached_property
    def nodes(self) -> list[tuple[ast.AST, tuple[ast.FunctionDef, ...]]]:
        """Every node of the module with the functions around it, outermost first."""
        found: list[tuple[ast.AST, tuple[ast.FunctionDef, ...]]] = []
        pending: list[tuple[ast.AST, tuple[ast.FunctionDef, ...]]] = [(self.tree, ())]
        while pending:  # not recursive: a generated module may nest expressions thousands deep
            node, chain = pending.pop()
            found.append((node, chain))
            inner = (*chain, node) if isinstance(node, ast.FunctionDef) else chain
            pending.extend((child, inner) for child in ast.iter_child_nodes(node))
        return found

    @cached_property
    def fillings(self) -> dict[str, list[tuple[ast.expr, tuple[ast.FunctionDef, ...]]]]:
        """Per name, the values appended to it or the keys set in it, with the functions
        around each statement."""
        found: dict[str, list[tuple[ast.expr, tuple[ast.FunctionDef, ...]]]] = {}
        for node, chain in self.nodes:
            if isinstance(node, ast.Call) and callee_name(node) == "append" and len(node.args) == 1:
                owner = node.func.value if isinstance(node.func, ast.Attribute) else None
                if isinstance(owner, ast.Name):
                    found.setdefault(owner.id, []).append((node.args[0], chain))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    found.setdefault(target.value.id, []).append((target.slice, chain))
        return found

    @cached_property
    def calls(self) -> dict[str, list[tuple[ast.Call, tuple[ast.FunctionDef, ...]]]]:
        """The calls of plain names (`register(...)`), by name, with the functions around each."""
        found: dict[str, list[tuple[ast.Call, tuple[ast.FunctionDef, ...]]]] = {}
        for node, chain in self.nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                found.setdefault(node.func.id, []).append((node, chain))
        return found


class _Scope:
    """What a loop's iterable may read: the constants its module (or function) binds, and the
    registries its module fills or imports."""

    def __init__(self, facts: _ModuleFacts, constants: dict[str, ast.expr], imported: Imported | None) -> None:
        self.facts = facts
        self.constants = constants
        self._imported = imported

    def get(self, name: str) -> ast.expr | None:
        return self.constants.get(name)

    def within(self, function: ast.FunctionDef | ast.AsyncFunctionDef, line: int) -> _Scope:
        """The scope of a loop at `line` in `function`: the module's, with the literal data the
        function's body binds to names before the loop (`ops = (torch.ops.aten.mm.default, ...)`)."""
        local = _bound_constants(statement for statement in function.body if statement.lineno < line)
        return _Scope(self.facts, {**self.constants, **local}, self._imported)

    def registry(self, name: str, depth: int) -> list[Any] | None:
        """The values the registry `name` is filled with: here, or in the module that defines
        it when this one imports it; None when it is no registry."""
        if name not in self.constants:
            found = self._imported(name) if self._imported is not None and depth < MAX_IMPORT_DEPTH else None
            other = _facts(found[0]) if found is not None else None
            if other is None or found is None:
                return None
            return _Scope(other, other.constants, None).registry(found[1], depth + 1)
        fillings = self.facts.fillings.get(name, ())
        filled = [value for node, chain in fillings for value in self._evaluated_in(node, chain)]
        return filled or None

    def _evaluated_in(self, node: ast.expr, chain: tuple[ast.FunctionDef, ...], depth: int = 0) -> list[Any]:
        """The values of `node`, for every binding of the parameters of the functions around it
        that the module's calls give (through wrappers that pass on what they are given,
        MAX_WRAPPER_DEPTH deep)."""
        literal = _literal(node, self)
        if _known(literal):
            return [literal]
        used = {name.id for name in ast.walk(node) if isinstance(name, ast.Name)}
        environments: list[dict[str, Any]] = [{}]
        for function in chain if depth <= MAX_WRAPPER_DEPTH else ():
            bindings = self._call_bindings(function, depth) if _parameters(function) & used else []
            if bindings:  # parameters no call of the module gives stay unknown
                environments = [{**e, **b} for e in environments for b in bindings][:MAX_BINDINGS]
        return [_evaluate(node, environment) for environment in environments]

    def _call_bindings(self, function: ast.FunctionDef, depth: int) -> list[dict[str, Any]]:
        """Per call of `function` in the module, the values it gives the parameters, by position
        or keyword (their defaults when it leaves them out)."""
        names = [argument.arg for argument in function.args.args]
        defaults = dict(zip(names[len(names) - len(function.args.defaults) :], function.args.defaults))
        found = []
        for call, chain in self.facts.calls.get(function.name, ()):
            given = {**defaults, **{k.arg: k.value for k in call.keywords if k.arg}, **dict(zip(names, call.args))}
            bindings: list[dict[str, Any]] = [{}]
            for name, argument in given.items():
                values = self._evaluated_in(argument, chain, depth + 1)
                bindings = [{**b, name: v} for b in bindings for v in values][:MAX_BINDINGS]
            found.extend(bindings)
        return found


def _known(value: Any) -> bool:
    return all(map(_known, value)) if isinstance(value, tuple) else value is not _UNKNOWN


def _parameters(function: ast.FunctionDef) -> set[str]:
    return {argument.arg for argument in function.args.args}


def callee_name(call: ast.Call) -> str:
    """The name of a call's function or method (`impl` of `torch.library.impl(...)`), "" for others."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _bound_constants(statements: Iterable[ast.stmt]) -> dict[str, ast.expr]:
    """The names `statements` bind to literal containers or to a dotted path (an alias)."""
    bound: dict[str, ast.expr] = {}
    for statement in statements:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if isinstance(target, ast.Name) and (isinstance(value, _CONTAINERS) or dotted_name(value)):
            bound[target.id] = value
    return bound


_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _calls_in_loops(tree: ast.Module, line: int) -> Iterator[tuple[ast.Call, list[ast.For], _Function | None]]:
    """The calls on `line`, each with the `for` loops it runs in, outermost first, and the
    function around them."""

    def visit(
        node: ast.AST, loops: list[ast.For], function: _Function | None
    ) -> Iterator[tuple[ast.Call, list[ast.For], _Function | None]]:
        if isinstance(node, ast.Call) and node.lineno == line:
            yield node, loops, function
        inner = [*loops, node] if isinstance(node, ast.For) else loops
        around = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
        for child in ast.iter_child_nodes(node):
            if getattr(child, "end_lineno", line) >= line and getattr(child, "lineno", line) <= line:
                yield from visit(child, inner if child is not getattr(node, "iter", None) else loops, around)

    yield from visit(tree, [], None)


def _bindings(loops: list[ast.For], scope: _Scope, line: int) -> Iterator[dict[str, Any]]:
    """Every assignment of the loops' variables, at most MAX_BINDINGS, with the names each loop's
    body assigns before `line`."""
    per_loop = []
    for loop in loops:
        values = _iterate(loop.iter, scope)
        if values is None:
            return
        per_loop.append([binding for value in values if (binding := _bind(loop.target, value)) is not None])
    for combination in itertools.islice(itertools.product(*per_loop), MAX_BINDINGS):
        environment: dict[str, Any] = {}
        for loop, binding in zip(loops, combination):
            environment.update(binding)
            for statement in loop.body:
                if statement.lineno >= line:
                    break
                if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                    environment.update(_bind(statement.targets[0], _evaluate(statement.value, environment)) or {})
        yield environment


def _iterate(node: ast.expr, scope: _Scope, depth: int = 0) -> list[Any] | None:
    """The values a loop over `node` binds, or None when they are not literal data."""
    if depth > 8:
        return None
    if isinstance(node, ast.Name):
        bound = scope.get(node.id)
        listed = _iterate(bound, scope, depth + 1) if bound is not None else None
        filled = scope.registry(node.id, 0)
        return listed if filled is None else [*(listed or []), *filled]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(element, scope) for element in node.elts]
    if isinstance(node, ast.Dict):  # the keys; of a merged part that is not literal data, none
        keys: list[Any] = []
        for key, value in zip(node.keys, node.values):
            keys.extend((_iterate(value, scope, depth + 1) or []) if key is None else [_literal(key, scope)])
        return keys
    if isinstance(node, (ast.DictComp, ast.ListComp, ast.SetComp)) and len(node.generators) == 1:
        return _comprehended(node, scope, depth)
    if isinstance(node, ast.Call):
        return _iterate_call(node, scope, depth)
    return None


def _comprehended(node: ast.DictComp | ast.ListComp | ast.SetComp, scope: _Scope, depth: int) -> list[Any]:
    """The keys (elements) of a comprehension over literal data, without conditions."""
    generator = node.generators[0]
    values = _iterate(generator.iter, scope, depth + 1)
    if values is None or generator.ifs or generator.is_async:
        return []
    made = node.key if isinstance(node, ast.DictComp) else node.elt
    found = []
    for value in values:
        binding = _bind(generator.target, value)
        if binding is not None:
            found.append(_evaluate(made, binding))
    return found


def _iterate_call(node: ast.Call, scope: _Scope, depth: int) -> list[Any] | None:
    func = node.func
    if isinstance(func, ast.Name) and func.id in _SAME_ELEMENTS and len(node.args) == 1:
        return _iterate(node.args[0], scope, depth + 1)  # keywords (`key=`, `reverse=`) keep them
    if node.keywords:
        return None
    if isinstance(func, ast.Attribute) and not node.args and func.attr in ("items", "keys"):
        keys = _iterate(func.value, scope, depth + 1)
        mapped = func.value
        if keys is None and isinstance(mapped, ast.Call) and len(mapped.args) == 1 and not mapped.keywords:
            keys = _iterate(mapped.args[0], scope, depth + 1)  # a mapping built from literal data
        if keys is None:
            return None
        return [(key, _UNKNOWN) for key in keys] if func.attr == "items" else keys
    if isinstance(func, ast.Name) and func.id == "enumerate" and len(node.args) == 1:
        values = _iterate(node.args[0], scope, depth + 1)
        return None if values is None else list(enumerate(values))
    if isinstance(func, ast.Name) and func.id == "range" and 1 <= len(node.args) <= 3:
        bounds = [_literal(argument, scope) for argument in node.args]
        if all(isinstance(bound, int) for bound in bounds) and len(range(*bounds)) <= MAX_BINDINGS:
            return list(range(*bounds))
    return None


def _literal(node: ast.expr, scope: _Scope) -> Any:
    """A constant, a reference, or a tuple of them; _UNKNOWN for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_literal(element, scope) for element in node.elts)
    dotted = dotted_name(node)
    if dotted and "." in dotted:
        return _Reference(_resolved(dotted, scope))
    return _UNKNOWN


def dotted_name(node: ast.expr) -> str:
    """`a.b.c` of an attribute chain on a name; "" for anything else."""
    if isinstance(node, ast.Attribute):
        owner = dotted_name(node.value)
        return f"{owner}.{node.attr}" if owner else ""
    return node.id if isinstance(node, ast.Name) else ""


def _resolved(dotted: str, scope: _Scope, depth: int = 0) -> str:
    """`dotted` with its first name replaced by the dotted path a module-level alias binds it to."""
    first, _, rest = dotted.partition(".")
    bound = scope.get(first)
    alias = dotted_name(bound) if bound is not None and depth < 8 else ""
    if not alias or alias == first:
        return dotted
    return _resolved(f"{alias}.{rest}" if rest else alias, scope, depth + 1)


def _bind(target: ast.expr, value: Any) -> dict[str, Any] | None:
    if isinstance(target, ast.Name):
        return {target.id: value}
    if isinstance(target, ast.Tuple) and isinstance(value, tuple) and len(value) == len(target.elts):
        bound: dict[str, Any] = {}
        for element, part in zip(target.elts, value):
            inner = _bind(element, part)
            if inner is None:
                return None
            bound.update(inner)
        return bound
    return None


def _evaluate(node: ast.expr, environment: dict[str, Any]) -> Any:
    """The value of `node` under `environment`, or _UNKNOWN."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return environment.get(node.id, _UNKNOWN)
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(element, environment) for element in node.elts)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        value, position = _evaluate(node.value, environment), node.slice.value
        if isinstance(value, tuple) and isinstance(position, int) and -len(value) <= position < len(value):
            return value[position]
    if isinstance(node, ast.JoinedStr):
        parts = [_evaluate(value, environment) for value in node.values]
        return "".join(map(str, parts)) if all(_formats(part) for part in parts) else _UNKNOWN
    if isinstance(node, ast.FormattedValue) and node.format_spec is None and node.conversion in (-1, ord("s")):
        return _evaluate(node.value, environment)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _evaluate(node.left, environment), _evaluate(node.right, environment)
        same = isinstance(left, str) and isinstance(right, str) or _is_int(left) and _is_int(right)
        return left + right if same else _UNKNOWN
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace":
        text = _evaluate(node.func.value, environment)
        arguments = [_evaluate(argument, environment) for argument in node.args]
        if isinstance(text, str) and len(arguments) == 2 and all(isinstance(a, str) for a in arguments):
            return text.replace(arguments[0], arguments[1])
    return _read_from_reference(node, environment)


def _read_from_reference(node: ast.expr, environment: dict[str, Any]) -> Any:
    """The dotted name of the one reference `node` reads from, with builtins only; or _UNKNOWN."""
    read = {
        name.id
        for name in ast.walk(node)
        if isinstance(name, ast.Name) and not (name.id not in environment and hasattr(builtins, name.id))
    }
    references = {environment.get(name) for name in read}
    if len(references) == 1 and isinstance(reference := references.pop(), _Reference):
        return reference.dotted
    return _UNKNOWN


def _formats(value: Any) -> bool:
    return isinstance(value, str) or _is_int(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
