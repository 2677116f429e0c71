"""Build metadata (name, version, entry points, requirements) read from packaging files.

Nothing is executed: `setup.py` is parsed with `ast` and only literal values are
understood. Every extractor returns `BuildFacts` with `error` set on malformed
input instead of raising.
"""

from __future__ import annotations

import ast
import bisect
import configparser
import posixpath
import re
import tomllib
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from air.index.model import BuildFacts, EntryPoint, Requirement

_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*(.*)", re.DOTALL)
_BYTE_ORDER_MARK = "\ufeff"
_SPEC_START = ("<", ">", "=", "!", "~", "(", "@")
_EXTRAS = re.compile(r"(?<!\s)\s*\[[^\[\]]*\]\s*$")
_INLINE_COMMENT = re.compile(r"(^|\s)#.*")
_PIP_OPTION = re.compile(r"\s--?[A-Za-z].*")
_PACKAGE_FINDERS = ("find_packages", "find_namespace_packages")
_ARCHIVE = re.compile(r"\.(whl|zip|tar\.gz|tgz|tar\.bz2)$", re.IGNORECASE)
_NEWLINE = re.compile("\n")
_QUOTED = re.compile(r"""(["'])([^"'\n]*)\1""")
_ASSIGNED_KEY = re.compile(r"""(?m)^[ \t]*["']?([^\s"'=]+)["']?[ \t]*=""")
MAX_VALUE_SIZE = 1 << 20  # characters of a string, items of a list: setup.py means nothing larger


def extract_setup_py(text: str) -> BuildFacts:
    """Read the keywords of the `setup(...)` call in a `setup.py`."""
    text = text.removeprefix(_BYTE_ORDER_MARK)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. SyntaxWarning for invalid escapes in the analysed code
            tree = ast.parse(text)
    except SyntaxError as exc:
        return _failure(f"line {exc.lineno}: {exc.msg}" if exc.lineno else str(exc.msg))
    except (ValueError, RecursionError, MemoryError) as exc:
        return _failure(f"{type(exc).__name__}: {exc}")

    call = _setup_call(tree)
    if call is None:
        return BuildFacts()
    try:
        keywords = _Evaluator(tree).keywords(call)
    except RecursionError:
        return _failure("setup() arguments are nested too deeply to read")
    version = keywords.get("version")
    return BuildFacts(
        project_name=_text(keywords.get("name")),
        version=_text(version),
        version_file=version.path if isinstance(version, _FileText) else None,
        entry_points=tuple(_setup_entry_points(keywords.get("entry_points"))),
        requirements=tuple(_setup_requirements(keywords.get("install_requires"))),
        packages=_declared(item.value for key in ("packages", "py_modules") for item in _listed(keywords.get(key))),
    )


def extract_pyproject(text: str) -> BuildFacts:
    """Read `[project]` and `[tool.poetry]` metadata from a `pyproject.toml`."""
    text = text.removeprefix(_BYTE_ORDER_MARK)
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, MemoryError) as exc:
        return _failure(str(exc))

    project = _table(data, "project")
    tool = _table(data, "tool")
    poetry = _table(tool, "poetry")
    entry_points = [*_project_entry_points(project, text), *_poetry_entry_points(poetry, text)]
    requirements = [*_project_requirements(project, text), *_poetry_requirements(poetry, text)]
    return BuildFacts(
        project_name=_first_string(project.get("name"), poetry.get("name")),
        version=_first_string(project.get("version"), poetry.get("version")),
        entry_points=tuple(entry_points),
        requirements=tuple(requirements),
        packages=_declared(_tool_packages(tool)),
    )


