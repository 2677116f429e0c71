"""From what the user names to a directory on disk, with its provenance.

A local directory is used where it is. A bare name that is no directory is looked up in the
framework's list of known backends (`backends.yaml`: name, aliases, vendor, git URL). A git URL (`https://`, `ssh://`, `git@host:org/repo`,
`file://`, or the path of a bare repository), optionally ending in `@ref`, is fetched shallowly
into air's cache and reused on the next run. Transports that run commands (`ext::`, `fd::`,
any `transport::address` form) and anything starting with `-` are refused. The fetch never
runs hooks or filters (the user's git configuration is not read: see `air.source.git_command`), never
recurses into submodules, times out, and leaves nothing behind when it fails.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeGuard

from air.cache_dirs import cache_dir, private_dir
from air.errors import InputError
from air.regular_file import resolved
from air.results import Source
from air.source.git_command import run_git
from air.source.git_directory import find_repository, is_git_directory, read_head
from air.source.provenance import local_source_later

FETCH_TIMEOUT = 600
CLONES_DIR = "clones"
_SCHEME_URL = re.compile(r"^(?:https?|ssh|git|file)://", re.IGNORECASE)
_SCP_URL = re.compile(r"^[\w.-]+@[\w.-]+:(?!/)")
_TRANSPORT = re.compile(r"^[A-Za-z][\w+.-]*::")
_REF = re.compile(r"^[\w][\w./-]*$")


@dataclass(frozen=True)
class Located:
    root: Path
    provenance: Callable[[], Source]  # worked out, `git describe` say, when first asked

    @property
    def source(self) -> Source:
        return self.provenance()

    @classmethod
    def known(cls, root: Path, source: Source) -> Located:
        return cls(root, lambda: source)


@dataclass(frozen=True)
class KnownBackend:
    name: str
    aliases: tuple[str, ...]
    vendor: str
    url: str
    ref: str | None = None
    subdir: str | None = None


def locate(
    target: str,
    ref: str | None = None,
    progress: Callable[[str], None] | None = None,
    known: Callable[[], tuple[KnownBackend, ...]] = tuple,
    subdir: str | None = None,
    also_tried: str = "",
) -> Located:
    """The directory to analyse for `target`, fetched first when it names a git repository or
    one of the `known()` backends (read only when no directory or URL matches); `subdir`
    narrows it to one folder, keeping the repository's provenance."""
    say = progress or (lambda message: None)
    if target.startswith("-"):
        raise InputError(f"{target}: refusing a target that starts with '-'")
    if _TRANSPORT.match(target):
        raise InputError(f"{target}: refusing the '{target.split('::', 1)[0]}::' transport, which runs commands")
    path = Path(target)
    if path_exists(target) and path.is_dir() and not _is_bare_repository(path):
        if ref:
            raise InputError(f"{target}: --ref applies to git URLs, not to a local directory")
        return _narrowed(Located(path, local_source_later(path)), subdir)
    url, written_ref = _split_ref(target)
    if _SCHEME_URL.match(url) or _SCP_URL.match(url) or _is_bare_repository(Path(url)):
        return _narrowed(_fetch(url, ref or written_ref, say), subdir)
    backends = known()
    backend = next((b for b in backends if target.lower() in (b.name, *b.aliases)), None)
    if backend is None:
        names = ", ".join(b.name for b in backends) or "none"
        tried = ", ".join(filter(None, ["not a directory", also_tried, "not a git URL"]))
        raise InputError(f"{target}: {tried}, and no known backend of that name (known: {names})")
    say(f"{target}: the {backend.vendor} backend, {backend.url}")
    return _narrowed(_fetch(backend.url, ref or backend.ref, say), subdir or backend.subdir)


def path_exists(target: str) -> bool:
    """Whether something exists at `target` read as a path. A target too long to be a path is
    refused, unless it is a URL, which is never a path."""
    try:
        os.stat(target)
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG and not (_SCHEME_URL.match(target) or _SCP_URL.match(target)):
            raise InputError(f"{target[:40]}...: too long to be a path ({len(target)} characters)") from None
        return False
    return True


def is_bare_name(target: str | None) -> TypeGuard[str]:
    """A name such as `npu` or `torch_npu`: no path separator, no URL."""
    if not target:
        return False
    return re.fullmatch(r"[A-Za-z0-9][\w.-]*", target) is not None


