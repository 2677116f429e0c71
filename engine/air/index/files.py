"""Which files of a tree are read, what role each plays, and reading them once.

Nothing outside the tree is read (see `TreeReader`), and no shape of tree stops the reading:
unreadable directories, names that are not UTF-8 and paths too long to open are counted as
skipped, like unsuitable files."""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass, field
from fnmatch import translate
from functools import lru_cache
from pathlib import Path

from air.gitcmd import run_git
from air.gitdir import Repository, find_repository
from air.index.model import Role, SkippedFile, SourceFile
from air.index.vendored import Vendoring, decide
from air.regular_file import NotRegular, open_regular

MAX_FILE_BYTES = 2 * 1024 * 1024
LEAVING_THE_TREE = "symlink leaving the tree"

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
    ".cmake": "cmake",
    ".bzl": "bazel",
    ".patch": "patch",
    ".diff": "patch",
    ".jinja": "template",
    ".jinja2": "template",
    ".j2": "template",
    ".in": "template",
}
NAMED_LANGUAGES = {
    "CMakeLists.txt": "cmake",
    "Makefile": "make",
    "GNUmakefile": "make",
    "BUILD": "bazel",
    "BUILD.bazel": "bazel",
    "meson.build": "meson",
    ".gitmodules": "gitmodules",
}

DOC_SUFFIXES = {".md", ".rst"}
TEST_DIRS = {"test", "tests", "testing"}
# Code that exercises the backend without being part of it: kept with the tests, never counted
# as implementation, read as evidence of trust "tests".
EXERCISE_DIRS = {"example", "examples", "benchmark", "benchmarks", "demo", "demos", "sample", "samples"}


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


def list_paths(root: Path, skipped: list[SkippedFile] | None = None) -> list[str]:
    """POSIX paths relative to root: git's list for a checkout, otherwise a walk (which adds
    the directories it cannot list to `skipped`)."""
    repository = find_repository(root) if os.path.lexists(root / ".git") else None
    if repository is not None:
        listed = _git_listed(repository)
        if listed is not None:
            return listed
    return _walk(root, skipped)


def _git_listed(repository: Repository) -> list[str] | None:
    """git's list of the tracked files and of the untracked ones no ignore file names; None when
    git fails, or would block on an ignore file that is not a regular file (such as a FIFO)."""
    if not _ignore_files_are_regular(repository.worktree):
        return None
    result = run_git(
        repository.worktree,
        repository.gitdir,
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
        timeout=60,
    )
    if result is None or result.returncode != 0:
        return None
    paths = {p.decode("utf-8", "surrogateescape") for p in result.stdout.split(b"\0") if p}
    return sorted(paths)


def _ignore_files_are_regular(root: Path) -> bool:
    """Whether every `.gitignore` git would open under `root` is a file (or a link, which git does not follow)."""
    pending = [str(root)]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != ".git":
                            pending.append(entry.path)
                    elif entry.name == ".gitignore" and not (entry.is_file() or entry.is_symlink()):
                        return False
        except OSError:
            continue
    return True


def _walk(root: Path, skipped: list[SkippedFile] | None) -> list[str]:
    """Files under root, found without entering `.git` or following links to directories. The
    walk keeps its own stack, so that no depth of nesting exhausts Python's."""
    found: list[str] = []
    pending = [""]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(os.path.join(root, directory)) as entries:
                for entry in entries:
                    rel = f"{directory}/{entry.name}" if directory else entry.name
                    if not entry.is_dir(follow_symlinks=False):
                        found.append(rel)
                    elif entry.name != ".git":
                        pending.append(rel)
        except OSError as error:
            if skipped is not None:
                skipped.append(SkippedFile(shown_path(directory or "."), _reason(error, "unreadable directory")))
    found.sort()
    return found


def read_files(root: Path, options: IndexOptions) -> FileListing:
    """Read every selected file once. Unreadable and unsuitable files are counted, not raised;
    excluded directories, and vendored ones that are not the backend's own, are listed with why."""
    listing = FileListing()
    tree = TreeReader(root)
    excluded: dict[str, str] = {}
    vendored: dict[str, list[str]] = {}
    for rel in list_paths(root, listing.skipped):
        if is_excluded(rel, options.excludes):
            _note_excluded(rel, options.excludes, excluded)
            continue
        unit = None if options.include_vendored or language_of(rel) is None else options.vendoring.unit_of(rel)
        if unit is not None:
            vendored.setdefault(unit, []).append(rel)
            continue
        _read_one(tree, rel, options, listing)
    _read_vendored(tree, vendored, options, listing)
    listing.skipped_directories = sorted({**excluded, **dict(listing.skipped_directories)}.items())
    return listing


