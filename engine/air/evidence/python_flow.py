"""Where a Python object gets an attribute, followed through the code that builds it, never run.

An object is named by an expression as the index renders it (`pkg.dev`, `mod`, `make(...)`,
`sys.modules[__name__]`) in the scope of one file where it is used. Its attribute NAME is:

* in a module of the tree: the module's own definition of NAME or the one it imports (read
  lexically), else a module-level binding of NAME;
* in a name bound in the scope or an enclosing function or module: a binding of `name.NAME`
  in any spelling `PyScope.bindings` records, else the attribute of what the name is bound to;
* in a parameter of a function: the attribute of what the calls of the function in its file
  pass for it;
* in a call: the attribute of what the function returns; a class called makes an instance,
  which has every method of the class;
* in a class: its static and class methods, nested classes and class attributes, and those of
  its bases in the tree.

Every step spends one unit of a depth budget, so that a cycle of bindings ends.
"""

from __future__ import annotations

import re

from air.graph.dependencies import DependencyGraph
from air.index import CodeIndex
from air.index.model import PyDef, PyScope

Place = tuple[str, int]  # path, line

MAX_REEXPORT_DEPTH = 4
_THIS_MODULE = re.compile(r"^sys\.modules\[\s*__name__\s*\]$")  # the module that runs the code
_CALL = re.compile(r"^([A-Za-z_][\w.]*)\(\.\.\.\)$")  # how the index renders a call: `callee(...)`
_CLASS_LEVEL = frozenset({"staticmethod", "classmethod"})


