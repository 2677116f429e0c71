"""Where the analysed code came from: for a local path inside a git checkout, the commit, the
branch, whether tracked files differ from the index, `git describe`, the origin's URL and the
folder of the checkout that was analysed.

The repository is found and its HEAD, refs and index are read by air itself (`air.source.git_directory`,
`air.source.git_index`), never through a git command that could run the checkout's filters or hooks;
only `git describe --tags --always` runs, as `air.source.git_command` runs git, and `-dirty` is appended
here. A repository that borrows another's objects (`objects/info/alternates`) is not described.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

from air.results import Source
from air.source.git_command import git
from air.source.git_directory import Repository, find_repository, read_head
from air.source.git_index import worktree_differs
from air.source.tree import shown_path


def local_source(root: Path) -> Source:
    """The provenance of a local directory: git facts when it lies in a work tree air accepts."""
    return local_source_later(root)()


def local_source_later(root: Path) -> Callable[[], Source]:
    """`local_source`, with `git describe` and the comparison of the work tree with the index
    left to run in the background until the returned function is first called: a check reads
    the tree meanwhile."""
    location = root.resolve()
    repository = find_repository(location)
    if repository is None:
        unversioned = Source("local", shown_path(str(location)))
        return lambda: unversioned
    commit, branch = read_head(repository)
    folder = location.relative_to(repository.worktree).as_posix()
    background = ThreadPoolExecutor(max_workers=2)
    described = background.submit(_described, repository, commit) if commit else None
    differs = background.submit(worktree_differs, repository, "" if folder == "." else folder)
    background.shutdown(wait=False)

    @cache
    def finished() -> Source:
        describe = described.result() if described else None
        dirty = differs.result()
        return Source(
            "local",
            shown_path(str(location)),
            commit,
            branch=branch,
            dirty=dirty,
            describe=f"{describe}-dirty" if describe and dirty else describe,
            subdir=None if folder == "." else folder,
            remote=repository.origin,
        )

    return finished


def _described(repository: Repository, commit: str) -> str | None:
    if repository.borrows_objects:
        return None
    return git(repository.worktree, repository.gitdir, "describe", "--tags", "--always", commit)
