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
import operator
import posixpath
import re
import warnings
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

from air.index.model import PyAssign, PyBinding, PyCall, PyDef, PyImport, PyScope, PythonFacts, ScopeKind

MAX_RENDERED = 200
MAX_ELEMENTS = 16

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_DEF_TYPES = frozenset(_DEFS)
_LEAVES = frozenset({ast.Name, ast.Constant})  # the most common nodes, with no nodes under them
_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
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
    return extract_python_and_scopes(text, module, is_package, with_scopes=False)[0]


def extract_python_and_scopes(
    text: str, module: str | None, is_package: bool = False, with_scopes: bool = True
) -> tuple[PythonFacts, tuple[PyScope, ...]]:
    """`extract_python` and, `with_scopes`, `extract_scopes` of one text, parsed once."""
    tree = _parse(text)
    if isinstance(tree, str):
        return PythonFacts(module, error=tree), ()
    nodes = _collect(tree)
    imports = _imports(nodes.imports, module, is_package)
    aliases = _alias_map(tree, imports)
    return _facts(module, tree, nodes, imports, aliases), _scopes(tree, aliases) if with_scopes else ()


def _facts(
    module: str | None, tree: ast.Module, nodes: _Nodes, imports: list[PyImport], aliases: dict[str, str]
) -> PythonFacts:
    calls, setattrs = _calls_and_setattrs(nodes.calls, aliases)
    calls = sorted(calls + _bare_decorators(nodes.defs, aliases), key=_line)
    assigns = sorted(_module_assigns(tree, aliases) + setattrs, key=_line)
    return PythonFacts(
        module,
        imports=tuple(imports),
        calls=tuple(calls),
        defs=tuple(_def_record(name, node, aliases) for name, node in nodes.defs),
        assigns=tuple(assigns),
        bindings=tuple(_variable_bindings(nodes.assigns, aliases)),
    )


def function_bodies(text: str) -> dict[str, tuple[ast.stmt, ...]]:
    """The statements of each function's body, by its qualified name (`Cls.method`, the last
    one when a name is defined twice); empty when the text does not parse."""
    tree = _parse(text)
    if isinstance(tree, str):
        return {}
    return {name: tuple(node.body) for name, node in _collect(tree).defs if not isinstance(node, ast.ClassDef)}


_TRIPLE = r"'''[^'\\]*+(?:(?:\\.|'(?!''))[^'\\]*+)*+'''" + "|" + r'"""[^"\\]*+(?:(?:\\.|"(?!""))[^"\\]*+)*+"""'
_SINGLE = r"'[^'\\\n]*+(?:\\.[^'\\\n]*+)*+'" + "|" + r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'
_STRING_OR_COMMENT = re.compile(rf"{_TRIPLE}|{_SINGLE}|#[^\n]*", re.DOTALL)
_STRING_PREFIX = frozenset("rRbBuUfF")
_QUOTES_AS_HASH = bytes.maketrans(b"'\"", b"##")


