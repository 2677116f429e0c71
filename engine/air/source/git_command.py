"""Running git on trees air does not trust.

air finds the repository itself (`air.source.git_directory`) and names it to git with `GIT_DIR` and
`GIT_WORK_TREE`, so git discovers nothing. git then still reads that repository's configuration,
which a hostile tree can ship, so every call:

- starts from an environment without any inherited `GIT_*` variable (`GIT_DIR`,
  `GIT_CONFIG_PARAMETERS`, `GIT_EXEC_PATH`...), reads no system or global configuration (the
  user's git-lfs filters, credential helpers and hooks included), and overrides on the command
  line, which git reads last, every key that makes the commands air runs (`ls-files`,
  `describe`, `init`, `fetch`, `checkout`) start a program: the fsmonitor, hooks, the pager,
  askpass and credential helpers, the ssh command, the excludes file, submodule recursion;
- lets fetches use only the file, git, http(s) and ssh transports (never `ext::` or `fd::`,
  which run commands; `GIT_PROXY_COMMAND` is set empty, which makes git ignore
  `core.gitProxy`), and lets every other command use none, so that a partial clone cannot make
  git fetch a missing object through a remote of the tree's choosing;
- never prompts, takes no optional locks, and runs ssh in batch mode with a timeout;
- runs the git that the absolute directories of PATH hold: git runs in the tree, so a relative
  or empty entry of PATH (`PATH=.:$PATH`) would run a `git` the tree ships.

`uploadpack.packObjectsHook` is honoured only from the system and global configuration, which
are not read. air never asks git for anything that reads attributes on a tree it did not fetch
itself (no `status`, `diff` or `describe --dirty`), so no filter or textconv driver is reached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

GIT_TIMEOUT = 20
FETCH_TRANSPORTS = "file:git:http:https:ssh"
SSH_COMMAND = "ssh -o BatchMode=yes -o ConnectTimeout=20"
SAFE_OPTIONS = (
    "--no-pager",
    "-c",
    "core.fsmonitor=",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "core.askPass=",
    "-c",
    "credential.helper=",
    "-c",
    f"core.sshCommand={SSH_COMMAND}",
    "-c",
    "core.excludesFile=/dev/null",
    "-c",
    "submodule.recurse=false",
)
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_SSH_COMMAND": SSH_COMMAND,
    "GIT_PROXY_COMMAND": "",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_HTTP_LOW_SPEED_LIMIT": "1000",  # a transfer slower than 1 kB/s for 30 s is abandoned
    "GIT_HTTP_LOW_SPEED_TIME": "30",
}


def run_git(
    worktree: Path, gitdir: Path, *args: str, timeout: float = GIT_TIMEOUT, fetching: bool = False
) -> subprocess.CompletedProcess[bytes] | None:
    """A safe git command on the repository at `gitdir` with its work tree `worktree`, run in the
    work tree; `fetching` allows the network transports. None when git cannot be run or times out."""
    executable = git_executable()
    if executable is None:
        return None
    try:
        return subprocess.run(
            [executable, *SAFE_OPTIONS, *args],
            cwd=worktree,
            capture_output=True,
            timeout=timeout,
            env=git_environment(worktree, gitdir, fetching),
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def git_executable() -> str | None:
    """git as the absolute directories of PATH hold it; None when none does."""
    absolute = [entry for entry in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(entry)]
    return shutil.which("git", path=os.pathsep.join(absolute))


def git(worktree: Path, gitdir: Path, *args: str) -> str | None:
    """The stripped output of a safe git command; None when it fails."""
    result = run_git(worktree, gitdir, *args)
    if result is None or result.returncode != 0:
        return None
    return result.stdout.decode("utf-8", "replace").strip()


def git_environment(worktree: Path, gitdir: Path, fetching: bool = False) -> dict[str, str]:
    """The caller's environment without its git variables, with air's and the repository's."""
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    return {
        **inherited,
        **GIT_ENV,
        "GIT_DIR": str(gitdir),
        "GIT_WORK_TREE": str(worktree),
        "GIT_CEILING_DIRECTORIES": str(worktree.parent),
        "GIT_ALLOW_PROTOCOL": FETCH_TRANSPORTS if fetching else "none",
    }
