"""Where the analysed code came from: for a local path inside a git checkout, the commit, the
branch, whether tracked files differ from it, and `git describe` (git run as `air.gitcmd` runs it)."""

from __future__ import annotations

from pathlib import Path

from air.gitcmd import git
from air.report.model import Source


def local_source(root: Path) -> Source:
    """The provenance of a local directory: git facts when it lies in a work tree."""
    location = str(root.resolve())
    if git(root, "rev-parse", "--is-inside-work-tree") != "true":
        return Source("local", location)
    commit = git(root, "rev-parse", "--verify", "-q", "HEAD")
    status = git(root, "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all", "--", ".")
    return Source(
        "local", location, commit,
        branch=git(root, "symbolic-ref", "--short", "-q", "HEAD") or None,
        dirty=None if status is None else bool(status),
        describe=git(root, "describe", "--tags", "--always", "--dirty") if commit else None,
    )
