"""Operator registrations of a backend, and their coverage of an operator catalog.

Registrations are read from four places, as a pack's `operators` section names them:
- C/C++ blocks `BLOCK(namespace, key, m) { m.impl("op.overload", kernel); }`, also when the
  block macro is wrapped in one of the backend's own macros (which may write the block
  itself), and `m.fallback(...)` in a block on the wildcard namespace (a global fallback).
  A block without a call registers nothing. A block's calls include those of the backend's
  macros it invokes and of its functions it passes the library to, expanded with the call's
  arguments, and those of the fragments it `#include`s (`ops.inc`) that have no block of
  their own. In blocks `DEF_BLOCK(namespace, m)` (the pack's `def_blocks`) a registration that
  passes a kernel but names no key of its own is on `catch_all_key`: one kernel for every
  device (a definition that passes only a schema registers nothing). A registration that
  names its own key (`m.impl("op", torch::dispatch(key, f))` through the pack's `dispatch`
  call, or `m.impl("op", key, f)` through its `keyed_impl` method) is on that key. A block
  written out by hand, as the macro expands (the pack's `registrars`: `static const Init
  r(kind, &fill, "namespace", std::make_optional(key), ...)`), is the body of the function it is
  constructed with (`void fill(Library& m) { ... }`, in any file of the tree, or a lambda,
  written in the arguments or bound to a name), on its namespace and key; of a kind that
  defines operators, it is read as a definition block.
- Python: calls of `python_impl` functions (`impl("namespace::op", "key")`, also
  `impl(lib, "op", "key")`), of `python_fake` ones (`register_fake("namespace::op")`, a kernel
  on `fake_key`), and calls on library objects created with `Library(namespace, kind[, key])`:
  `lib.impl("op", fn[, key])` (on `catch_all_key` when neither the call nor the library
  names a key), and `lib.fallback(fn[, key])` on the wildcard namespace. A library object is
  one the file binds to a name or an attribute (`lib`, `self._lib`) or copies from one to
  another, a class attribute (read as `self.lib`, `cls.lib`, `Ops.lib`), or a module-level
  name of another module of the tree (`from .ops import lib`). An operator is named
  `namespace::op`, `op` of a library object, or by an operator object
  (`<python_op_objects>.namespace.op.overload`); an operator without a namespace given to a
  library the check cannot see is not counted. Where each call passes the namespace, the
  operator, the key and a fallback's kernel (by position or keyword) is the pack's
  `python_arguments`.
- op lists of codegen backends (see "Codegen op lists" below).
- kernels of an in-tree key that the framework's own op list binds, known by their names
  (see `air.graph.in_tree_kernels`), for the keys the tree registers on in the ways above.

A registration's kernel is native, or a fallback when it forwards to one of the framework's
CPU fallback functions (`cpu_fallback`): when the kernel names one of them, or names a
function of the tree whose last statement (the last one outside inner blocks, which runs
whatever the conditions) names one of them or such a function, a few levels deep
(`m.impl("op", makeFromBoxedFunction<&to_host>())`, where `to_host` ends with
`cpu_fallback(op, stack)`). A global fallback's kernel is judged the same way: a fallback
when it reaches a CPU fallback function, else the backend's own kernel (a tracer or graph
capture that receives every operator) when it is a lambda or a function of the tree, `via`
the function it names; a function the tree does not define, or a Python function (whose body
is not read), is unresolved. A function that falls back only on some paths (`if (...) { return
fallback; } return own(x);`, or in an `else`) is a native kernel. Functions are matched by
name, whatever their namespace or class; a member call (`x.f()`, `p->f()`) names none. Given
the kernels' bodies (`KernelBodies`), a kernel the tree defines is also read there, a C/C++ one
or one a Python registration names in its module: a stub when it computes nothing, a fallback
when it is a CPU fallback written by hand. An
op-list entry's kernel is unresolved when the template or file the entry names is not in
the tree.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from functools import cached_property, partial
from itertools import islice
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

import yaml

from air.graph.catalog import Catalog, Catalogs, family
from air.graph.host_fallback import HostTransfers
from air.graph.in_tree_kernels import InTreeNaming, find_in_tree_kernels
from air.graph.python_kernels import PythonKernel, kernel_statements
from air.index import CodeIndex
from air.index.cpp import (
    CPP_LANGUAGES,
    always_leaves,
    block_span,
    calls_between,
    expand_macro,
    find_calls,
    find_constructions,
    includes_between,
    is_name,
    resolve_alias,
)
from air.index.files import LANGUAGES
from air.index.model import CppBlockCall, CppCall, CppDefine, CppFacts, CppInclude, PyCall, PythonFacts, SourceFile
from air.index.python_loops import Imported, loop_argument_values
from air.regex import compile_guarded

OP_NAME = re.compile(r"^[a-z_][a-z0-9_]*(?:\.[A-Za-z0-9_]+)?$")
MIN_OP_LIST_ENTRIES = 5
MIN_OP_LIST_SHARE = 0.5
MAX_OP_LIST_BYTES = 1024 * 1024
MAX_YAML_NODES = 200_000
MAX_FORWARDING_DEPTH = 4
MAX_COPY_DEPTH = 4
MAX_EXPANSION_DEPTH = 3
MAX_BLOCK_STATEMENTS = 50_000
NATIVE, FALLBACK, STUB, UNRESOLVED = "native", "fallback", "stub", "unresolved"
_NAME = re.compile(r"(?<![\w.])(?<!->)[A-Za-z_]\w*")  # not a member: `x.item()` names no function `item`
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_STATEMENT_MARK = re.compile(r"[;{}()]")
_QUALIFIED = re.compile(r"(?<![\w.])(?<!->)[A-Za-z_]\w*(?:(?:::|\.)[A-Za-z_]\w*)*")
# From a name's start, with a bounded chain: linear on `a.a.a.a...` written without a call.
_CALLED = re.compile(r"(?<!\w)([A-Za-z_]\w*(?:(?:::|\.|->)[A-Za-z_]\w*){0,16})\s*[(<]")


@dataclass(frozen=True)
class Argument:
    """Where a call passes one argument: at `position`, else as the first of `keywords` given."""

    position: int
    keywords: tuple[str, ...]

    @classmethod
    def from_data(cls, data: list) -> Argument:
        return cls(data[0], tuple(data[1:]))

    def of(self, call: PyCall) -> str:
        if self.position < len(call.args):
            return call.args[self.position]
        given = dict(call.kwargs)
        return next((given[keyword] for keyword in self.keywords if given.get(keyword)), "")


@dataclass(frozen=True)
class Registrar:
    """A class whose object a block macro expands to (`static const Init name(kind, &fill,
    "namespace", key, ...)`), written out by hand: where its constructor takes the library's
    kind, the function that fills the library, the namespace and the key. A library of one of
    `impl_kinds` registers on the key; another defines operators, and registers only what names
    its own key, as a definition block does."""

    name: str
    kind: int
    function: int
    namespace: int
    key: int
    impl_kinds: tuple[str, ...]

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Registrar:
        arguments = data["arguments"]
        return cls(
            data["class"],
            arguments["kind"],
            arguments["function"],
            arguments["namespace"],
            arguments["key"],
            tuple(data["impl_kinds"]),
        )


@dataclass(frozen=True)
class OperatorSyntax:
    """How a framework's backends register operators (a pack's `operators` section)."""

    catalogs: Catalogs
    namespace: str
    wildcard_namespace: str  # the namespace of a block or library whose fallback receives every operator
    blocks: tuple[str, ...]
    fallback: str
    python_impl: tuple[str, ...]
    python_library: str
    python_arguments: dict[str, dict[str, Argument]]  # call -> role -> where the call passes it
    op_list_default_key: str
    kernel_keys: str  # the symbol set of keys whose kernels count as the device's
    dispatch: str = ""  # the call that gives one registration its own key, as its first argument
    keyed_impl: str = ""  # the registration method that takes its own key between name and function
    cpu_fallback: tuple[str, ...] = ()  # the framework's CPU fallback functions
    boxed_calls: tuple[str, ...] = ()  # the methods that run an operator boxed, as a CPU fallback does
    fallback_keys: str = ""  # the symbol set of keys whose global fallback receives every operator without a kernel
    op_list_header_keys: str = ""  # a regex: the values of an op list's header key field that name keys
    op_list_key_fields: str = ""  # a regex found in the names of an op list's fields that give keys
    op_list_template_fields: str = ""  # a regex found in the names of an op-list entry's fields that name a template
    op_list_sections: tuple[tuple[str, str], ...] = ()  # (section name, key prefix): `autograd:` lists -> Autograd<key>
    op_list_on_fields: str = ""  # a regex found in the names of an entry's fields whose false value turns it off
    op_list_off_fields: str = ""  # and of those whose true value does
    differentiating_keys: str = ""  # the symbol set of keys whose kernels differentiate their operators themselves
    backward_suffix: str = ""  # what a backward operator's name adds to its forward's (`_backward`)
    def_blocks: tuple[str, ...] = ()  # blocks `BLOCK(namespace, m)` that register only what names its own key
    registrars: tuple[Registrar, ...] = ()  # the objects block macros expand to, constructed by hand
    python_fake: tuple[str, ...] = ()  # Python functions that register a fake kernel, on `fake_key`
    fake_key: str = ""
    catch_all_key: str = ""  # where a kernel registered without a key goes: it serves every device
    python_op_objects: str = ""  # the module whose attributes `<module>.ns.op[.overload]` name operators
    in_tree: InTreeNaming | None = None  # how kernels of in-tree keys bound by the framework's own op list are named
    host_fallback: HostTransfers | None = None  # how a kernel written as a CPU fallback by hand moves tensors
    target: str | None = None  # the framework release (or range) the backend targets, which picks the catalog

    @classmethod
    def from_data(cls, data: dict[str, Any], pack_dir: Path, symbols: Mapping[str, tuple[str, ...]]) -> OperatorSyntax:
        in_tree = data.get("in_tree_kernels")
        return cls(
            catalogs=Catalogs.find(pack_dir, data["catalog"]),
            namespace=data["namespace"],
            wildcard_namespace=data["wildcard_namespace"],
            blocks=tuple(data["blocks"]),
            fallback=data["fallback"],
            python_impl=tuple(data["python_impl"]),
            python_library=data["python_library"],
            python_arguments={
                call: {role: Argument.from_data(where) for role, where in roles.items()}
                for call, roles in data["python_arguments"].items()
            },
            op_list_default_key=data["op_list_default_key"],
            kernel_keys=data["kernel_keys"],
            dispatch=data.get("dispatch", ""),
            keyed_impl=data.get("keyed_impl", ""),
            cpu_fallback=tuple(data.get("cpu_fallback", ())),
            boxed_calls=tuple(data.get("boxed_calls", ())),
            fallback_keys=data.get("fallback_keys", ""),
            op_list_header_keys=data.get("op_list_header_keys", ""),
            op_list_key_fields=data.get("op_list_key_fields", ""),
            op_list_template_fields=data.get("op_list_template_fields", ""),
            op_list_sections=tuple(sorted(data.get("op_list_sections", {}).items())),
            op_list_on_fields=data.get("op_list_on_fields", ""),
            op_list_off_fields=data.get("op_list_off_fields", ""),
            differentiating_keys=data.get("differentiating_keys", ""),
            backward_suffix=data.get("backward_suffix", ""),
            def_blocks=tuple(data.get("def_blocks", ())),
            registrars=tuple(Registrar.from_data(registrar) for registrar in data.get("registrars", ())),
            python_fake=tuple(data.get("python_fake", ())),
            fake_key=data.get("fake_key", ""),
            catch_all_key=data.get("catch_all_key", ""),
            python_op_objects=data.get("python_op_objects", ""),
            in_tree=InTreeNaming.from_data(in_tree, symbols.get(in_tree["keys"], ())) if in_tree else None,
            host_fallback=HostTransfers.from_data(data["host_fallback"]) if "host_fallback" in data else None,
        )

    @cached_property
    def catalog(self) -> Catalog:
        """The catalog of the release the backend targets (see `Catalogs.choose`)."""
        return self.catalogs.catalog(self.target)

    @property
    def catalog_basis(self) -> str:
        """Why the check reads that catalog."""
        return self.catalogs.choose(self.target)[1]

    def for_target(self, target: str | None) -> OperatorSyntax:
        """This syntax, reading the catalog of the framework release `target` (see `Catalogs.choose`)."""
        return replace(self, target=target)

    def python_argument(self, call_kind: str, role: str, call: PyCall) -> str:
        """What `call`, a call of the kind `call_kind` (`library_impl`, ...), passes for `role`."""
        return self.python_arguments[call_kind][role].of(call)

    @cached_property
    def header_key(self) -> re.Pattern[str] | None:
        return _optional_pattern(self.op_list_header_keys)

    @cached_property
    def key_field(self) -> re.Pattern[str] | None:
        return _optional_pattern(self.op_list_key_fields)

    @cached_property
    def template_field(self) -> re.Pattern[str] | None:
        return _optional_pattern(self.op_list_template_fields)

    @cached_property
    def on_field(self) -> re.Pattern[str] | None:
        return _optional_pattern(self.op_list_on_fields)

    @cached_property
    def off_field(self) -> re.Pattern[str] | None:
        return _optional_pattern(self.op_list_off_fields)


def _optional_pattern(pattern: str) -> re.Pattern[str] | None:
    return re.compile(pattern) if pattern else None


def _matches(pattern: re.Pattern[str] | None, text: str) -> bool:
    return pattern is not None and pattern.fullmatch(text) is not None


def _found_in(pattern: re.Pattern[str] | None, text: str) -> bool:
    return pattern is not None and pattern.search(text) is not None


class KernelBodies(Protocol):
    """What the bodies of a tree's kernels do: their kinds (NATIVE, FALLBACK or STUB)."""

    def kind_of_lambda(self, kernel: str, op: str) -> str: ...

    def kind_of_function(self, name: str, op: str) -> str: ...

    def expect(self, names: Iterable[str]) -> None:
        """Told the functions whose kinds will be asked for, all at once."""

    def kind_of_python(self, kernel: PythonKernel) -> str:
        """The kind of a kernel a Python registration names."""