class ObjectMembers:
    """Answers where objects get their attributes, over one index; scopes are read on demand."""

    def __init__(self, index: CodeIndex, graph: DependencyGraph) -> None:
        self.index = index
        self.graph = graph
        self._by_name: dict[str, dict[str, PyScope]] = {}
        self._answers: dict[tuple[str, int, str, str, int], Place | None] = {}

    def member(self, path: str, line: int, expression: str, name: str, depth: int) -> Place | None:
        """Where the object that `expression` denotes at `line` of the file at `path` gets its
        attribute `name`."""
        key = (path, line, expression, name, depth)
        if key not in self._answers:
            module = self._module(path, expression)  # a module of the tree is found without parsing the file
            self._answers[key] = (
                self._in_module(module, name, depth)
                if module is not None
                else self._of(path, self._scope_at(path, line), expression, name, depth)
            )
        return self._answers[key]

    def origin(self, path: str, line: int, name: str, depth: int) -> Place | None:
        """Where the value that the binding of attribute `name` at `line` of the file at `path`
        comes from: the member it reads (`impl.name`) or the definition it names."""
        scope = self._scope_at(path, line)
        value = next(
            (b.value for b in scope.bindings if b.line == line and (b.target == name or b.target.endswith(f".{name}"))),
            None,
        )
        if value is None or _CALL.match(value):
            return None
        owner, _, attribute = value.rpartition(".")
        if owner:
            return self.member(path, line, owner, attribute, depth)
        defined = self._definition_of(path, scope, value)
        return (defined[0], defined[1].line) if defined is not None else None

    # --- objects ------------------------------------------------------------

    def _of(self, path: str, scope: PyScope, expression: str, name: str, depth: int) -> Place | None:
        if depth < 0:
            return None
        module = self._module(path, expression)
        if module is not None:
            return self._in_module(module, name, depth)
        call = _CALL.match(expression)
        if call:
            return self._returned(path, scope, call.group(1), name, depth)
        return self._named(path, scope, expression, name, depth)

    def _module(self, path: str, expression: str) -> str | None:
        return path if _THIS_MODULE.match(expression) else self.graph.module_file(expression)

    def _in_module(self, path: str, name: str, depth: int) -> Place | None:
        found = module_definition(self.index, self.graph, path, name, min(depth, MAX_REEXPORT_DEPTH))
        if found is not None:
            return found
        return next(((path, b.line) for b in self._module_scope(path).bindings if b.target == name), None)

    def _named(self, path: str, scope: PyScope, variable: str, name: str, depth: int) -> Place | None:
        """The attribute of what `variable` names in `scope`: the nearest scope that binds it decides."""
        attribute = f"{variable}.{name}"
        for enclosing in self._chain(path, scope):
            bound = [b for b in enclosing.bindings if b.target == attribute]
            if bound:
                return path, bound[0].line
            if self._binds(enclosing, variable):
                return self._bound(path, enclosing, variable, name, depth)
        found = self._imported(path, variable)
        if found is not None:
            return self._of_definition(*found, name, instance=False, depth=depth - 1)
        return None

    def _binds(self, scope: PyScope, variable: str) -> bool:
        return (
            variable in scope.params
            or any(b.target == variable for b in scope.bindings)
            or any(_short(m.name) == variable for m in scope.members)
        )

    def _bound(self, path: str, scope: PyScope, variable: str, name: str, depth: int) -> Place | None:
        for member in scope.members:
            if _short(member.name) == variable:
                return self._of_definition(path, member, name, instance=False, depth=depth - 1)
        for binding in scope.bindings:
            if binding.target == variable:
                found = self._of(path, scope, binding.value, name, depth - 1)
                if found is not None:
                    return found
        if variable in scope.params:
            return self._passed(path, scope, variable, name, depth - 1)
        return None

    def _passed(self, path: str, function: PyScope, parameter: str, name: str, depth: int) -> Place | None:
        """The attribute of what the calls of `function` in its own file pass as `parameter`."""
        parent = self._scopes(path).get(function.name.rpartition(".")[0])
        if parent is not None and parent.kind == "class":
            return None  # a method's callers pass its first parameter implicitly: not followed
        position = function.params.index(parameter)
        for call in self.index.python_facts(self.index.by_path[path]).calls:
            if call.qualname != _short(function.name):
                continue
            passed = call.args[position] if position < len(call.args) else dict(call.kwargs).get(parameter)
            found = self._of(path, self._scope_at(path, call.line), passed, name, depth) if passed else None
            if found is not None:
                return found
        return None

    def _returned(self, path: str, scope: PyScope, callee: str, name: str, depth: int) -> Place | None:
        defined = self._definition_of(path, scope, callee)
        if defined is None:
            return None
        where, target = defined
        if target.kind == "class":
            return self._class_member(where, target, name, instance=True, depth=depth - 1)
        function = self._scopes(where)[target.name]
        for value in function.returns:
            found = self._of(where, function, value, name, depth - 1)
            if found is not None:
                return found
        return None

    def _of_definition(self, path: str, target: PyDef, name: str, instance: bool, depth: int) -> Place | None:
        if target.kind != "class" or depth < 0:
            return None  # a function object has no attribute worth finding
        return self._class_member(path, target, name, instance, depth)

    def _class_member(self, path: str, cls: PyDef, name: str, instance: bool, depth: int) -> Place | None:
        """What a class (or, with `instance`, an instance of it) has as attribute `name`."""
        body = self._scopes(path)[cls.name]
        for member in body.members:
            if _short(member.name) != name:
                continue
            decorators = {_short(decorator) for decorator in member.decorators}
            if member.kind == "class" or instance or decorators & _CLASS_LEVEL:
                return path, member.line
        for binding in body.bindings:
            if binding.target == name:
                return path, binding.line
        if depth <= 0:
            return None
        enclosing = self._scopes(path).get(cls.name.rpartition(".")[0]) or self._module_scope(path)
        for base in cls.bases:
            defined = self._definition_of(path, enclosing, base)
            if defined is not None and defined[1].kind == "class":
                found = self._class_member(*defined, name, instance, depth - 1)
                if found is not None:
                    return found
        return None

    # --- definitions --------------------------------------------------------

    def _definition_of(self, path: str, scope: PyScope, dotted: str) -> tuple[str, PyDef] | None:
        """The function or class that `dotted` names in `scope`: defined there, in an enclosing
        scope, or imported from a module of the tree."""
        for enclosing in self._chain(path, scope):
            for member in enclosing.members:
                if _short(member.name) == dotted:
                    return path, member
        return self._imported(path, dotted)

    def _imported(self, path: str, dotted: str) -> tuple[str, PyDef] | None:
        """The definition that a resolved name `pkg.mod.Name` denotes in a module of the tree."""
        module, _, attribute = dotted.rpartition(".")
        module_path = self.graph.module_file(module) if module else None
        if module_path is None:
            return None
        found = module_definition(self.index, self.graph, module_path, attribute, MAX_REEXPORT_DEPTH)
        if found is None:
            return None
        where, line = found
        for scope in self._scopes(where).values():
            for member in scope.members:
                if member.line == line:
                    return where, member
        return None

    # --- scopes -------------------------------------------------------------

    def _scopes(self, path: str) -> dict[str, PyScope]:
        scopes = self._by_name.get(path)
        if scopes is None:
            found = self.index.python_scopes(self.index.by_path[path])
            scopes = self._by_name[path] = {scope.name: scope for scope in found}
        return scopes

    def _module_scope(self, path: str) -> PyScope:
        return self._scopes(path).get("") or PyScope("", "module", (1, 1))

    def _scope_at(self, path: str, line: int) -> PyScope:
        """The innermost scope that holds `line`."""
        holding = [s for s in self._scopes(path).values() if s.lines[0] <= line <= s.lines[1]]
        return max(holding, key=lambda scope: scope.lines[0], default=None) or self._module_scope(path)

    def _chain(self, path: str, scope: PyScope) -> list[PyScope]:
        """`scope` and the scopes whose names it sees: enclosing functions and the module
        (a class body does not enclose the functions defined in it)."""
        scopes = self._scopes(path)
        parts = scope.name.split(".") if scope.name else []
        chain = [scope]
        for length in range(len(parts) - 1, -1, -1):
            enclosing = scopes.get(".".join(parts[:length]))
            if enclosing is not None and enclosing.kind != "class":
                chain.append(enclosing)
        return chain


def module_definition(index: CodeIndex, graph: DependencyGraph, path: str, name: str, depth: int) -> Place | None:
    """Where the module at `path` gets `name`: its own definition, or the one it imports
    (both read lexically: a module's definitions and imports need no parse)."""
    facts = index.python_lexical(index.by_path[path])
    for defined in facts.defs:
        if defined.name == name:
            return path, defined.line
    if depth == 0:
        return None
    for imported in facts.imports:
        if imported.alias != name and imported.name != "*":
            continue
        if imported.name is None:
            continue
        target = graph.module_file(imported.module)
        if target and target != path:
            found = module_definition(index, graph, target, imported.name if imported.name != "*" else name, depth - 1)
            if found:
                return found
    return None


def _short(dotted: str) -> str:
    return dotted.rpartition(".")[2]