def literal_spans(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The (start, end) spans of the string literals (prefixes such as `rb` included) and of
    the `#` comments of Python source, found in one pass. The pattern is matched at each quote
    or `#` (a literal ends where the tokenizer ends it whatever its prefix, so the prefix is
    taken from before the quote afterwards). Those are found with `bytes.find` in `marks`, the
    text as one byte per character with every quote read as `#`: `re`'s own scan, which tests
    every character against the three, is several times slower."""
    marks = text.encode("ascii", "replace").translate(_QUOTES_AS_HASH)
    strings: list[tuple[int, int]] = []
    comments: list[tuple[int, int]] = []
    last = 0
    opening = marks.find(b"#")
    while opening >= 0:
        match = _STRING_OR_COMMENT.match(text, opening)
        if match is None:  # a quote that opens no literal, as in an unterminated string
            opening = marks.find(b"#", opening + 1)
            continue
        end = match.end()
        if text[opening] == "#":
            comments.append((opening, end))
        else:
            start = opening
            while start > last and opening - start < 2 and text[start - 1] in _STRING_PREFIX:
                start -= 1
            strings.append((start, end))
        last = end
        opening = marks.find(b"#", end)
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


def function_end(spans: tuple[tuple[int, int], ...], line: int) -> int | None:
    """The last line of the outermost function whose body holds `line` (a test, not a helper it
    defines), of a module's `function_spans`; None outside any function."""
    ends = [end for start, end in spans if start < line <= end]
    return max(ends) if ends else None


_DEF_LINE = re.compile(r"[ \t]*(?:async[ \t]+)?def[ \t]")


def function_spans(code: str) -> tuple[tuple[int, int], ...]:
    """(def line, last line of code) of every function of `code`, the module with its strings
    and comments blanked (lines kept), read by indentation: no parse, which costs seconds on
    large tests. A function ends before the next line of code indented no deeper than its
    `def`, lines inside brackets or after a `\\` continuing."""
    spans: list[tuple[int, int]] = []
    open_defs: list[tuple[int, int]] = []  # (indentation, def line)
    depth, continued, last_code = 0, False, 0
    for number, line in enumerate(code.split("\n"), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if depth == 0 and not continued:
            indent = len(line) - len(line.lstrip(" \t"))
            while open_defs and open_defs[-1][0] >= indent:
                spans.append((open_defs.pop()[1], last_code))
            if _DEF_LINE.match(line):
                open_defs.append((indent, number))
        if "(" in line or ")" in line or "[" in line or "]" in line or "{" in line or "}" in line:
            opened = line.count("(") + line.count("[") + line.count("{")
            depth = max(depth + opened - line.count(")") - line.count("]") - line.count("}"), 0)
        continued, last_code = stripped.endswith("\\"), number
    spans.extend((start, last_code) for _indent, start in open_defs)
    return tuple(spans)


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
    defs: list[tuple[str, _Def]] = field(default_factory=list)
    assigns: list[ast.Assign | ast.AnnAssign] = field(default_factory=list)


def _collect(tree: ast.Module) -> _Nodes:
    """Imports, calls, definitions (with their qualified names) and assignments anywhere
    in the tree, each in source order."""
    found = _Nodes()
    kept: dict[type, list] = {
        ast.Call: found.calls,
        ast.Import: found.imports,
        ast.ImportFrom: found.imports,
        ast.Assign: found.assigns,
        ast.AnnAssign: found.assigns,
    }
    _walk(tree, "", kept, found.defs)
    for nodes in (found.imports, found.calls, found.assigns):
        nodes.sort(key=_position)
    found.defs.sort(key=lambda item: _position(item[1]))
    return found


_position = operator.attrgetter("lineno", "col_offset")
_line = operator.attrgetter("line")


def _walk(root: ast.AST, scope: str, kept: dict[type, list], defs: list[tuple[str, _Def]]) -> None:
    """Append each node under `root` to the list that `kept` holds for its type, if any, and
    each definition to `defs` with its name qualified in `scope`; the nodes of a definition are
    walked in its own scope. Depth first: a node comes before the nodes under it, an order that
    the sorts by position keep among nodes that start at one place."""
    pending = [root]
    while pending:
        node = pending.pop()
        kind = type(node)  # `ast.parse` builds nodes of its own classes, never of subclasses
        if kind in _LEAVES:
            continue
        if kind in kept:
            kept[kind].append(node)
        elif kind in _DEF_TYPES and node is not root:
            qualified = _join(scope, node.name)  # type: ignore[attr-defined]
            defs.append((qualified, node))  # type: ignore[arg-type]
            _walk(node, qualified, kept, defs)
            continue
        for name in _CHILD_FIELDS[kind]:
            value = getattr(node, name, None)
            if type(value) is list:
                pending.extend(value)  # with a None for a dict's `**` key, which has no fields
            elif value is not None:
                pending.append(value)


class _ChildFieldsByType(dict[type, tuple[str, ...]]):
    """The fields of each node type that hold nodes or lists of nodes, but not the singletons
    of `_LEAF_FIELDS`; none for a type that is not a node's. A field holds names, strings or
    numbers instead where the grammar in the class's docstring gives it a builtin type, as
    `Name(identifier id, expr_context ctx)` does."""

    _SCALAR = re.compile(r"\b(?:identifier|string|constant|int)[*?]? (\w+)")

    def __missing__(self, kind: type) -> tuple[str, ...]:
        fields: tuple[str, ...] = getattr(kind, "_fields", ())
        scalars = set(self._SCALAR.findall(kind.__doc__ or "")) if fields else set()
        self[kind] = tuple(name for name in fields if name not in _LEAF_FIELDS and name not in scalars)
        return self[kind]


_CHILD_FIELDS = _ChildFieldsByType()


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
    """The dotted name `a.b.c` with its root `a` resolved; None unless a chain of attributes on a name."""
    if isinstance(node, ast.Name):  # the most common: no parts to gather
        return aliases.get(node.id, node.id)
    parts = _dotted_parts(node)
    return None if parts is None else _resolve_parts(parts, aliases)


def _is_module_rooted(node: ast.AST, aliases: dict[str, str]) -> bool:
    parts = _dotted_parts(node)
    return parts is not None and parts[0] in aliases


# --- Rendering values -------------------------------------------------------


def _render(node: ast.AST, aliases: dict[str, str]) -> str:
    """A dotted name resolved, a constant's value, a call as `callee(...)`, a literal
    list/tuple/set element by element, else the (truncated) source."""
    resolved = _resolve(node, aliases)
    if resolved:
        return resolved
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, int, float))):
        return node.value if isinstance(node.value, str) else str(node.value)
    if isinstance(node, ast.Call):
        return f"{_resolve(node.func, aliases) or '<call>'}(...)"
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and len(node.elts) <= MAX_ELEMENTS:
        opening, closing = _BRACKETS[type(node)]
        return opening + ", ".join(_render(element, aliases) for element in node.elts) + closing
    return _unparse(node)