@dataclass(frozen=True)
class Registration:
    op: str  # "add.Tensor", namespace removed
    namespace: str
    key: str  # as written, resolved later by capture constraints
    source: SourceFile
    line: int
    how: str  # "block", "python", "op list"
    kernel: str = NATIVE  # NATIVE, FALLBACK, STUB or UNRESOLVED
    via: str = ""  # the fallback function reached, or the template or file an op-list entry names
    function: str = ""  # the function a C/C++ registration names as the kernel


@dataclass(frozen=True)
class Registrations:
    ops: tuple[Registration, ...]  # of the pack's namespace
    fallbacks: tuple[Registration, ...]  # global fallbacks
    unused: tuple[Registration, ...] = ()  # entries of op lists that no build or codegen file names
    elsewhere: tuple[Registration, ...] = ()  # of the other namespaces (the backend's own operators, a library's)

    def of_families(self, families: Iterable[str], kernel: str) -> tuple[Registration, ...]:
        """The registrations of `ops` of the operators of `families` with kernels of the kind
        `kernel`, in their order."""
        positions = sorted(p for name in set(families) for p in self._positions.get((name, kernel), ()))
        return tuple(self.ops[p] for p in positions)

    @cached_property
    def _positions(self) -> dict[tuple[str, str], list[int]]:
        positions: dict[tuple[str, str], list[int]] = {}
        for position, registration in enumerate(self.ops):
            positions.setdefault((family(registration.op), registration.kernel), []).append(position)
        return positions


