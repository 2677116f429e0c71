"""Operator registrations of a backend, and their coverage of an operator catalog.

Registrations are read from three places, as a pack's `operators` section names them:
- C/C++ blocks `BLOCK(namespace, key, m) { m.impl("op.overload", ...); }`, also when the
  block macro is wrapped in one of the backend's own macros (which may write the block
  itself), and `m.fallback(...)` in a block on the wildcard namespace (a global fallback).
  A block's calls include those of the backend's macros it invokes and of its functions it
  passes the library to, expanded with the call's arguments, and those of the fragments it
  `#include`s (`ops.inc`) that have no block of their own. A registration that names its own
  key (`m.impl("op", torch::dispatch(key, f))` through the pack's `dispatch` call, or
  `m.impl("op", key, f)` through its `keyed_impl` method) is on that key;
- Python calls `impl("namespace::op", "key")` and `lib.impl("op", fn[, "key"])` on a
  library object created with `Library(namespace, "IMPL", key)`;
- op lists of codegen backends: YAML files whose entries name catalog operators (`- func:
  op(...)`, `- schema: "op(...)"`, or plain names under a list), each with its `dispatch`
  keys or the pack's default key.

The catalog (generated from the framework's own operator definitions) says which operators
exist, which decompose into others (composite: no backend kernel needed) and which belong to
the core opset.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import Any

import yaml

from air.errors import PackError
from air.index import CodeIndex
from air.index.cpp import CPP_LANGUAGES, block_span, calls_between, expand_macro, find_calls, includes_between
from air.index.model import CppBlockCall, CppCall, CppDefine, CppFacts, CppInclude, SourceFile

OP_NAME = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[A-Za-z0-9_]+)?$")
MIN_OP_LIST_ENTRIES = 5
MIN_OP_LIST_SHARE = 0.5
MAX_OP_LIST_BYTES = 2 * 1024 * 1024
WILDCARD_NAMESPACE = "_"
MAX_EXPANSION_DEPTH = 3
MAX_BLOCK_STATEMENTS = 50_000


@dataclass(frozen=True)
class OperatorSyntax:
    """How a framework's backends register operators (a pack's `operators` section)."""

    catalog_path: Path
    namespace: str
    blocks: tuple[str, ...]
    fallback: str
    python_impl: tuple[str, ...]
    python_library: str
    op_list_default_key: str
    kernel_keys: str  # the symbol set of keys whose kernels count as the device's
    dispatch: str = ""  # the call that gives one registration its own key, as its first argument
    keyed_impl: str = ""  # the registration method that takes its own key between name and function

    @classmethod
    def from_data(cls, data: dict[str, Any], pack_dir: Path) -> OperatorSyntax:
        return cls(
            catalog_path=pack_dir / data["catalog"],
            namespace=data["namespace"],
            blocks=tuple(data["blocks"]),
            fallback=data["fallback"],
            python_impl=tuple(data["python_impl"]),
            python_library=data["python_library"],
            op_list_default_key=data["op_list_default_key"],
            kernel_keys=data["kernel_keys"],
            dispatch=data.get("dispatch", ""),
            keyed_impl=data.get("keyed_impl", ""),
        )

    @cached_property
    def catalog(self) -> Catalog:
        return Catalog.load(self.catalog_path)


@dataclass(frozen=True)
class Catalog:
    ops: dict[str, frozenset[str]]  # overload name -> flags ("composite", "core")
    torch_version: str

    @classmethod
    def load(cls, path: Path) -> Catalog:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls({name: frozenset(flags) for name, flags in data["ops"].items()}, str(data["torch_version"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise PackError(str(path), f"cannot read the operator catalog: {error}") from None

    @cached_property
    def families(self) -> frozenset[str]:
        return frozenset(family(name) for name in self.ops)

    def is_composite(self, name: str) -> bool:
        return "composite" in self.ops.get(name, ())

    def knows(self, name: str) -> bool:
        return name in self.ops or family(name) in self.families

    @cached_property
    def core(self) -> tuple[str, ...]:
        return tuple(name for name, flags in self.ops.items() if "core" in flags and "composite" not in flags)


def family(name: str) -> str:
    """`add_.Tensor`, `add.out` and `add` are one family: `add`; so are `convolution` and
    `convolution_overrideable`, the variant out-of-tree backends implement."""
    base = name.split(".", 1)[0].removesuffix("_overrideable")
    return base.rstrip("_") or base


@dataclass(frozen=True)
class Registration:
    op: str  # "add.Tensor", namespace removed
    namespace: str
    key: str  # as written, resolved later by capture constraints
    source: SourceFile
    line: int
    how: str  # "block", "python", "op list"


@dataclass(frozen=True)
class Registrations:
    ops: tuple[Registration, ...]
    fallbacks: tuple[Registration, ...]


def find_registrations(index: CodeIndex, syntax: OperatorSyntax) -> Registrations:
    ops: list[Registration] = []
    fallbacks: list[Registration] = []
    for registration in _cpp_registrations(index, syntax):
        (fallbacks if registration.namespace == WILDCARD_NAMESPACE else ops).append(registration)
    ops.extend(_python_registrations(index, syntax))
    ops.extend(_op_list_registrations(index, syntax))
    return Registrations(tuple(ops), tuple(fallbacks))


# --- C/C++ ------------------------------------------------------------------


def _cpp_registrations(index: CodeIndex, syntax: OperatorSyntax) -> Iterator[Registration]:
    wrappers = _wrappers(index, syntax.blocks)
    names = frozenset(block for block in syntax.blocks if not _is_pattern(block)) | frozenset(wrappers)
    body = _BlockBody(index, names, syntax.dispatch, syntax.keyed_impl)
    for source in index.select(names, languages=CPP_LANGUAGES, roles=("product",)):
        facts = index.cpp_facts(source)
        for call in find_calls(facts, names):
            if call.in_define is not None:
                continue
            opened = _opened_block(call, facts, tuple(names), wrappers)
            if opened is None or len(opened.args) < 3:
                continue
            namespace, key, variable = opened.args[0], opened.args[1], opened.args[2]
            for statement in body.statements(source, opened, variable, call.line):
                inner = statement.call
                receiver, _, method = inner.callee.rpartition(".")
                if namespace == WILDCARD_NAMESPACE:
                    if receiver == variable and method == syntax.fallback:
                        yield Registration("*", namespace, key, statement.source, statement.line, "block")
                    continue
                op = _op_name(inner.literal, namespace) if inner.literal else None
                if op:
                    own_key = body.dispatch_key(inner)
                    yield Registration(op, namespace, own_key or key, statement.source, statement.line, "block")


@dataclass(frozen=True)
class _Block:
    """A registration block: the block macro's arguments, and the text that holds its `{ ... }`
    (a file's, or a wrapper macro's expansion when the wrapper writes the block itself)."""

    args: tuple[str, ...]
    facts: CppFacts
    call: CppCall
    expanded: bool


@dataclass(frozen=True)
class _Statement:
    call: CppBlockCall
    source: SourceFile
    line: int  # where the registration is reported


class _BlockBody:
    """The calls a registration block makes: those written in it; those of the backend's
    macros and functions it calls on its library variable, expanded with the arguments of the
    call and reported at its line; and those of the fragments it `#include`s that have no
    block of their own, reported where the fragment writes them."""

    def __init__(self, index: CodeIndex, blocks: frozenset[str], dispatch: str, keyed_impl: str) -> None:
        self._index = index
        self._blocks = blocks
        self._dispatch = frozenset([dispatch] if dispatch else [])
        self._keyed_impl = keyed_impl

    def statements(self, source: SourceFile, block: _Block, variable: str, line: int) -> Iterator[_Statement]:
        """The block's calls, at most MAX_BLOCK_STATEMENTS of them: expansions and fragments
        that a hostile tree nests into each other stop there. A fragment is read once."""
        span = block_span(block.facts, block.call)
        if span is None:
            return
        at = line if block.expanded else None
        calls = self._calls(source, block.facts, span, variable, at, 0, set())
        yield from islice(calls, MAX_BLOCK_STATEMENTS)

    def dispatch_key(self, call: CppBlockCall) -> str | None:
        """The key a registration names for itself: `m.impl("op", torch::dispatch(key, f))`, or
        `m.impl("op", key, f)`."""
        method = call.callee.replace("->", ".").rpartition(".")[2]
        if self._keyed_impl and method == self._keyed_impl and len(call.args) == 3:
            return call.args[1]
        for arg in call.args[1:]:
            for inner in find_calls(CppFacts(arg), self._dispatch) if self._dispatch else ():
                if inner.args:
                    return inner.args[0]
        return None

    def _calls(self, source: SourceFile, facts: CppFacts, span: tuple[int, int], variable: str,
               at: int | None, depth: int, fragments_read: set[str]) -> Iterator[_Statement]:
        expanded_until = -1
        for inner in calls_between(facts, *span):
            if inner.start < expanded_until:
                continue  # written in the arguments of a call already expanded
            expansion = self._expansion(source, inner, variable) if depth < MAX_EXPANSION_DEPTH else None
            if expansion is None:
                yield _Statement(inner, source, at or inner.line)
                continue
            expanded_until = inner.end
            text = CppFacts(expansion)
            yield from self._calls(source, text, (0, len(expansion)), variable, at or inner.line, depth + 1,
                                   fragments_read)
        for include in includes_between(facts, *span):
            for fragment in self._fragments(source, include):
                if fragment.path not in fragments_read:
                    fragments_read.add(fragment.path)
                    fragment_facts = self._index.cpp_facts(fragment)
                    whole = (0, len(fragment_facts.stripped))
                    yield from self._calls(fragment, fragment_facts, whole, variable, at, depth, fragments_read)

    def _expansion(self, source: SourceFile, call: CppBlockCall, variable: str) -> str | None:
        """What a call of one of the backend's macros, or of one of its functions given the
        library variable, does: the body with the call's arguments substituted."""
        name = call.callee.rpartition("::")[2]
        if not call.end > 0 or "." in call.callee or "->" in call.callee:
            return None
        macro = next((define for where, define in self._index.defines.get(name, [])
                      if define.params is not None and where.path == source.path), None)
        macro = macro or next((define for _where, define in self._index.defines.get(name, [])
                               if define.params is not None), None)
        if macro is not None:
            return expand_macro(macro, call.args)
        if variable not in call.args:
            return None
        function = next((function for where in self._index.select([name], languages=CPP_LANGUAGES)
                         for function in self._index.function_bodies(where).defined(name)), None)
        return expand_macro(function, call.args) if function is not None else None

    def _fragments(self, source: SourceFile, include: CppInclude) -> Iterator[SourceFile]:
        for path in self._index.included(source.path, include):
            fragment = self._index.by_path[path]
            if fragment.language in CPP_LANGUAGES and not find_calls(self._index.cpp_facts(fragment), self._blocks):
                yield fragment


