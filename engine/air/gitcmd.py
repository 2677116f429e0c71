"""Running git on trees air does not trust.

git reads the checkout's own configuration, which a hostile tree can ship: every call
switches off the settings that make git run commands (`core.fsmonitor`, `core.hooksPath`),
allows only transports that do not run commands, never prompts, takes no locks, and asks for
nothing that would run filters or a pager.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_TIMEOUT = 20
SAFE_GIT = ("git", "-c", "core.fsmonitor=", "-c", "core.hooksPath=/dev/null", "--no-pager")
GIT_ENV = {
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_ALLOW_PROTOCOL": "file:git:http:https:ssh",  # never ext:: or fd::, which run commands
    "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=20",
    "GIT_HTTP_LOW_SPEED_LIMIT": "1000",  # a transfer slower than 1 kB/s for 30 s is abandoned
    "GIT_HTTP_LOW_SPEED_TIME": "30",
}


def run_git(directory: Path, *args: str, timeout: float = GIT_TIMEOUT) -> subprocess.CompletedProcess[bytes] | None:
    """A safe git command in `directory`; None when git cannot be run or times out."""
    try:
        return subprocess.run([*SAFE_GIT, "-C", str(directory), *args], capture_output=True, timeout=timeout,
                              env={**os.environ, **GIT_ENV}, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None


def git(directory: Path, *args: str) -> str | None:
    """The stripped output of a safe git command; None when it fails."""
    result = run_git(directory, *args)
    if result is None or result.returncode != 0:
        return None
    return result.stdout.decode("utf-8", "replace").strip()
