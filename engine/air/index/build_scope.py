"""C/C++ sources that no build of the tree compiles.

A source file the tree holds but never compiles proves nothing: a registration in it never runs.
The builds read are CMake (every CMakeLists.txt, with the `.cmake` files they include, and the
subdirectories they add, variables passed down) and the source globs the tree's Python writes (a
setup.py's or build script's `glob("csrc/**/*.cpp")`). Every argument of every CMake command
that names a source file or a glob (`csrc/*.cpp`, `${CMAKE_CURRENT_SOURCE_DIR}/a.cu`) counts,
whatever the command and whatever condition encloses it. A file counts as compiled when one of
those matches it, or when another file of the tree names it (a source list in setup.py, an
`#include`, a list read at build time).

Only what is sure is decided. Nothing is, when no build names a source at all, when a name or
glob holds a variable this reading cannot resolve (a function's parameter, the environment),
when a build script joins a glob from pieces (`os.path.join(...)`), when another build system
lists sources (Bazel, Meson, a Makefile naming C/C++ files), or when the reading would leave
out most of the sources. Generated files, under the build directory, are not the tree's.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice

from ahocorasick_rs import AhoCorasick

from air.index.model import SourceFile

TREE_ROOT = "<tree>"  # what the tree's root stands as in a CMake variable's value
MAX_PATTERNS = 4096
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".cu", ".mm", ".m")
UNBUILT = "not compiled: no CMake command, setup.py or build script names it or a glob matching it, and no other file names it"

_CMAKE_NOISE = re.compile(r'(?<!\\)"(?:[^"\\]|\\.)*"|#\[(=*)\[.*?\]\1\]|#[^\n]*', re.S)
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_COMMAND = re.compile(r"\b([A-Za-z_]\w*)[ \t]*\(")
_ARGUMENT = re.compile(r'(?<!\\)"((?:[^"\\]|\\.)*)"|((?:[^\s()"\\]|\\.)+)')
_VARIABLE = re.compile(r"\$\{([A-Za-z_][\w.+-]*)\}")
_UNRESOLVED = re.compile(r"\$(?:\{|ENV\{|<)")
_BINARY_DIRS = ("CMAKE_BINARY_DIR", "CMAKE_CURRENT_BINARY_DIR", "PROJECT_BINARY_DIR")
_FILE_GLOBS = {"GLOB": False, "GLOB_RECURSE": True}
_GLOB_OPTIONS = frozenset({"LIST_DIRECTORIES", "RELATIVE", "CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS", "true", "false"})
_PY_STRING = re.compile(r"""(?<![\w])[rRbBuU]?(['"])((?:(?!\1)[^\\\n]|\\.)*)\1""")
_OTHER_BUILDS = ("BUILD", "BUILD.bazel", "meson.build", "SConstruct", "SConscript")
_MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
_MAKE_SOURCES = re.compile(r"\.(?:c|cc|cpp|cxx|cu|mm)\b")
_PIECES = re.compile(r"\bos\.path\.join\s*\(|\bPath\s*\(|/\s*['\"]")


class Undecidable(Exception):
    """The build names sources in a way this reading cannot follow."""


@dataclass(frozen=True)
class Pattern:
    """A source named or globbed, as a tree-relative path; `recursive` as GLOB_RECURSE reads it."""

    path: str
    recursive: bool = False

    def matches(self, path: str) -> bool:
        return _pattern_regex(self.path, self.recursive).fullmatch(path) is not None


@lru_cache(maxsize=1024)
def _pattern_regex(path: str, recursive: bool) -> re.Pattern[str]:
    if not recursive:
        return re.compile(_glob_source(path))
    directory, _, name = path.rpartition("/")
    return re.compile(_glob_source(directory + "/" if directory else "") + r"(?:.*/)?" + _glob_source(name))


@dataclass
class _CMakeReading:
    files: dict[str, str]  # CMake files by path: their text, comments and strings blanked
    patterns: list[Pattern] = field(default_factory=list)
    read: set[str] = field(default_factory=set)


def unbuilt_sources(files: Iterable[SourceFile]) -> list[str]:
    """The product C/C++ sources of `files` that no build of the tree compiles (see the module
    docstring), or none when that cannot be told."""
    files = list(files)
    try:
        patterns = list(islice(_build_patterns(files), MAX_PATTERNS + 1))
    except Undecidable:
        return []
    if len(patterns) > MAX_PATTERNS:
        return []  # more than a build names: every source against every pattern would take too long
    candidates = [f for f in files if f.role == "product" and f.path.endswith(SOURCE_SUFFIXES)]
    unmatched = [f for f in candidates if not any(p.matches(f.path) for p in patterns)]
    if not patterns or not unmatched:
        return []
    mentioned = _mentioned_elsewhere(files, unmatched)
    unbuilt = sorted(f.path for f in unmatched if f.path not in mentioned)
    return [] if len(unbuilt) * 2 > len(candidates) else unbuilt


def _build_patterns(files: list[SourceFile]) -> Iterator[Pattern]:
    for source in files:
        name = posixpath.basename(source.path)
        if name in _OTHER_BUILDS or (name in _MAKEFILES and _MAKE_SOURCES.search(source.text)):
            raise Undecidable(source.path)
    yield from _cmake_patterns(files)
    for source in files:
        if source.language == "python" and source.role != "tests":
            yield from _python_globs(source)


def _cmake_patterns(files: list[SourceFile]) -> list[Pattern]:
    cmake = {
        f.path: _CMAKE_NOISE.sub(_keep_strings, f.text)
        for f in files
        if posixpath.basename(f.path) == "CMakeLists.txt" or f.path.endswith(".cmake")
    }
    reading = _CMakeReading(cmake)
    for path in sorted(p for p in cmake if p.endswith("CMakeLists.txt")):
        if path not in reading.read:
            directory = posixpath.dirname(path)
            root = _rooted(directory)
            _read_cmake(reading, path, {"CMAKE_SOURCE_DIR": root, "PROJECT_SOURCE_DIR": root}, directory)
    return reading.patterns


def _keep_strings(match: re.Match[str]) -> str:
    return match.group() if match.group().startswith('"') else re.sub(r"[^\n]", " ", match.group())


def _read_cmake(reading: _CMakeReading, path: str, inherited: dict[str, str], source_dir: str) -> None:
    reading.read.add(path)
    variables = {
        **inherited,
        "CMAKE_CURRENT_SOURCE_DIR": _rooted(source_dir),
        "CMAKE_CURRENT_LIST_DIR": _rooted(posixpath.dirname(path)),
    }
    for command, arguments in _commands(reading.files[path]):
        values = [_substitute(argument, variables) for argument in arguments]
        if command == "set" and values:
            variables[values[0]] = ";".join(v for v in values[1:] if v not in ("CACHE", "PARENT_SCOPE"))
        elif command == "list" and len(values) > 2 and values[0] == "APPEND":
            variables[values[1]] = ";".join(filter(None, [variables.get(values[1], ""), *values[2:]]))
        elif command == "add_subdirectory" and values:
            child = _in_tree(values[0], source_dir)
            listed = posixpath.join(child, "CMakeLists.txt") if child else "CMakeLists.txt"
            if child is not None and listed in reading.files and listed not in reading.read:
                _read_cmake(reading, listed, variables, child)
        elif command == "include" and values:
            included = _in_tree(values[0], source_dir)
            if included in reading.files and included not in reading.read:
                _read_cmake(reading, included, variables, source_dir)
        recursive = _FILE_GLOBS.get(values[0]) if command == "file" and values else None
        globbed = recursive is not None
        for value in values[2:] if globbed else values:
            for item in value.split(";"):
                pattern = _source_pattern(item, source_dir, bool(recursive), globbed)
                if pattern is not None:
                    reading.patterns.append(pattern)
        if command == "aux_source_directory" and values:
            directory = _in_tree(values[0], source_dir)
            if directory is not None:
                reading.patterns.append(Pattern(posixpath.join(directory, "*") if directory else "*"))


def _commands(text: str) -> Iterator[tuple[str, list[str]]]:
    position = 0
    while command := _COMMAND.search(text, position):
        depth, cursor = 1, command.end()
        while depth and cursor < len(text):
            character = text[cursor]
            if character == "\\":
                cursor += 2
                continue
            if character == '"':
                closing = _QUOTED.match(text, cursor)
                cursor = closing.end() if closing else cursor + 1
                continue
            depth += {"(": 1, ")": -1}.get(character, 0)
            cursor += 1
        body = text[command.end() : cursor - 1]
        yield (
            command.group(1).lower(),
            [m.group(1) if m.group(1) is not None else m.group(2) for m in _ARGUMENT.finditer(body)],
        )
        position = cursor


def _substitute(argument: str, variables: dict[str, str]) -> str:
    """`argument` with the variables it names replaced once: values are stored substituted."""
    return _VARIABLE.sub(lambda m: variables.get(m.group(1), m.group()), argument)


def _source_pattern(item: str, source_dir: str, recursive: bool, globbed: bool) -> Pattern | None:
    if item in _GLOB_OPTIONS or any(f"${{{name}}}" in item for name in _BINARY_DIRS):
        return None
    looks_like_source = item.lower().endswith(SOURCE_SUFFIXES) or (globbed and ("*" in item or "?" in item))
    if not looks_like_source:
        return None
    if _UNRESOLVED.search(item):
        raise Undecidable(item)
    path = _in_tree(item, source_dir)
    return None if path is None else Pattern(path, recursive)


def _rooted(directory: str) -> str:
    """A directory of the tree as the CMake variables naming it hold it: from the tree's root."""
    return posixpath.join(TREE_ROOT, directory) if directory else TREE_ROOT


def _in_tree(item: str, source_dir: str) -> str | None:
    """`item`, relative to `source_dir` unless rooted at the tree, as a path within the tree; None
    when it leaves the tree (an absolute path, or `..` past the root)."""
    if item.startswith(TREE_ROOT):
        item, source_dir = item[len(TREE_ROOT) :].lstrip("/"), ""
    elif item.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(source_dir, item)) if source_dir else posixpath.normpath(item)
    if joined == ".":
        return ""
    return None if joined.startswith("../") or joined == ".." else joined


def _python_globs(source: SourceFile) -> Iterator[Pattern]:
    """The source globs a Python file writes as literals (`glob("csrc/**/*.cpp")`), taken from
    its directory and from the tree's root, where a build script may run."""
    if "*" not in source.text:
        return
    directory = posixpath.dirname(source.path)
    for match in _PY_STRING.finditer(source.text):
        value = match.group(2)
        if "*" not in value or not (value.lower().endswith(SOURCE_SUFFIXES) or value.endswith("*")):
            continue
        line = source.text[source.text.rfind("\n", 0, match.start()) + 1 : source.text.find("\n", match.end())]
        if _PIECES.search(line) or "{" in value or "%" in value:
            raise Undecidable(source.path)
        for base in dict.fromkeys((directory, "")):
            path = _in_tree(value.replace("**/", ""), base)
            if path is not None:
                yield Pattern(path, recursive="**" in value)


def _mentioned_elsewhere(files: list[SourceFile], sources: list[SourceFile]) -> set[str]:
    """The paths of `sources` whose file name another file of the tree holds."""
    names = sorted({posixpath.basename(f.path) for f in sources})
    finder = AhoCorasick(names)
    holders: dict[str, set[str]] = {}
    for source in files:
        for name in set(finder.find_matches_as_strings(source.text)):
            holders.setdefault(name, set()).add(source.path)
    return {f.path for f in sources if holders.get(posixpath.basename(f.path), set()) - {f.path}}


def _glob_source(glob: str) -> str:
    """A glob as a regular expression: `*` and `?` do not cross a `/`."""
    return "".join({"*": "[^/]*", "?": "[^/]"}.get(character, re.escape(character)) for character in glob)
