"""`air pack verify-apis --wheel WHEEL`: which framework APIs a wheel of the framework has, read
from the archive and never installed or run, so that a release for another platform (the small
macOS build of any release, say) can be checked. C++ names are looked for in its headers as in
an installation (see `api_check.found_in_headers`). A Python name resolves when the module files
define it: a module or package, a name a module binds at its top level (a function, class,
assignment or import, also under `if` and `try`, and through `from ... import *`), a member a
class body binds. The `.pyi` stubs of compiled modules count as their definitions. What the
sources cannot tell (a member a class may inherit from a base outside the sources, an
attribute of a value built at run time, a submodule a module enters in `sys.modules` by hand)
is reported as not checked, with the reason. Against an installation of the same release
(2.13.0), every C++ name and every Python name the shipped pack looks for gets the same answer,
but the two a module enters in `sys.modules`, which are not checked.
"""

from __future__ import annotations

import ast
import fnmatch
import posixpath
import zipfile
import zlib
from functools import cache
from pathlib import Path
from types import ModuleType

from air.errors import InputError
from air.runtime.api_check import HEADER_SUFFIXES, found_in_headers

MAX_MEMBER_BYTES = 16 * 1024 * 1024  # a larger header or module is no source file: left unread
PYTHON_SUFFIXES = (".py", ".pyi")
MAX_STAR_DEPTH = 4  # `from m import *` chains followed this far


def wheel_answer(wheel: Path, request: dict) -> dict:
    """The answer `api_check` gives for an installation, read from `wheel`."""
    package, headers = request["package"], request["headers"]
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = {info.filename: info for info in archive.infolist() if info.file_size <= MAX_MEMBER_BYTES}

            def text(name: str) -> str:
                return archive.read(members[name]).decode("utf-8", errors="replace")

            header_dir = f"{package}/{headers.strip('/')}/"
            header_texts = (
                text(name) for name in members if name.startswith(header_dir) and name.endswith(HEADER_SUFFIXES)
            )
            cpp = found_in_headers(header_texts, request["cpp"])
            modules = Modules({name: text(name) for name in members if name.endswith(PYTHON_SUFFIXES)})
            python = {name: modules.resolves(name) for name in request["python"]}
    # a member encrypted (RuntimeError), compressed in a way zipfile lacks (NotImplementedError),
    # cut short (EOFError) or corrupt (zlib.error)
    except (OSError, zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError, zlib.error) as error:
        raise InputError(f"{wheel}: not a readable wheel: {error}") from None
    return {
        "version": _version(wheel),
        "headers": any(n.startswith(header_dir) for n in members),
        "python": python,
        "cpp": cpp,
    }


def _version(wheel: Path) -> str:
    """The release a wheel's file name gives (name-version-...whl)."""
    parts = wheel.name.split("-")
    return parts[1] if len(parts) >= 5 else "unknown"