def _wrappers(index: CodeIndex, blocks: tuple[str, ...]) -> dict[str, list[CppDefine]]:
    """Function-like macros of the tree that open a registration block: those whose body
    invokes a block macro, and those whose name matches a block pattern (`*_LIBRARY_IMPL`)
    and that take its three arguments themselves."""
    names = tuple(block for block in blocks if not _is_pattern(block))
    found: dict[str, list[CppDefine]] = {}
    for name, definitions in index.defines.items():
        if name in names:
            continue
        for _where, define in definitions:
            if define.params is None:
                continue
            own_block = len(define.params) == 3 and any(fnmatchcase(name, b) for b in blocks if _is_pattern(b))
            if own_block or find_calls(CppFacts(define.body), names):
                found.setdefault(name, []).append(define)
    return found


def _is_pattern(name: str) -> bool:
    return any(char in name for char in "*?[")


def _opened_block(call: CppCall, facts: CppFacts, blocks: tuple[str, ...],
                  wrappers: dict[str, list[CppDefine]]) -> _Block | None:
    """The block `call` opens, through a wrapper macro when it is one: the block macro's own
    arguments, and the block written in the wrapper's expansion, else after the call."""
    name = call.name.split("::")[-1]
    if name not in wrappers:
        return _Block(call.args, facts, call, expanded=False)
    for define in wrappers[name]:
        expanded = CppFacts(expand_macro(define, call.args))
        for inner in find_calls(expanded, blocks):
            if block_span(expanded, inner) is not None:
                return _Block(inner.args, expanded, inner, expanded=True)
            return _Block(inner.args, facts, call, expanded=False)
        if len(define.params or ()) == len(call.args):
            return _Block(call.args, facts, call, expanded=False)
    return None


