"""Which git repository a directory belongs to, and its HEAD, read without running git.

air finds the repository itself, so that a tree cannot send git to another one: it looks for a
`.git` entry in the directory and then in each parent, as git does, and the first one found
decides. That entry is accepted as:

- a `.git` directory (not a symbolic link) without a `commondir` file, whose `core.worktree`,
  if set, names the work tree itself, and that is not bare;
- a `.git` file (`gitdir: PATH`) naming such a git directory inside the work tree;
- a `.git` file naming a git directory elsewhere only when that repository points back: a linked
  work tree (`<common>/worktrees/<id>`, whose `gitdir` file names this `.git` file and whose
  `commondir` is `<common>`), or a repository whose `core.worktree` names this directory (a
  submodule's `.git/modules/<name>`).

Anything else (a symbolic link, a `gitdir:` leading elsewhere, a `core.worktree` elsewhere, a
HEAD, index, config or refs file that is not a regular file) means the directory is not treated
as a checkout. Every member of a git directory is opened without following symbolic links and
without blocking, and read only when it is a regular file below a size limit. The HEAD and refs
read here are the files ones (`refs/` and `packed-refs`); a repository that keeps its refs in
another format has no commit known to air.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from air.regular_file import open_regular, resolved

MEMBER_LIMIT = 1 << 20
PACKED_REFS_LIMIT = 256 << 20
SYMREF_DEPTH = 5
OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# Members git reads for the commands air runs: each must be a regular file when present, since
# git opens them blocking (a FIFO would stop it) and follows no limit on their size.
GITDIR_MEMBERS = ("HEAD", "index", "config.worktree", "commondir")
COMMONDIR_MEMBERS = (
    "config",
    "packed-refs",
    "shallow",
    "info/exclude",
    "info/grafts",
    "objects/info/alternates",
    "objects/info/commit-graph",
)

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


@dataclass(frozen=True)
class Repository:
    worktree: Path  # resolved
    gitdir: Path  # this work tree's: HEAD, index
    commondir: Path  # shared by linked work trees: config, refs, objects
    object_format: str = "sha1"
    file_mode: bool = True  # core.fileMode: whether the executable bit is tracked
    borrows_objects: bool = False  # objects/info/alternates names another object store
    origin: str | None = None  # remote.origin.url, as the config gives it


def open_member(base: Path, relative: str) -> int | None:
    """A descriptor of the regular file `relative` below `base`, reached without following any
    symbolic link below `base`; None when there is no such regular file."""
    try:
        descriptor = os.open(base, _DIRECTORY_FLAGS & ~os.O_NOFOLLOW)
    except OSError:
        return None
    *directories, name = relative.split("/")
    try:
        for directory in directories:
            inner = os.open(directory, _DIRECTORY_FLAGS, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        return open_regular(name, dir_fd=descriptor)[0]
    except OSError:
        return None
    finally:
        os.close(descriptor)


def read_member(base: Path, relative: str, limit: int = MEMBER_LIMIT) -> bytes | None:
    """The content of the regular file `relative` below `base` (see `open_member`), or None when
    there is none or it is larger than `limit`."""
    descriptor = open_member(base, relative)
    if descriptor is None:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read(limit + 1)
    return data if len(data) <= limit else None


def is_git_directory(path: Path) -> bool:
    """Whether git would take `path` itself for a git directory, by git's own test: `objects`
    and `refs` directories, and a HEAD that names a ref under `refs/` or holds an object id."""
    if not ((path / "objects").is_dir() and (path / "refs").is_dir()):
        return False
    head = (read_member(path, "HEAD", limit=4096) or b"").decode("ascii", "replace").strip()
    return OBJECT_ID.fullmatch(head) is not None or re.fullmatch(r"ref:\s*refs/\S+", head) is not None


def find_repository(directory: Path) -> Repository | None:
    """The repository whose work tree holds `directory`, when air accepts it (see above)."""
    start = resolved(directory)
    if start is None:
        return None
    for candidate in (start, *start.parents):
        try:
            entry = os.lstat(candidate / ".git")
        except FileNotFoundError:
            continue
        except OSError:
            return None
        return _repository_at(candidate, entry.st_mode)
    return None


def read_head(repository: Repository) -> tuple[str | None, str | None]:
    """(commit, branch) of HEAD: branch is None when HEAD is detached, commit is None on an
    unborn branch or when the ref cannot be read."""
    data = read_member(repository.gitdir, "HEAD")
    text = data.decode("ascii", "replace").strip() if data else ""
    if not text.startswith("ref:"):
        return (text if _is_object_id(text, repository) else None), None
    ref = text.removeprefix("ref:").strip()
    if not _is_ref_name(ref):
        return None, None
    return resolve_ref(repository, ref), _short_name(ref)


def resolve_ref(repository: Repository, ref: str, depth: int = 0) -> str | None:
    """The object id `ref` names: its loose file first, then `packed-refs`."""
    if not _is_ref_name(ref) or depth > SYMREF_DEPTH:
        return None
    loose = read_member(repository.commondir, ref)
    if loose is not None:
        text = loose.decode("ascii", "replace").strip()
        if text.startswith("ref:"):
            return resolve_ref(repository, text.removeprefix("ref:").strip(), depth + 1)
        return text if _is_object_id(text, repository) else None
    return _packed_ref(repository, ref)


def read_config(data: bytes) -> dict[str, str]:
    """The `section.key` and `section.subsection.key` values (lowercase names, last one wins) of
    a git config file, without following its includes: enough for the few core and extensions
    keys air reads, and the origin's URL."""
    values: dict[str, str] = {}
    section = ""
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        header = re.match(r"\[\s*([A-Za-z0-9.-]+)\s*(?:\"([^\"]*)\")?\s*\]", line)
        if header:
            name, subsection = header.group(1).lower(), header.group(2)
            section = f"{name}.{subsection}" if subsection is not None else name
            line = line[header.end() :].strip()
        key = re.match(r"([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$", line)
        if section and key:
            values[f"{section}.{key.group(1).lower()}"] = _config_value(key.group(2))
    return values


