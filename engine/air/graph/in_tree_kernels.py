"""Kernels of an in-tree key whose binding to operators is the framework's own op list.

A framework builds the kernels of some of its keys with itself, and binds them in its own op
list (`dispatch: {Key: abs_key}`); a tree that holds only such kernels (an operator library
the framework builds as a submodule) carries no registration for them. They are known by the
framework's naming conventions, which a pack gives as data (`operators.in_tree_kernels`):

- stub registrations, `REGISTER_KEY_DISPATCH(abs_stub, &abs_kernel)`, also in a macro of the
  tree's own where it is invoked: the stub, without its suffix, names the operator family, or a
  variant of it (`div_true_stub`): the longest leading part of the name, `_`-separated, that
  the catalog knows;
- structured kernels, `IMPL_MACRO(add_out_key) (...) { ... }`: the macro opens a definition,
  its argument named as a function below;
- functions the tree defines (with a body: a declaration is not a kernel) named after their
  operator and key, `empty_key`, `add_out_key`, `arange_key_out`, for the name templates given,
  that another translation unit can call, as the framework's generated registration does (not
  `static`, nor `inline` helpers of a header).

Which operator a kernel named so serves is only the framework's op list's to say, so they count
only for a key of the pack's set whose kernels the framework builds, and, but for stub
registrations (whose macro names the key), only for a key the tree registers on by other means
as well: a function of a backend on another key whose name happens to end in `_key` is not one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from air.index import CodeIndex
from air.index.cpp import CPP_LANGUAGES, expand_macro, find_calls
from air.index.model import CppCall, CppDefine, CppFacts, SourceFile

STUB, STRUCTURED, NAMED = "dispatch stub", "structured kernel", "kernel name"
HOWS = (STUB, STRUCTURED, NAMED)
_OP = r"[a-z_][a-z0-9_]*"
_DEFINITION_OPENS = re.compile(r"[;{]")
_INTERNAL = re.compile(r"\b(?:static|inline)\b")
_DIRECTIVE = re.compile(r"(?m)^[ \t]*#.*$")


@dataclass(frozen=True)
class InTreeNaming:
    """The naming conventions of kernels of in-tree keys (see the module's docstring). In the
    templates, `{KEY}` is the key in capitals, `{key}` in small letters, `{op}` the operator."""

    keys: tuple[str, ...]
    stub_registrations: tuple[str, ...]
    stub_suffix: str
    structured: tuple[str, ...]
    kernel_names: tuple[tuple[str, str], ...]  # (function name template, operator template)

    @classmethod
    def from_data(cls, data: dict[str, Any], keys: tuple[str, ...]) -> InTreeNaming:
        return cls(
            keys=keys,
            stub_registrations=tuple(data.get("stub_registrations", ())),
            stub_suffix=data.get("stub_suffix", ""),
            structured=tuple(data.get("structured", ())),
            kernel_names=tuple(data.get("kernel_names", {}).items()),
        )

    def stub_macros(self) -> dict[str, str]:
        """The stub registration macros, with the key each registers on."""
        return {
            template.replace("{KEY}", key.upper()): key for template in self.stub_registrations for key in self.keys
        }

    @cached_property
    def _names_by_key(self) -> dict[str, list[tuple[re.Pattern[str], str]]]:
        return {
            key: [(_name_pattern(template, key.lower()), operator) for template, operator in self.kernel_names]
            for key in self.keys
        }

    def operator_named(self, function: str, key: str, knows: Callable[[str], bool]) -> str | None:
        """The operator the catalog knows that `function` is named after as a kernel of `key`."""
        for pattern, operator in self._names_by_key.get(key, ()):
            named = pattern.fullmatch(function)
            if named is not None and knows(candidate := operator.replace("{op}", named["op"])):
                return candidate
        return None


def _name_pattern(template: str, key: str) -> re.Pattern[str]:
    before, _, after = (re.escape(part.replace("{key}", key)) for part in template.partition("{op}"))
    return re.compile(f"{before}(?P<op>{_OP}){after}")


@dataclass(frozen=True)
class NamedKernel:
    op: str
    key: str  # as the pack's key set spells it
    source: SourceFile
    line: int
    how: str  # STUB, STRUCTURED or NAMED
    name: str  # the stub or function


def find_in_tree_kernels(
    index: CodeIndex, naming: InTreeNaming, knows: Callable[[str], bool], registered_keys: Collection[str]
) -> Iterator[NamedKernel]:
    """The kernels named by `naming` in the product's C/C++: stub registrations on any of its
    keys, then structured kernels and defined functions of the keys among `registered_keys`
    (the keys the tree registers on otherwise) or registered by a stub."""
    stubs = list(_stub_kernels(index, naming, knows))
    yield from stubs
    keys = [key for key in naming.keys if key in registered_keys or any(stub.key == key for stub in stubs)]
    if keys:
        yield from _structured_kernels(index, naming, knows, keys)
        yield from _defined_kernels(index, naming, knows, keys)


def _stub_kernels(index: CodeIndex, naming: InTreeNaming, knows: Callable[[str], bool]) -> Iterator[NamedKernel]:
    macros = naming.stub_macros()
    for source, call in _calls_through_wrappers(index, macros):
        stub = call.args[0].rpartition("::")[2] if call.args else ""
        op = _stub_operator(stub, naming.stub_suffix, knows)
        if op is not None:
            yield NamedKernel(op, macros[call.name.rpartition("::")[2]], source, call.line, STUB, stub)


def _calls_through_wrappers(index: CodeIndex, names: Collection[str]) -> Iterator[tuple[SourceFile, CppCall]]:
    """The calls of `names` in the product's C/C++, and those a function-like macro of the tree
    writes (`#define UNARY(op) REGISTER(op##_stub, ...)`) where it is invoked, with the
    invocation's arguments, at its line."""
    wrappers: set[str] = set()
    for source, call in _all_calls(index, names):
        if call.in_define is None:
            yield source, call
        else:
            wrappers.update(define.name for define in _function_like(index, call.in_define))
    for source, invocation in _calls_of(index, wrappers):
        for define in _function_like(index, invocation.name.rpartition("::")[2]):
            for call in find_calls(CppFacts(expand_macro(define, invocation.args)), names):
                yield source, replace(call, line=invocation.line)


def _function_like(index: CodeIndex, name: str) -> list[CppDefine]:
    return [define for _where, define in index.defines.get(name, []) if define.params is not None]


def _stub_operator(stub: str, suffix: str, knows: Callable[[str], bool]) -> str | None:
    """The longest leading `_`-separated part of the stub's name, without its suffix, that
    the catalog knows: `abs_stub` -> abs, `div_true_stub` -> div."""
    if not suffix or not stub.endswith(suffix):
        return None
    words = stub.removesuffix(suffix).split("_")
    prefixes = ("_".join(words[:end]) for end in range(len(words), 0, -1))
    return next((prefix for prefix in prefixes if prefix.strip("_") and knows(prefix)), None)


def _structured_kernels(
    index: CodeIndex, naming: InTreeNaming, knows: Callable[[str], bool], keys: list[str]
) -> Iterator[NamedKernel]:
    for source, call in _calls_of(index, naming.structured):
        if len(call.args) != 1 or not _opens_definition(index, source, call):
            continue
        for key in keys:
            op = naming.operator_named(call.args[0], key, knows)
            if op is not None:
                yield NamedKernel(op, key, source, call.line, STRUCTURED, call.args[0])
                break


def _opens_definition(index: CodeIndex, source: SourceFile, call: CppCall) -> bool:
    """Whether a body follows the macro call (after its parameters), not a `;`."""
    follows = _DEFINITION_OPENS.search(index.cpp_facts(source).stripped, call.end + 1)
    return follows is not None and follows.group() == "{"


def _defined_kernels(
    index: CodeIndex, naming: InTreeNaming, knows: Callable[[str], bool], keys: list[str]
) -> Iterator[NamedKernel]:
    for key in keys:
        written = re.compile(rf"(?<![\w.])(?<!->)(\w*_{re.escape(key.lower())}\w*)\s*\(")
        for source in index.select([f"_{key.lower()}"], languages=CPP_LANGUAGES, roles=("product",)):
            code = index.cpp_facts(source).stripped
            lines = [0, *(newline.end() for newline in re.finditer("\n", code))]
            for name in dict.fromkeys(written.findall(code)):
                op = naming.operator_named(name, key, knows)
                if op is None:
                    continue
                for function in index.function_bodies(source).defined(name):
                    if _linked_from_outside(code, lines[function.line - 1], name):
                        yield NamedKernel(op, key, source, function.line, NAMED, name)


def _linked_from_outside(code: str, head_line: int, name: str) -> bool:
    """Whether the function whose head names it on the line starting at `head_line` can be
    called from another translation unit, as the framework's generated registration calls its
    kernels: it is declared neither `static` nor `inline` (a helper of a header)."""
    at = code.find(name, head_line)
    head_start = max(code.rfind(mark, 0, at) for mark in ";{}") + 1
    return _INTERNAL.search(_DIRECTIVE.sub("", code[head_start:at])) is None


def _calls_of(index: CodeIndex, names: Collection[str]) -> Iterator[tuple[SourceFile, CppCall]]:
    """The calls of `names` in the product's C/C++, but for those a macro's definition writes."""
    return ((source, call) for source, call in _all_calls(index, names) if call.in_define is None)


def _all_calls(index: CodeIndex, names: Collection[str]) -> Iterator[tuple[SourceFile, CppCall]]:
    if not names:
        return
    for source in index.select(sorted(names), languages=CPP_LANGUAGES, roles=("product",)):
        for call in find_calls(index.cpp_facts(source), names):
            yield source, call
