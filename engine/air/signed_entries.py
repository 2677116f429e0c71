"""Files in air's cache signed with the cache's own key, so that only this cache's entries load.

An entry holds an HMAC-SHA256 of its name and body, a newline, then the body. The signing key
is kept beside the entries (`key`, a user-only regular file of 32 bytes, created once and never
replaced). An entry written without that key, such as one copied from another cache, does not
verify. A key file that is not a user-only regular file of the right size stops the check with
an InputError (removing it is safe: every entry is then rebuilt).

An entry is opened without following a symbolic link and without blocking, and read only when
it is a regular file; one that is anything else, cannot be read or does not verify is deleted.
Entries are written to a temporary file and renamed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from pathlib import Path

from air.cache_dirs import private_dir
from air.errors import InputError
from air.regular_file import NotRegular, open_regular

KEY_FILE = "key"
KEY_BYTES = 32


def read_entry(path: Path, name: str) -> bytes | None:
    """The body of the entry at `path` signed for `name`; None when there is none. An entry
    that is not a regular file, cannot be read or does not verify is removed, and None returned."""
    secret = signing_key()
    try:
        handle, _info = open_regular(path)
        with os.fdopen(handle, "rb") as stream:
            entry = stream.read()
    except FileNotFoundError:
        return None
    except OSError:
        remove_entry(path)
        return None
    signature, newline, body = entry.partition(b"\n")
    if not newline or not hmac.compare_digest(signature, sign(secret, name, body)):
        remove_entry(path)
        return None
    return body


def write_entry(path: Path, name: str, body: bytes) -> None:
    """Write `body` signed for `name` at `path`, atomically; OSError when it cannot be."""
    secret = signing_key()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".entry-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(sign(secret, name, body) + b"\n" + body)
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        raise


def remove_entry(path: Path) -> None:
    with contextlib.suppress(OSError):  # an entry that cannot be removed is overwritten by the next write
        path.unlink(missing_ok=True)


def sign(secret: bytes, name: str, body: bytes) -> bytes:
    return hmac.new(secret, name.encode() + b"\0" + body, hashlib.sha256).hexdigest().encode()


def signing_key() -> bytes:
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