def _read_one(tree: TreeReader, rel: str, options: IndexOptions, listing: FileListing) -> SourceFile | None:
    language = language_of(rel)
    if language is None:
        return None
    if not _is_utf8(rel):
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


def shown_path(rel: str) -> str:
    """`rel` as text that can be written anywhere: bytes of a name that are not UTF-8 as `\\xff`."""
    return rel if _is_utf8(rel) else rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _is_utf8(rel: str) -> bool:
    """Whether the name was UTF-8 on disk (otherwise it holds the surrogates `os.fsdecode` makes)."""
    if rel.isascii():
        return True
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Unsuitable(Exception):
    """A file of the tree that is not read, and why (the reason counted in the report)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TreeReader:
    """Opens the files of one tree by their relative paths, never anything outside it.

    Each directory on a path is resolved once, links included, and must stay inside the
    resolved root; a file that is a link is read only when its target does too. A file is
    opened without following a link and without blocking, and its descriptor must be a regular
    file: one swapped for a link or a FIFO after its check is skipped, not followed or waited on."""

    def __init__(self, root: Path | str) -> None:
        self.root = os.path.realpath(root)
        self._prefix = os.path.join(self.root, "")
        self._directories: dict[str, str | Unsuitable] = {"": self.root}

    def open(self, rel: str) -> tuple[int, os.stat_result]:
        """A descriptor open on the regular file `rel` (the caller closes it), and its status."""
        directory, _, name = rel.rpartition("/")
        path = os.path.join(self._directory(directory), name)
        try:
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                path = os.path.realpath(path, strict=True)
                if not self._contains(path):
                    raise Unsuitable(LEAVING_THE_TREE)
                info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                raise Unsuitable("not a regular file")
            return open_regular(path)  # the last component is no link: those were resolved and checked above
        except NotRegular:
            raise Unsuitable("not a regular file") from None
        except (OSError, ValueError) as error:
            raise Unsuitable(_reason(error, "unreadable")) from None

    def read_text(self, rel: str, max_bytes: int) -> tuple[str, str]:
        """The text of `rel`, or "" and why it is not read."""
        try:
            descriptor, info = self.open(rel)
        except Unsuitable as unsuitable:
            return "", unsuitable.reason
        try:
            if info.st_size > max_bytes:
                return "", "too large"
            data = _read_at_most(descriptor, min(info.st_size, max_bytes) + 1, max_bytes + 1)
        except OSError:
            return "", "unreadable"
        finally:
            os.close(descriptor)
        if len(data) > max_bytes:
            return "", "too large"
        if b"\0" in data[:8192]:
            return "", "binary"
        try:
            return data.decode("utf-8"), ""
        except UnicodeDecodeError:
            return "", "not UTF-8"

    def _directory(self, rel: str) -> str:
        """The resolved directory `rel`; raises `Unsuitable` when it leaves the tree or cannot
        be looked at. Verdicts are kept per directory, the missing ancestors found first."""
        pending = []
        while rel not in self._directories:
            pending.append(rel)
            rel = rel.rpartition("/")[0]
        for directory in reversed(pending):
            parent, name = self._directories[rel], directory.rpartition("/")[2]
            self._directories[directory] = parent if isinstance(parent, Unsuitable) else self._step(parent, name)
            rel = directory
        found = self._directories[rel]
        if isinstance(found, Unsuitable):
            raise Unsuitable(found.reason)
        return found

    def _step(self, parent: str, name: str) -> str | Unsuitable:
        """`name` in the resolved directory `parent`, resolved in turn."""
        path = os.path.join(parent, name)
        try:
            if name in ("", ".", "..") or stat.S_ISLNK(os.lstat(path).st_mode):
                path = os.path.realpath(path, strict=True)
        except (OSError, ValueError) as error:
            return Unsuitable(_reason(error, "unreadable"))
        return path if self._contains(path) else Unsuitable(LEAVING_THE_TREE)

    def _contains(self, resolved: str) -> bool:
        return resolved == self.root or resolved.startswith(self._prefix)


def _read_at_most(descriptor: int, expected: int, limit: int) -> bytes:
    """Up to `limit` bytes, asked for `expected` at a time (the size the file had when opened)."""
    chunks = []
    read = 0
    while read < limit:
        chunk = os.read(descriptor, min(expected, limit - read))
        if not chunk:
            break
        chunks.append(chunk)
        read += len(chunk)
    return b"".join(chunks)


def _reason(error: Exception, otherwise: str) -> str:
    return "path too long" if getattr(error, "errno", None) == errno.ENAMETOOLONG else otherwise