def extract_setup_cfg(text: str) -> BuildFacts:
    """Read `[metadata]`, `[options] install_requires` and `[options.entry_points]`."""
    text = text.removeprefix(_BYTE_ORDER_MARK)
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    # entry point groups and names are case-sensitive
    parser.optionxform = str  # type: ignore[method-assign, assignment]  # replacing it is what configparser documents
    try:
        parser.read_string(text)
    except (configparser.Error, ValueError, MemoryError) as exc:
        return _failure(str(exc))

    metadata = parser["metadata"] if parser.has_section("metadata") else {}
    version = metadata.get("version")
    if version and version.split(":")[0].strip() in ("attr", "file"):
        version = None
    return BuildFacts(
        project_name=metadata.get("name") or None,
        version=version or None,
        entry_points=tuple(_cfg_entry_points(parser, text)),
        requirements=tuple(_cfg_requirements(parser, text)),
        packages=_declared(_cfg_packages(parser)),
    )


def extract_requirements(text: str) -> BuildFacts:
    """Read a pip requirements file: one requirement per line; options, editable
    installs, URLs and comments are skipped."""
    text = text.removeprefix(_BYTE_ORDER_MARK)
    requirements = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = _PIP_OPTION.sub("", _INLINE_COMMENT.sub("", line)).strip()
        if line and not line.startswith("-"):
            requirement = _requirement(line, number)
            if requirement is not None:
                requirements.append(requirement)
    return BuildFacts(requirements=tuple(requirements))


def normalized_name(name: str) -> str:
    """A distribution's name as package indexes compare it: lower case, runs of `-_.` as `-`."""
    return re.sub(r"[-_.]+", "-", name.lower())


# --- Strings shared by every format ----------------------------------------


def merge_build_facts(parts: Iterable[BuildFacts]) -> BuildFacts:
    """Combine facts from several files: the first name and version found win,
    entry points and requirements are concatenated, errors joined with "; "."""
    parts = list(parts)
    errors = [part.error for part in parts if part.error]
    return BuildFacts(
        project_name=next((part.project_name for part in parts if part.project_name is not None), None),
        version=next((part.version for part in parts if part.version is not None), None),
        entry_points=tuple(entry for part in parts for entry in part.entry_points),
        requirements=tuple(requirement for part in parts for requirement in part.requirements),
        error="; ".join(errors) or None,
        packages=next((part.packages for part in parts if part.packages is not None), None),
    )


def _requirement(text: str, line: int) -> Requirement | None:
    """`"numpy>=2.1,<2.5; python_version>'3'"` -> Requirement("numpy", ">=2.1,<2.5").

    The name is normalised; the spec keeps the version specifier without extras,
    markers, parentheses or whitespace ("" for none or for a URL). Returns None
    when `text` is not a requirement.
    """
    match = _REQUIREMENT.fullmatch(text.split(";")[0])
    if match is None or _ARCHIVE.search(match.group(1)):
        return None
    name, rest = match.groups()
    rest = rest.strip()
    if rest and not rest.startswith(_SPEC_START):
        return None
    spec = "" if rest.startswith("@") else "".join(rest.strip("()").split())
    return Requirement(normalized_name(name), spec, line)


def _entry_point(group: str, text: str, line: int) -> EntryPoint | None:
    """`"name = module:attr [extra]"` -> EntryPoint(group, "name", "module:attr")."""
    name, equals, target = text.partition("=")
    name, target = name.strip(), _EXTRAS.sub("", target).strip()
    if not equals or not name or not target:
        return None
    return EntryPoint(group, name, target, line)


def _declared(names: Iterable[str]) -> tuple[str, ...] | None:
    """The package names a build file lists, or None when it lists none."""
    found = tuple(dict.fromkeys(name.strip() for name in names if name.strip()))
    return found or None


def _failure(message: str) -> BuildFacts:
    return BuildFacts(error=" ".join(message.split()) or "unreadable")


def _line_at(text: str, index: int) -> int:
    """The 1-based line holding `index`, or 1 when the search that gave it failed (-1)."""
    return bisect.bisect_left(_newlines(text), index) + 1 if index >= 0 else 1


@lru_cache(maxsize=4)  # a build file's values are each located in it: its lines are found once
def _newlines(text: str) -> list[int]:
    return [match.start() for match in _NEWLINE.finditer(text)]


# --- setup.py ---------------------------------------------------------------


@dataclass(frozen=True)
class _Literal:
    """A string read from the source, with the line of the literal it came from."""

    value: str
    line: int


