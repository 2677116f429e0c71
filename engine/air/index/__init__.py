"""The code index: every file read once, facts parsed lazily on the files that need them."""

from __future__ import annotations

import multiprocessing
import os
import posixpath
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from functools import cached_property
from pathlib import Path, PurePosixPath

from ahocorasick_rs import AhoCorasick

from air.index import build, cpp, python
from air.index.blanking import blank_spans
from air.index.files import FileListing, IndexOptions, read_files
from air.index.model import (
    BuildFacts,
    CppClass,
    CppDefine,
    CppFacts,
    CppInclude,
    PyScope,
    PythonFacts,
    SourceFile,
)
from air.index.python_lexical import LexicalPython
from air.interrupts import stop

BUILD_EXTRACTORS = {
    "setup.py": build.extract_setup_py,
    "pyproject.toml": build.extract_pyproject,
    "setup.cfg": build.extract_setup_cfg,
}

PARALLEL_THRESHOLD = 4
MAX_WORKERS = 4
SCAN_JOBS = 8  # the literal scan's share of work per job: small enough to balance the workers
FORKING = "fork" in multiprocessing.get_all_start_methods()
PARALLEL_SCAN_BYTES = 4_000_000  # below this, starting workers costs more than scanning here
_READ_AHEAD_LANGUAGES = ("python", "cpp", "template")

__all__ = ["CodeIndex", "IndexOptions", "build_index"]