def find_registrations(index: CodeIndex, syntax: OperatorSyntax, bodies: KernelBodies | None = None) -> Registrations:
    """The tree's registrations, the kinds of their C/C++ kernels read from the kernels' bodies
    when `bodies` is given."""
    fallbacks = _fallback_functions(index, syntax)
    registered = [*_cpp_registrations(index, syntax, fallbacks, bodies), *_python_registrations(index, syntax, bodies)]
    listed = list(_op_list_registrations(index, syntax, fallbacks))
    used = _used_op_lists(index, {r.source.path for r in listed})
    registered.extend(r for r in listed if r.source.path in used)
    if syntax.in_tree is not None:
        registered.extend(_in_tree_registrations(index, syntax, syntax.in_tree, registered))
    return Registrations(
        ops=tuple(r for r in registered if r.namespace == syntax.namespace),
        fallbacks=tuple(r for r in registered if r.namespace == syntax.wildcard_namespace),
        unused=tuple(r for r in listed if r.source.path not in used),
        elsewhere=tuple(r for r in registered if r.namespace not in (syntax.namespace, syntax.wildcard_namespace)),
    )


def _in_tree_registrations(
    index: CodeIndex, syntax: OperatorSyntax, naming: InTreeNaming, registered: list[Registration]
) -> Iterator[Registration]:
    """Kernels of in-tree keys that the framework's own op list binds (see `air.graph.in_tree_kernels`),
    for the keys the tree registers on otherwise, as written or through a `#define`."""
    keys = {_written_key(index, registration.key) for registration in registered}
    for kernel in find_in_tree_kernels(index, naming, syntax.catalog.knows, keys):
        yield Registration(
            kernel.op, syntax.namespace, kernel.key, kernel.source, kernel.line, kernel.how, via=kernel.name
        )


def _written_key(index: CodeIndex, key: str) -> str:
    """The last component of a key, through the object-like `#define`s of the tree."""
    return resolve_alias(key, lambda name: _object_define(index, name)).rpartition("::")[2]


def _object_define(index: CodeIndex, name: str) -> str | None:
    bodies = (define.body.strip() for _where, define in index.defines.get(name, []) if define.params is None)
    return next((body for body in bodies if body), None)


def _op_name(literal: str, namespace: str) -> str | None:
    text = literal.split("(", 1)[0].strip()
    prefix, separator, rest = text.partition("::")
    if separator:
        if prefix != namespace:
            return None
        text = rest
    return text if OP_NAME.match(text) else None


def _qualified_op(literal: str, default_namespace: str) -> tuple[str, str] | None:
    """(namespace, op) of `ns::op`, or of a bare `op` in `default_namespace`."""
    prefix, separator, _rest = literal.split("(", 1)[0].strip().partition("::")
    namespace = prefix if separator else default_namespace
    name = _op_name(literal, namespace)
    return (namespace, name) if name else None


# --- Fallback kernels -------------------------------------------------------


def _fallback_functions(index: CodeIndex, syntax: OperatorSyntax) -> frozenset[str]:
    """The framework's CPU fallback functions, the tree's copies of them (see `_host_copies`),
    and the functions of the product's C/C++ whose last statement names one of them or another
    such function, a few levels deep. A function of the tree named like one of the framework's
    is judged by its own body."""
    copies = _host_copies(index, syntax)
    known = {name for name in syntax.cpu_fallback if not _defines(index, name)} | copies
    frontier = set(syntax.cpu_fallback) | copies
    for _ in range(MAX_FORWARDING_DEPTH):
        if not frontier:
            break
        found = set()
        for source in index.select(sorted(frontier), languages=CPP_LANGUAGES, roles=("product",)):
            found |= _forwarding_to(index, source, frontier, syntax.blocks)
        frontier = found - known
        known |= found
    return frozenset(known)


def _host_copies(index: CodeIndex, syntax: OperatorSyntax) -> set[str]:
    """The functions of the product's C/C++ that run an operator boxed (`op.callBoxed(stack)`)
    and name the host device: copies of the framework's CPU fallback, which move the operator's
    tensors to the host, run it there and copy the results back."""
    host = syntax.host_fallback
    if host is None or not syntax.boxed_calls:
        return set()
    copies = set()
    for source in index.select(syntax.boxed_calls, languages=CPP_LANGUAGES, roles=("product",)):
        bodies, code = index.function_bodies(source), index.cpp_facts(source).stripped
        for boxed in syntax.boxed_calls:
            for written in re.finditer(rf"(?:\.|->)\s*{re.escape(boxed)}\s*\(", code):
                function = bodies.around(written.start())
                if function is not None and not _opens_block(function.name, syntax.blocks):
                    if host.names_device(function.body) or host.moves_to_host(function.body):
                        copies.add(function.name)
    return copies


def _forwarding_to(index: CodeIndex, source: SourceFile, targets: set[str], blocks: tuple[str, ...]) -> set[str]:
    """The functions of `source` (not its registration blocks) whose last statement names one
    of `targets`."""
    bodies = index.function_bodies(source)
    code = index.cpp_facts(source).stripped
    forwarding = set()
    for target in targets:
        for written in re.finditer(rf"(?<![\w.])(?<!->){re.escape(target)}\b", code):
            function = bodies.around(written.start())
            if function is None or function.name in forwarding or _opens_block(function.name, blocks):
                continue
            body = "{" + function.body + "}"
            if _names(_last_statement(body, 0, len(body) - 1)) & targets:
                forwarding.add(function.name)
    return forwarding


def _opens_block(name: str, blocks: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, block) for block in blocks)