def _op_name(literal: str, namespace: str) -> str | None:
    text = literal.split("(", 1)[0].strip()
    prefix, separator, rest = text.partition("::")
    if separator:
        if prefix != namespace:
            return None
        text = rest
    return text if OP_NAME.match(text) else None


# --- Python -----------------------------------------------------------------

_PYTHON_IMPL_HINT = re.compile(r"\bimpl\s*\(")


def _python_registrations(index: CodeIndex, syntax: OperatorSyntax) -> Iterator[Registration]:
    library = syntax.python_library.rsplit(".", 1)[-1]
    candidates = [source for source in index.select((("impl", "library"),), languages=["python"], roles=("product",))
                  if _PYTHON_IMPL_HINT.search(source.text)]
    index.prefetch_python(candidates)
    for source in candidates:
        facts = index.python_facts(source)
        library_keys = [call.args[2] for call in facts.calls
                        if call.qualname == syntax.python_library and len(call.args) >= 3 and call.args[1] == "IMPL"]
        for call in facts.calls:
            if call.qualname in syntax.python_impl and len(call.args) >= 2:
                op, key = call.args[0], call.args[1]
            elif call.qualname.endswith(".impl") and call.args and (library_keys or library in source.text):
                op = call.args[0]
                key = call.args[2] if len(call.args) >= 3 else dict(call.kwargs).get("dispatch_key", "")
                key = key or (library_keys[0] if library_keys else "")
            else:
                continue
            name = _op_name(op, syntax.namespace)
            if name and key:
                yield Registration(name, syntax.namespace, key, source, call.line, "python")


