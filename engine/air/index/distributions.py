"""The distributions a tree builds: its product build files grouped by directory, a directory
whose build files name a project being one distribution, with the product code it holds.

A distribution holds the product code below its directory that no nearer distribution holds,
so the monorepo's top-level build holds none of a sub-package's code, and the product's own
build holds most of the code in a repository of several packages.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from air.index.build import merge_build_facts
from air.index.model import BuildFacts, SourceFile

CODE_LANGUAGES = frozenset({"python", "cpp"})


@dataclass(frozen=True)
class Distribution:
    directory: str  # "" for the tree's top level
    build_files: tuple[str, ...]  # in path order
    facts: BuildFacts  # of its build files merged, in path order
    name: str  # the project's
    named_by: str  # the build file that names the project
    code_lines: int  # lines of product code it holds

    @property
    def depth(self) -> int:
        return self.directory.count("/") + 1 if self.directory else 0

    def encloses(self, path: str) -> bool:
        """Whether `path` is in the distribution's directory or below it."""
        return encloses(self.directory, path)


def distributions(builds: Iterable[tuple[SourceFile, BuildFacts]], files: Iterable[SourceFile]) -> list[Distribution]:
    """The distributions of the product `builds`, each with the lines of the product code of
    `files` it holds, in path order of their directories."""
    by_directory: dict[str, list[tuple[SourceFile, BuildFacts]]] = {}
    for source, facts in sorted(builds, key=lambda item: item[0].path):
        if source.role == "product":
            by_directory.setdefault(posixpath.dirname(source.path), []).append((source, facts))
    named = {
        directory: items
        for directory, items in sorted(by_directory.items())
        if any(facts.project_name for _source, facts in items)
    }
    held = _code_lines_held(named, files)
    return [_distribution(directory, items, held.get(directory, 0)) for directory, items in named.items()]


def _distribution(directory: str, items: list[tuple[SourceFile, BuildFacts]], code_lines: int) -> Distribution:
    name, named_by = next((facts.project_name, source.path) for source, facts in items if facts.project_name)
    return Distribution(
        directory=directory,
        build_files=tuple(source.path for source, _facts in items),
        facts=merge_build_facts(facts for _source, facts in items),
        name=name,
        named_by=named_by,
        code_lines=code_lines,
    )


def holder(directories: Iterable[str], path: str) -> str | None:
    """Of `directories`, the nearest that encloses `path`: the distribution holding it."""
    enclosing = [directory for directory in directories if encloses(directory, path)]
    return max(enclosing, key=len, default=None)


def encloses(directory: str, path: str) -> bool:
    return not directory or path.startswith(directory + "/")


def _code_lines_held(directories: Iterable[str], files: Iterable[SourceFile]) -> dict[str, int]:
    directories = list(directories)
    held: dict[str, int] = {}
    for source in files:
        if source.role == "product" and source.language in CODE_LANGUAGES:
            directory = holder(directories, source.path)
            if directory is not None:
                held[directory] = held.get(directory, 0) + source.text.count("\n")
    return held
