"""Whether the tracked files of a work tree differ from git's index, decided without git.

git's index (versions 2, 3 and 4, sha1 or sha256 object ids) lists every tracked path with the
file's stat data when it was staged and the id of its content. A path whose mode, size and
modification time still match, and that was not modified in the same instant the index was
written (racily clean), is unchanged; any other is hashed as a git blob and compared with the
index. Paths are looked up with `lstat` and never through a symbolic link, so a tracked
directory replaced by a link reads as changed and nothing outside the work tree is read.

No clean filter, end-of-line or encoding conversion is applied (applying them would run the
tree's own configuration), so a tree whose files git converts on commit may read as changed.
Entries marked skip-worktree or assume-unchanged count as unchanged, submodules are not looked
into, and a conflicted or intent-to-add entry is a change. Changes staged but not committed are
not seen: only the work tree is compared, with the index.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from air.regular_file import open_regular
from air.source.git_directory import Repository, open_member

INDEX_LIMIT = 1 << 30
HASH_CHUNK = 1 << 20
MAX_HASHED_BYTES = 1 << 28  # a tracked file larger than this whose stat changed is taken as changed, not hashed
_HEADER = struct.Struct(">4sII")
_FLAGS = struct.Struct(">H")
_HASH_SIZES = {"sha1": 20, "sha256": 32}
# An entry's stat data, object id and flags, by object id size.
_FIXED = {size: struct.Struct(f">10I{size}sH") for size in _HASH_SIZES.values()}
# An empty, `.` or `..` component, or `.git`: a path that is not a file of the work tree.
_OUTSIDE_PATH = re.compile(rb"(?:^|/)(?:|\.|\.\.|\.[Gg][Ii][Tt])(?:/|$)")
_ASSUME_VALID = 0x8000
_EXTENDED = 0x4000
_STAGE = 0x3000
_NAME_LENGTH = 0x0FFF
_SKIP_WORKTREE = 0x4000
_INTENT_TO_ADD = 0x2000
_TYPE_REGULAR, _TYPE_SYMLINK, _TYPE_GITLINK = 0o100000, 0o120000, 0o160000


class IndexFormatError(ValueError):
    """The index is not one air can read (version, extension, damage, hostile path)."""


@dataclass(frozen=True, slots=True)
class Entry:
    path: bytes
    mode: int
    size: int
    mtime: int  # nanoseconds
    object_id: bytes
    changed: bool  # conflicted or intent-to-add: a change whatever the work tree holds
    trusted: bool  # skip-worktree or assume-unchanged: unchanged whatever the work tree holds


def worktree_differs(repository: Repository, prefix: str = "") -> bool | None:
    """Whether a tracked file under `prefix` (a POSIX path relative to the work tree, "" for all)
    differs from the index; None when the index is missing or cannot be read."""
    hash_size = _HASH_SIZES.get(repository.object_format)
    loaded = _load_index(repository)
    if hash_size is None or loaded is None:
        return None
    data, written = loaded
    wanted = prefix.encode("utf-8", "surrogateescape") + b"/" if prefix else b""
    try:
        tracked = [entry for entry in entries(data, hash_size) if entry.path.startswith(wanted)]
    except IndexFormatError:
        return None
    worktree = _Worktree(os.fsencode(repository.worktree), repository, written)
    return any(worktree.differs(entry) for entry in tracked)


def entries(data: bytes, hash_size: int) -> Iterator[Entry]:
    """The entries of an index file's content; IndexFormatError when it cannot be read."""
    try:
        signature, version, count = _HEADER.unpack_from(data)
    except struct.error:
        raise IndexFormatError("no index header") from None
    if signature != b"DIRC" or version not in (2, 3, 4):
        raise IndexFormatError(f"index version {version}")
    offset, previous = _HEADER.size, b""
    for _ in range(count):
        entry, offset = _entry(data, offset, hash_size, version, previous)
        previous = entry.path
        yield entry
    if _has_extension(data, offset, len(data) - hash_size, b"link"):
        raise IndexFormatError("a split index")


def _entry(data: bytes, offset: int, hash_size: int, version: int, previous: bytes) -> tuple[Entry, int]:
    fixed = _FIXED[hash_size]
    try:
        fields = fixed.unpack_from(data, offset)
        flags, position = fields[11], offset + fixed.size
        extended = 0
        if flags & _EXTENDED:
            (extended,) = _FLAGS.unpack_from(data, position)
            position += _FLAGS.size
        if version == 4:
            removed, position = _varint(data, position)
            end = data.index(b"\0", position)
            path = previous[: len(previous) - removed] + data[position:end] if removed <= len(previous) else b""
            following = end + 1
        else:
            length = flags & _NAME_LENGTH
            end = position + length if length < _NAME_LENGTH else data.index(b"\0", position)
            path = data[position:end]
            following = offset + ((end - offset + 8) & ~7)
    except (struct.error, ValueError, IndexError):
        raise IndexFormatError("a damaged entry") from None
    changed = bool(flags & _STAGE or extended & _INTENT_TO_ADD)
    trusted = bool(flags & _ASSUME_VALID or extended & _SKIP_WORKTREE)
    named = path[:-1] if trusted and path.endswith(b"/") else path  # a sparse index's directory entry
    if following > len(data) or not named or b"\0" in named or _OUTSIDE_PATH.search(named):
        raise IndexFormatError("a damaged entry or a path leaving the work tree")
    mtime = fields[2] * 1_000_000_000 + fields[3]
    return Entry(path, fields[6], fields[9], mtime, fields[10], changed, trusted), following


