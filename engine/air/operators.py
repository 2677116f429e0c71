"""Operator registrations of a backend, and their coverage of an operator catalog.

Registrations are read from three places, as a pack's `operators` section names them:
- C/C++ blocks `BLOCK(namespace, key, m) { m.impl("op.overload", ...); }`, also when the
  block macro is wrapped in one of the backend's own macros, and `m.fallback(...)` in a
  block on the wildcard namespace (a global fallback);
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
from pathlib import Path
from typing import Any

import yaml

from air.errors import PackError
from air.index import CodeIndex
from air.index.cpp import block_calls, expand_macro, find_calls
from air.index.model import CppDefine, CppFacts, SourceFile

OP_NAME = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[A-Za-z0-9_]+)?$")
MIN_OP_LIST_ENTRIES = 5
MIN_OP_LIST_SHARE = 0.5
MAX_OP_LIST_BYTES = 2 * 1024 * 1024
WILDCARD_NAMESPACE = "_"


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
    for source in index.select(names, languages=("cpp", "template"), roles=("product",)):
        facts = index.cpp_facts(source)
        for call in find_calls(facts, names):
            if call.in_define is not None:
                continue
            args = _block_args(call.name.split("::")[-1], call.args, tuple(names), wrappers)
            if args is None or len(args) < 3:
                continue
            namespace, key, variable = args[0], args[1], args[2]
            for inner in block_calls(facts, call):
                receiver, _, method = inner.callee.rpartition(".")
                if namespace == WILDCARD_NAMESPACE:
                    if receiver == variable and method == syntax.fallback:
                        yield Registration("*", namespace, key, source, inner.line, "block")
                    continue
                op = _op_name(inner.literal, namespace) if inner.literal else None
                if op:
                    yield Registration(op, namespace, key, source, inner.line, "block")


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


def _block_args(name: str, args: tuple[str, ...], blocks: tuple[str, ...],
                wrappers: dict[str, list[CppDefine]]) -> tuple[str, ...] | None:
    """The block macro's own arguments, through a wrapper macro when `name` is one."""
    if name not in wrappers:
        return args
    for define in wrappers[name]:
        for inner in find_calls(CppFacts(expand_macro(define, args)), blocks):
            return inner.args
        if len(define.params or ()) == len(args):
            return args
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