def _narrowed(located: Located, subdir: str | None) -> Located:
    if not subdir:
        return located
    root = located.root.resolve()
    narrowed = resolved(root / subdir)
    if narrowed is None:
        raise InputError(f"--subdir {subdir}: cannot be followed (a link loop, or a name no path can have)")
    if narrowed != root and root not in narrowed.parents:
        raise InputError(f"--subdir {subdir}: leaves the checked-out tree")
    if not path_exists(str(narrowed)) or not narrowed.is_dir():
        raise InputError(f"--subdir {subdir}: no such directory in {located.source.location}")
    return Located.known(narrowed, replace(located.source, subdir=narrowed.relative_to(root).as_posix()))


def _split_ref(target: str) -> tuple[str, str | None]:
    """`url@ref` -> (url, ref). The `@` of a ref comes after the host: `git@host:org/repo` and
    `ssh://git@host/org/repo` name a user, not a ref."""
    if path_exists(target):
        return target, None
    scheme = re.match(r"^([A-Za-z][\w+.-]*://[^/]*)(/.*)?$", target)
    if scheme:
        prefix, path = scheme.group(1), scheme.group(2) or ""
    elif _SCP_URL.match(target):
        host, _, path = target.partition(":")
        prefix = host + ":"
    else:
        prefix, path = "", target
    if "@" not in path:
        return target, None
    path, ref = path.rsplit("@", 1)
    return prefix + path, ref or None


def _is_bare_repository(path: Path) -> bool:
    return path_exists(str(path)) and path.is_dir() and is_git_directory(path)


def _fetch(url: str, ref: str | None, say: Callable[[str], None]) -> Located:
    if ref is not None and not _REF.match(ref):
        raise InputError(f"{ref}: not a branch, tag or commit name")
    remote = str(Path(url).resolve()) if _is_bare_repository(Path(url)) else url
    key = hashlib.sha256(f"{remote}\0{ref or ''}".encode()).hexdigest()[:32]
    try:
        destination = private_dir(CLONES_DIR, bypass="check a local checkout of the repository instead") / key
    except OSError as error:
        raise InputError(
            f"{error.filename or cache_dir()}: cannot keep fetched repositories there ({error.strerror or error})"
        ) from None
    commit = _fetched_commit(destination)
    if commit is None:
        say(f"fetching {url}" + (f" at {ref}" if ref else ""))
        commit = _shallow_fetch(remote, ref, destination)
    else:
        say(f"using the copy of {url} fetched before ({destination})")
    return Located.known(destination, Source("git", url, commit, branch=ref))


def _shallow_fetch(remote: str, ref: str | None, destination: Path) -> str:
    destination.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".fetch-", dir=destination.parent))
    try:
        steps = [
            ("init", "-q", "--template="),
            ("fetch", "-q", "--depth", "1", "--no-tags", "--no-recurse-submodules", "--", remote, ref or "HEAD"),
            ("-c", "advice.detachedHead=false", "checkout", "-q", "--detach", "FETCH_HEAD"),
        ]
        for step in steps:
            result = run_git(scratch, scratch / ".git", *step, timeout=FETCH_TIMEOUT, fetching=True)
            if result is None:
                raise InputError(f"{remote}: git did not answer within {FETCH_TIMEOUT} s, or could not be run")
            if result.returncode != 0:
                raise InputError(f"{remote}: {_last_line(result.stderr)}")
        commit = _fetched_commit(scratch)
        if commit is None:
            raise InputError(f"{remote}: fetched, but no commit could be read")
        shutil.rmtree(destination, ignore_errors=True)
        try:
            scratch.rename(destination)
        except OSError:  # another check fetched the same commit into place meanwhile
            if _fetched_commit(destination) != commit:
                raise InputError(f"{remote}: cannot store the fetched copy in {destination}") from None
        return commit
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _fetched_commit(directory: Path) -> str | None:
    """The commit checked out in a copy air fetched, read without git; None when there is none."""
    repository = find_repository(directory) if (directory / ".git").is_dir() else None
    return read_head(repository)[0] if repository is not None and repository.worktree == directory.resolve() else None


def _last_line(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1].removeprefix("fatal: ") if lines else "git failed without a message"
