"""The result cache: an unchanged tree, checked again with the same pack, answers at once.

An entry is keyed by a content hash of the index (every file's path, role and text, and what
was skipped and why), the pack's fingerprint (its files and its framework's), air's version
and the source description. It holds the report as JSON after an HMAC-SHA256 of its key and
that JSON, made with a random key kept beside the entries (`key`, a user-only regular file of
32 bytes, created once and never replaced). An entry written without that key, such as one
copied from another cache, does not verify.

The cache is trusted only as far as its directory is: whoever can write there could plant
reports or change a fetched copy of a repository (`air.source.locate` keeps those in `clones`). So
the cache directory and every directory air uses in it must be owned by the user and not
writable by group or others, else the check stops with an error naming the fix; air creates
them user-only (0700). A key file that is not a user-only regular file of the right size
stops the check too (removing it is safe: every entry is then rebuilt). A path that cannot
be a directory, or cannot be created, only leaves results uncached, with a note.

An entry is opened without following a symbolic link and without blocking, and read only
when it is a regular file; one that is anything else, cannot be read, does not verify or
does not load is deleted and the check runs afresh. Entries are written to a temporary file
and renamed. The cache lives in `$AIR_CACHE`, else `$XDG_CACHE_HOME/air`, else `~/.cache/air`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from dataclasses import replace
from pathlib import Path

from air import __version__
from air.cache_dirs import cache_dir, private_dir
from air.errors import InputError
from air.index import CodeIndex
from air.regular_file import NotRegular, open_regular
from air.report.json_report import from_dict, to_dict
from air.results import Report

ENTRY_DIR = "results"
KEY_FILE = "key"
KEY_BYTES = 32


def cache_key(index: CodeIndex, pack_fingerprint: str, settings: str) -> str:
    """`settings`: everything else the report depends on (provenance, options), as text."""
    digest = hashlib.sha256()
    for part in (__version__, pack_fingerprint, settings):
        digest.update(part.encode() + b"\0")
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
        path, secret = _entry(key), _secret()
    except OSError:
        return None  # no usable cache: `store` says why
    try:
        body = _verified(_read_entry(path), secret, key)
        return replace(from_dict(json.loads(body)), date=date)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        _remove(path)
        return None


def _read_entry(path: Path) -> bytes:
    handle, _info = open_regular(path)
    with os.fdopen(handle, "rb") as stream:
        return stream.read()


def _verified(entry: bytes, secret: bytes, key: str) -> bytes:
    signature, newline, body = entry.partition(b"\n")
    if not newline or not hmac.compare_digest(signature, _signature(secret, key, body)):
        raise ValueError("signature mismatch")
    return body


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):  # an entry that cannot be removed is overwritten by the next store
        path.unlink(missing_ok=True)


def store(key: str, report: Report) -> str | None:
    """Write the entry atomically. A failure does not fail the check: it is returned as a
    one-line note for the caller to show."""
    body = json.dumps(to_dict(report), sort_keys=True).encode()  # ASCII: file names may hold undecodable bytes
    temporary = None
    try:
        path, secret = _entry(key), _secret()
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".entry-", suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(_signature(secret, key, body) + b"\n" + body)
        os.replace(temporary, path)
    except OSError as error:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        return f"result not cached ({error.strerror or error}: {cache_dir()})"
    return None


def _entry(key: str) -> Path:
    return private_dir(ENTRY_DIR, key[:2]) / f"{key}.json"


def _signature(secret: bytes, key: str, body: bytes) -> bytes:
    return hmac.new(secret, key.encode() + b"\0" + body, hashlib.sha256).hexdigest().encode()


def _secret() -> bytes:
    """This cache's signing key, made when there is none yet."""
    path = private_dir() / KEY_FILE
    try:
        return _read_key(path)
    except FileNotFoundError:
        _create_key(path)
        return _read_key(path)


def _read_key(path: Path) -> bytes:
    try:
        handle, info = open_regular(path)
    except OSError as error:
        if isinstance(error, NotRegular) or error.errno == errno.ELOOP:
            raise _unusable_key(path) from None
        raise
    with os.fdopen(handle, "rb") as stream:
        user_only = info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
        if not user_only or info.st_size != KEY_BYTES:
            raise _unusable_key(path)
        return stream.read()


def _unusable_key(path: Path) -> InputError:
    return InputError(
        f"{path}: the cache key must be a regular file of {KEY_BYTES} bytes that only you can read "
        "and write; remove it (air makes a new one and rebuilds every entry), or check with --no-cache"
    )


def _create_key(path: Path) -> None:
    """Write a new key beside `path` (created exclusively, mode 0600) and link it into place:
    linking never replaces, so when checks race, every one reads the key that won."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".key-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(secrets.token_bytes(KEY_BYTES))
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