_BRACKETS = {ast.List: ("[", "]"), ast.Tuple: ("(", ")"), ast.Set: ("{", "}")}


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
        args = tuple([_render(arg, aliases) for arg in node.args])
        kwargs = tuple([(kw.arg, _render(kw.value, aliases)) for kw in node.keywords if kw.arg is not None])
        calls.append(PyCall(node.lineno, qualname, args, kwargs))
        if qualname == "setattr" or qualname.endswith(".__setattr__"):
            assign = _setattr_assign(node, aliases)
            if assign is not None:
                assigns.append(assign)
    return calls, assigns


def _bare_decorators(defs: list[tuple[str, _Def]], aliases: dict[str, str]) -> list[PyCall]:
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
    parts = _setattr_parts(call, aliases)
    if parts is None or not _is_module_rooted(parts[0], aliases):
        return None
    owner, name, value = parts
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        return None
    rendered = _render(value, aliases) if value is not None else ""
    return PyAssign(call.lineno, f"{_resolve(owner, aliases)}.{name.value}", rendered)


def _setattr_parts(call: ast.Call, aliases: dict[str, str]) -> tuple[ast.expr, ast.expr, ast.expr | None] | None:
    """The object, the name and the value (if given) of `setattr(obj, name, value)` or
    `obj.__setattr__(name, value)`."""
    func = call.func
    if isinstance(func, ast.Name) and _resolve(func, aliases) == "setattr" and len(call.args) >= 2:
        owner, rest = call.args[0], call.args[1:]
    elif isinstance(func, ast.Attribute) and func.attr == "__setattr__" and call.args:
        owner, rest = func.value, call.args
    else:
        return None
    return owner, rest[0], rest[1] if len(rest) > 1 else None


# --- Bindings -----------------------------------------------------------------


def _variable_bindings(assigns: list[ast.Assign | ast.AnnAssign], aliases: dict[str, str]) -> Iterator[PyBinding]:
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
            value = _render(statement.value, aliases)
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
            value = _render(statement.value, aliases)
        else:
            continue
        for target in targets:
            qualname = _resolve(target, aliases) if isinstance(target, ast.Attribute) else None
            if qualname is not None and _is_module_rooted(target, aliases):
                assigns.append(PyAssign(target.lineno, qualname, value))
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


