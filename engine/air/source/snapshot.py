"""Tree snapshots: a tree that has not changed since it was last read is known without reading it.

When a check has read a tree, `record` keeps in the cache what the reading depended on: the
digest of the tree's listing, and the status of every file it looked at (see `TreeReader.seen`),
with the digest of what the index made of them. A later check of the same tree with the same
settings (pack and options) asks `recorded_index`: it lists the tree and takes those statuses
again, and when nothing differs the index digest is the recorded one. A file's status holds its
change time, which every write moves and no tool sets back.

A file changed shortly before it was read could change again within the same tick of the file
system's clock and keep its status (git calls such a file racily clean): a reading that saw a
file changed less than `SETTLE_NS` before it began is not recorded. The next check reads the
tree again, and records it.

Entries are signed like the result cache's (`air.signed_entries`), under `snapshots/`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from air import __version__
from air.cache_dirs import private_dir
from air.signed_entries import read_entry, write_entry
from air.source.tree import Status, file_status, list_paths

ENTRY_DIR = "snapshots"
SETTLE_NS = 2_000_000_000
MTIME, CTIME = 4, 5  # positions in a file's status


@dataclass(frozen=True)
class TreeReading:
    """What one reading of a tree depended on."""

    listing: str  # `listing_digest` of what was listed
    started: int  # when the reading began, in nanoseconds since the epoch
    seen: dict[str, tuple[Status | None, Status | None]]  # see `TreeReader.seen`


def listing_digest(paths: list[str], unreadable: list[tuple[str, str]]) -> str:
    """The digest of a tree's listing: its paths, and the directories that could not be listed."""
    digest = hashlib.sha256()
    for part in [*paths, "", *(f"{path}\0{reason}" for path, reason in unreadable)]:
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def snapshot_name(root: Path, settings: str) -> str:
    """The name of the snapshot of the tree at `root` read with `settings`."""
    return hashlib.sha256(
        f"{__version__}\0{os.path.realpath(root)}\0{settings}".encode("utf-8", "surrogateescape")
    ).hexdigest()


def record(name: str, reading: TreeReading, index_digest: str) -> None:
    """Keep the snapshot `name` of `reading`, unless a file it saw had changed too recently to
    be told apart from a later change; a cache that cannot be written only leaves it unkept."""
    settled_before = reading.started - SETTLE_NS
    statuses = [status for both in reading.seen.values() for status in both if status is not None]
    if any(max(status[MTIME], status[CTIME]) >= settled_before for status in statuses):
        return
    body = json.dumps(
        {
            "listing": reading.listing,
            "files": reading.seen,
            "index": index_digest,
        },
        sort_keys=True,
    ).encode()
    try:
        write_entry(_entry(name), name, body)
    except OSError:
        pass  # the result cache says why the cache cannot be written


def recorded_index(root: Path, name: str) -> str | None:
    """The index digest of the snapshot `name` when the tree at `root` looks as it did then;
    None when there is no snapshot, or anything differs."""
    try:
        body = read_entry(_entry(name), name)
    except OSError:
        return None
    if body is None:
        return None
    try:
        entry = json.loads(body)
        files = entry["files"]
        unreadable: list[tuple[str, str]] = []
        if listing_digest(list_paths(root, unreadable), unreadable) != entry["listing"]:
            return None
        base = os.path.realpath(root)
        for rel, (path_status, opened_status) in files.items():
            path = os.path.join(base, rel)
            if _listed(file_status(path, follow=False)) != path_status:
                return None
            if opened_status is not None and _listed(file_status(path, follow=True)) != opened_status:
                return None
        return str(entry["index"])
    except (ValueError, KeyError, TypeError):
        return None


def _listed(status: Status | None) -> list[int] | None:
    """A status as JSON gives it back."""
    return None if status is None else list(status)


def _entry(name: str) -> Path:
    return private_dir(ENTRY_DIR, name[:2]) / f"{name}.json"