class Modules:
    """The Python modules of a wheel, by dotted name, read from their sources."""

    def __init__(self, sources: dict[str, str]) -> None:
        self.sources = sources  # archive path -> text

    def resolves(self, dotted: str) -> bool | str:
        """Whether `dotted` names something the sources define (a last part with `*` is a glob
        of names), or why the sources cannot tell."""
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            module = ".".join(parts[:end])
            if not self._files(module):
                continue
            rest = parts[end:]
            if not rest:
                return True
            if hasattr(ModuleType(module), rest[0]):  # what every module has (__setattr__, __dict__)
                return True
            if "*" in rest[0]:
                return any(fnmatch.fnmatchcase(name, rest[0]) for name in self._names(module))
            node = self._binding(module, rest[0])
            if node is None and self._enters(module, f"{module}.{rest[0]}"):
                return f"{dotted}: {module} enters modules in sys.modules as it runs"
            if node is None:
                return False
            return True if len(rest) == 1 else _member(node, rest[1:], dotted)
        return False

    def _files(self, module: str) -> list[str]:
        base = module.replace(".", "/")
        candidates = (f"{base}.pyi", f"{base}/__init__.pyi", f"{base}.py", f"{base}/__init__.py")
        return [path for path in candidates if path in self.sources]

    def _binding(self, module: str, name: str, depth: int = 0) -> ast.AST | None:
        """The node that binds `name` in `module` (a submodule counts as bound), following
        `from ... import *` a few modules deep."""
        if self._files(f"{module}.{name}"):
            return ast.Module(body=[], type_ignores=[])
        for path in self._files(module):
            bound, starred, _entered = _top_level(self.sources[path], path)
            if name in bound:
                return bound[name]
            for source in starred if depth < MAX_STAR_DEPTH else ():
                found = self._binding(source, name, depth + 1)
                if found is not None:
                    return found
        return None

    def _enters(self, module: str, submodule: str) -> bool:
        """Whether `module`, as it is imported, may enter `submodule` in sys.modules by hand
        (`sys.modules[f"pkg.{name}"] = ...`)."""
        return any(
            submodule == key or (not exact and submodule.startswith(key))
            for path in self._files(module)
            for key, exact in _top_level(self.sources[path], path)[2]
        )

    def _names(self, module: str, depth: int = 0) -> set[str]:
        """The names `module` binds, those of the modules it imports `*` from included."""
        names: set[str] = set()
        for path in self._files(module):
            bound, starred, _entered = _top_level(self.sources[path], path)
            names.update(bound)
            for source in starred if depth < MAX_STAR_DEPTH else ():
                names |= self._names(source, depth + 1)
        return names


def _member(node: ast.AST, rest: list[str], dotted: str) -> bool | str:
    """Whether the class `node` binds the member `rest[0]` (deeper parts are not followed)."""
    if not isinstance(node, ast.ClassDef):
        return f"{dotted}: an attribute of a value the sources build at run time"
    if rest[0] in _bound_in(node.body):
        return True
    if node.bases:
        return f"{dotted}: not in the class body; it may come from a base the sources do not define"
    return False


@cache
def _top_level(text: str, path: str) -> tuple[dict[str, ast.AST], tuple[str, ...], tuple[tuple[str, bool], ...]]:
    """The names a module binds at its top level, the modules it imports `*` from, and the
    modules it enters in sys.modules there: (name, True), or (the prefix an f-string gives, False)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}, (), ()
    package = posixpath.dirname(path).replace("/", ".")  # where its relative imports start
    starred, entered = [], []
    for node in _statements(tree.body):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            starred.append(_absolute(node, package))
        targets = node.targets if isinstance(node, ast.Assign) else []
        entered += [key for target in targets if (key := _sys_modules_key(target)) is not None]
    return _bound_in(tree.body), tuple(starred), tuple(entered)


def _sys_modules_key(target: ast.expr) -> tuple[str, bool] | None:
    """For `sys.modules[KEY]`, the module KEY names (True) or the prefix of the names its
    f-string gives (False); None for another target or a key built otherwise."""
    if not (isinstance(target, ast.Subscript) and ast.unparse(target.value) == "sys.modules"):
        return None
    key = target.slice
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value, True
    if isinstance(key, ast.JoinedStr):
        first = key.values[0] if key.values else None
        prefix = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
        return (prefix, False) if "." in prefix else None
    return None


def _bound_in(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names the statements of `body` bind, each with the statement (under `if` and `try` too)."""
    bound: dict[str, ast.AST] = {}
    for node in _statements(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bound[name.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    bound[(alias.asname or alias.name).split(".")[0]] = node
    return bound


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body`, with the statements of its `if`, `try` and `with` blocks."""
    found: list[ast.stmt] = []
    for node in body:
        found.append(node)
        if isinstance(node, ast.If):
            found += _statements(node.body) + _statements(node.orelse)
        elif isinstance(node, ast.Try):
            found += _statements(node.body) + _statements(node.orelse) + _statements(node.finalbody)
            for handler in node.handlers:
                found += _statements(handler.body)
        elif isinstance(node, (ast.With, ast.For)):
            found += _statements(node.body)
    return found


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module `from <node.module> import *` names, relative imports resolved in `package`."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    return ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