def config_flag(values: dict[str, str], key: str, default: bool) -> bool:
    value = values.get(key)
    if value is None:
        return default
    return value.lower() in ("true", "yes", "on", "1")


def _config_value(raw: str | None) -> str:
    if raw is None:
        return "true"
    value, quoted = [], False
    characters = iter(raw.strip())
    for character in characters:
        if character == '"':
            quoted = not quoted
        elif character == "\\":
            escaped = next(characters, "")
            value.append({"n": "\n", "t": "\t", "b": "\b"}.get(escaped, escaped))
        elif character in "#;" and not quoted:
            break
        else:
            value.append(character)
    return "".join(value).strip()


def _repository_at(worktree: Path, mode: int) -> Repository | None:
    gitdir: Path | None
    if stat.S_ISDIR(mode):
        gitdir = worktree / ".git"
    elif stat.S_ISREG(mode):
        gitdir = _gitfile_target(worktree)
    else:
        return None
    if gitdir is None:
        return None
    commondir = _commondir(gitdir)
    if commondir is None or not _members_are_regular(gitdir, commondir):
        return None
    config = read_config(read_member(commondir, "config") or b"")
    if not _belongs_to(worktree, gitdir, commondir, config):
        return None
    return Repository(
        worktree,
        gitdir,
        commondir,
        object_format=config.get("extensions.objectformat", "sha1").lower(),
        file_mode=config_flag(config, "core.filemode", True),
        borrows_objects=os.path.lexists(commondir / "objects" / "info" / "alternates"),
        origin=config.get("remote.origin.url") or None,
    )


def _gitfile_target(worktree: Path) -> Path | None:
    data = read_member(worktree, ".git", 4096)
    if data is None or not data.startswith(b"gitdir:"):
        return None
    target = resolved(worktree / os.fsdecode(data[len(b"gitdir:") :].strip()))
    return target if target is not None and target.is_dir() else None


def _commondir(gitdir: Path) -> Path | None:
    if not os.path.lexists(gitdir / "commondir"):
        return gitdir
    named = read_member(gitdir, "commondir")
    return resolved(gitdir / os.fsdecode(named.strip())) if named else None


def _members_are_regular(gitdir: Path, commondir: Path) -> bool:
    if read_member(gitdir, "HEAD") is None:
        return False
    members = [gitdir / name for name in GITDIR_MEMBERS] + [commondir / name for name in COMMONDIR_MEMBERS]
    return all(_absent_or_regular(path) for path in members)


def _absent_or_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _belongs_to(worktree: Path, gitdir: Path, commondir: Path, config: dict[str, str]) -> bool:
    """Whether the git directory is this work tree's: kept inside it, or pointing back to it."""
    if _is_linked_worktree(worktree, gitdir, commondir):
        return True
    if gitdir != commondir:
        return False
    named = config.get("core.worktree")
    if named is not None:
        return resolved(gitdir / named) == worktree
    return gitdir.is_relative_to(worktree) and not config_flag(config, "core.bare", False)


def _is_linked_worktree(worktree: Path, gitdir: Path, commondir: Path) -> bool:
    if gitdir.parent.name != "worktrees" or commondir != gitdir.parent.parent:
        return False
    named = read_member(gitdir, "gitdir")
    return named is not None and resolved(gitdir / os.fsdecode(named.strip())) == worktree / ".git"


def _packed_ref(repository: Repository, ref: str) -> str | None:
    data = read_member(repository.commondir, "packed-refs", PACKED_REFS_LIMIT)
    if not data:
        return None
    data = b"\n" + data + b"\n"
    end = data.find(b" " + ref.encode() + b"\n")
    if end < 0:
        return None
    start = data.rfind(b"\n", 0, end) + 1
    text = data[start:end].decode("ascii", "replace")
    return text if _is_object_id(text, repository) else None


def _is_object_id(text: str, repository: Repository) -> bool:
    size = 64 if repository.object_format == "sha256" else 40
    return len(text) == size and OBJECT_ID.fullmatch(text) is not None


def _is_ref_name(ref: str) -> bool:
    """A ref name that is also a safe relative path: `refs/...` without empty, `.` or `..` parts."""
    parts = ref.split("/")
    return (
        ref.startswith("refs/")
        and "\\" not in ref
        and "\0" not in ref
        and all(part not in ("", ".", "..") for part in parts)
    )


def _short_name(ref: str) -> str:
    return ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else ref.removeprefix("refs/")