def _setup_call(tree: ast.Module) -> ast.Call | None:
    """The first call of a function whose name ends in `setup` that passes any keyword."""
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and node.keywords and _callee_name(node.func).endswith("setup")
    ]
    return min(calls, key=lambda call: (call.lineno, call.col_offset), default=None)


def _callee_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


class _Evaluator:
    """Evaluates literal expressions, following names bound by earlier
    module-level assignments (`x = ...` and `x += ...`)."""

    def __init__(self, tree: ast.Module) -> None:
        self._bindings: dict[str, list[tuple[int, ast.expr]]] = {}
        self._values: dict[tuple[str, int], object] = {}
        self._paths: dict[tuple[str, int], str | None] = {}
        for statement in tree.body:
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        self._bind(target.id, statement.lineno, statement.value)
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                if isinstance(statement.target, ast.Name):
                    self._bind(statement.target.id, statement.lineno, statement.value)
            elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
                name = statement.target.id
                update = ast.BinOp(ast.Name(name, ast.Load()), statement.op, statement.value)
                self._bind(name, statement.lineno, update)

    def _bind(self, name: str, line: int, value: ast.expr) -> None:
        self._bindings.setdefault(name, []).append((line, value))

    def keywords(self, call: ast.Call) -> dict[str, object]:
        """The call's keyword values that could be evaluated, `**mapping` included."""
        values: dict[str, object] = {}
        for keyword in call.keywords:
            value = self.evaluate(keyword.value, call.lineno)
            if keyword.arg is not None:
                values[keyword.arg] = value
            elif isinstance(value, dict):
                values.update({key: item for key, item in value.items() if key not in values})
        return {key: value for key, value in values.items() if value is not None}

    def evaluate(self, node: ast.expr, before: int) -> object:
        """The value of `node` as a _Literal, list, dict, or None when unknown.

        Names resolve to their last module-level binding on a line before `before`,
        so `x = x + [...]` reads the earlier `x`."""
        if isinstance(node, ast.Constant):
            return _Literal(str(node.value), node.lineno) if isinstance(node.value, (str, int, float)) else None
        if isinstance(node, ast.Name):
            return self._lookup(node.id, before)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return self._sequence(node.elts, before)
        if isinstance(node, ast.Dict):
            return self._mapping(node, before)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return _concatenate(self.evaluate(node.left, before), self.evaluate(node.right, before))
        if isinstance(node, ast.Call) and _callee_name(node.func) in _PACKAGE_FINDERS:
            return self._found_packages(node, before)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            return self._file_text(node.func, before)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self._builtin_call(node.func.id, node, before)
        return None

    def _file_text(self, method: ast.Attribute, before: int) -> _FileText | None:
        """The text of a file beside setup.py, as the call of `method` reads it (`open(p).read()`,
        `Path(p).read_text()`, either stripped); None for another call."""
        receiver = method.value
        if method.attr in _STRIPS:
            inner = self.evaluate(receiver, before)
            return inner if isinstance(inner, _FileText) else None
        if method.attr in ("read", "readline") and isinstance(receiver, ast.Call):
            opened = _callee_name(receiver.func) == "open" and receiver.args
            path = self._path(receiver.args[0], before) if opened else None
        elif method.attr == "read_text":
            path = self._path(receiver, before)
        else:
            return None
        return _FileText(path) if path else None

    def _path(self, node: ast.expr, before: int) -> str | None:
        """A path written relative to setup.py's directory (`"v.txt"`, `os.path.join(here,
        "v.txt")`, `Path(__file__).parent / "VERSION"`), as a POSIX path; "" for that directory;
        None for any other path."""
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return _SETUP_FILE
            earlier = [(line, value) for line, value in self._bindings.get(node.id, ()) if line < before]
            if not earlier:
                return None
            line, value = earlier[-1]
            if (node.id, line) not in self._paths:  # once per binding, as `_lookup` does
                self._paths[(node.id, line)] = None
                found = self._path(value, line)
                self._paths[(node.id, line)] = found if found is None or len(found) <= MAX_VALUE_SIZE else None
            return self._paths[(node.id, line)]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return _joined(self._path(node.left, before), self._path(node.right, before))
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            return _parent(self._path(node.value, before))
        if not isinstance(node, ast.Call):
            return None
        name = _callee_name(node.func)
        if name in ("resolve", "absolute") and isinstance(node.func, ast.Attribute):
            return self._path(node.func.value, before)
        parts = [self._path(argument, before) for argument in node.args]
        if name in ("Path", "PurePath", "abspath", "realpath", "normpath") and len(parts) == 1:
            return parts[0]
        if name == "dirname" and len(parts) == 1:
            return _parent(parts[0])
        if name == "join" and parts:
            joined: str | None = parts[0]
            for part in parts[1:]:
                joined = _joined(joined, part)
            return joined
        return None

    def _found_packages(self, node: ast.Call, before: int) -> list[object] | None:
        """The `include` patterns of a package finder, or None: it takes every package it finds."""
        include = next((kw.value for kw in node.keywords if kw.arg == "include"), None)
        patterns = self.evaluate(include, before) if include is not None else None
        return patterns if isinstance(patterns, list) and patterns else None

    def _lookup(self, name: str, before: int) -> object:
        """The value of `name`'s last binding before `before`, worked out once per binding: a
        chain that names each binding twice (`a2 = a1 + a1`) costs one evaluation per link."""
        earlier = [(line, value) for line, value in self._bindings.get(name, ()) if line < before]
        if not earlier:
            return None
        line, value = earlier[-1]
        if (name, line) not in self._values:
            self._values[(name, line)] = None  # a binding read while it is worked out is unknown
            self._values[(name, line)] = self.evaluate(value, line)
        return self._values[(name, line)]

    def _sequence(self, elements: list[ast.expr], before: int) -> list[object]:
        items: list[object] = []
        for element in elements:
            if isinstance(element, ast.Starred):
                value = self.evaluate(element.value, before)
                items.extend(value if isinstance(value, list) else ())
            else:
                value = self.evaluate(element, before)
                if value is not None:
                    items.append(value)
        return items

    def _mapping(self, node: ast.Dict, before: int) -> dict[str, object]:
        mapping: dict[str, object] = {}
        for key_node, value_node in zip(node.keys, node.values):
            value = self.evaluate(value_node, before)
            if key_node is None:
                mapping.update(value if isinstance(value, dict) else {})
                continue
            key = self.evaluate(key_node, before)
            if isinstance(key, _Literal) and value is not None:
                mapping[key.value] = value
        return mapping

    def _builtin_call(self, name: str, node: ast.Call, before: int) -> object:
        if name == "dict" and not node.args:
            values = {kw.arg: self.evaluate(kw.value, before) for kw in node.keywords if kw.arg is not None}
            return {key: value for key, value in values.items() if value is not None}
        if name in ("list", "tuple") and len(node.args) == 1 and not node.keywords:
            value = self.evaluate(node.args[0], before)
            return value if isinstance(value, list) else None
        return None