def _varint(data: bytes, position: int) -> tuple[int, int]:
    """git's offset encoding of the number of bytes a v4 path drops from the previous one."""
    byte = data[position]
    value = byte & 0x7F
    while byte & 0x80:
        position += 1
        byte = data[position]
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, position + 1


def _has_extension(data: bytes, offset: int, end: int, signature: bytes) -> bool:
    while offset + 8 <= end:
        name, size = struct.unpack_from(">4sI", data, offset)
        if name == signature:
            return True
        offset += 8 + size
    return False


def _load_index(repository: Repository) -> tuple[bytes, int] | None:
    """The index's content and modification time (nanoseconds), when it is a readable regular file."""
    descriptor = open_member(repository.gitdir, "index")
    if descriptor is None:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_size > INDEX_LIMIT:
            return None
        return handle.read(INDEX_LIMIT), info.st_mtime_ns


class _Worktree:
    """The work tree, looked at through `lstat` and never through a symbolic link."""

    def __init__(self, root: bytes, repository: Repository, index_written: int) -> None:
        self.root = root
        self.repository = repository
        self.index_written = index_written
        self.directories: dict[bytes, bool] = {b"": True}

    def differs(self, entry: Entry) -> bool:
        if entry.changed:
            return True
        if entry.trusted or entry.mode & 0o170000 == _TYPE_GITLINK:
            return False
        directory, _, _ = entry.path.rpartition(b"/")
        if not self._is_directory(directory):
            return True
        path = self.root + b"/" + entry.path
        try:
            info = os.lstat(path)
        except OSError:
            return True
        if not self._same_kind(entry.mode, info.st_mode):
            return True
        if self._stat_matches(entry, info):
            return False
        if entry.size != info.st_size & 0xFFFFFFFF or info.st_size > MAX_HASHED_BYTES:
            return True  # as git says of a size that changed; a file too large to hash is taken as changed
        return _blob_id(path, info, self.repository.object_format) != entry.object_id

    def _is_directory(self, directory: bytes) -> bool:
        """Whether each prefix of `directory` is a directory, not a link (known ones kept)."""
        parts = directory.split(b"/") if directory else []
        for depth in range(1, len(parts) + 1):
            prefix = b"/".join(parts[:depth])
            known = self.directories.get(prefix)
            if known is None:
                try:
                    known = stat.S_ISDIR(os.lstat(self.root + b"/" + prefix).st_mode)
                except OSError:
                    known = False
                self.directories[prefix] = known
            if not known:
                return False
        return True

    def _same_kind(self, mode: int, actual: int) -> bool:
        if mode & 0o170000 == _TYPE_SYMLINK:
            return stat.S_ISLNK(actual)
        if mode & 0o170000 != _TYPE_REGULAR or not stat.S_ISREG(actual):
            return False
        return not self.repository.file_mode or bool(mode & 0o100) == bool(actual & 0o100)

    def _stat_matches(self, entry: Entry, info: os.stat_result) -> bool:
        mtime = info.st_mtime_ns
        recorded = (mtime // 1_000_000_000 & 0xFFFFFFFF) * 1_000_000_000 + mtime % 1_000_000_000
        return entry.size == info.st_size & 0xFFFFFFFF and entry.mtime == recorded and entry.mtime < self.index_written


def _blob_id(path: bytes, info: os.stat_result, object_format: str) -> bytes:
    """The object id of the file or symbolic link at `path` as a git blob; b"" when it cannot be read."""
    digest = hashlib.new(object_format)
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            return b""
        digest.update(b"blob %d\0" % len(target) + target)
        return digest.digest()
    try:
        descriptor, opened = open_regular(path)
    except OSError:
        return b""
    with os.fdopen(descriptor, "rb") as handle:
        digest.update(b"blob %d\0" % opened.st_size)
        remaining = opened.st_size
        while remaining > 0:
            chunk = handle.read(min(remaining, HASH_CHUNK))
            if not chunk:
                return b""
            digest.update(chunk)
            remaining -= len(chunk)
    return digest.digest()
