"""Facts about one Python source file, read with `ast` and never executed.

Names are resolved through a flow-insensitive, per-file alias map:

* `import a.b` binds `a` to module `a`, so `a.b.f` resolves to `a.b.f`;
* `import a.b as c` binds `c` to `a.b`;
* `from a import b as c` binds `c` to `a.b`;
* a module-level `N = dotted.name` binds `N` to whatever `dotted.name` resolves to,
  provided its root is already bound.

Imports anywhere in the file (inside functions and `try` blocks too) feed the map;
when one name is bound twice, the first binding in source order wins. Names that
are not bound resolve to themselves (`setattr`, `self.foo`).
"""

from __future__ import annotations

import ast
import functools
import posixpath
import re
import warnings
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

from air.index.model import PyAssign, PyBinding, PyCall, PyDef, PyImport, PythonFacts

MAX_RENDERED = 200
MAX_ELEMENTS = 16

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORTS = (ast.Import, ast.ImportFrom)
_BYTE_ORDER_MARK = "\ufeff"
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})  # singletons such as Load() and Add(), never of interest


def extract_python(text: str, module: str | None, is_package: bool = False) -> PythonFacts:
    """Extract imports, calls, definitions, module attribute assignments and bindings of
    names and attributes to calls and names (`lib = Library(...)`, `m = lib`).

    `module` is the file's dotted module name, used to resolve relative imports;
    `is_package` is True for an `__init__.py`, whose relative imports are relative
    to the package itself. Source that does not parse yields `PythonFacts` with
    `error` set; this function never raises on any text.
    """
    tree = _parse(text)
    if isinstance(tree, str):
        return PythonFacts(module, error=tree)

    nodes = _collect(tree)
    imports = _imports(nodes.imports, module, is_package)
    aliases = _alias_map(tree, imports)
    calls, setattrs = _calls_and_setattrs(nodes.calls, aliases)
    calls = sorted(calls + _bare_decorators(nodes.defs, aliases), key=lambda call: call.line)
    assigns = sorted(_module_assigns(tree, aliases) + setattrs, key=lambda assign: assign.line)
    return PythonFacts(
        module,
        imports=tuple(imports),
        calls=tuple(calls),
        defs=tuple(_def_record(name, node, aliases) for name, node in nodes.defs),
        assigns=tuple(assigns),
        bindings=tuple(_bindings(nodes.assigns, aliases)),
    )


_TRIPLE = r"'''[^'\\]*+(?:(?:\\.|'(?!''))[^'\\]*+)*+'''" + "|" + r'"""[^"\\]*+(?:(?:\\.|"(?!""))[^"\\]*+)*+"""'
_SINGLE = r"'[^'\\\n]*+(?:\\.[^'\\\n]*+)*+'" + "|" + r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'
_STRING_OR_COMMENT = re.compile(rf"{_TRIPLE}|{_SINGLE}|#[^\n]*", re.DOTALL)
_STRING_PREFIX = frozenset("rRbBuUfF")


def literal_spans(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The (start, end) spans of the string literals (prefixes such as `rb` included) and of
    the `#` comments of Python source, found in one pass. A literal ends where the tokenizer
    ends it whatever its prefix, so the pattern starts at the quote: `re` then skips to the
    next quote or `#` instead of trying every position."""
    strings: list[tuple[int, int]] = []
    comments: list[tuple[int, int]] = []
    last = 0
    for match in _STRING_OR_COMMENT.finditer(text):
        start, end = match.span()
        if text[start] == "#":
            comments.append((start, end))
        else:
            while start > max(match.start() - 2, last) and text[start - 1] in _STRING_PREFIX:
                start -= 1
            strings.append((start, end))
        last = end
    return strings, comments


def module_name(path: str, package_dirs: Collection[str]) -> str | None:
    """The dotted module name of the `.py` file at POSIX relative `path`.

    `package_dirs` holds the directories that contain an `__init__.py` ("" for the
    tree root). The name grows by one part for every enclosing package directory;
    an `__init__.py` names its package. Returns None for other files, and for an
    `__init__.py` whose directory has no name.
    """
    directory, filename = posixpath.split(path)
    stem, extension = posixpath.splitext(filename)
    if extension != ".py":
        return None
    parts = [] if stem == "__init__" else [stem]
    while directory and directory in package_dirs:
        directory, package = posixpath.split(directory)
        parts.insert(0, package)
    return ".".join(parts) or None


# --- Parsing ----------------------------------------------------------------


def _parse(text: str) -> ast.Module | str:
    """The module's tree, or a one-line description of why it does not parse."""
    null = text.find("\0")
    if null >= 0:
        line = text.count("\n", 0, null) + 1
        return f"line {line}: source contains a null byte"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. SyntaxWarning for invalid escapes in the analysed code
            return ast.parse(text.removeprefix(_BYTE_ORDER_MARK))
    except SyntaxError as exc:
        message = f"line {exc.lineno}: {exc.msg}" if exc.lineno else str(exc.msg)
    except RecursionError:
        message = "code is nested too deeply to analyse"
    except MemoryError:
        message = "source is too large to analyse"
    except ValueError as exc:
        message = f"{type(exc).__name__}: {exc}"
    return " ".join(message.split())


@dataclass
class _Nodes:
    imports: list[ast.Import | ast.ImportFrom] = field(default_factory=list)
    calls: list[ast.Call] = field(default_factory=list)
    defs: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]] = field(default_factory=list)
    assigns: list[ast.Assign | ast.AnnAssign] = field(default_factory=list)