def _last_statement(text: str, opened: int, closed: int) -> str:
    """The last statement that the block between the braces at `opened` and `closed` runs
    whatever its conditions: the last one ended by `;` outside inner blocks ("" if none), or
    the first that leaves the function (a `return`, a `throw`, a check that always fails).
    Braces inside parentheses (`f({a, b})`) open no block."""
    code = _STRING.sub(lambda string: '"' + " " * (len(string.group()) - 2) + '"', text)
    depth, parentheses, start, last = 0, 0, opened + 1, (0, 0)
    for mark in _STATEMENT_MARK.finditer(code, opened + 1, closed):
        if mark.group() in "()":
            parentheses = max(0, parentheses + (1 if mark.group() == "(" else -1))
        elif parentheses:
            continue
        elif mark.group() == "{":
            depth += 1
        elif mark.group() == "}":
            depth -= 1
            start = mark.end() if depth == 0 else start
        elif depth == 0:
            last, start = (start, mark.start()), mark.end()
            statement = " ".join(text[last[0] : last[1]].split())
            if always_leaves(statement):
                break
    return text[last[0] : last[1]]


def _names(text: str) -> frozenset[str]:
    """The names `text` writes outside string literals, but for members (`x.f`, `p->f`)."""
    return frozenset(_NAME.findall(_STRING.sub('""', text)))


def _names_any(text: str, names: Iterable[str]) -> str | None:
    """The first of `names`, in order, that `text` writes (see `_names`)."""
    written = _names(text)
    return next((name for name in sorted(names) if name in written), None)


def _kernel_kind(kernel: str, fallbacks: frozenset[str]) -> tuple[str, str]:
    """(kind, fallback function reached) of a kernel as written in a registration; of a
    lambda, what its last statement names."""
    opened = kernel.find("{")
    if opened >= 0:
        kernel = _last_statement(kernel, opened, max(kernel.rfind("}"), opened))
    reached = _names_any(kernel, fallbacks)
    return (FALLBACK, reached) if reached else (NATIVE, "")


def _registered_kind(
    kernel: str, function: str, op: str, fallbacks: frozenset[str], bodies: KernelBodies | None
) -> tuple[str, str]:
    """(kind, via) of an operator's kernel as written in a registration, which names `function`
    ("" for a lambda): a fallback reaching a CPU fallback function; else what its body does
    (see `KernelBodies`), via the function it names."""
    kind, via = _kernel_kind(kernel, fallbacks)
    if kind != NATIVE or bodies is None:
        return kind, via
    if not function:
        return bodies.kind_of_lambda(kernel, op), ""
    kind = bodies.kind_of_function(function, op) if is_name(function.rpartition("::")[2]) else NATIVE
    return kind, (function if kind != NATIVE else "")


def _global_kernel_kind(
    index: CodeIndex, kernel: str, fallbacks: frozenset[str], bodies: KernelBodies | None
) -> tuple[str, str]:
    """(kind, via) of a global fallback's kernel: a fallback reaching a CPU fallback function;
    else a stub when its body only fails (see `KernelBodies`); else the backend's own kernel
    when it is a lambda or a function the tree defines, via the function it names; else
    unresolved."""
    kind, via = _kernel_kind(kernel, fallbacks)
    if kind == FALLBACK:
        return kind, via
    function = _kernel_function(kernel)
    lambda_kernel = "{" in kernel
    if not lambda_kernel and not _defines(index, function):
        return UNRESOLVED, function
    if bodies is None:
        return NATIVE, function
    body_kind = bodies.kind_of_lambda(kernel, "") if lambda_kernel else bodies.kind_of_function(function, "")
    return (STUB if body_kind == STUB else NATIVE), function


def _defines(index: CodeIndex, function: str) -> bool:
    return next(index.definitions(function.rpartition("::")[2]), None) is not None


def _kernel_function(kernel: str) -> str:
    """The function a kernel as written names: what a lambda's last statement calls; else the
    last name neither called nor instantiated (`wrap(ns::f)`, `make<&f>()`, `self._f`)."""
    opened = kernel.find("{")
    if opened >= 0:
        called = _CALLED.search(_STRING.sub('""', _last_statement(kernel, opened, max(kernel.rfind("}"), opened))))
        return called.group(1) if called else "a lambda"
    code = _STRING.sub('""', kernel)
    named = [written.group() for written in _QUALIFIED.finditer(code) if not _CALLED.match(code, written.start())]
    return named[-1] if named else kernel.strip()


# --- C/C++ ------------------------------------------------------------------


def _cpp_registrations(
    index: CodeIndex, syntax: OperatorSyntax, fallbacks: frozenset[str], bodies: KernelBodies | None
) -> Iterator[Registration]:
    wrappers = _wrappers(index, syntax.blocks + syntax.def_blocks)
    blocks = frozenset(block for block in syntax.blocks + syntax.def_blocks if not _is_pattern(block))
    names = blocks | frozenset(wrappers)
    body = _BlockBody(index, names, syntax.dispatch, syntax.keyed_impl)
    found = list(_cpp_blocks(index, syntax, names, wrappers, body))
    if bodies is not None:  # the kernels' definitions are then found in one pass, not one per kernel
        bodies.expect(
            _kernel_function(", ".join(statement.call.args[1:]))
            for statements, *_block in found
            for statement in statements
        )
    for statements, namespace, key, variable in found:
        yield from _registered_in(statements, namespace, key, variable, body, index, syntax, fallbacks, bodies)


def _cpp_blocks(
    index: CodeIndex, syntax: OperatorSyntax, names: frozenset[str], wrappers: dict, body: _BlockBody
) -> Iterator[tuple[list[_Statement], str, str, str]]:
    """Each registration block's statements, with its namespace, key and library variable."""
    for source in index.select(names, languages=CPP_LANGUAGES, roles=("product",)):
        facts = index.cpp_facts(source)
        for call in find_calls(facts, names):
            if call.in_define is not None:
                continue
            opened = _opened_block(call, facts, tuple(names), wrappers)
            if opened is not None and len(opened.args) >= 3:
                namespace, key, variable = opened.args[:3]
            elif opened is not None and _opens_def_block(opened, syntax):
                (namespace, variable), key = opened.args, ""
            else:
                continue
            yield list(body.statements(source, opened, variable, call.line)), namespace, key, variable
    for registrar in syntax.registrars:
        for filled in _registrar_blocks(index, registrar):
            statements = body.statements(filled.source, filled.block, filled.variable, filled.block.call.line)
            yield list(statements), filled.namespace, filled.key, filled.variable


def _registered_in(
    statements: Iterable[_Statement],
    namespace: str,
    key: str,
    variable: str,
    body: _BlockBody,
    index: CodeIndex,
    syntax: OperatorSyntax,
    fallbacks: frozenset[str],
    bodies: KernelBodies | None,
) -> Iterator[Registration]:
    """What a block's statements register on the library `variable` of `namespace` and `key`
    ("" for a definition block): operators, or global fallbacks on the wildcard namespace."""
    for statement in statements:
        inner = statement.call
        receiver, _, method = inner.callee.rpartition(".")
        if namespace == syntax.wildcard_namespace:
            if receiver == variable and method == syntax.fallback:
                kind, via = _global_kernel_kind(index, ", ".join(inner.args), fallbacks, bodies)
                yield Registration("*", namespace, key, statement.source, statement.line, "block", kind, via)
            continue
        op = _op_name(inner.literal, namespace) if inner.literal else None
        own_key = body.own_key(inner) if op else None
        # a definition block's key is "": a kernel it registers without a key of its own is a catch-all one
        on = own_key or key or (syntax.catch_all_key if _gives_kernel(inner.args) else "")
        if op and on:
            kernel = ", ".join(inner.args[1:])
            function = "" if "{" in kernel else _kernel_function(kernel)
            kind, via = _registered_kind(kernel, function, op, fallbacks, bodies)
            yield Registration(op, namespace, on, statement.source, statement.line, "block", kind, via, function)