def _def_record(name: str, node: _Def, aliases: dict[str, str]) -> PyDef:
    decorators = tuple(
        _resolve(d.func if isinstance(d, ast.Call) else d, aliases) or _unparse(d) for d in node.decorator_list
    )
    if isinstance(node, ast.ClassDef):
        bases = tuple(_resolve(base, aliases) or _unparse(base) for base in node.bases)
        return PyDef(node.lineno, "class", name, bases, decorators)
    return PyDef(node.lineno, "function", name, (), decorators)


# --- Scopes -----------------------------------------------------------------


def extract_scopes(text: str, module: str | None, is_package: bool = False) -> tuple[PyScope, ...]:
    """The scopes of a module (see `PyScope`): the module itself, then its functions and classes
    in source order. None when the source does not parse or nests too deeply to read."""
    tree = _parse(text)
    if isinstance(tree, str):
        return ()
    return _scopes(tree, _alias_map(tree, _imports(_collect(tree).imports, module, is_package)))


def _scopes(tree: ast.Module, aliases: dict[str, str]) -> tuple[PyScope, ...]:
    last = max((statement.end_lineno or statement.lineno for statement in tree.body), default=1)
    scopes: list[PyScope] = []
    try:
        _add_scope(tree, "", "module", (1, last), aliases, _string_lists(tree.body), scopes)
    except RecursionError:
        return ()
    return tuple(sorted(scopes, key=lambda scope: scope.lines[0]))


def _add_scope(
    node: ast.Module | _Def,
    name: str,
    kind: ScopeKind,
    lines: tuple[int, int],
    aliases: dict[str, str],
    lists: dict[str, tuple[str, ...]],
    scopes: list[PyScope],
) -> None:
    """Add the scope of `node` and those nested in it to `scopes`; `lists` are the module's
    names bound to a literal list of strings."""
    bindings, returns, members = [], [], []
    for statement, loops in _scope_statements(node.body, {}, lists):
        if isinstance(statement, _DEFS):
            qualified = _join(name, statement.name)
            members.append(_def_record(qualified, statement, aliases))
            inner: ScopeKind = "class" if isinstance(statement, ast.ClassDef) else "function"
            span = (statement.lineno, statement.end_lineno or statement.lineno)
            _add_scope(statement, qualified, inner, span, aliases, lists, scopes)
        elif isinstance(statement, ast.Return) and statement.value is not None:
            returns.append(_render(statement.value, aliases))
        else:
            bindings.extend(_bindings(statement, aliases, loops))
    params = _params(node.args) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ()
    scopes.append(PyScope(name, kind, lines, tuple(bindings), tuple(returns), tuple(members), params))


def _scope_statements(
    body: list[ast.stmt], loops: dict[str, tuple[str, ...]], lists: dict[str, tuple[str, ...]]
) -> Iterator[tuple[ast.stmt, dict[str, tuple[str, ...]]]]:
    """The statements that run in a scope, each with the loop variables it sees that take their
    values from a literal list of strings, written in the loop or bound to a name of `lists`."""
    for statement in body:
        yield statement, loops
        if isinstance(statement, _DEFS):
            continue
        inner = loops
        if isinstance(statement, (ast.For, ast.AsyncFor)):
            inner = {**loops, **_literal_loop(statement, lists)}
        yield from _scope_statements(getattr(statement, "body", []), inner, lists)
        for block in ("orelse", "finalbody"):
            yield from _scope_statements(getattr(statement, block, []), loops, lists)
        for handler in getattr(statement, "handlers", []):
            yield from _scope_statements(handler.body, loops, lists)


