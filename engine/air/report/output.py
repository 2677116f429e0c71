"""Writing a report where the user said, and nowhere else.

A regular file is replaced atomically (a temporary file, then a rename), with the mode the
umask allows. A character device or a FIFO (`/dev/null`, `/dev/stdout`, a pipe) is written in
place, never replaced; a FIFO without a reader is an error, not a wait. Anything else is
refused: a directory, a socket, a block device, and a symbolic link to a file, which a tree
checked out where reports go could have planted to make air overwrite the file it points to.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from pathlib import Path

from air.errors import InputError

_REFUSED_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFSOCK: "a socket", stat.S_IFBLK: "a block device"}


def is_standard_output(target: Path) -> bool:
    """'-', or a path to what standard output is (such as /dev/stdout): no summary line follows the report."""
    if str(target) == "-":
        return True
    try:
        return os.path.samestat(target.stat(), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError):
        return False


def write_atomic(target: Path, text: str) -> Path | None:
    """Write a report to `target` ('-': standard output; the written path is returned otherwise).
    A character device or a FIFO, also behind a symbolic link as /dev/stdout is, is written in
    place. A regular file is written through a temporary file and renamed, so an old report is
    never left half-replaced; it gets the mode the umask allows. Anything else is refused: a
    directory, socket or block device, and a symbolic link to a file, which a tree checked out
    where reports go could have planted to make air overwrite the file it points to."""
    if str(target) == "-":
        sys.stdout.write(text)
        return None
    try:
        mode = _mode_of(target)
        if mode is not None and _is_stream(mode):
            _write_stream(target, text)
        else:
            _refuse_unless_replaceable(target, mode)
            _replace(target, text)
    except OSError as error:
        raise InputError(f"{target}: cannot write report: {error.strerror or error}") from None
    return target


def _mode_of(path: Path) -> int | None:
    """The mode of what `path` leads to (through symbolic links), None when nothing is there."""
    try:
        return path.stat().st_mode
    except FileNotFoundError:
        return None


def _is_stream(mode: int) -> bool:
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _refuse_unless_replaceable(target: Path, mode: int | None) -> None:
    if target.is_symlink():
        raise InputError(
            f"{target}: a symbolic link; reports replace only regular files, so name the file "
            "itself ('-' for standard output)"
        )
    if mode is not None and not stat.S_ISREG(mode):
        kind = _REFUSED_KINDS.get(stat.S_IFMT(mode), "a special file")
        raise InputError(f"{target}: {kind}, not a regular file, a character device or a FIFO; not written")


def _write_stream(target: Path, text: str) -> None:
    """Write into an existing character device or FIFO, never replacing it; a FIFO must have a reader."""
    try:
        handle = os.open(target, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as error:
        if error.errno == errno.ENXIO:
            raise InputError(f"{target}: a FIFO with no reader; start its reader first") from None
        raise
    with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
        if not _is_stream(os.fstat(handle).st_mode):
            raise InputError(f"{target}: replaced by another kind of file while being opened; not written")
        os.set_blocking(handle, True)  # non-blocking only so that opening a FIFO without a reader fails
        stream.write(text)


def _replace(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            os.fchmod(handle, 0o666 & ~_umask())
            stream.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0o077)  # the umask is read by setting it: the stricter mask holds meanwhile
    os.umask(current)
    return current