def _gives_kernel(args: list[str] | tuple[str, ...]) -> bool:
    """Whether a definition block's call passes a kernel after the operator (`m.impl("op", f)`,
    `m.def("op", f)`), not only a schema, or a schema and its tags (`m.def("op(...)", {tag})`)."""
    return len(args) >= 2 and not args[1].lstrip().startswith("{")


@dataclass(frozen=True)
class _FilledBlock:
    """The body of the function a registrar object fills its library with, read as a block."""

    source: SourceFile
    block: _Block
    namespace: str
    key: str  # "" for a library that defines operators
    variable: str  # the library's parameter


_NAMESPACE_LITERAL = re.compile(r'"(\w+)"')
_WRAPPED = re.compile(r"[\w:]+(?:<[^<>(){}]*>)?\s*[({](?P<inner>[^(){}]*)[)}]")
_CHOSEN_FUNCTION = re.compile(r"\?\s*(?P<function>&?\s*[A-Za-z_][\w:]*)\s*:(?!:)")
LAMBDA_HEAD = re.compile(r"\[[^\[\]]*\]\s*\((?P<parameters>[^()]*)\)")
_BODY_OR_END = re.compile(r"[;{}]")
_HEAD_TRAILER = re.compile(r"[\s\w:<>,&*-]*")  # `const`, `noexcept`, `-> void`: no call, no statement
_WORD = re.compile(r"\w+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _registrar_blocks(index: CodeIndex, registrar: Registrar) -> Iterator[_FilledBlock]:
    """The blocks that objects of `registrar` fill: the bodies of the functions (or lambdas)
    they are constructed with, with the namespace and key they are constructed with."""
    needed = max(registrar.kind, registrar.function, registrar.namespace, registrar.key)
    for source in index.select([registrar.name], languages=CPP_LANGUAGES, roles=("product",)):
        facts = index.cpp_facts(source)
        for construction in find_constructions(facts, [registrar.name]):
            args = construction.args
            namespace = _NAMESPACE_LITERAL.fullmatch(args[registrar.namespace]) if len(args) > needed else None
            if construction.in_define is not None or namespace is None:
                continue
            impl = args[registrar.kind].rpartition("::")[2] in registrar.impl_kinds
            key = _unwrapped(args[registrar.key]) if impl else ""
            filling = _filling_function(index, source, construction, args[registrar.function])
            if filling is not None:
                where, block, variable = filling
                yield _FilledBlock(where, block, namespace[1], key, variable)


def _unwrapped(argument: str) -> str:
    """A key as an optional wraps it: `std::make_optional(ns::Key::K)` -> `ns::Key::K`."""
    for _ in range(MAX_EXPANSION_DEPTH):
        wrapped = _WRAPPED.fullmatch(argument)
        if wrapped is None:
            break
        argument = wrapped["inner"].strip()
    return argument


def _filling_function(
    index: CodeIndex, source: SourceFile, construction: CppCall, written: str
) -> tuple[SourceFile, _Block, str] | None:
    """(file, body, library parameter) of the function a registrar is constructed with: a
    lambda written in its arguments, or one bound to a name, or a function, of its file first."""
    chosen = _CHOSEN_FUNCTION.search(written)
    if chosen is not None:  # `allowed(key) ? &fill : [](Library&) {}`, as the block macro writes it
        written = chosen["function"]
    if written.startswith("["):
        facts = index.cpp_facts(source)
        head = LAMBDA_HEAD.search(facts.stripped, construction.start, construction.end)
        block = _function_block(facts, head.end(), head["parameters"]) if head else None
        return (source, *block) if block else None
    name = written.lstrip("&").strip().rpartition("::")[2]
    if not is_name(name):
        return None
    others = (other for other in index.select([name], languages=CPP_LANGUAGES, roles=("product",)) if other != source)
    for where in (source, *others):
        block = _named_function_block(index.cpp_facts(where), name)
        if block is not None:
            return (where, *block)
    return None


def _named_function_block(facts: CppFacts, name: str) -> tuple[_Block, str] | None:
    """The body of the function `name` defines, or of the lambda bound to `name`."""
    for call in find_calls(facts, [name]):
        block = _function_block(facts, call.end + 1, call.args[0]) if len(call.args) == 1 else None
        if call.in_define is None and block is not None:
            return block
    bound = re.compile(rf"(?<![\w.])(?<!->){re.escape(name)}\s*=\s*(?={LAMBDA_HEAD.pattern})")
    for assignment in bound.finditer(facts.stripped):
        head = LAMBDA_HEAD.match(facts.stripped, assignment.end())
        block = _function_block(facts, head.end(), head["parameters"]) if head else None
        if block is not None:
            return block
    return None


def _function_block(facts: CppFacts, after_parameters: int, parameters: str) -> tuple[_Block, str] | None:
    """The body that opens after a function's parameters (past its trailing `const`, `-> T`,
    ...), as a block on the library its last parameter names; None for a declaration."""
    opens = _BODY_OR_END.search(facts.stripped, after_parameters)
    variable = _last_name(parameters)
    if opens is None or opens.group() != "{" or variable is None:
        return None
    if not _HEAD_TRAILER.fullmatch(facts.stripped, after_parameters, opens.start()):
        return None
    line = facts.stripped.count("\n", 0, opens.start()) + 1
    head = CppCall(line, "", (parameters,), end=opens.start() - 1, start=opens.start())
    return _Block((variable,), facts, head, expanded=False), variable


def _last_name(text: str) -> str | None:
    """The name that ends `text` (`m` of `torch::Library& m`), its last word read from the end:
    a search for a name followed by nothing else would rescan a long word from each place."""
    word = _WORD.match(text.rstrip()[::-1])
    name = _IDENTIFIER.search(word.group()[::-1]) if word else None
    return name.group() if name else None


def _opens_def_block(block: _Block, syntax: OperatorSyntax) -> bool:
    return len(block.args) == 2 and block.call.name.split("::")[-1] in syntax.def_blocks


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

    def own_key(self, call: CppBlockCall) -> str | None:
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

    def _calls(
        self,
        source: SourceFile,
        facts: CppFacts,
        span: tuple[int, int],
        variable: str,
        at: int | None,
        depth: int,
        fragments_read: set[str],
    ) -> Iterator[_Statement]:
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
            yield from self._calls(
                source, text, (0, len(expansion)), variable, at or inner.line, depth + 1, fragments_read
            )
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
        macro = next(
            (
                define
                for where, define in self._index.defines.get(name, [])
                if define.params is not None and where.path == source.path
            ),
            None,
        )
        macro = macro or next(
            (define for _where, define in self._index.defines.get(name, []) if define.params is not None), None
        )
        if macro is not None:
            return expand_macro(macro, call.args)
        if variable not in call.args:
            return None
        function = next(self._index.definitions(name, roles=None), None)
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


def _opened_block(
    call: CppCall, facts: CppFacts, blocks: tuple[str, ...], wrappers: dict[str, list[CppDefine]]
) -> _Block | None:
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


# --- Python -----------------------------------------------------------------


def python_registration_files(index: CodeIndex, syntax: OperatorSyntax) -> list[SourceFile]:
    """The product's Python files that may register operators: they call a registration method."""
    methods = sorted({syntax.fallback, *_last_components(syntax.python_impl + syntax.python_fake)})
    hint = compile_guarded(rf"\b(?:{'|'.join(map(re.escape, methods))})\s*\(")
    return [
        source for source in index.select(methods, languages=["python"], roles=("product",)) if hint.search(source.text)
    ]


def _python_registrations(
    index: CodeIndex, syntax: OperatorSyntax, bodies: KernelBodies | None
) -> Iterator[Registration]:
    candidates = python_registration_files(index, syntax)
    index.prefetch_python(candidates)
    imported = _ImportedLibraries(index, syntax)
    for source in candidates:
        facts = index.python_facts(source)
        libraries = _Libraries(facts, syntax, imported)
        registries = partial(_imported_name, index, facts)
        for call in facts.calls:
            kernel: tuple[str, str] | None = None  # the kind of the call's kernel, read once
            for namespace, op, key, call_kind in _python_registration(call, libraries, syntax, source.text, registries):
                if op == "*":
                    kind, via = UNRESOLVED, _kernel_function(syntax.python_argument("library_fallback", "kernel", call))
                else:
                    kernel = kernel or _python_kernel_kind(call, call_kind, source.text, syntax, bodies)
                    kind, via = kernel
                yield Registration(op, namespace, key, source, call.line, "python", kind, via)


def _python_kernel_kind(
    call: PyCall, call_kind: str, text: str, syntax: OperatorSyntax, bodies: KernelBodies | None
) -> tuple[str, str]:
    """(kind, via) of the kernel a Python registration names, via the function: a stub when its
    body computes nothing, a fallback when it runs the operator on the host (see
    `air.graph.python_kernels`)."""
    argument = syntax.python_arguments[call_kind].get("kernel")
    if bodies is None or argument is None:
        return NATIVE, ""
    callee = call.qualname.rpartition(".")[2]
    kernel = kernel_statements(text, call.line, callee, argument.position, argument.keywords)
    kind = NATIVE if kernel is None else bodies.kind_of_python(kernel)
    return (kind, kernel.name) if kernel is not None and kind != NATIVE else (NATIVE, "")


_Library = tuple[str, str]  # (namespace, key) of a library object


def _bound_libraries(facts: PythonFacts, syntax: OperatorSyntax) -> dict[str, _Library]:
    """Names and attributes bound to a library object, with its (namespace, key): bound to
    the call that creates it, or copied from another such name, anywhere in the file."""
    created = {(call.line, call.qualname): call for call in facts.calls if call.qualname == syntax.python_library}
    found = {}
    for binding in facts.bindings:
        call = created.get((binding.line, binding.value.removesuffix("(...)")))
        if call is not None and binding.value.endswith("(...)"):
            found[binding.target] = (
                syntax.python_argument("library", "namespace", call),
                syntax.python_argument("library", "key", call),
            )
    for _ in range(MAX_COPY_DEPTH):
        copies = {b.target: found[b.value] for b in facts.bindings if b.value in found and b.target not in found}
        if not copies:
            break
        found.update(copies)
    return found


class _ImportedLibraries:
    """The library objects the tree's Python modules bind to module-level names, by module."""

    def __init__(self, index: CodeIndex, syntax: OperatorSyntax) -> None:
        self._index = index
        self._syntax = syntax
        self._by_module: dict[str, dict[str, _Library]] = {}

    def of(self, module: str) -> dict[str, _Library]:
        if module not in self._by_module:
            path = self._index.modules.get(module)
            bound = _bound_libraries(self._index.python_facts(self._index.by_path[path]), self._syntax) if path else {}
            self._by_module[module] = {name: library for name, library in bound.items() if "." not in name}
        return self._by_module[module]


class _Libraries:
    """The library objects a file's calls name: names and attributes the file binds to one
    (`lib`, `self._lib`) or copies from one, a class attribute read through an instance or the
    class (`self.lib`, `cls.lib`, `Ops.lib`), and a module-level name of another module of the
    tree that the file imports (`from .ops import lib`, `ops.lib`)."""

    def __init__(self, facts: PythonFacts, syntax: OperatorSyntax, imported: _ImportedLibraries) -> None:
        self._bound = _bound_libraries(facts, syntax)
        classes = [definition.name for definition in facts.defs if definition.kind == "class"]
        self._owners = {"self", "cls", *classes, *(name.rpartition(".")[2] for name in classes)}
        self._imported = imported

    def of(self, name: str) -> _Library | None:
        if name in self._bound:
            return self._bound[name]
        owner, _, attribute = name.rpartition(".")
        if owner in self._owners:
            found = self._bound.get(attribute) or self._bound.get(f"self.{attribute}")
            if found is not None:
                return found
        return self._imported.of(owner).get(attribute) if owner else None


def _imported_name(index: CodeIndex, facts: PythonFacts, name: str) -> tuple[str, str] | None:
    """The text of the tree's module a file imports `name` from, and its name there."""
    for imported in facts.imports:
        if imported.alias == name and imported.name:
            path = index.modules.get(imported.module)
            source = index.by_path.get(path) if path else None
            return (source.text, imported.name) if source is not None else None
    return None


def _python_registration(
    call: PyCall, libraries: _Libraries, syntax: OperatorSyntax, text: str, registries: Imported
) -> Iterator[tuple[str, str, str, str]]:
    """(namespace, op, key, the kind of call) of each operator `call` registers, op "*" for a
    global fallback; one per value of an operator name built in loops over literal data or
    over a registry the tree fills (see `air.index.python_loops`)."""
    receiver, _, method = call.qualname.rpartition(".")
    impl_methods = _last_components(syntax.python_impl)
    library = libraries.of(receiver) if receiver and method in {syntax.fallback, *impl_methods} else None
    if library is not None and method == syntax.fallback:
        namespace, library_key = library
        if namespace == syntax.wildcard_namespace:
            key = syntax.python_argument("library_fallback", "key", call) or library_key
            yield from ((namespace, "*", k, "library_fallback") for k in _keys(key))
        return
    if library is not None and method in impl_methods:  # lib.impl("op", fn[, key])
        kind = "library_impl"
    elif call.qualname in syntax.python_impl:
        library = libraries.of(call.args[0]) if call.args else None
        kind = "impl_on_library" if library is not None else "impl"  # impl(lib, "op"[, key]), impl("ns::op", key)
    elif call.qualname in syntax.python_fake:  # register_fake("ns::op")
        kind = "fake"
    else:
        return
    written = syntax.python_argument(kind, "op", call)
    namespace = library[0] if library else ""
    position = syntax.python_arguments[kind]["op"].position
    built = loop_argument_values(text, call.line, method or call.qualname, position, registries) if written else ()
    named = [_python_op(value, namespace, syntax) for value in built or (written,)]  # a loop's names, or as written
    ops = [op for op in named if op is not None]
    key = syntax.fake_key if kind == "fake" else syntax.python_argument(kind, "key", call)
    key = key or (library[1] if library else "") or (syntax.catch_all_key if library else "")
    yield from ((*op, k, kind) for op in ops for k in _keys(key))


def _python_op(written: str, default_namespace: str, syntax: OperatorSyntax) -> tuple[str, str] | None:
    """(namespace, op) of an operator as a Python registration gives it: `ns::op`, `op` of a
    library of `default_namespace`, or an operator object `<op objects>.ns.op[.overload]`."""
    prefix = syntax.python_op_objects + "."
    if syntax.python_op_objects and written.startswith(prefix):
        namespace, _, name = written.removeprefix(prefix).partition(".")
        op, _, overload = name.partition(".")
        written = f"{namespace}::{op}" + (f".{overload}" if overload and overload != "default" else "")
    qualified = _qualified_op(written, default_namespace)
    return qualified if qualified is not None and qualified[0] else None


def _last_components(names: tuple[str, ...]) -> frozenset[str]:
    """`impl` of `pkg.library.impl`: also the name of the library object's method."""
    return frozenset(name.rsplit(".", 1)[-1] for name in names)


def _keys(value: str) -> list[str]:
    """`Key` -> [Key]; a rendered list `[host, device]` -> both."""
    return [part.strip() for part in value.strip("[]()").split(",") if part.strip()]


# --- Codegen op lists -------------------------------------------------------
#
# YAML or JSON files of the product whose entries name catalog operators, whatever the keys:
# a list of names (`- add.Tensor`, `- ns::add.Tensor`, a schema `add.Tensor(Tensor self) ->
# Tensor`), a list of mappings in which one field names the operator (the field whose values
# the catalog knows most often: `func`, `name`, `op`, `operator_name`, ...), or a mapping keyed
# by operator names; such lists may stand under section keys at any depth. A list counts when
# most of its names are catalog operators, a file when its lists hold at least 5 of them, or
# fewer where the document's own key field names its key (torchgen's `backend: Key` header).
# An entry's keys are those its key fields give (fields in whose name the pack's `op_list_key_fields`
# is found: a key, a list or a mapping keyed by keys), else those the document's own key field gives
# when they match the pack's `op_list_header_keys` (a header `backend: QuantizedKey` beside the
# lists; a header naming the backend itself, `backend: NPU`, does not), else the pack's default
# key; a list under a section of the pack's `op_list_sections` registers its entries on that key
# with the section's prefix (`autograd:` of a codegen list for XLA: on AutogradXLA). A list
# counts only when the build or a codegen script names it: a file of BUILD_LANGUAGES of the
# product holding its file name (its entries are kept apart, as unused, otherwise). A
# field in whose name `op_list_template_fields` is found names a template; a path with the
# extension of code the index reads names a file. When one is not in the tree, the entry's
# kernel is unresolved; a template that names a CPU fallback function makes the entry's kernel
# a fallback.

_FILE_VALUE = re.compile(r"^[\w./-]+$")
_CODE_SUFFIXES = frozenset(suffix for suffix, language in LANGUAGES.items() if language in (*CPP_LANGUAGES, "python"))
_OP_LIST_LANGUAGES = ("yaml", "json")
BUILD_LANGUAGES = ("cmake", "make", "bazel", "meson", "toml", "ini", "python", "shell")
_CONTAINERS = (yaml.SequenceNode, yaml.MappingNode)
_FALSE = frozenset({"false", "no", "off"})
_TRUE = frozenset({"true", "yes", "on"})


@dataclass(frozen=True)
class _Entry:
    name: str
    line: int
    keys: tuple[str, ...]
    names: tuple[tuple[str, str], ...]  # (template or file, "template" | "file")
    key_prefix: str = ""  # of the section the entry's list stands under (`autograd:`: Autograd)
    turned_off: bool = False  # a field of the entry leaves it unregistered (`register: false`)


def _op_list_registrations(
    index: CodeIndex, syntax: OperatorSyntax, fallbacks: frozenset[str]
) -> Iterator[Registration]:
    files = _TreeFiles(index)
    for source in _op_list_files(index):
        text = source.text.replace("\t", " ") if source.language == "json" else source.text  # tabs: not YAML
        entries, header = _op_list(text, syntax)
        if len(entries) < MIN_OP_LIST_ENTRIES and not header:  # a short list counts where it names its key
            continue
        header_keys = tuple(key for key in header if _matches(syntax.header_key, key))
        for entry in entries:
            if entry.turned_off:
                continue
            kind, via = files.kernel_of(entry.names, fallbacks)
            for key in entry.keys or header_keys or (syntax.op_list_default_key,):
                key = key if key.startswith(entry.key_prefix) else entry.key_prefix + key
                yield Registration(entry.name, syntax.namespace, key, source, entry.line, "op list", kind, via)


def op_list_names(index: CodeIndex) -> list[str]:
    """The file names of the files that may be op lists: what a build file names them by."""
    return sorted({PurePosixPath(source.path).name for source in _op_list_files(index)})


def _op_list_files(index: CodeIndex) -> Iterator[SourceFile]:
    return (
        source
        for source in index.files
        if source.language in _OP_LIST_LANGUAGES and source.role == "product" and len(source.text) <= MAX_OP_LIST_BYTES
    )


def _used_op_lists(index: CodeIndex, paths: set[str]) -> set[str]:
    """The op lists of `paths` whose file name a build or codegen file of the product holds."""
    used = set()
    for path in paths:
        name = PurePosixPath(path).name
        naming = index.select([name], languages=BUILD_LANGUAGES, roles=("product",))
        if any(source.path != path for source in naming):
            used.add(path)
    return used


def _op_list(text: str, syntax: OperatorSyntax) -> tuple[list[_Entry], tuple[str, ...]]:
    """The entries naming catalog operators in the lists of a YAML or JSON text that are
    mostly made of operator names, and the keys the document's own key field names."""
    namespace, catalog = syntax.namespace, syntax.catalog
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, RecursionError):
        return [], ()
    entries: list[_Entry] = []
    prefixes = {section.lower(): prefix for section, prefix in syntax.op_list_sections}
    for container, section in _containers(root):
        # Keys of a mapping name operators less surely than items of a list (`max: 10`):
        # a mapping must hold enough of them itself.
        is_mapping = isinstance(container, yaml.MappingNode)
        if is_mapping and len(container.value) < MIN_OP_LIST_ENTRIES:
            continue
        named = [
            (name, node, fields)
            for node, fields in _items(container, namespace, catalog)
            if node is not None and (name := _name_in(node, namespace))
        ]
        known = [(name, node, fields) for name, node, fields in named if catalog.knows(name)]
        if (not is_mapping or len(known) >= MIN_OP_LIST_ENTRIES) and len(known) >= MIN_OP_LIST_SHARE * len(named):
            prefix = prefixes.get(section.lower(), "")
            entries.extend(_entry(name, node, fields, syntax, prefix) for name, node, fields in known)
    return entries, _header_keys(root, syntax)


