"""A tree's files as air may read them: listed by git or by a walk, each opened only when it is
a regular file inside the tree, and never through a link that leaves it."""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path

from air.regular_file import NotRegular, open_regular
from air.source.git_command import run_git
from air.source.git_directory import Repository, find_repository

LEAVING_THE_TREE = "symlink leaving the tree"
NOT_A_TREE_PATH = "listed by git, but not a path inside the tree (absolute, or with an empty, . or .. component)"


def list_paths(root: Path, unreadable: list[tuple[str, str]] | None = None) -> list[str]:
    """POSIX paths relative to root: git's list for a checkout, otherwise a walk (which adds
    the directories it cannot list to `unreadable`, with why). git lists the paths its index
    holds as written there, and a crafted index may hold any: one that is absolute, or has an
    empty, `.` or `..` component (`link/../../x`, which climbs out through a link wherever it is
    followed), is not a path of the tree, and is added to `unreadable`."""
    repository = find_repository(root) if os.path.lexists(root / ".git") else None
    if repository is not None:
        listed = _git_listed(repository)
        if listed is not None:
            unsafe = [path for path in listed if not is_plain_path(path)]
            if unreadable is not None:
                unreadable.extend((shown_path(path), NOT_A_TREE_PATH) for path in unsafe)
            return [path for path in listed if is_plain_path(path)] if unsafe else listed
    return _walk(root, unreadable)


def is_plain_path(path: str) -> bool:
    """Whether `path` is relative, with no empty, `.` or `..` component and no NUL."""
    return (
        "\0" not in path and not path.startswith("/") and all(part not in ("", ".", "..") for part in path.split("/"))
    )


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


def _walk(root: Path, unreadable: list[tuple[str, str]] | None) -> list[str]:
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
            if unreadable is not None:
                unreadable.append((shown_path(directory or "."), _reason(error, "unreadable directory")))
    found.sort()
    return found


def shown_path(rel: str) -> str:
    """`rel` as text that can be written anywhere: bytes of a name that are not UTF-8 as `\\xff`."""
    return rel if is_utf8_name(rel) else rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def is_utf8_name(rel: str) -> bool:
    """Whether the name was UTF-8 on disk (otherwise it holds the surrogates `os.fsdecode` makes)."""
    if rel.isascii():
        return True
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


Status = tuple[int, ...]


def status_of(info: os.stat_result) -> Status:
    """What changes whenever a file's content does: its identity, type, size and times."""
    return (info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def file_status(path: str, follow: bool) -> Status | None:
    try:
        return status_of(os.stat(path, follow_symlinks=follow))
    except (OSError, ValueError):
        return None


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
        self.started = time.time_ns()
        # every file looked at, as it looked: the status of its path and, once opened, of the file
        self.seen: dict[str, tuple[Status | None, Status | None]] = {}

    def open(self, rel: str) -> tuple[int, os.stat_result]:
        """A descriptor open on the regular file `rel` (the caller closes it), and its status."""
        directory, _, name = rel.rpartition("/")
        listed = os.path.join(self.root, rel)
        self.seen[rel] = (None, None)
        try:
            path = os.path.join(self._directory(directory), name)
            info = os.lstat(path)
            self.seen[rel] = (status_of(info) if path == listed else file_status(listed, follow=False), None)
            if stat.S_ISLNK(info.st_mode):
                path = os.path.realpath(path, strict=True)
                if not self._contains(path):
                    raise Unsuitable(LEAVING_THE_TREE)
                info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                raise Unsuitable("not a regular file")
            descriptor, info = open_regular(path)  # no link: those were resolved and checked above
            self.seen[rel] = (self.seen[rel][0], status_of(info))
            return descriptor, info
        except Unsuitable:
            if self.seen[rel][0] is None:
                self.seen[rel] = (file_status(listed, follow=False), None)
            raise
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