@dataclass(frozen=True)
class _FileText:
    """The text of the file at `path`, relative to setup.py's directory."""

    path: str


_SETUP_FILE = "\0setup.py"  # `__file__`: a file whose directory is setup.py's, "" as a path
_STRIPS = ("strip", "rstrip", "lstrip")


def _parent(path: str | None) -> str | None:
    if path == _SETUP_FILE:
        return ""
    return None if path is None or path.startswith("\0") else posixpath.dirname(path)


def _joined(left: str | None, right: str | None) -> str | None:
    if left is None or right is None or left == _SETUP_FILE or right.startswith(("\0", "/")):
        return None
    return posixpath.normpath(posixpath.join(left, right)) if left else right


def _concatenate(left: object, right: object) -> object:
    """`left + right` of two lists or two strings; None for another pair, or for a value larger
    than setup.py could mean (doubled again and again)."""
    if isinstance(left, list) and isinstance(right, list):
        return left + right if len(left) + len(right) <= MAX_VALUE_SIZE else None
    if isinstance(left, _Literal) and isinstance(right, _Literal):
        joined = len(left.value) + len(right.value) <= MAX_VALUE_SIZE
        return _Literal(left.value + right.value, left.line) if joined else None
    return None


def _text(value: object) -> str | None:
    return value.value if isinstance(value, _Literal) else None