def _header_keys(root: yaml.Node | None, syntax: OperatorSyntax) -> tuple[str, ...]:
    """The keys a document's top-level key field names (`backend: Key` beside its lists)."""
    fields = _fields(root) if root is not None else {}
    return tuple(
        key
        for field, value in fields.items()
        if _found_in(syntax.key_field, field) and isinstance(value, yaml.ScalarNode)
        for key in _node_keys(value)
    )


def _containers(root: yaml.Node | None) -> Iterator[tuple[yaml.Node, str]]:
    """Every sequence and mapping of the document, with the key it stands under in its mapping
    ("" for others), a bounded number of nodes visited (an alias is visited once, so a
    recursive document ends)."""
    stack: list[tuple[yaml.Node, str]] = [(root, "")] if isinstance(root, _CONTAINERS) else []
    seen: set[int] = set()
    while stack and len(seen) < MAX_YAML_NODES:
        node, section = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node, section
        if isinstance(node, yaml.SequenceNode):
            children = [(child, "") for child in node.value]
        else:
            children = [(value, key.value if isinstance(key, yaml.ScalarNode) else "") for key, value in node.value]
        stack.extend((child, name) for child, name in reversed(children) if isinstance(child, _CONTAINERS))


def _items(container: yaml.Node, namespace: str, catalog: Catalog) -> Iterator[tuple[yaml.Node | None, dict]]:
    """(node naming the operator, the entry's fields) of each key of a mapping, or of each
    item of a list: a name, a mapping with a field naming the operator, or a mapping whose one
    key names it (`- add.Tensor: {dispatch: ...}`)."""
    if isinstance(container, yaml.MappingNode):
        yield from ((key, _fields(value)) for key, value in container.value)
        return
    fields_of = [_fields(item) for item in container.value]
    field = _name_field(fields_of, namespace, catalog)
    for item, fields in zip(container.value, fields_of):
        if isinstance(item, yaml.ScalarNode):
            yield item, {}
            continue
        named = field if field in fields else next(_known_fields(fields, namespace, catalog), None)
        if named is None and len(fields) == 1 and len(item.value) == 1:  # one key, written once
            ((key, value),) = item.value
            yield key, _fields(value)
        else:
            yield None if named is None else fields.get(named), fields


