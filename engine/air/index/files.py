"""Which files of a tree are read, what role each plays, and reading them once. Sources no
build of the tree compiles are skipped, with why (`air.index.build_scope`).

Nothing outside the tree is read (see `TreeReader`), and no shape of tree stops the reading:
unreadable directories, names that are not UTF-8 and paths too long to open are counted as
skipped, like unsuitable files."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import translate
from functools import lru_cache
from pathlib import Path

from air.index.build_scope import UNBUILT, unbuilt_sources
from air.index.model import Role, SkippedFile, SourceFile
from air.index.vendored import Vendoring, decide
from air.source.snapshot import TreeReading, listing_digest
from air.source.tree import TreeReader, is_utf8_name, list_paths, shown_path

MAX_FILE_BYTES = 2 * 1024 * 1024

# What is never read, and why (vendored code is decided apart, see `air.index.vendored`).
EXCLUDED_BECAUSE = {
    ".git/**": "git metadata",
    "**/.git/**": "git metadata",
    "build/**": "build output",
    "dist/**": "build output",
    "**/__pycache__/**": "Python bytecode cache",
    "**/*.egg-info/**": "build metadata",
    "**/node_modules/**": "installed JavaScript packages",
    ".venv/**": "a virtual environment",
    "**/.tox/**": "test environments",
}
DEFAULT_EXCLUDES = tuple(EXCLUDED_BECAUSE)

LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".c": "cpp",
    ".cc": "cpp",
    ".cp": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".h": "cpp",
    ".hh": "cpp",
    ".hp": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".inl": "cpp",
    ".ipp": "cpp",
    ".tpp": "cpp",
    ".txx": "cpp",
    ".tcc": "cpp",
    ".inc": "cpp",
    ".def": "cpp",
    ".ixx": "cpp",
    ".cppm": "cpp",
    ".ccm": "cpp",
    ".cxxm": "cpp",
    ".c++m": "cpp",
    ".cu": "cpp",
    ".cuh": "cpp",
    ".hip": "cpp",
    ".mu": "cpp",
    ".muh": "cpp",
    ".mm": "cpp",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".cfg": "ini",
    ".ini": "ini",
    ".txt": "text",
    ".md": "markdown",
    ".rst": "rst",
    ".json": "json",
    ".sh": "shell",
    ".groovy": "groovy",
    ".jenkinsfile": "groovy",
    ".cmake": "cmake",
    ".bzl": "bazel",
    ".patch": "patch",
    ".lds": "linker",  # linker scripts and exported-symbol lists
    ".ld": "linker",
    ".ver": "linker",
    ".exp": "linker",
    ".sym": "linker",
    ".diff": "patch",
    ".jinja": "template",
    ".jinja2": "template",
    ".j2": "template",
    ".in": "template",
}
# C/C++ files compiled on their own; headers and fragments are only included by them.
_TRANSLATION_UNITS = frozenset(
    {".c", ".cc", ".cp", ".cpp", ".cxx", ".c++", ".cu", ".hip", ".mu", ".mm", ".ixx", ".cppm", ".ccm", ".cxxm", ".c++m"}
)
NAMED_LANGUAGES = {
    "CMakeLists.txt": "cmake",
    "Makefile": "make",
    "GNUmakefile": "make",
    "BUILD": "bazel",
    "BUILD.bazel": "bazel",
    "meson.build": "meson",
    ".gitmodules": "gitmodules",
    "VERSION": "text",
}

# Compiled languages a backend may be written in that air does not read: their files are listed,
# so that a tree whose code is all in one of them is not taken for a tree without code.
UNREAD_LANGUAGES = {
    ".rs": "Rust",
    ".go": "Go",
    ".zig": "Zig",
    ".swift": "Swift",
    ".nim": "Nim",
    ".d": "D",
    ".java": "Java",
    ".kt": "Kotlin",
    ".cs": "C#",
    ".ml": "OCaml",
    ".hs": "Haskell",
    ".jl": "Julia",
}
DOC_SUFFIXES = {".md", ".rst"}
TEST_DIRS = {"test", "tests", "testing"}
# Sources that may be tests by their names alone
TEST_FILE_SUFFIXES = {"py", "c", "cc", "cpp", "cxx", "cu", "mm"}
# Words that make a directory a test suite's when its name is made of words (`compile_utest`, `unit-tests`);
# EXERCISE_DIRS's words make it an exercise's (`demo_scripts`, `example-models`)
TEST_DIR_WORDS = {"test", "tests", "testing", "utest", "utests", "unittest", "unittests"}
_WORD_SEPARATORS = re.compile(r"[_\-.]")
# Code that exercises the backend without being part of it: kept with the tests, never counted
# as implementation, read as evidence of trust "tests".
EXERCISE_DIRS = {"example", "examples", "benchmark", "benchmarks", "demo", "demos", "sample", "samples"}
# Words that make a source file an exercise by its name alone (`example.py`, `resnet_demo.py`)
EXERCISE_FILE_WORDS = {"example", "examples", "demo", "demos"}
# Words that make a requirements file the developers' (`requirements-dev.txt`), kept with the tests
DEVELOPMENT_WORDS = {"dev", "devel", "develop", "development"}
# Directories of the developers' own tooling: product code, shown after the package's own
TOOLING_DIRS = {"tools", "tool", "scripts", "devtools", "dev_tools", "dev-tools"}


@dataclass(frozen=True)
class IndexOptions:
    excludes: tuple[str, ...] = DEFAULT_EXCLUDES
    max_file_bytes: int = MAX_FILE_BYTES
    vendoring: Vendoring = Vendoring()
    include_vendored: bool = False  # read vendored directories like the rest of the tree


@dataclass
class FileListing:
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    total_bytes: int = 0
    skipped_directories: list[tuple[str, str]] = field(default_factory=list)  # (directory, why)
    vendored_read: list[tuple[str, str]] = field(default_factory=list)  # (directory, why it is the backend's own)
    reading: TreeReading | None = None  # what the reading depended on
    unread: list[str] = field(default_factory=list)  # sources in a language air does not read (UNREAD_LANGUAGES)


def role_of(path: str) -> Role:
    """Docs never count as implementation; tests are kept apart from product code."""
    parts = path.split("/")
    name = parts[-1]
    if _suffix(name) in DOC_SUFFIXES or "docs" in parts[:-1] or "doc" in parts[:-1]:
        return "docs"
    if (
        TEST_DIRS.intersection(parts[:-1])
        or EXERCISE_DIRS.intersection(parts[:-1])
        or any(map(_names_tests, parts[:-1]))
    ):
        return "tests"
    if name == "conftest.py" or _names_test_file(name) or _names_test_requirements(parts):
        return "tests"
    return "product"


def is_tooling(path: str) -> bool:
    """Whether a file lies in a directory of the developers' tooling (`tools/stats.py`)."""
    return not TOOLING_DIRS.isdisjoint(path.split("/")[:-1])