# --- Codegen op lists -------------------------------------------------------

_OP_LIST_HINT = re.compile(r"(?m)^[^\S\n]*(?:-\s+)?(?:func|schema)\s*:|^[^\S\n]*supported\s*:")


def _op_list_registrations(index: CodeIndex, syntax: OperatorSyntax) -> Iterator[Registration]:
    catalog = syntax.catalog
    for source in index.files:
        if source.language != "yaml" or source.role != "product" or len(source.text) > MAX_OP_LIST_BYTES:
            continue
        if not _OP_LIST_HINT.search(source.text):
            continue
        entries = list(_op_list_entries(source.text, syntax.namespace, syntax.op_list_default_key))
        known = [(name, key, line) for name, key, line in entries if catalog.knows(name)]
        if len(known) < MIN_OP_LIST_ENTRIES or len(known) < MIN_OP_LIST_SHARE * len(entries):
            continue
        for name, keys, line in known:
            for key in keys:
                yield Registration(name, syntax.namespace, key, source, line, "op list")


def _op_list_entries(text: str, namespace: str, default_key: str) -> Iterator[tuple[str, tuple[str, ...], int]]:
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return
    stack = [root] if root is not None else []
    visited = 0
    while stack and visited < 200_000:
        node = stack.pop()
        visited += 1
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                entry = _entry(item, namespace, default_key)
                if entry:
                    yield entry
                stack.append(item)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(value for _key, value in node.value)


def _entry(node: yaml.Node, namespace: str, default_key: str) -> tuple[str, tuple[str, ...], int] | None:
    if isinstance(node, yaml.ScalarNode):
        name = _op_name(node.value, namespace)
        return (name, (default_key,), node.start_mark.line + 1) if name else None
    if not isinstance(node, yaml.MappingNode):
        return None
    fields = {key.value: value for key, value in node.value if isinstance(key, yaml.ScalarNode)}
    head = fields.get("func") or fields.get("schema")
    if not isinstance(head, yaml.ScalarNode):
        return None
    name = _op_name(head.value, namespace)
    if not name:
        return None
    keys = _dispatch_keys(fields.get("dispatch")) or [default_key]
    return name, tuple(keys), head.start_mark.line + 1


def _dispatch_keys(node: yaml.Node | None) -> list[str]:
    if isinstance(node, yaml.ScalarNode):
        return [part.strip() for part in node.value.split(",") if part.strip()]
    if isinstance(node, yaml.MappingNode):
        return [part.strip() for key, _ in node.value if isinstance(key, yaml.ScalarNode)
                for part in key.value.split(",") if part.strip()]
    return []