def _name_field(fields_of: list[dict[str, yaml.Node]], namespace: str, catalog: Catalog) -> str:
    """The field of a list's mappings whose values the catalog knows most often."""
    counts: dict[str, int] = {}
    for fields in fields_of:
        for field in _known_fields(fields, namespace, catalog):
            counts[field] = counts.get(field, 0) + 1
    return max(sorted(counts), key=counts.__getitem__, default="")


def _known_fields(fields: dict[str, yaml.Node], namespace: str, catalog: Catalog) -> Iterator[str]:
    """The fields, in order, whose values name catalog operators."""
    for field, value in fields.items():
        name = _op_name(value.value, namespace) if isinstance(value, yaml.ScalarNode) else None
        if name and catalog.knows(name):
            yield field


def _fields(node: yaml.Node) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {key.value: value for key, value in node.value if isinstance(key, yaml.ScalarNode)}


def _name_in(node: yaml.Node | None, namespace: str) -> str | None:
    if not isinstance(node, yaml.ScalarNode) or not isinstance(node.value, str):
        return None
    return _op_name(node.value, namespace)


def _entry(
    name: str, name_node: yaml.Node, fields: dict[str, yaml.Node], syntax: OperatorSyntax, key_prefix: str
) -> _Entry:
    keys = tuple(
        key for field, value in fields.items() if _found_in(syntax.key_field, field) for key in _node_keys(value)
    )
    names = tuple(
        sorted(
            (value.value, "template" if _found_in(syntax.template_field, field) else "file")
            for field, value in fields.items()
            if isinstance(value, yaml.ScalarNode)
            and value is not name_node
            and value.value
            and (_found_in(syntax.template_field, field) or _names_file(value.value))
        )
    )
    return _Entry(name, name_node.start_mark.line + 1, keys, names, key_prefix, _turned_off(fields, syntax))