def _names_test_file(name: str) -> bool:
    """`test_ops.py`, `test.py`, `torch_tests.py`, `guard_unittest.cc`, `example.py`,
    `resnet_demo.py`: a Python or C/C++ source file whose name opens or ends with a test's word,
    or ends with an exercise's (`example_inputs.py` is none; nor is a CI workflow named
    `run-tests.yaml`)."""
    stem, dot, suffix = name.rpartition(".")
    if not dot or suffix not in TEST_FILE_SUFFIXES:
        return False
    words = _WORD_SEPARATORS.split(stem.lower())
    return words[0] in TEST_DIR_WORDS or words[-1] in TEST_DIR_WORDS | EXERCISE_FILE_WORDS


def _names_test_requirements(parts: list[str]) -> bool:
    """`requirements-dev.txt`, `test-requirements.txt`, `requirements/tests.txt`: the
    requirements of those who develop and test the product, not of the product."""
    if not _is_requirements(parts):
        return False
    words = _WORD_SEPARATORS.split(parts[-1].lower()[: -len(".txt")])
    return not (TEST_DIR_WORDS.isdisjoint(words) and DEVELOPMENT_WORDS.isdisjoint(words))


def _is_requirements(parts: list[str]) -> bool:
    """`requirements.txt`, `requirements-gpu.txt`, `dev-requirements.txt`, `requirements/base.txt`."""
    name = parts[-1]
    return name.endswith(".txt") and ("requirements" in name or parts[-2:-1] == ["requirements"])


def _names_tests(directory: str) -> bool:
    """`compile_utest`, `demo_scripts`: a directory named with words, one a test's or an exercise's."""
    words = _WORD_SEPARATORS.split(directory.lower())
    return len(words) > 1 and not (TEST_DIR_WORDS.isdisjoint(words) and EXERCISE_DIRS.isdisjoint(words))


def language_of(path: str) -> str | None:
    name = path.rpartition("/")[2]
    if name in NAMED_LANGUAGES:
        return NAMED_LANGUAGES[name]
    if _is_requirements(path.split("/")):
        return "requirements"
    if name == "setup.py":
        return "python"
    if name.startswith("Jenkinsfile"):  # Jenkinsfile, Jenkinsfile.nightly: Groovy
        return "groovy"
    return LANGUAGES.get(_suffix(name))


def _suffix(name: str) -> str:
    """The file name's last suffix, lowercased, as `PurePosixPath.suffix` finds it."""
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def is_translation_unit(path: str) -> bool:
    """Whether `path` is a C/C++ file compiled on its own, not one only included."""
    return _suffix(path.rpartition("/")[2]) in _TRANSLATION_UNITS


def is_excluded(path: str, excludes: tuple[str, ...]) -> bool:
    return matches_glob(path, excludes)


def matches_glob(path: str, globs: tuple[str, ...]) -> bool:
    """Whether `path` matches one of `globs` (as `fnmatchcase` matches them)."""
    return _glob_regex(globs).match(path) is not None


