"""What the names of C/C++ constants stand for, followed through the definitions of the tree.

A value such as `kMyKey`, `dev::DEVICE` or `Key::Slot1` is resolved by its last `::` component,
step by step, through what the tree defines under that name:
- `#define NAME body`, the body macro-expanded as the preprocessor would (function-like macros of
  the tree and those the framework's headers define, arguments first, `#` and `##`) until it is
  one name;
- a constant `[static|inline|extern] const|constexpr|constinit TYPE NAME = value;` (or `{value}`,
  `(value)`) whose TYPE is `auto` or one of the framework's constant types, written as it is or
  through a `using T = ...;` / `typedef ... T;` alias of one.

A definition in a test counts outside the tests only in the files that include it. A
constant defined twice in one file, in the branches of an `#ifdef`, is taken in the branch a
build takes when the macros that no file of the tree may define are not defined (see
`_never_defined`). A name that the tree defines once, or always alike, is taken as defined
wherever it is used. A name defined differently in several files is taken as the file that
uses it sees it: its own definition, else the nearest one among the files it `#include`s, level
by level; a use that sees none of them stays unresolved. Definitions are looked up only in the
files that contain the name, and only for the names asked about.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from air.index import CodeIndex
from air.index.cpp import (
    CPP_LANGUAGES,
    dead_branches,
    expand_macros,
    find_constants,
    find_type_aliases,
    is_name,
    may_define_constant,
    resolve_alias,
)
from air.index.model import CppConstant, CppDefine

T = TypeVar("T")


@dataclass(frozen=True)
class CppVocabulary:
    """What a framework says about spelling its constants in C/C++: the types whose constants
    may be aliased (last `::` component), and the macros of its headers, by name."""

    constant_types: frozenset[str] = frozenset()
    macros: Mapping[str, CppDefine] = field(default_factory=dict)


@dataclass(frozen=True)
class _Definition:
    """An object-like `#define` or a constant, with the text that stands for it."""

    path: str
    line: int
    value: str


class CppNames:
    """Resolves names of one index; `includes(path)` lists the files a file includes,
    itself first, nearest first."""

    def __init__(self, index: CodeIndex, vocabulary: CppVocabulary, includes: Callable[[str], Sequence[str]]) -> None:
        self._index = index
        self._vocabulary = vocabulary
        self._includes = includes
        self._definitions: dict[str, list[_Definition]] = {}
        self._ranks: dict[str, dict[str, int]] = {}
        self._constant_types: dict[str, bool] = {}
        self._resolved: dict[tuple[str, str | None], str] = {}

    def resolve(self, value: str, path: str | None = None) -> str:
        """What `value`, a name or a macro invocation used in the file `path`, stands for; the
        value itself when it is neither, or names nothing the tree defines."""
        key = (value, path)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(value.strip(), path)
        return self._resolved[key]

    def _resolve(self, value: str, path: str | None) -> str:
        if not is_name(value):
            expanded = self._expand(value, path) if value[:1].isalpha() or value[:1] == "_" else None
            if expanded is None or not is_name(expanded.strip()):
                return value
            value = expanded.strip()
        return resolve_alias(value, lambda name: self._replacement(name, path))

    def _replacement(self, name: str, path: str | None) -> str | None:
        definition = self._visible(self._definitions_of(name), path, key=lambda found: found.value)
        if definition is None:
            return None
        if is_name(definition.value):
            return definition.value
        expanded = self._expand(definition.value, path, hidden=(name,))
        return expanded.strip() if expanded is not None and is_name(expanded.strip()) else None

    def _expand(self, text: str, path: str | None, hidden: Collection[str] = ()) -> str | None:
        return expand_macros(text, lambda name: self._macro(name, path), hidden)

    def _macro(self, name: str, path: str | None) -> CppDefine | None:
        defined = [(source.path, define) for source, define in self._index.defines.get(name, [])]
        found = self._visible(defined, path, key=lambda define: (define.params, define.body)) if defined else None
        return found if found is not None else self._vocabulary.macros.get(name)

    # --- definitions --------------------------------------------------------

    def _definitions_of(self, name: str) -> list[tuple[str, _Definition]]:
        if name not in self._definitions:
            self._definitions[name] = sorted(
                self._object_like_macros(name) + self._constants(name), key=lambda found: (found.path, found.line)
            )
        return [(found.path, found) for found in self._definitions[name]]

    def _object_like_macros(self, name: str) -> list[_Definition]:
        return [
            _Definition(source.path, define.line, define.body)
            for source, define in self._index.defines.get(name, [])
            if define.params is None
        ]

    def _constants(self, name: str) -> list[_Definition]:
        found = []
        for source in self._index.select([name], languages=CPP_LANGUAGES):
            if not may_define_constant(source.text, name):
                continue
            code = self._index.code_text(source)
            constants = [constant for constant in find_constants(code, name) if self._is_constant_type(constant.type)]
            if len({constant.value for constant in constants}) > 1:
                built = _outside(constants, dead_branches(code, self._never_defined), code)
                constants = built or constants
            found += [_Definition(source.path, constant.line, constant.value) for constant in constants]
        return found

    def _never_defined(self, macro: str) -> bool:
        """Whether no file of the tree may define `macro`: none `#define`s it, and none names it
        outside the conditions of C/C++ (a build file may pass it as an option or a `-D`). A name
        reserved to the compiler and its library (`_WIN32`, `__linux__`) may be defined anyway."""
        if macro.startswith("_") or macro in self._index.defines or macro in self._vocabulary.macros:
            return False
        return all(
            source.language in CPP_LANGUAGES and _only_in_conditions(self._index.code_text(source), macro)
            for source in self._index.select([macro], include_docs=False)
        )

    def _is_constant_type(self, written: str) -> bool:
        """Whether a declared type is `auto` or one of the constant types, possibly through
        type aliases of the tree."""
        name = written.rpartition("::")[2]
        if name == "auto" or name in self._vocabulary.constant_types:
            return True
        if name not in self._constant_types:
            self._constant_types[name] = False  # a cycle of aliases names no constant type
            aliased = (
                target
                for source in self._index.select([name], languages=CPP_LANGUAGES)
                for target in find_type_aliases(self._index.code_text(source), name)
            )
            self._constant_types[name] = any(self._is_constant_type(target) for target in aliased)
        return self._constant_types[name]

    # --- visibility ---------------------------------------------------------

    def _visible(self, candidates: list[tuple[str, T]], path: str | None, key: Callable[[T], Hashable]) -> T | None:
        """The candidate (path, definition) that the file `path` sees: the only one there is,
        when all agree; else the one defined nearest along its includes, None if it sees none. A
        test's definition counts outside the tests only where it is included."""
        if path is not None and candidates and not self._is_test(path):
            candidates = [c for c in candidates if not self._is_test(c[0]) or c[0] in self._ranks_from(path)]
        if not candidates:
            return None
        if len({key(definition) for _, definition in candidates}) == 1:
            return candidates[0][1]
        if path is None:
            return None
        ranks = self._ranks_from(path)
        seen = [(ranks[where], order) for order, (where, _) in enumerate(candidates) if where in ranks]
        return candidates[min(seen)[1]][1] if seen else None

    def _is_test(self, path: str) -> bool:
        source = self._index.by_path.get(path)
        return source is not None and source.role == "tests"

    def _ranks_from(self, path: str) -> dict[str, int]:
        if path not in self._ranks:
            self._ranks[path] = {reached: rank for rank, reached in enumerate(self._includes(path))}
        return self._ranks[path]


def _outside(constants: list[CppConstant], spans: list[tuple[int, int]], code: str) -> list[CppConstant]:
    """The constants whose lines lie outside `spans` of `code`."""
    left_out = [(code.count("\n", 0, start) + 1, code.count("\n", 0, end) + 1) for start, end in spans]
    return [c for c in constants if not any(first <= c.line <= last for first, last in left_out)]


def _only_in_conditions(code: str, macro: str) -> bool:
    """Whether every line of `code` that names `macro` is an `#if`, `#ifdef`, `#ifndef` or `#elif`."""
    return all(_CONDITION_LINE.match(line) for line in code.splitlines() if re.search(rf"\b{re.escape(macro)}\b", line))


_CONDITION_LINE = re.compile(r"[ \t\f\v]*#[ \t\f\v]*(?:if|ifdef|ifndef|elif)\b")