class CodeIndex:
    """Files of one tree with their text, plus lazily parsed, cached facts per file."""

    def __init__(self, root: Path, listing: FileListing) -> None:
        self.root = root
        self.files = listing.files
        self.skipped = listing.skipped
        self.skipped_directories = tuple(listing.skipped_directories)
        self.vendored_read = tuple(listing.vendored_read)
        self.total_bytes = listing.total_bytes
        self.by_path = {f.path: f for f in self.files}
        self._listed: dict[tuple, list[SourceFile]] = {}
        self._lexical: dict[str, LexicalPython] = {}
        self.parallel = True  # whether parsing may use worker processes
        self._by_literal: dict[tuple, set[str]] = {}
        self._scanned: dict[str, set[str]] = {}
        self._python: dict[str, PythonFacts] = {}
        self._scopes: dict[str, tuple[PyScope, ...]] = {}
        self._cpp: dict[str, CppFacts] = {}
        self._cpp_stripped: dict[str, str] = {}
        self._function_bodies: dict[str, cpp.FunctionBodies] = {}
        self._pool: ProcessPoolExecutor | None = None
        self._reading: list | None = None

    # --- selection ----------------------------------------------------------

    def select(
        self,
        literals: Iterable[str | tuple[str, ...]] = (),
        languages: Iterable[str] | None = None,
        include_docs: bool = False,
        roles: Iterable[str] | None = None,
    ) -> Iterator[SourceFile]:
        """Files that contain one of `literals` (all files if none are given). An entry that is
        a tuple matches only files containing every literal of it."""
        wanted = [(item,) if isinstance(item, str) else tuple(item) for item in literals]
        kinds = (
            frozenset(languages) if languages is not None else None,
            frozenset(roles) if roles is not None else None,
            include_docs,
        )
        pool = self._files_of(kinds)
        if not wanted:
            yield from pool
            return
        matching = self._matching(kinds, wanted)
        yield from (source for source in pool if source.path in matching)

    def weight(self, literals: Iterable[str | tuple[str, ...]], roles: Iterable[str]) -> int:
        """Characters in the files of `roles` holding one of `literals` (as `select` takes
        them; all files when there are none): about what reading them costs."""
        wanted = [(item,) if isinstance(item, str) else tuple(item) for item in literals]
        roles = frozenset(roles)
        if not wanted:
            return sum(len(source.text) for source in self.files if source.role in roles)
        paths = self._matching((None, None, False), wanted)
        return sum(len(self.by_path[path].text) for path in paths if self.by_path[path].role in roles)

    def _matching(self, kinds: tuple, wanted: list[tuple[str, ...]]) -> set[str]:
        return set().union(*(set.intersection(*(self._containing(kinds, part) for part in group)) for group in wanted))

    def scan_literals(self, literals: Iterable[str]) -> None:
        """Find which files contain each of `literals` in one multi-pattern pass over the tree,
        so that `select` answers from it instead of searching every file once per literal."""
        wanted = sorted({literal for literal in literals if literal and literal not in self._scanned})
        if not wanted:
            self._take_read_ahead()
            return
        found: dict[str, set[str]] = {literal: set() for literal in wanted}
        pool = self._workers() if self.total_bytes >= PARALLEL_SCAN_BYTES and FORKING else None
        if pool is None:
            pairs = _scan_texts([source.text for source in self.files], tuple(wanted), range(len(self.files)))
        else:  # the workers hold the texts since they were forked: each job names only its files
            jobs = [(tuple(wanted), range(start, len(self.files), SCAN_JOBS)) for start in range(SCAN_JOBS)]
            pairs = [pair for found_in_job in pool.map(_scan_shared_texts, jobs) for pair in found_in_job]
            self._take_read_ahead()
        for number, position in pairs:
            found[wanted[number]].add(self.files[position].path)
        self._scanned.update(found)

    def read_ahead(self) -> None:
        """Start reading the code of the product and the tests as the evaluation will in worker
        processes, while the caller goes on (loading a pack, say): Python with its comments and
        literals blanked, the facts of C/C++. On a large tree where the platform can fork: the
        evaluating processes then share what was read. `scan_literals` takes it."""
        if self.total_bytes < PARALLEL_SCAN_BYTES or not FORKING or self._reading is not None:
            return
        pool = self._workers()
        if pool is None:
            return
        read = [(n, source.language) for n, source in enumerate(self.files)
                if source.role != "docs" and source.language in _READ_AHEAD_LANGUAGES]
        self._reading = [pool.submit(_read_shared_texts, read[start::SCAN_JOBS]) for start in range(SCAN_JOBS)]

    def _take_read_ahead(self) -> None:
        """Keep what the workers started by `read_ahead` have read, once they have."""
        for job in self._reading or ():
            for position, read in job.result():
                source = self.files[position]
                if isinstance(read, CppFacts):
                    self._cpp[source.path] = read
                else:
                    without_comments, code = read
                    self.python_lexical(source).take_views(without_comments or source.text, code)
        self._reading = None

    def _containing(self, kinds: tuple, literal: str) -> set[str]:
        """Paths of files containing `literal`: of the whole tree when it was scanned for,
        otherwise of the files of a selection, found once."""
        scanned = self._scanned.get(literal)
        if scanned is not None:
            return scanned
        key = (kinds, literal)
        found = self._by_literal.get(key)
        if found is None:
            found = self._by_literal[key] = {source.path for source in self._files_of(kinds) if literal in source.text}
        return found

    def _files_of(self, kinds: tuple[frozenset[str] | None, frozenset[str] | None, bool]) -> list[SourceFile]:
        """The files of some languages and roles, listed once per combination asked for."""
        listed = self._listed.get(kinds)
        if listed is None:
            languages, roles, include_docs = kinds
            listed = self._listed[kinds] = [
                source for source in self.files
                if (include_docs or source.role != "docs")
                and (roles is None or source.role in roles)
                and (languages is None or source.language in languages)
            ]
        return listed

    # --- per-file facts -----------------------------------------------------

    def python_facts(self, source: SourceFile) -> PythonFacts:
        facts = self._python.get(source.path)
        if facts is None:
            module = python.module_name(source.path, self.package_dirs)
            facts = python.extract_python(source.text, module, _is_package(source))
            self._python[source.path] = facts
        return facts

    def python_scopes(self, source: SourceFile) -> tuple[PyScope, ...]:
        """The file's scopes and what each binds (see `python.extract_scopes`), read on demand:
        only data-flow questions about a few files need them."""
        scopes = self._scopes.get(source.path)
        if scopes is None:
            module = python.module_name(source.path, self.package_dirs)
            scopes = self._scopes[source.path] = python.extract_scopes(source.text, module, _is_package(source))
        return scopes

    def python_lexical(self, source: SourceFile) -> LexicalPython:
        """The file read lexically, without parsing (see `python_lexical`)."""
        found = self._lexical.get(source.path)
        if found is None:
            module = python.module_name(source.path, self.package_dirs)
            found = self._lexical[source.path] = LexicalPython(source.text, module, _is_package(source))
        return found

    def prefetch_python(self, sources: Iterable[SourceFile]) -> None:
        """Parse the files of `sources` not parsed yet, in worker processes when there are
        enough of them to pay for it; `python_facts` then answers from the cache."""
        pending = [s for s in sources if s.language == "python" and s.path not in self._python]
        pool = self._workers() if len(pending) >= PARALLEL_THRESHOLD else None
        if pool is None:
            return
        jobs = [(s.text, python.module_name(s.path, self.package_dirs), _is_package(s)) for s in pending]
        for source, facts in zip(pending, pool.map(_extract_python_job, jobs, chunksize=8)):
            self._python[source.path] = facts

    def _workers(self) -> ProcessPoolExecutor | None:
        """The pool of worker processes, started on first use; None when the work stays in
        this process. Workers are forked where the platform can, and then share the texts."""
        workers = min(os.cpu_count() or 1, MAX_WORKERS) if self.parallel else 1
        if workers < 2:
            return None
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("fork") if FORKING else None,
                initializer=_share_texts,
                initargs=([source.text for source in self.files] if FORKING else [],),
            )
        return self._pool

    def close(self, abandon: bool = False) -> None:
        """Stop the worker processes, if any were started, once they finish the jobs they are on;
        when the check is `abandon`ed (interrupted, failed), at once. Waiting on the pool then
        could last forever: a worker ended while sending a result leaves the pool's reader
        waiting for the rest."""
        pool, self._pool, self._reading = self._pool, None, None
        if pool is None:
            return
        if not abandon:
            pool.shutdown(cancel_futures=True)
            return
        workers = list(pool._processes.values())  # the executor has no public way to end busy workers
        pool.shutdown(wait=False, cancel_futures=True)
        stop(workers)

    def cpp_facts(self, source: SourceFile) -> CppFacts:
        facts = self._cpp.get(source.path)
        if facts is None:
            facts = cpp.extract_cpp(source.text)
            self._cpp[source.path] = facts
        return facts

    def function_bodies(self, source: SourceFile) -> cpp.FunctionBodies:
        """The function definitions of a C/C++ file, read on demand (see `cpp.FunctionBodies`)."""
        found = self._function_bodies.get(source.path)
        if found is None:
            found = self._function_bodies[source.path] = cpp.FunctionBodies(self.cpp_facts(source).stripped)
        return found

    def code_text(self, source: SourceFile) -> str:
        """The file's text with comments blanked out (C/C++ and Python), offsets preserved."""
        if source.language in ("cpp", "template"):
            facts = self._cpp.get(source.path)
            if facts is not None:
                return facts.stripped
            stripped = self._cpp_stripped.get(source.path)
            if stripped is None:  # reading the text needs no facts: they take ten times longer
                stripped = self._cpp_stripped[source.path] = cpp.strip_comments(source.text)
            return stripped
        if source.language == "python":
            return self.python_lexical(source).without_comments
        return source.text

    # --- tree-wide facts ----------------------------------------------------

    @cached_property
    def package_dirs(self) -> frozenset[str]:
        dirs = set()
        for source in self.files:
            path = PurePosixPath(source.path)
            if path.name == "__init__.py":
                parent = path.parent.as_posix()
                dirs.add("" if parent == "." else parent)
        return frozenset(dirs)

    @cached_property
    def modules(self) -> dict[str, str]:
        """Dotted module name -> path, for the Python files of the tree."""
        found: dict[str, str] = {}
        for source in self.files:
            if source.language == "python" and source.role != "docs":
                module = python.module_name(source.path, self.package_dirs)
                if module and module not in found:
                    found[module] = source.path
        return found

    @cached_property
    def defines(self) -> dict[str, list[tuple[SourceFile, CppDefine]]]:
        """Every `#define` of the product and test code, by macro name."""
        found: dict[str, list[tuple[SourceFile, CppDefine]]] = {}
        for source in self.select(["#define", "# define"], languages=["cpp", "template"]):
            for define in self.cpp_facts(source).defines:
                found.setdefault(define.name, []).append((source, define))
        return found

    def included(self, including: str, include: CppInclude) -> list[str]:
        """The files of the tree that an `#include` of the file `including` names. For
        `#include "x"` that is the file beside the including one when there is one, where the
        preprocessor looks first; else every file whose path ends with the written one."""
        target = include.target.strip()
        if not include.system:
            beside = posixpath.normpath(posixpath.join(posixpath.dirname(including), target))
            if beside in self.by_path:
                return [beside]
        named = self._by_file_name.get(PurePosixPath(target).name, [])
        return [path for path in named if path == target or path.endswith("/" + target)]

    @cached_property
    def _by_file_name(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for source in self.files:
            found.setdefault(PurePosixPath(source.path).name, []).append(source.path)
        return found

    def classes(self, literals: Iterable[str]) -> list[tuple[SourceFile, CppClass]]:
        """C/C++ classes defined in files that mention one of `literals`."""
        found = []
        for source in self.select(literals, languages=["cpp", "template"]):
            found.extend((source, cls) for cls in self.cpp_facts(source).classes)
        return found

    @cached_property
    def build(self) -> list[tuple[SourceFile, BuildFacts]]:
        """Build metadata from setup.py, pyproject.toml, setup.cfg and requirements files of
        the product and its tests, the tree's top level first (its name and version describe
        the backend)."""
        found = []
        for source in self.files:
            if source.role == "docs":
                continue
            name = PurePosixPath(source.path).name
            extractor = BUILD_EXTRACTORS.get(name)
            if extractor is None and source.language == "requirements":
                extractor = build.extract_requirements
            if extractor is not None:
                found.append((source, extractor(source.text)))
        found.sort(key=lambda item: (item[0].path.count("/"), item[0].path))
        return found


def _is_package(source: SourceFile) -> bool:
    return PurePosixPath(source.path).name == "__init__.py"


def _extract_python_job(job: tuple[str, str | None, bool]) -> PythonFacts:
    return python.extract_python(*job)


_shared_texts: list[str] = []  # in a worker process: the texts of the index, by position


def _share_texts(texts: list[str]) -> None:
    _shared_texts[:] = texts


def _scan_shared_texts(job: tuple[tuple[str, ...], range]) -> list[tuple[int, int]]:
    literals, positions = job
    return _scan_texts(_shared_texts, literals, positions)


def _read_shared_texts(read: list[tuple[int, str]]) -> list[tuple[int, CppFacts | tuple[str | None, str]]]:
    return [(position, _read(_shared_texts[position], language)) for position, language in read]


def _read(text: str, language: str) -> CppFacts | tuple[str | None, str]:
    """The facts of C/C++; of Python, the text with comments blanked (None: there are none)
    and with literals blanked too."""
    if language != "python":
        return cpp.extract_cpp(text)
    strings, comments = python.literal_spans(text)
    return blank_spans(text, comments) if comments else None, blank_spans(text, sorted(strings + comments))


def _scan_texts(texts: list[str], literals: tuple[str, ...], positions: range) -> list[tuple[int, int]]:
    """(literal number, text position) for every literal each text of `positions` holds."""
    automaton = AhoCorasick(literals)
    return [
        (number, position)
        for position in positions
        for number in {match[0] for match in automaton.find_matches_as_indexes(texts[position], overlapping=True)}
    ]


def build_index(root: Path, options: IndexOptions | None = None) -> CodeIndex:
    return CodeIndex(root, read_files(root, options or IndexOptions()))
