"""What the body of a registered kernel does, when the tree defines it: computes (a native
kernel), computes nothing (a stub), or runs the operator on the host (a CPU fallback written
by hand, see `air.graph.host_fallback`).

A Python kernel (see `air.graph.python_kernels`) is a stub when `is_python_stub` tells its
body one. A C/C++ stub is a body `air.evidence.stubs.is_stub` tells, with the framework's inert calls and
allocations and the kernel's parameters as the values returned unchanged: it does nothing,
only checks, warns or throws (`TORCH_CHECK(false, ...)`), returns its input as it is (`return
self;`) or a fresh allocation (`return at::empty(self.sizes(), self.options());`). An operator
that is an allocation itself (`empty_strided`, by the allocation calls' names) may return one.

A function given by name is judged on every definition the product's C/C++ holds (matched by
the last component of its name), and on every build of a definition that `#if` groups split
(`#if defined(CHIP_A)` device code `#elif defined(CHIP_B)` a host copy `#endif`; the groups a
tree decides, such as `#if 0`, are blanked already): it is a stub or a host fallback when none
is native, and a definition whose last statement calls such a function first is one too, a few
levels deep. A function the tree does not define is native.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from fnmatch import fnmatchcase

from air.evidence.stubs import StubRules, is_python_stub, is_stub
from air.graph.host_fallback import HostTransfers, called_functions, is_host_fallback
from air.graph.operators import FALLBACK, LAMBDA_HEAD, NATIVE, STUB
from air.graph.python_kernels import PythonKernel
from air.index import CodeIndex
from air.index.cpp import CPP_LANGUAGES, body_statements, builds, parameter_names

MAX_FORWARDING_DEPTH = 4


class KernelReader:
    """The kinds of the kernels a tree's registrations name, read from their bodies (an
    `air.graph.operators.KernelBodies`)."""

    def __init__(
        self, index: CodeIndex, rules: StubRules, host: HostTransfers | None, device_methods: tuple[str, ...] = ()
    ) -> None:
        self._index = index
        self._rules = rules
        self._host = host
        self._python_host = replace(host, transfers=(*host.transfers, *device_methods)) if host else None
        self._kinds: dict[tuple[str, bool], str] = {}

    def kind_of_python(self, kernel: PythonKernel) -> str:
        """A Python kernel is a stub when its body does nothing, only raises or returns a
        constant (`is_python_stub`); a fallback when it copies back to the device through a
        transfer, or through the method a device name gives tensors (`x.cpu().sin().mydev()`)."""
        if is_python_stub(kernel.body, self._rules):
            return STUB
        host = self._python_host
        if host is not None and is_host_fallback(kernel.statements, host, self._rules.allocations):
            return FALLBACK
        return NATIVE

    def kind_of_lambda(self, kernel: str, op: str) -> str:
        """The kind of a lambda written as the kernel (`[](const Tensor& self) { return self; }`)."""
        head = LAMBDA_HEAD.search(kernel)
        opened, closed = kernel.find("{"), kernel.rfind("}")
        if head is None or opened < 0 or closed < opened:
            return NATIVE
        statements = body_statements(kernel, (opened, closed))
        return self._kind(statements, parameter_names(head["parameters"]), _allocates(op, self._rules))

    def expect(self, names: Iterable[str]) -> None:
        """Find the files that may define the functions `names` in one pass over the tree:
        asked one by one, each would cost a pass of its own (a tree registering thousands of
        kernels took minutes)."""
        self._index.find_literals(
            {name.rpartition("::")[2] for name in names} - {""}, languages=CPP_LANGUAGES, roles=("product",)
        )

    def kind_of_function(self, name: str, op: str) -> str:
        """The kind of the tree's function `name` (its last component), judged on every definition."""
        return self._function_kind(name.rpartition("::")[2], _allocates(op, self._rules), 0)

    def _function_kind(self, name: str, allocates: bool, depth: int) -> str:
        key = (name, allocates)
        if key not in self._kinds:
            self._kinds[key] = NATIVE  # a function that calls itself is judged native
            kinds = {self._definition_kind(body, allocates, depth) for body in self._definitions(name)}
            self._kinds[key] = _joined(kinds)
        return self._kinds[key]

    def _definitions(self, name: str) -> Iterator[tuple[list[str], tuple[str, ...]]]:
        for function in self._index.definitions(name):
            for build in builds(function.body):
                body = "{" + build + "}"
                yield body_statements(body, (0, len(body) - 1)), tuple(p for p in function.params or () if p)

    def _definition_kind(self, body: tuple[list[str], tuple[str, ...]], allocates: bool, depth: int) -> str:
        statements, parameters = body
        kind = self._kind(statements, parameters, allocates)
        if kind != NATIVE or depth >= MAX_FORWARDING_DEPTH or not statements:
            return kind
        forwarded = {self._function_kind(name, allocates, depth + 1) for name in called_functions(statements[-1])[:1]}
        return _joined(forwarded) if forwarded else NATIVE

    def _kind(self, statements: list[str], parameters: tuple[str, ...], allocates: bool) -> str:
        rules = replace(self._rules, unchanged=frozenset(parameters))
        if allocates:
            rules = replace(rules, allocations=())
        if is_stub(statements, rules):
            return STUB
        if self._host is not None and is_host_fallback(statements, self._host, self._rules.allocations):
            return FALLBACK
        return NATIVE


def _joined(kinds: set[str]) -> str:
    """The kind of a function of several definitions: native when one is, or none is known."""
    if not kinds or NATIVE in kinds:
        return NATIVE
    return FALLBACK if FALLBACK in kinds else STUB


def _allocates(op: str, rules: StubRules) -> bool:
    """Whether the operator `op` is an allocation itself (`empty_strided`)."""
    base = op.split(".", 1)[0]
    return any(fnmatchcase(base, pattern) for pattern in rules.allocations)