def _literals(value: object) -> Iterator[_Literal]:
    """The strings of a list, or the lines of a single (possibly multi-line) string."""
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, _Literal))
    elif isinstance(value, _Literal):
        for offset, line in enumerate(value.value.splitlines()):
            yield _Literal(line, value.line + offset)


def _listed(value: object) -> Iterator[_Literal]:
    """The strings of a list; nothing for anything else."""
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, _Literal))


def _setup_entry_points(value: object) -> Iterator[EntryPoint]:
    if isinstance(value, _Literal):
        yield from _ini_entry_points(value.value, value.line)
    elif isinstance(value, dict):
        for group, specs in value.items():
            for spec in _literals(specs):
                entry_point = _entry_point(group, spec.value, spec.line)
                if entry_point is not None:
                    yield entry_point


def _ini_entry_points(text: str, first_line: int) -> Iterator[EntryPoint]:
    """Entry points written as an INI string: `[group]` headers over `name = target` lines."""
    group = None
    for offset, line in enumerate(text.splitlines()):
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
        elif group and line and not line.startswith(("#", ";")):
            entry_point = _entry_point(group, line, first_line + offset)
            if entry_point is not None:
                yield entry_point


def _setup_requirements(value: object) -> Iterator[Requirement]:
    for literal in _literals(value):
        line = _INLINE_COMMENT.sub("", literal.value).strip()
        requirement = _requirement(line, literal.line) if line else None
        if requirement is not None:
            yield requirement


# --- pyproject.toml ---------------------------------------------------------


