"""Opening a file that must be a regular one, whoever may have put something else in its place:
a symbolic link is not followed (unless asked), a FIFO or a device is not waited on, and the
check is made on what was opened, not on what was looked at before. Following the links of a
path a tree names never raises either."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def resolved(path: os.PathLike[str] | str) -> Path | None:
    """`path` with its links followed, made absolute; None when that cannot be done (a link
    loop, a NUL byte in a name read from a file, an unreadable directory)."""
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return None


class NotRegular(OSError):
    """The path names something other than a regular file."""


def open_regular(
    path: str | bytes | os.PathLike[str] | os.PathLike[bytes], *, dir_fd: int | None = None, follow_links: bool = False
) -> tuple[int, os.stat_result]:
    """A descriptor open for reading on the regular file `path` (the caller closes it), and its
    status. Raises NotRegular for anything else, OSError when it cannot be opened (ELOOP for a
    link not followed)."""
    descriptor = os.open(path, _FLAGS | (0 if follow_links else os.O_NOFOLLOW), dir_fd=dir_fd)
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        raise NotRegular(errno.EINVAL, "not a regular file", os.fspath(path))
    return descriptor, info
