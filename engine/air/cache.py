"""The result cache: an unchanged tree, checked again with the same pack, answers at once.

An entry is keyed by a content hash of the index (every file's path, role and text, and what
was skipped and why), the pack's fingerprint (its files and its framework's), air's version
and the source description. It holds the report as JSON, signed with the cache's own key
(`air.signed_entries`): an entry copied from another cache does not verify.

The cache is trusted only as far as its directory is: whoever can write there could plant
reports or change a fetched copy of a repository (`air.source.locate` keeps those in `clones`). So
the cache directory and every directory air uses in it must be owned by the user and not
writable by group or others, else the check stops with an error naming the fix; air creates
them user-only (0700). An unusable key file stops the check too. A path that cannot be a
directory, or cannot be created, only leaves results uncached, with a note.

An entry that is not a regular file, cannot be read, does not verify or does not load is
deleted and the check runs afresh. The cache lives in `$AIR_CACHE`, else
`$XDG_CACHE_HOME/air`, else `~/.cache/air`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

from air import __version__
from air.cache_dirs import cache_dir, private_dir
from air.index import CodeIndex
from air.report.json_report import from_dict, to_dict
from air.results import Report
from air.signed_entries import read_entry, remove_entry, write_entry

ENTRY_DIR = "results"


def cache_key(index_digest: str, pack_fingerprint: str, settings: str) -> str:
    """`settings`: everything else the report depends on (provenance, options), as text."""
    digest = hashlib.sha256()
    for part in (__version__, pack_fingerprint, settings, index_digest):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def index_digest(index: CodeIndex) -> str:
    """A content hash of the index: every file's path, role and text, and what was skipped and why."""
    digest = hashlib.sha256()
    for file in sorted(index.files, key=lambda f: f.path):
        digest.update(f"{file.path}\0{file.role}\0".encode("utf-8", "surrogateescape"))
        digest.update(hashlib.sha256(file.text.encode("utf-8", "surrogateescape")).digest())
    for skipped in sorted(index.skipped, key=lambda s: s.path):
        digest.update(f"{skipped.path}\0{skipped.reason}\0".encode("utf-8", "surrogateescape"))
    for directory, reason in index.skipped_directories + index.vendored_read:
        digest.update(f"{directory}\0{reason}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def load(key: str, date: str) -> Report | None:
    """The cached report for `key`, dated `date`; None (and a removed entry) when there is
    no entry or it is not a regular file, corrupt or not signed with this cache's key."""
    try:
        path = _entry(key)
        body = read_entry(path, key)
    except OSError:
        return None  # no usable cache: `store` says why
    if body is None:
        return None
    try:
        return replace(from_dict(json.loads(body)), date=date)
    except (ValueError, KeyError, TypeError, AttributeError):
        remove_entry(path)
        return None


def store(key: str, report: Report) -> str | None:
    """Write the entry atomically. A failure does not fail the check: it is returned as a
    one-line note for the caller to show."""
    body = json.dumps(to_dict(report), sort_keys=True).encode()  # ASCII: file names may hold undecodable bytes
    try:
        write_entry(_entry(key), key, body)
    except OSError as error:
        return f"result not cached ({error.strerror or error}: {cache_dir()})"
    return None


def _entry(key: str) -> Path:
    return private_dir(ENTRY_DIR, key[:2]) / f"{key}.json"
