"""The directories air keeps in its cache, each owned by the user and closed to others.

The cache lives in `$AIR_CACHE`, else `$XDG_CACHE_HOME/air`, else `~/.cache/air`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from air.errors import InputError

_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


def cache_dir() -> Path:
    if os.environ.get("AIR_CACHE"):
        return Path(os.environ["AIR_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "air"


def private_dir(*parts: str, bypass: str = "check with --no-cache") -> Path:
    """`cache_dir()` joined with `parts`, each level created user-only when missing. Raises
    InputError, suggesting `bypass` as the way round, when a level is owned by another user or
    writable by group or others; OSError when one cannot be created or is not a directory."""
    directory = cache_dir()
    _ensure_private(directory, bypass)
    for part in parts:
        directory = directory / part
        _ensure_private(directory, bypass)
    return directory


def _ensure_private(directory: Path, bypass: str) -> None:
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=0o700, parents=True)
    info = directory.stat()
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(directory))
    if info.st_uid != os.geteuid():
        raise InputError(
            f"{directory}: refusing a cache directory owned by another user (uid {info.st_uid}); "
            f"set AIR_CACHE to a directory of your own, or {bypass}"
        )
    if info.st_mode & _WRITABLE_BY_OTHERS:
        raise InputError(
            f"{directory}: refusing a cache directory writable by group or others; "
            f"run `chmod go-w {directory}`, or {bypass}"
        )