def _table(data: object, key: str) -> dict:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _strings(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _first_string(*values: object) -> str | None:
    return next((value for value in values if isinstance(value, str)), None)


def _line_of_value(text: str, value: str) -> int:
    """The line of the first quoted occurrence of `value`, else of its first occurrence."""
    found = _quoted(text).get(value)
    if found is None:
        match = re.search(f"[\"']{re.escape(value)}[\"']", text)
        found = match.start() if match else text.find(value)
    return _line_at(text, found)


def _line_of_key(text: str, key: str) -> int:
    found = _keys(text).get(key)
    if found is None:
        match = re.search(rf"^[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*=", text, re.MULTILINE)
        found = match.start() if match else -1
    return _line_at(text, found)


@lru_cache(maxsize=4)  # one pass for all the values of a long dependency list, not one search each
def _quoted(text: str) -> dict[str, int]:
    """Where each string written in quotes on one line first occurs."""
    found: dict[str, int] = {}
    for match in _QUOTED.finditer(text):
        found.setdefault(match.group(2), match.start())
    return found


@lru_cache(maxsize=4)
def _keys(text: str) -> dict[str, int]:
    """Where each key assigned at the start of a line (`torch = ">=2.4"`) first occurs."""
    found: dict[str, int] = {}
    for match in _ASSIGNED_KEY.finditer(text):
        found.setdefault(match.group(1), match.start())
    return found


def _tool_packages(tool: dict) -> Iterator[str]:
    """The packages and modules `[tool.setuptools]`, `[tool.poetry]` and hatch's wheel target
    list, with the `include` patterns of setuptools' package finder."""
    setuptools = _table(tool, "setuptools")
    listed = setuptools.get("packages")
    found = _table(_table(setuptools, "packages"), "find")
    yield from _strings(listed) if isinstance(listed, list) else _strings(found.get("include"))
    yield from _strings(setuptools.get("py-modules"))
    poetry_packages = _table(tool, "poetry").get("packages")
    for item in poetry_packages if isinstance(poetry_packages, list) else ():
        if isinstance(item, dict) and isinstance(item.get("include"), str):
            yield item["include"]
    wheel = _table(_table(_table(_table(tool, "hatch"), "build"), "targets"), "wheel")
    yield from (path.rstrip("/").rpartition("/")[2] for path in _strings(wheel.get("packages")))


def _project_entry_points(project: dict, text: str) -> Iterator[EntryPoint]:
    groups = {"console_scripts": _table(project, "scripts"), "gui_scripts": _table(project, "gui-scripts")}
    for group, table in _table(project, "entry-points").items():
        if isinstance(table, dict):
            groups[group] = table
    yield from _table_entry_points(groups, text)


def _poetry_entry_points(poetry: dict, text: str) -> Iterator[EntryPoint]:
    scripts = {}
    for name, script in _table(poetry, "scripts").items():
        scripts[name] = script.get("callable") if isinstance(script, dict) else script
    groups = {"console_scripts": scripts}
    for group, table in _table(poetry, "plugins").items():
        if isinstance(table, dict):
            groups[group] = table
    yield from _table_entry_points(groups, text)


def _table_entry_points(groups: dict[str, dict], text: str) -> Iterator[EntryPoint]:
    for group, table in groups.items():
        for name, target in table.items():
            if isinstance(target, str) and target.strip():
                target = _EXTRAS.sub("", target).strip()
                yield EntryPoint(group, name, target, _line_of_value(text, target))


def _project_requirements(project: dict, text: str) -> Iterator[Requirement]:
    for dependency in _strings(project.get("dependencies")):
        requirement = _requirement(dependency, _line_of_value(text, dependency))
        if requirement is not None:
            yield requirement


def _poetry_requirements(poetry: dict, text: str) -> Iterator[Requirement]:
    for name, constraint in _table(poetry, "dependencies").items():
        if name.lower() == "python":
            continue
        if isinstance(constraint, dict):
            constraint = constraint.get("version")
        spec = constraint.strip() if isinstance(constraint, str) and constraint.strip() != "*" else ""
        requirement = _requirement(name, _line_of_key(text, name))
        if requirement is not None:
            yield Requirement(requirement.name, "".join(spec.split()), requirement.line)


# --- setup.cfg --------------------------------------------------------------


def _cfg_values(parser: configparser.ConfigParser, section: str, option: str) -> list[str]:
    """The non-empty, non-comment lines of a multi-line option."""
    if not parser.has_option(section, option):
        return []
    lines = (line.strip() for line in parser.get(section, option).splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _section_start(text: str, section: str) -> int:
    match = re.search(rf"^[ \t]*\[{re.escape(section)}\]", text, re.MULTILINE)
    return match.start() if match else 0


class _Lines:
    """The lines of a section's values, found in order: each is looked for after the one before,
    so a long list is read once, not once per value."""

    def __init__(self, text: str, start: int) -> None:
        self.text, self.position = text, start

    def line_of(self, value: str) -> int:
        found = self.text.find(value, self.position)
        if found >= 0:
            self.position = found + len(value)
        return _line_at(self.text, found)


def _cfg_packages(parser: configparser.ConfigParser) -> Iterator[str]:
    """`[options] packages` and `py_modules` (comma- or line-separated), or the `include` of
    `[options.packages.find]` when packages are found (`find:`)."""
    for option in ("packages", "py_modules"):
        for line in _cfg_values(parser, "options", option):
            found = line.startswith(("find:", "find_namespace:"))
            for listed in _cfg_values(parser, "options.packages.find", "include") if found else [line]:
                yield from listed.split(",")


def _cfg_requirements(parser: configparser.ConfigParser, text: str) -> Iterator[Requirement]:
    lines = _Lines(text, _section_start(text, "options"))
    for line in _cfg_values(parser, "options", "install_requires"):
        requirement = _requirement(_INLINE_COMMENT.sub("", line).strip(), lines.line_of(line))
        if requirement is not None:
            yield requirement


def _cfg_entry_points(parser: configparser.ConfigParser, text: str) -> Iterator[EntryPoint]:
    section = "options.entry_points"
    if not parser.has_section(section):
        return
    lines = _Lines(text, _section_start(text, section))
    for group in parser.options(section):
        for line in _cfg_values(parser, section, group):
            entry_point = _entry_point(group, line, lines.line_of(line))
            if entry_point is not None:
                yield entry_point