def _collect(tree: ast.Module) -> _Nodes:
    """Imports, calls, definitions (with their qualified names) and assignments anywhere
    in the tree, each in source order."""
    found = _Nodes()
    pending: list[tuple[ast.AST, str]] = [(tree, "")]
    while pending:
        node, scope = pending.pop()
        if isinstance(node, ast.Call):
            found.calls.append(node)
        elif isinstance(node, _IMPORTS):
            found.imports.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            found.assigns.append(node)
        elif isinstance(node, _DEFS):
            scope = _join(scope, node.name)
            found.defs.append((scope, node))
        for name in _child_fields(type(node)):
            value = getattr(node, name, None)
            if isinstance(value, list):
                pending.extend((child, scope) for child in value if isinstance(child, ast.AST))
            elif isinstance(value, ast.AST):
                pending.append((value, scope))

    def position(node: ast.AST) -> tuple[int, int]:
        return node.lineno, node.col_offset

    found.imports.sort(key=position)
    found.calls.sort(key=position)
    found.assigns.sort(key=position)
    found.defs.sort(key=lambda item: position(item[1]))
    return found


@functools.cache
def _child_fields(node_type: type[ast.AST]) -> tuple[str, ...]:
    return tuple(name for name in node_type._fields if name not in _LEAF_FIELDS)


def _module_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run at import time: the top level and the blocks of
    top-level compound statements, but not function or class bodies."""
    for statement in body:
        yield statement
        if isinstance(statement, _DEFS):
            continue
        for block in ("body", "orelse", "finalbody"):
            yield from _module_statements(getattr(statement, block, []))
        for handler in getattr(statement, "handlers", []):
            yield from _module_statements(handler.body)


# --- Imports and name resolution --------------------------------------------


def _imports(nodes: list[ast.Import | ast.ImportFrom], module: str | None, is_package: bool) -> list[PyImport]:
    imports = []
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.partition(".")[0]
                imports.append(PyImport(alias.lineno, alias.name, None, bound))
        elif isinstance(node, ast.ImportFrom):
            source = absolute_module(node.module, node.level, module, is_package)
            for alias in node.names:
                imports.append(PyImport(alias.lineno, source, alias.name, alias.asname or alias.name))
    return imports


def absolute_module(name: str | None, level: int, module: str | None, is_package: bool) -> str:
    """Resolve the module of a `from` import; a relative import that cannot be
    resolved keeps its name without the leading dots."""
    name = name or ""
    if level == 0 or module is None:
        return name
    package = module.split(".") if is_package else module.split(".")[:-1]
    kept = len(package) - (level - 1)
    if kept <= 0:
        return name
    return _join(".".join(package[:kept]), name)


def _join(prefix: str, suffix: str) -> str:
    return f"{prefix}.{suffix}" if prefix and suffix else prefix or suffix


def _alias_map(tree: ast.Module, imports: list[PyImport]) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for item in imports:
        if item.name != "*":
            aliases.setdefault(item.alias, binding(item))

    for statement in _module_statements(tree.body):
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0]
        parts = _dotted_parts(statement.value)
        if isinstance(target, ast.Name) and parts and parts[0] in aliases:
            aliases.setdefault(target.id, _resolve_parts(parts, aliases))
    return aliases


def binding(item: PyImport) -> str:
    """The dotted name that an import binds its alias to."""
    if item.name is not None:
        return _join(item.module, item.name)
    # `import a.b` binds `a` to `a` itself; `import a.b as c` binds `c` to `a.b`.
    return item.alias if item.module.partition(".")[0] == item.alias else item.module


def _dotted_parts(node: ast.AST) -> list[str] | None:
    """`a.b.c` -> ["a", "b", "c"]; None unless a chain of attributes on a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return parts


def _resolve_parts(parts: list[str], aliases: dict[str, str]) -> str:
    return ".".join([aliases.get(parts[0], parts[0]), *parts[1:]])