@lru_cache(maxsize=1024)
def _glob_regex(globs: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(translate(glob) for glob in globs) or "(?!)")


def read_files(root: Path, options: IndexOptions) -> FileListing:
    """Read every selected file once. Unreadable and unsuitable files are counted, not raised;
    excluded directories, and vendored ones that are not the backend's own, are listed with why."""
    listing = FileListing()
    tree = TreeReader(root)
    excluded: dict[str, str] = {}
    vendored: dict[str, list[str]] = {}
    unreadable: list[tuple[str, str]] = []
    paths = list_paths(root, unreadable)
    listing.skipped.extend(SkippedFile(path, reason) for path, reason in unreadable)
    for rel in paths:
        if is_excluded(rel, options.excludes):
            _note_excluded(rel, options.excludes, excluded)
            continue
        copied = None if options.include_vendored else options.vendoring.upstream_file(rel)
        if copied is not None:
            listing.skipped.append(SkippedFile(rel, f"a copy of an upstream file ({copied})"))
            continue
        unit = None if options.include_vendored or language_of(rel) is None else options.vendoring.unit_of(rel)
        if unit is not None:
            vendored.setdefault(unit, []).append(rel)
            continue
        _read_one(tree, rel, options, listing)
    _read_vendored(tree, vendored, options, listing)
    _leave_out_unbuilt(listing)
    listing.skipped_directories = sorted({**excluded, **dict(listing.skipped_directories)}.items())
    listing.reading = TreeReading(listing_digest(paths, unreadable), tree.started, tree.seen)
    return listing


def _leave_out_unbuilt(listing: FileListing) -> None:
    """Skip the product sources no build of the tree compiles (see `air.index.build_scope`)."""
    unbuilt = set(unbuilt_sources(listing.files))
    if unbuilt:
        listing.files = [source for source in listing.files if source.path not in unbuilt]
        listing.skipped.extend(SkippedFile(path, UNBUILT) for path in sorted(unbuilt))


def _read_one(tree: TreeReader, rel: str, options: IndexOptions, listing: FileListing) -> SourceFile | None:
    language = language_of(rel)
    if language is None:
        if _suffix(rel.rpartition("/")[2]) in UNREAD_LANGUAGES:
            listing.unread.append(rel)
        return None
    if not is_utf8_name(rel):
        listing.skipped.append(SkippedFile(shown_path(rel), "file name not UTF-8"))
        return None
    text, reason = tree.read_text(rel, options.max_file_bytes)
    if reason:
        listing.skipped.append(SkippedFile(rel, reason))
        return None
    source = SourceFile(path=rel, role=role_of(rel), language=language, text=text)
    listing.total_bytes += len(text)
    listing.files.append(source)
    return source


def _read_vendored(tree: TreeReader, units: dict[str, list[str]], options: IndexOptions, listing: FileListing) -> None:
    """Read the vendored units that are the backend's own (see `air.index.vendored`): the files
    of a unit not named after an upstream project are read to decide, and kept when it is."""
    vendoring, product = options.vendoring, list(listing.files)
    decided: dict[str, FileListing] = {}
    for unit, paths in sorted(units.items()):
        decided[unit] = FileListing()
        if vendoring.upstream_name(unit) is None:
            for rel in paths:
                _read_one(tree, rel, options, decided[unit])
    skipped = {}
    for decision in decide({unit: read.files for unit, read in decided.items()}, product, vendoring):
        if decision.own:
            listing.files.extend(decided[decision.unit].files)
            listing.skipped.extend(decided[decision.unit].skipped)
            listing.total_bytes += decided[decision.unit].total_bytes
            listing.vendored_read.append((shown_path(decision.unit), decision.reason))
        else:
            skipped[decision.unit] = decision.reason
    projects = [unit for unit in skipped if unit.rpartition("/")[2] not in vendoring.directories]
    listing.skipped_directories += [
        (shown_path(unit), reason)
        for unit, reason in skipped.items()
        if not any(unit.startswith(outer + "/") for outer in projects)
    ]


def _note_excluded(rel: str, excludes: tuple[str, ...], excluded: dict[str, str]) -> None:
    """Record the outermost directory of `rel` that an exclude glob names, with its reason."""
    directory = _excluded_directory(rel.rpartition("/")[0], excludes)
    if directory is not None:
        excluded.setdefault(shown_path(directory[0]), directory[1])


@lru_cache(maxsize=4096)
def _excluded_directory(parent: str, excludes: tuple[str, ...]) -> tuple[str, str] | None:
    if not parent:
        return None
    outer = _excluded_directory(parent.rpartition("/")[0], excludes)
    if outer is not None:
        return outer
    for glob in excludes:
        if matches_glob(parent + "/", (glob,)):
            return parent, EXCLUDED_BECAUSE.get(glob, f"excluded by {glob}")
    return None
