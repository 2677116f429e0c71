"""The code index: every file read once, facts parsed lazily on the files that need them."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import TypeVar, overload

from ahocorasick_rs import AhoCorasick, Implementation

from air.executor import Executor
from air.index import build, cpp, python, vendored
from air.index.blanking import blank_hash_comments, blank_spans
from air.index.build_switches import switches_off
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

BUILD_EXTRACTORS = {
    "setup.py": build.extract_setup_py,
    "pyproject.toml": build.extract_pyproject,
    "setup.cfg": build.extract_setup_cfg,
}

PARALLEL_THRESHOLD = 4
FEW_MATCHING = 16  # a selection this many times smaller than its pool is listed from its own paths
HASH_COMMENT_LANGUAGES = frozenset({"yaml", "toml", "shell", "cmake", "make", "bazel", "meson"})
SCAN_JOBS = 8  # the literal scan's share of work per job: small enough to balance the workers
READ_AHEAD_JOBS = 32  # as many jobs for the read-ahead, which this process joins late (after loading the pack)
MIN_LITERALS_TOGETHER = 8  # from here on, one multi-pattern pass beats a search per literal
PARALLEL_SCAN_BYTES = 4_000_000  # below this, starting workers costs more than scanning here
_READ_AHEAD_LANGUAGES = ("python", "cpp", "template")
_NOT_DOCS: tuple = (None, None, False)  # the kinds of file `_files_of` lists: every one but documentation
_ONLY_DOCS: tuple = (None, frozenset({"docs"}), True)

T = TypeVar("T")

__all__ = ["CodeIndex", "IndexOptions", "build_index"]


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
MAX_IMPORT_LIST = 4000  # characters a parenthesised import list may run on for


def _import_statements(text: str) -> Iterator[str]:
    """The import statements of a Python text, a parenthesised one with its continuation lines:
    the lines holding `import` that start with `import` or `from`."""
    position = text.find("import")
    while position >= 0:
        start = text.rfind("\n", 0, position) + 1
        end = text.find("\n", position)
        end = len(text) if end < 0 else end
        statement = text[start:end].lstrip()
        if statement.startswith(("import ", "from ")):
            if "(" in statement and ")" not in statement:
                closing = text.find(")", end, end + MAX_IMPORT_LIST)
                statement += text[end:closing] if closing >= 0 else ""
            yield statement
        position = text.find("import", end)


class CodeIndex:
    """Files of one tree with their text, plus lazily parsed, cached facts per file."""

    def __init__(self, root: Path, listing: FileListing, executor: Executor | None = None) -> None:
        self.root = root
        self.executor = executor or Executor()
        self.files = listing.files
        self.skipped = listing.skipped
        self.skipped_directories = tuple(listing.skipped_directories)
        self.vendored_read = tuple(listing.vendored_read)
        self.unread = tuple(listing.unread)
        self.total_bytes = listing.total_bytes
        self.reading = listing.reading
        self.by_path = {f.path: f for f in self.files}
        self._position = {f.path: number for number, f in enumerate(self.files)}
        self._listed: dict[tuple, list[SourceFile]] = {}
        self._listed_paths: dict[tuple, frozenset[str]] = {}
        self._lexical: dict[str, LexicalPython] = {}
        self._by_literal: dict[tuple, set[str]] = {}
        self._scanned: dict[str, set[str]] = {}
        self._weights: dict[tuple[str | None, frozenset[str]], int] = {}
        self._python: dict[str, PythonFacts] = {}
        self._scopes: dict[str, tuple[PyScope, ...]] = {}
        self._cpp: dict[str, CppFacts] = {}
        self._stripped: dict[str, str] = {}
        self._without_strings: dict[str, str] = {}
        self._function_bodies: dict[str, cpp.FunctionBodies] = {}

    # --- selection ----------------------------------------------------------

    def select(
        self,
        literals: Iterable[str | Sequence[str]] = (),
        languages: Iterable[str] | None = None,
        include_docs: bool = False,
        roles: Iterable[str] | None = None,
    ) -> Iterator[SourceFile]:
        """Files that contain one of `literals` (all files if none are given). An entry that is
        a tuple or a list matches only files containing every literal of it."""
        wanted = [(item,) if isinstance(item, str) else tuple(item) for item in literals]
        kinds = _kinds(languages, roles, include_docs)
        pool = self._files_of(kinds)
        if not wanted:
            yield from pool
            return
        matching = self._matching(kinds, wanted)
        if len(matching) * FEW_MATCHING < len(pool):  # a few files of many: not worth a pass over them all
            listed = self._paths_of(kinds)
            yield from (self.files[i] for i in sorted(self._position[path] for path in matching if path in listed))
            return
        yield from (source for source in pool if source.path in matching)

    def weight(self, literals: Iterable[str | Sequence[str]], roles: Iterable[str]) -> int:
        """About what reading the files of `roles` that hold `literals` (as `select` takes them;
        all files when there are none) costs: the characters of those holding each literal (of
        a group, its rarest), summed."""
        wanted = [(item,) if isinstance(item, str) else tuple(item) for item in literals]
        roles = frozenset(roles)
        if not wanted:
            return self._weight(None, roles)
        return sum(min(self._weight(part, roles) for part in group) for group in wanted)

    def _weight(self, literal: str | None, roles: frozenset[str]) -> int:
        """Characters in the files of `roles` holding `literal` (all files for None)."""
        key = (literal, roles)
        found = self._weights.get(key)
        if found is None:
            if literal is None:
                sources: Iterable[SourceFile] = self.files
            else:
                sources = (self.by_path[path] for path in self._containing(_NOT_DOCS, literal))
            found = self._weights[key] = sum(len(source.text) for source in sources if source.role in roles)
        return found

    def find_literals(
        self, literals: Iterable[str], languages: Iterable[str] | None = None, roles: Iterable[str] | None = None
    ) -> None:
        """Find the files holding each of `literals` at once, so that selecting them later (as
        `select` takes the same languages and roles) answers without a pass over the tree each."""
        self._find_together(_kinds(languages, roles, False), set(literals))

    def _matching(self, kinds: tuple, wanted: list[tuple[str, ...]]) -> set[str]:
        self._find_together(kinds, {part for group in wanted for part in group})
        return set().union(*(set.intersection(*(self._containing(kinds, part) for part in group)) for group in wanted))

    def _find_together(self, kinds: tuple, literals: set[str]) -> None:
        """Find the files of `kinds` holding each of `literals` that was not scanned for, in one
        multi-pattern pass when there are many of them (a class family's new names, say): a
        pass costs about as much as a few single searches of the same files."""
        missing = sorted(
            literal
            for literal in literals
            if literal and literal not in self._scanned and (kinds, literal) not in self._by_literal
        )
        if len(missing) < MIN_LITERALS_TOGETHER:
            return
        found: dict[str, set[str]] = {literal: set() for literal in missing}
        automaton = _automaton(missing)
        for source in self._files_of(kinds):
            for number in {match[0] for match in automaton.find_matches_as_indexes(source.text, overlapping=True)}:
                found[missing[number]].add(source.path)
        self._by_literal.update(((kinds, literal), paths) for literal, paths in found.items())

    @overload
    def scan_literals(self, literals: Iterable[str], alongside: None = None) -> None: ...

    @overload
    def scan_literals(self, literals: Iterable[str], alongside: Callable[[], T]) -> T: ...

    def scan_literals(self, literals: Iterable[str], alongside: Callable[[], T] | None = None) -> T | None:
        """Find which files contain each of `literals` in one multi-pattern pass over the tree,
        so that `select` answers from it instead of searching every file once per literal; in
        the workers on a large tree, while `alongside` runs here. Documentation is left out:
        few selections read it (see `_containing`). Returns what `alongside` returns."""
        wanted = tuple(sorted({literal for literal in literals if literal and literal not in self._scanned}))
        if not wanted:
            return alongside() if alongside else None
        found: dict[str, set[str]] = {literal: set() for literal in wanted}
        code = self._files_of(_NOT_DOCS)
        texts = [source.text for source in code]
        jobs = [range(start, len(texts), SCAN_JOBS) for start in range(SCAN_JOBS)]
        if self.total_bytes < PARALLEL_SCAN_BYTES:
            jobs = [range(len(texts))]
        scanned, extra = self.executor.map(lambda positions: _scan_texts(texts, wanted, positions), jobs, alongside)
        for number, position in (pair for pairs in scanned for pair in pairs):
            found[wanted[number]].add(code[position].path)
        self._scanned.update(found)
        return extra

    def read_ahead(self, alongside: Callable[[], T]) -> T:
        """Read the code of the product and the tests as the evaluation will, in the executor's
        workers while `alongside` (loading a pack, say) runs here, and return what it returns:
        Python with its comments and literals blanked, the facts of C/C++; and, here, the build
        metadata. Only a large tree is read ahead: on a small one, starting workers costs more
        than reading on demand."""
        if self.total_bytes < PARALLEL_SCAN_BYTES or not self.executor.parallel:
            return alongside()
        read = [source for source in self.files if source.role != "docs" and source.language in _READ_AHEAD_LANGUAGES]
        jobs = [read[start::READ_AHEAD_JOBS] for start in range(READ_AHEAD_JOBS)]

        def here() -> T:
            _ = self.build  # every evaluation reads the build metadata: here, not serially later
            return alongside()

        switches_off = self.switches_off  # worked out before the workers start, which read by it
        found, extra = self.executor.map(
            lambda sources: [_read(source, switches_off) for source in sources], jobs, here
        )
        for sources, results in zip(jobs, found):
            for source, result in zip(sources, results):
                if isinstance(result, CppFacts):
                    self._cpp[source.path] = result
                else:
                    self.python_lexical(source).take_views(*result)
        return extra

    def _containing(self, kinds: tuple, literal: str) -> set[str]:
        """Paths of files containing `literal`: of the whole tree when it was scanned for (and
        of its documentation, searched once, for a selection that reads it), otherwise of the
        files of a selection, found once."""
        scanned = self._scanned.get(literal)
        if scanned is None:
            return self._searched(kinds, literal)
        include_docs = kinds[2]
        return scanned | self._searched(_ONLY_DOCS, literal) if include_docs else scanned

    def _searched(self, kinds: tuple, literal: str) -> set[str]:
        """Paths of the files of `kinds` containing `literal`, found once: among those holding
        the scanned literal within it that fewest files hold (`Allocator` for `NPUAllocator`),
        when there is one and the kinds leave documentation out, which the scan does too."""
        key = (kinds, literal)
        found = self._by_literal.get(key)
        if found is None:
            include_docs = kinds[2]
            holding = None if include_docs else self._fewest_holding_part(literal)
            if holding is None:
                pool: Iterable[SourceFile] = self._files_of(kinds)
            else:
                listed = self._paths_of(kinds)
                pool = (self.by_path[path] for path in holding if path in listed)
            found = self._by_literal[key] = {source.path for source in pool if literal in source.text}
        return found

    def _fewest_holding_part(self, literal: str) -> set[str] | None:
        """The files holding the scanned literal that `literal` contains and fewest files hold."""
        parts = [paths for scanned, paths in self._scanned.items() if scanned in literal]
        return min(parts, key=len, default=None)

    def _paths_of(self, kinds: tuple[frozenset[str] | None, frozenset[str] | None, bool]) -> frozenset[str]:
        paths = self._listed_paths.get(kinds)
        if paths is None:
            paths = self._listed_paths[kinds] = frozenset(source.path for source in self._files_of(kinds))
        return paths

    def _files_of(self, kinds: tuple[frozenset[str] | None, frozenset[str] | None, bool]) -> list[SourceFile]:
        """The files of some languages and roles, listed once per combination asked for."""
        listed = self._listed.get(kinds)
        if listed is None:
            languages, roles, include_docs = kinds
            listed = self._listed[kinds] = [
                source
                for source in self.files
                if (include_docs or source.role != "docs")
                and (roles is None or source.role in roles)
                and (languages is None or source.language in languages)
            ]
        return listed

    # --- per-file facts -----------------------------------------------------

    def python_facts(self, source: SourceFile) -> PythonFacts:
        facts = self._python.get(source.path)
        if facts is None:
            facts = self._python[source.path] = self._parsed(source)
        return facts

    def _parsed(self, source: SourceFile) -> PythonFacts:
        return python.extract_python(
            source.text, python.module_name(source.path, self.package_dirs), _is_package(source)
        )

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

    def prefetch_python(self, sources: Iterable[SourceFile], scoped: Collection[str] = ()) -> None:
        """Parse the files of `sources` not parsed yet, reading the scopes of those of `scoped`
        from the same parse, in worker processes when there are enough of them to pay for it;
        `python_facts` and `python_scopes` then answer from the cache. The workers start with
        the largest files, and so does this process, from the other end of the list: both end
        on small ones."""
        pending = [
            source
            for source in sources
            if source.language == "python"
            and (source.path not in self._python or source.path in scoped and source.path not in self._scopes)
        ]
        if not self.executor.parallel or len(pending) < PARALLEL_THRESHOLD:
            return
        by_size = sorted(pending, key=lambda source: len(source.text), reverse=True)
        order = by_size[0::2] + by_size[1::2][::-1]
        parsed, _ = self.executor.map(
            lambda source: self._parsed_with_scopes(source, source.path in scoped), order, here_from_end=True
        )
        for source, (facts, scopes) in zip(order, parsed):
            self._python[source.path] = facts
            if source.path in scoped:
                self._scopes[source.path] = scopes

    def _parsed_with_scopes(self, source: SourceFile, with_scopes: bool) -> tuple[PythonFacts, tuple[PyScope, ...]]:
        module = python.module_name(source.path, self.package_dirs)
        return python.extract_python_and_scopes(source.text, module, _is_package(source), with_scopes)

    def cpp_facts(self, source: SourceFile) -> CppFacts:
        facts = self._cpp.get(source.path)
        if facts is None:
            facts = cpp.extract_cpp(source.text, self.switches_off)
            self._cpp[source.path] = facts
        return facts

    def function_bodies(self, source: SourceFile) -> cpp.FunctionBodies:
        """The function definitions of a C/C++ file, read on demand (see `cpp.FunctionBodies`)."""
        found = self._function_bodies.get(source.path)
        if found is None:
            found = self._function_bodies[source.path] = cpp.FunctionBodies(self.cpp_facts(source).stripped)
        return found

    def definitions(self, name: str, roles: Iterable[str] | None = ("product",)) -> Iterator[CppDefine]:
        """The C/C++ definitions of the function `name` (a last `::` component) in the files of
        `roles` (all files for None)."""
        for source in self.select([name], languages=cpp.CPP_LANGUAGES, roles=roles):
            yield from self.function_bodies(source).defined(name)

    def code_text(self, source: SourceFile) -> str:
        """The file's text with comments blanked out (C/C++ and Groovy's `//` and `/* */`, Python,
        and the `#` comments of YAML, TOML, shell, CMake, Make, Bazel and Meson), offsets
        preserved."""
        if source.language in ("cpp", "template", "groovy"):
            facts = self._cpp.get(source.path)
            if facts is not None:
                return facts.stripped
            stripped = self._stripped.get(source.path)
            if stripped is None:  # reading the text needs no facts: they take ten times longer
                stripped = self._stripped[source.path] = cpp.strip_comments(source.text, self.switches_off)
            return stripped
        if source.language == "python":
            return self.python_lexical(source).without_comments
        if source.language in HASH_COMMENT_LANGUAGES:
            stripped = self._stripped.get(source.path)
            if stripped is None:
                stripped = self._stripped[source.path] = blank_hash_comments(source.text)
            return stripped
        return source.text

    def code_without_strings(self, source: SourceFile) -> str:
        """`code_text` with the string literals blanked too, in Python and C/C++, offsets preserved."""
        if source.language == "python":
            return self.python_lexical(source).code
        if source.language not in cpp.CPP_LANGUAGES:
            return self.code_text(source)
        blanked = self._without_strings.get(source.path)
        if blanked is None:
            literals = [(start, end) for kind, start, end in cpp.lexemes(source.text) if kind not in cpp.COMMENT_KINDS]
            blanked = self._without_strings[source.path] = blank_spans(self.code_text(source), literals)
        return blanked

    # --- tree-wide facts ----------------------------------------------------

    @cached_property
    def imported_names(self) -> frozenset[str]:
        """Every name a Python file of the tree imports: each component of an imported module's
        dotted name, each name imported from one and its alias (`from a.b import c as d` gives a,
        b, c and d)."""
        names: set[str] = set()
        for source in self.files:
            if source.language == "python" and "import" in source.text:
                for statement in _import_statements(source.text):
                    names.update(_IDENTIFIER.findall(statement))
        return frozenset(names)

    @cached_property
    def package_dirs(self) -> frozenset[str]:
        return frozenset(posixpath.dirname(source.path) for source in self.files if _is_package(source))

    @cached_property
    def product_packages(self) -> frozenset[str]:
        """The outermost Python packages of the product code."""
        return frozenset(vendored.top_packages(source.path for source in self.files if source.role == "product"))

    @cached_property
    def modules(self) -> dict[str, str]:
        """Dotted module name -> path, for the Python files of the tree; also under the longer
        names that the directories above its outermost package give it, which a namespace
        package (a directory without `__init__.py`, `vendor/` of `vendor.torch.dev`) makes."""
        found: dict[str, str] = {}
        namespaced: dict[str, str] = {}
        for source in self.files:
            if source.language == "python" and source.role != "docs":
                module = python.module_name(source.path, self.package_dirs)
                if module and module not in found:
                    found[module] = source.path
                    for longer in _namespaced_names(source.path, module):
                        namespaced.setdefault(longer, source.path)
        return {**namespaced, **found}

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
            found.setdefault(posixpath.basename(source.path), []).append(source.path)
        return found

    def classes(self, literals: Iterable[str]) -> list[tuple[SourceFile, CppClass]]:
        """C/C++ classes defined in files that mention one of `literals`."""
        found: list[tuple[SourceFile, CppClass]] = []
        for source in self.select(literals, languages=["cpp", "template"]):
            found.extend((source, cls) for cls in self.cpp_facts(source).classes)
        return found

    @cached_property
    def build_switches(self) -> Mapping[str, str]:
        """The build switches a default build leaves off, with where each is declared (see
        `air.index.build_switches`)."""
        return switches_off(self.files)

    @cached_property
    def switches_off(self) -> frozenset[str]:
        return frozenset(self.build_switches)

    @cached_property
    def build(self) -> list[tuple[SourceFile, BuildFacts]]:
        """Build metadata from setup.py, pyproject.toml, setup.cfg and requirements files of
        the product and its tests, the tree's top level first (its name and version describe
        the backend)."""
        found = []
        for source in self.files:
            if source.role == "docs":
                continue
            extractor = BUILD_EXTRACTORS.get(posixpath.basename(source.path))
            if extractor is None and source.language == "requirements":
                extractor = build.extract_requirements
            if extractor is not None:
                found.append((source, self._version_read(source, extractor(source.text))))
        found.sort(key=lambda item: (item[0].path.count("/"), item[0].path))
        return found

    def _version_read(self, source: SourceFile, facts: BuildFacts) -> BuildFacts:
        """`facts` with the version its build file reads from a file of the tree: that file's
        first line of text."""
        if facts.version_file is None:
            return facts
        path = posixpath.normpath(posixpath.join(posixpath.dirname(source.path), facts.version_file))
        held = self.by_path.get(path)
        lines = held.text.split("\n", 1) if held is not None else [""]
        return replace(facts, version=lines[0].strip() or None, version_file=None)


def _is_package(source: SourceFile) -> bool:
    return posixpath.basename(source.path) == "__init__.py"


def _namespaced_names(path: str, module: str) -> Iterator[str]:
    """`module` prefixed with the names of the directories above its outermost package, nearest
    first, while they are identifiers."""
    depth = module.count(".") + (2 if posixpath.basename(path) == "__init__.py" else 1)
    directories = path.split("/")[:-depth]
    for directory in reversed(directories):
        if not directory.isidentifier():
            return
        module = f"{directory}.{module}"
        yield module


def _kinds(languages: Iterable[str] | None, roles: Iterable[str] | None, include_docs: bool) -> tuple:
    """The kinds of file a selection reads, as `_files_of` lists them."""
    return (
        frozenset(languages) if languages is not None else None,
        frozenset(roles) if roles is not None else None,
        include_docs,
    )


def _read(source: SourceFile, switches_off: Collection[str]) -> CppFacts | tuple[str, str]:
    """The facts of C/C++ (as a build with `switches_off` off compiles it); of Python, the text
    as `code_text` gives it and with literals blanked too."""
    if source.language != "python":
        return cpp.extract_cpp(source.text, switches_off)
    lexical = LexicalPython(source.text, None, _is_package(source))
    return lexical.without_comments, lexical.code


def _automaton(literals: Sequence[str]) -> AhoCorasick:
    """A multi-pattern search for `literals`, as a DFA: built in milliseconds even for a pack's
    hundreds of literals, it scans about twice as fast as the default automaton."""
    return AhoCorasick(literals, implementation=Implementation.DFA)


def _scan_texts(texts: list[str], literals: tuple[str, ...], positions: range) -> list[tuple[int, int]]:
    """(literal number, text position) for every literal each text of `positions` holds."""
    automaton = _automaton(literals)
    return [
        (number, position)
        for position in positions
        for number in {match[0] for match in automaton.find_matches_as_indexes(texts[position], overlapping=True)}
    ]


def build_index(root: Path, options: IndexOptions | None = None, executor: Executor | None = None) -> CodeIndex:
    return CodeIndex(root, read_files(root, options or IndexOptions()), executor)