def _literal_loop(loop: ast.For | ast.AsyncFor, lists: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """`for name in ("a", "b"):` -> {"name": ("a", "b")}, also when the list is one of `lists`."""
    values = lists.get(loop.iter.id, ()) if isinstance(loop.iter, ast.Name) else _strings(loop.iter)
    return {loop.target.id: values} if isinstance(loop.target, ast.Name) and values else {}


def _string_lists(body: list[ast.stmt]) -> dict[str, tuple[str, ...]]:
    """Names that module-level statements bind to a literal list of strings (`__all__ = [...]`),
    the first binding kept."""
    found: dict[str, tuple[str, ...]] = {}
    for statement in _module_statements(body):
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target, values = statement.targets[0], _strings(statement.value)
        if isinstance(target, ast.Name) and values:
            found.setdefault(target.id, values)
    return found


def _strings(node: ast.AST) -> tuple[str, ...]:
    """The values of a literal list, tuple or set of strings; () for anything else."""
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return ()
    values = tuple(e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return values if len(values) == len(node.elts) else ()


def _params(arguments: ast.arguments) -> tuple[str, ...]:
    return tuple(a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs])


def _bindings(statement: ast.stmt, aliases: dict[str, str], loops: dict[str, tuple[str, ...]]) -> list[PyAssign]:
    if isinstance(statement, ast.Assign):
        pairs = [pair for target in statement.targets for pair in _pairs(target, statement.value)]
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        pairs = [(statement.target, statement.value)]
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        return _call_bindings(statement.value, aliases, loops)
    else:
        return []
    found = []
    for target, value in pairs:
        name = _target_name(target, aliases)
        if name is not None:
            found.append(PyAssign(target.lineno, name, _render(value, aliases)))
    return found


def _pairs(target: ast.expr, value: ast.expr) -> Iterator[tuple[ast.expr, ast.expr]]:
    """Each assigned target with its value; an unpacked target only when its value is a literal
    tuple or list of the same length."""
    if not isinstance(target, (ast.Tuple, ast.List)):
        yield target, value
    elif isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
        for inner_target, inner_value in zip(target.elts, value.elts):
            yield from _pairs(inner_target, inner_value)


def _target_name(target: ast.expr, aliases: dict[str, str]) -> str | None:
    """`x` (a name is rebound, not resolved), `x.a` (resolved), or `x.a` for `x.__dict__["a"]`
    and `vars(x)["a"]`."""
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Subscript):
        owner = _namespace_of(target.value, aliases)
        key = target.slice
        if owner and isinstance(key, ast.Constant) and isinstance(key.value, str):
            return f"{owner}.{key.value}"
        return None
    return _resolve(target, aliases)


def _namespace_of(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """`x` for `x.__dict__` and `vars(x)`: expressions that are the namespace of object `x`."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return _resolve(node.value, aliases)
    if isinstance(node, ast.Call) and _resolve(node.func, aliases) == "vars" and len(node.args) == 1:
        return _resolve(node.args[0], aliases)
    return None


def _call_bindings(call: ast.Call, aliases: dict[str, str], loops: dict[str, tuple[str, ...]]) -> list[PyAssign]:
    """What `setattr(x, ...)`, `x.__setattr__(...)` and `x.__dict__.update(...)` bind."""
    parts = _setattr_parts(call, aliases)
    if parts is not None:
        owner, name, value = parts
        owner_name = _resolve(owner, aliases)
        if owner_name is None or value is None:
            return []
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            names: tuple[str, ...] = (name.value,)
        else:
            names = loops.get(name.id, ()) if isinstance(name, ast.Name) else ()
        return [PyAssign(call.lineno, f"{owner_name}.{each}", _render(value, aliases)) for each in names]
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "update"):
        return []
    owner_name = _namespace_of(func.value, aliases)
    if owner_name is None:
        return []
    return [PyAssign(line, f"{owner_name}.{key}", _render(value, aliases)) for line, key, value in _entries(call)]


def _entries(call: ast.Call) -> Iterator[tuple[int, str, ast.expr]]:
    """The (line, key, value) entries a `dict.update(...)` call adds: its keywords, and those of
    a literal dict or a `dict(...)` call it is given."""
    for keyword in call.keywords:
        if keyword.arg is not None:
            yield keyword.value.lineno, keyword.arg, keyword.value
    for argument in call.args:
        if isinstance(argument, ast.Dict):
            for key, value in zip(argument.keys, argument.values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    yield key.lineno, key.value, value
        elif isinstance(argument, ast.Call) and isinstance(argument.func, ast.Name) and argument.func.id == "dict":
            yield from _entries(argument)