def _turned_off(fields: dict[str, yaml.Node], syntax: OperatorSyntax) -> bool:
    """Whether a field turns the entry's registration off: `register_operator: false`, `skip: true`."""
    for field, value in fields.items():
        if not isinstance(value, yaml.ScalarNode):
            continue
        flag = value.value.lower()
        if flag in _FALSE and _found_in(syntax.on_field, field) or flag in _TRUE and _found_in(syntax.off_field, field):
            return True
    return False


def _names_file(value: str) -> bool:
    """Whether a value is the path of a file of code the index reads (`kernels/add.cu`)."""
    return bool(_FILE_VALUE.match(value)) and posixpath.splitext(value)[1] in _CODE_SUFFIXES


def _node_keys(node: yaml.Node) -> list[str]:
    """The keys a key field names: a scalar's comma-separated parts, and those of a list's items
    or of a mapping's keys. Each node is read once (an alias is not expanded again, so a
    recursive or exponentially aliased document ends), at most MAX_YAML_NODES of them."""
    keys: list[str] = []
    stack, seen = [node], set[int]()
    while stack and len(seen) < MAX_YAML_NODES:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, yaml.ScalarNode):
            keys.extend(part.strip() for part in current.value.split(",") if part.strip())
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(reversed(current.value))
        elif isinstance(current, yaml.MappingNode):
            stack.extend(reversed([field for field, _value in current.value]))
    return keys


class _TreeFiles:
    """Whether the templates and files op-list entries name are in the tree, and what the
    templates register."""

    def __init__(self, index: CodeIndex) -> None:
        self._index = index
        self._kinds: dict[tuple, tuple[str, str]] = {}

    def kernel_of(self, names: tuple[tuple[str, str], ...], fallbacks: frozenset[str]) -> tuple[str, str]:
        """(kind, via) of an entry naming `names`: unresolved, naming the first absent one;
        else a fallback when a named template names a fallback function; else native."""
        if names not in self._kinds:
            self._kinds[names] = self._kind(names, fallbacks)
        return self._kinds[names]

    def _kind(self, names: tuple[tuple[str, str], ...], fallbacks: frozenset[str]) -> tuple[str, str]:
        found = [(name, what, self._find(name, what)) for name, what in names]
        absent = [f"{what} {name}" for name, what, path in found if path is None]
        if absent:
            return UNRESOLVED, absent[0]
        for name, what, path in found:
            assert path is not None  # none is absent
            source = self._index.by_path.get(path)  # None for a file the index skipped (too large, say)
            if what == "template" and source is not None and _names_any(self._index.code_text(source), fallbacks):
                return FALLBACK, f"template {name}"
        return NATIVE, ", ".join(f"template {name}" for name, what, _ in found if what == "template")

    def _find(self, name: str, what: str) -> str | None:
        """The path of the file of the tree that a template is (by its name without
        extensions), or whose path ends with the path named."""
        if what == "template" and not PurePosixPath(name).suffix:
            return self._templates.get(name)
        path = name.removeprefix("./")
        paths = self._by_name.get(PurePosixPath(path).name, ())
        return path if path in paths else next((full for full in paths if full.endswith("/" + path)), None)

    @cached_property
    def _by_name(self) -> dict[str, list[str]]:
        """The paths of the tree's files, those read and those skipped, by file name."""
        found: dict[str, list[str]] = {}
        for path in sorted([source.path for source in self._index.files] + [s.path for s in self._index.skipped]):
            found.setdefault(PurePosixPath(path).name, []).append(path)
        return found

    @cached_property
    def _templates(self) -> dict[str, str]:
        """The paths of template files by their name without extensions: files of the
        template language and files in a directory whose path holds "template"."""
        found: dict[str, str] = {}
        for source in self._index.files:
            path = PurePosixPath(source.path)
            if source.language == "template" or "template" in path.parent.as_posix().lower():
                found.setdefault(path.name.split(".", 1)[0], source.path)
        return found