def _resolve(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts = _dotted_parts(node)
    return _resolve_parts(parts, aliases) if parts else None


def _is_module_rooted(node: ast.AST, aliases: dict[str, str]) -> bool:
    parts = _dotted_parts(node)
    return parts is not None and parts[0] in aliases


# --- Rendering values -------------------------------------------------------


def _render(node: ast.AST, aliases: dict[str, str]) -> str:
    """A constant's value, a dotted name resolved, a call as `callee(...)`, a literal
    list/tuple/set element by element, else the (truncated) source."""
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, int, float))):
        return node.value if isinstance(node.value, str) else str(node.value)
    if isinstance(node, ast.Call):
        return f"{_resolve(node.func, aliases) or '<call>'}(...)"
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and len(node.elts) <= MAX_ELEMENTS:
        opening, closing = {ast.List: "[]", ast.Tuple: "()", ast.Set: "{}"}[type(node)]
        return opening + ", ".join(_render(element, aliases) for element in node.elts) + closing
    return _resolve(node, aliases) or _unparse(node)


def _unparse(node: ast.AST) -> str:
    try:
        source = ast.unparse(node)
    except RecursionError:
        return "<nested too deeply>"
    return source if len(source) <= MAX_RENDERED else source[: MAX_RENDERED - 3] + "..."


# --- Calls and setattr ------------------------------------------------------


def _calls_and_setattrs(nodes: list[ast.Call], aliases: dict[str, str]) -> tuple[list[PyCall], list[PyAssign]]:
    calls, assigns = [], []
    for node in nodes:
        qualname = _resolve(node.func, aliases)
        if qualname is None:
            continue
        calls.append(
            PyCall(
                node.lineno,
                qualname,
                tuple(_render(arg, aliases) for arg in node.args),
                tuple((kw.arg, _render(kw.value, aliases)) for kw in node.keywords if kw.arg is not None),
            )
        )
        assign = _setattr_assign(node, aliases)
        if assign is not None:
            assigns.append(assign)
    return calls, assigns


def _bare_decorators(defs: list[tuple[str, ast.AST]], aliases: dict[str, str]) -> list[PyCall]:
    """`@name` (not `@name(...)`) applies `name` to the definition: record it as that call."""
    calls = []
    for qualified, node in defs:
        for decorator in node.decorator_list:
            callee = None if isinstance(decorator, ast.Call) else _resolve(decorator, aliases)
            if callee is not None:
                calls.append(PyCall(decorator.lineno, callee, (qualified,), ()))
    return calls


def _setattr_assign(call: ast.Call, aliases: dict[str, str]) -> PyAssign | None:
    """`setattr(mod, "name", value)` or `mod.__setattr__("name", value)` on an
    imported module, as an assignment to `mod.name`."""
    func = call.func
    if isinstance(func, ast.Name) and _resolve(func, aliases) == "setattr":
        owner, rest = (call.args[0], call.args[1:]) if call.args else (None, [])
    elif isinstance(func, ast.Attribute) and func.attr == "__setattr__":
        owner, rest = func.value, call.args
    else:
        return None
    if owner is None or not _is_module_rooted(owner, aliases) or not rest:
        return None
    name = rest[0]
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        return None
    value = _render(rest[1], aliases) if len(rest) > 1 else ""
    return PyAssign(call.lineno, f"{_resolve(owner, aliases)}.{name.value}", value)


# --- Bindings -----------------------------------------------------------------


def _bindings(assigns: list[ast.Assign | ast.AnnAssign], aliases: dict[str, str]) -> Iterator[PyBinding]:
    for statement in assigns:
        value = statement.value
        if not isinstance(value, (ast.Call, ast.Name, ast.Attribute)):
            continue
        rendered = _render(value, aliases)
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            parts = _dotted_parts(target)
            if parts:
                yield PyBinding(value.lineno, ".".join(parts), rendered)


# --- Module-level attribute assignments -------------------------------------


def _module_assigns(tree: ast.Module, aliases: dict[str, str]) -> list[PyAssign]:
    assigns = []
    for statement in _module_statements(tree.body):
        if isinstance(statement, ast.Assign):
            targets = [leaf for target in statement.targets for leaf in _flatten_targets(target)]
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        else:
            continue
        value = _render(statement.value, aliases)
        for target in targets:
            if isinstance(target, ast.Attribute) and _is_module_rooted(target, aliases):
                assigns.append(PyAssign(target.lineno, _resolve(target, aliases), value))
    return assigns


def _flatten_targets(target: ast.expr) -> Iterator[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _flatten_targets(element)
    elif isinstance(target, ast.Starred):
        yield from _flatten_targets(target.value)
    else:
        yield target


# --- Definitions ------------------------------------------------------------


def _def_record(name: str, node: ast.AST, aliases: dict[str, str]) -> PyDef:
    if isinstance(node, ast.ClassDef):
        bases = tuple(_resolve(base, aliases) or _unparse(base) for base in node.bases)
        return PyDef(node.lineno, "class", name, bases)
    return PyDef(node.lineno, "function", name)
