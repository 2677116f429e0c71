"""A pack as it was: `NAME@VERSION` (the shipped pack as released at that version: the commit
of air's own git history that set its pack.yaml to it) or `NAME@REF` (at a branch, tag or commit of that
history), extracted to a temporary directory; a directory or a shipped pack's name as it is.
Only air's own repository is read, never the tree under analysis."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from air.errors import InputError
from air.pack.shipped import resolve_pack
from air.resources import data_dir

SEMVER = re.compile(r"\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?")
GIT_TIMEOUT = 60


@contextmanager
def pack_at(spec: str, repository: Path | None = None) -> Iterator[Path]:
    """The pack directory `spec` names, `repository` being air's own (where its packs are)."""
    name, at, revision = spec.partition("@")
    if not at:
        yield resolve_pack(spec)
        return
    current = resolve_pack(name)
    repository = repository or data_dir("rulepacks").parent
    if not (repository / ".git").exists():
        if SEMVER.fullmatch(revision) and _version(current.joinpath("pack.yaml").read_bytes()) == revision:
            yield current
            return
        raise InputError(f"{spec}: air's own git history is needed to read an earlier pack, and {repository} has none")
    folder = f"rulepacks/{current.name}"
    commit = _commit_of_version(repository, folder, revision) if SEMVER.fullmatch(revision) else None
    commit = commit or _commit(repository, revision)
    if commit is None:
        raise InputError(f"{spec}: no such version of {current.name} in air's history, nor a git ref")
    with tempfile.TemporaryDirectory(prefix="air-pack-") as scratch:
        archive = _git(repository, "archive", "--format=tar", commit, folder)
        if not archive:
            raise InputError(f"{spec}: {folder} does not exist at {commit[:12]}")
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(scratch, filter="data")
        yield Path(scratch) / folder


def _commit_of_version(repository: Path, folder: str, version: str) -> str | None:
    """The commit that released `version`: of the newest run of commits whose pack.yaml has it,
    the oldest, where the version was set."""
    log = _git(repository, "log", "--format=%H", "--", f"{folder}/pack.yaml") or b""
    released = None
    for commit in log.decode().split():
        text = _git(repository, "show", f"{commit}:{folder}/pack.yaml")
        if text and _version(text) == version:
            released = commit
        elif released:
            break
    return released


def _commit(repository: Path, ref: str) -> str | None:
    if ref.startswith("-"):
        return None
    found = _git(repository, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return found.decode().strip() if found else None


def _version(pack_yaml: bytes) -> str | None:
    try:
        data = yaml.safe_load(pack_yaml)
    except yaml.YAMLError:
        return None
    return str(data.get("version")) if isinstance(data, dict) else None


def _git(repository: Path, *arguments: str) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(repository), *arguments], capture_output=True, timeout=GIT_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None
