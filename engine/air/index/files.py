"""Which files of a tree are read, what role each plays, and reading them once."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from fnmatch import translate
from functools import lru_cache
from pathlib import Path

from air.gitcmd import run_git
from air.index.model import Role, SkippedFile, SourceFile

MAX_FILE_BYTES = 2 * 1024 * 1024

DEFAULT_EXCLUDES = (
    ".git/**",
    "**/.git/**",
    "third_party/**",
    "**/third_party/**",
    "build/**",
    "dist/**",
    "**/__pycache__/**",
    "**/*.egg-info/**",
    "**/node_modules/**",
    ".venv/**",
    "**/.tox/**",
)

LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".c": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".cu": "cpp",
    ".h": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".inl": "cpp",
    ".ipp": "cpp",
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
    ".cmake": "cmake",
    ".patch": "patch",
    ".diff": "patch",
    ".jinja": "template",
    ".jinja2": "template",
    ".j2": "template",
    ".in": "template",
}
NAMED_LANGUAGES = {"CMakeLists.txt": "cmake", "Makefile": "make", "BUILD": "bazel", "BUILD.bazel": "bazel",
                   ".gitmodules": "gitmodules"}

DOC_SUFFIXES = {".md", ".rst"}
TEST_DIRS = {"test", "tests", "testing"}
# Code that exercises the backend without being part of it: kept with the tests, never counted
# as implementation, read as evidence of trust "tests".
EXERCISE_DIRS = {"example", "examples", "benchmark", "benchmarks", "demo", "demos", "sample", "samples"}


@dataclass(frozen=True)
class IndexOptions:
    excludes: tuple[str, ...] = DEFAULT_EXCLUDES
    max_file_bytes: int = MAX_FILE_BYTES


@dataclass
class FileListing:
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    total_bytes: int = 0


def role_of(path: str) -> Role:
    """Docs never count as implementation; tests are kept apart from product code."""
    parts = path.split("/")
    name = parts[-1]
    if _suffix(name) in DOC_SUFFIXES or "docs" in parts[:-1] or "doc" in parts[:-1]:
        return "docs"
    if TEST_DIRS.intersection(parts[:-1]) or EXERCISE_DIRS.intersection(parts[:-1]):
        return "tests"
    if name == "conftest.py" or name.startswith("test_") and name.endswith(".py"):
        return "tests"
    if name.endswith(("_test.py", "_test.cpp")):
        return "tests"
    return "product"


def language_of(path: str) -> str | None:
    name = path.rpartition("/")[2]
    if name in NAMED_LANGUAGES:
        return NAMED_LANGUAGES[name]
    if name.startswith("requirements") and name.endswith(".txt"):
        return "requirements"
    if name == "setup.py":
        return "python"
    return LANGUAGES.get(_suffix(name))


def _suffix(name: str) -> str:
    """The file name's last suffix, lowercased, as `PurePosixPath.suffix` finds it."""
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def is_excluded(path: str, excludes: tuple[str, ...]) -> bool:
    return matches_glob(path, excludes)


def matches_glob(path: str, globs: tuple[str, ...]) -> bool:
    """Whether `path` matches one of `globs` (as `fnmatchcase` matches them)."""
    return _glob_regex(globs).match(path) is not None


@lru_cache(maxsize=1024)
def _glob_regex(globs: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(translate(glob) for glob in globs) or "(?!)")


def list_paths(root: Path) -> list[str]:
    """POSIX paths relative to root: git's list for a checkout, otherwise a walk."""
    if (root / ".git").exists():
        listed = _git_listed(root)
        if listed is not None:
            return listed
    return _walk(root)


def _git_listed(root: Path) -> list[str] | None:
    result = run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", timeout=60)
    if result is None or result.returncode != 0:
        return None
    paths = {p.decode("utf-8", "surrogateescape") for p in result.stdout.split(b"\0") if p}
    return sorted(paths)


def _walk(root: Path) -> list[str]:
    found: list[str] = []
    for directory, subdirs, names in os.walk(root, followlinks=False):
        subdirs[:] = sorted(d for d in subdirs if d != ".git")
        base = Path(directory).relative_to(root)
        for name in names:
            found.append((base / name).as_posix())
    found.sort()
    return found


def read_files(root: Path, options: IndexOptions) -> FileListing:
    """Read every selected file once. Unreadable and unsuitable files are counted, not raised."""
    listing = FileListing()
    resolved_root = root.resolve()
    for rel in list_paths(root):
        if is_excluded(rel, options.excludes):
            continue
        language = language_of(rel)
        if language is None:
            continue
        text, reason = _read_text(os.path.join(root, rel), resolved_root, options.max_file_bytes)
        if reason:
            listing.skipped.append(SkippedFile(rel, reason))
            continue
        listing.total_bytes += len(text)
        listing.files.append(SourceFile(path=rel, role=role_of(rel), language=language, text=text))
    return listing


def _read_text(path: str, root: Path, max_bytes: int) -> tuple[str, str]:
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            target = Path(path).resolve()
            if not target.is_relative_to(root):
                return "", "symlink leaving the tree"
            info = target.stat()
        if not stat.S_ISREG(info.st_mode):
            return "", "not a regular file"
        if info.st_size > max_bytes:
            return "", "too large"
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except (OSError, RuntimeError, ValueError):
        return "", "unreadable"
    if len(data) > max_bytes:
        return "", "too large"
    if b"\0" in data[:8192]:
        return "", "binary"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        return "", "not UTF-8"
