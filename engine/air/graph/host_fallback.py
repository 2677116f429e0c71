"""A kernel written as a CPU fallback by hand: it moves its tensors to the host, computes there
and copies the result back.

Its last statement outside inner blocks returns, or is, a copy back to the device of a value
computed on the host (or returns several, `(a.to(d), b.to(d))`, `{a_dev, b_dev}`). A host value
is a tensor moved to the host (`x.cpu()`, `x.to(<host>)`), a tensor a factory makes with nothing
to place it (`at::linspace(start, end, steps)`, which computes too), or a local bound to an
expression naming the host device (`at::empty(sizes, opts.device(at::kCPU))`) or a host value;
the host computes when a call other than a transfer or an allocation is given a host value or
made on one (`at::native::op(x_cpu)`, `x_cpu.sin()`); a copy back moves a host value to the
device (`r.to(x.device())`) or copies one into a tensor of the device (`out.copy_(out_cpu)`, or a
raw copy into its memory, `memcpy(out.data_ptr(), out_cpu.data_ptr(), n)`, then `return out;`).
A kernel that moves a tensor to the host for a print or to check a host scalar copies nothing
back: it is native.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cached_property
from typing import Any

from air.index.cpp.lexing import KEYWORDS_BEFORE_PARENTHESES, skip_group, split_top_level
from air.regex import alternatives

_CALL = re.compile(r"(?<![\w:])(?P<callee>[A-Za-z_]\w*(?: ?(?:::|\.|->) ?[A-Za-z_]\w*)*) ?(?:<[^<>;()]*> ?)?\(")
_BINDING = re.compile(r"(?:[\w:<>,*& ]+? )?(?P<name>[A-Za-z_]\w*) ?=(?!=) ?(?P<value>.+)", re.S)
_RETURN = re.compile(r"return\b ?(?P<value>.*)", re.S)
_MEMBER = re.compile(r"(?:\.|->) ?$")  # a match is three characters at most
_MEMBER_CALLEE = re.compile(r"(?:\.|->)[A-Za-z_]\w*$")
_SCOPE_OR_MEMBER = re.compile(r"::|\.|->")


@dataclass(frozen=True)
class HostTransfers:
    """How the framework's C++ writes the host device (`"cpu"`, `kCPU`, `DeviceType::CPU`),
    the methods that move a tensor to it (`cpu`), those that move a tensor to the device their
    arguments name or copy one tensor into another (`to`, `copy_`), the functions that copy
    raw memory, destination first (`memcpy`, globs allowed), and the methods giving a tensor's
    memory to them (`data_ptr`)."""

    device: tuple[str, ...]
    to_host: tuple[str, ...]
    transfers: tuple[str, ...]
    raw_copies: tuple[str, ...] = ()
    memory: tuple[str, ...] = ()
    factories: tuple[str, ...] = ()  # functions making a tensor, on the host unless told otherwise
    placements: tuple[str, ...] = ()  # words of a factory's arguments that place its tensor (options)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> HostTransfers:
        return cls(
            tuple(data["device"]),
            tuple(data["to_host"]),
            tuple(data["transfers"]),
            tuple(data.get("raw_copies", ())),
            tuple(data.get("memory", ())),
            tuple(data.get("factories", ())),
            tuple(data.get("placements", ())),
        )

    def makes_on_host(self, call_name: str, args: str) -> bool:
        """Whether a call of a factory makes its tensor on the host: nothing in its arguments
        places it (`at::linspace(start, end, steps)`)."""
        return call_name in self.factories and self._placement.search(args) is None

    def is_raw_copy(self, call_name: str) -> bool:
        return any(fnmatchcase(call_name, pattern) for pattern in self.raw_copies)

    @cached_property
    def _device(self) -> re.Pattern[str]:
        spellings = [
            re.escape(spelling) if spelling.startswith(('"', "'")) else _name_pattern(spelling)
            for spelling in self.device
        ]
        return re.compile("|".join(spellings))

    @cached_property
    def _placement(self) -> re.Pattern[str]:
        return re.compile(rf"\b(?:{alternatives(self.placements)})\b")

    @cached_property
    def _to_host(self) -> re.Pattern[str]:
        return re.compile(rf"(?:\.|->) ?(?:{alternatives(self.to_host)}) ?\( ?\)")

    def names_device(self, text: str) -> bool:
        return self._device.search(text) is not None

    def moves_to_host(self, text: str) -> bool:
        """Whether `text` moves a tensor to the host: `x.cpu()`, or a transfer naming the host."""
        return self._to_host.search(text) is not None or any(
            call.name in self.transfers and call.member and self.names_device(call.args) for call in _calls(text)
        )


def _name_pattern(name: str) -> str:
    parts = [re.escape(part) for part in name.split("::")]
    return r"(?<![\w.])" + r" ?:: ?".join(parts) + r"(?!\w)"


@dataclass(frozen=True)
class _Call:
    name: str  # the last component of the callee
    receiver: str  # the text the call is made on (`x` of `x.sin()`), "" for a plain call
    args: str  # the text between its parentheses
    member: bool
    end: int  # past its closing parenthesis


def _calls(text: str) -> Iterator[_Call]:
    for found in _CALL.finditer(text):
        callee = found["callee"].replace(" ", "")
        if callee in KEYWORDS_BEFORE_PARENTHESES:
            continue
        end = skip_group(text, found.end() - 1)
        if end is None:
            continue
        parts = _SCOPE_OR_MEMBER.split(callee)
        before = found.start()
        member = (
            _MEMBER_CALLEE.search(callee) is not None or _MEMBER.search(text, max(0, before - 3), before) is not None
        )
        if not member:
            receiver = ""
        elif "." in callee or "->" in callee:
            receiver = callee[: -len(parts[-1])]
        else:
            receiver = text[:before]
        yield _Call(parts[-1], receiver, text[found.end() : end - 1], member, end)


class _HostFlow:
    """What a body's statements do with host values, statement after statement."""

    def __init__(self, host: HostTransfers, allocations: tuple[str, ...]) -> None:
        self._host = host
        self._allocations = allocations
        self.host_locals: set[str] = set()
        self.copied_back: set[str] = set()
        self.computed = False

    def read(self, statement: str) -> None:
        binding = _BINDING.fullmatch(statement)
        value = binding["value"] if binding else statement
        self.computed |= self._computes(value)
        made = self._made_on_host(value)
        if made is not None:
            self.computed |= not any(fnmatchcase(made, pattern) for pattern in self._allocations)
        if binding is not None and self.copies_back(value):
            self.copied_back.add(binding["name"])
        elif binding is not None and (made or self._holds_host(value) or self._host.names_device(value)):
            self.host_locals.add(binding["name"])
        elif binding is None:
            self.copied_back |= self.copied_into(statement)

    def _made_on_host(self, value: str) -> str | None:
        """The factory `value` is a call of, when it makes its tensor on the host."""
        call = next(_calls(value), None)
        if call is None or call.end != len(value) or call.member:
            return None
        return call.name if self._host.makes_on_host(call.name, call.args) else None

    def copies_back(self, value: str) -> bool:
        """Whether `value` ends moving a host value to the device (`r.to(x.device())`)."""
        last = next((call for call in _calls(value) if call.end == len(value)), None)
        return (
            last is not None
            and last.member
            and last.name in self._host.transfers
            and not self._host.names_device(last.args)
            and self._holds_host(last.receiver)
        )

    def copied_into(self, statement: str) -> set[str]:
        """The device tensor a statement copies a host value into (`out.copy_(out_cpu)`, or
        `memcpy(out.data_ptr(), out_cpu.data_ptr(), n)`)."""
        found = set()
        for call in _calls(statement):
            if not call.member and self._host.is_raw_copy(call.name):
                destination, *sources = split_top_level(call.args)
                receiver = self._memory_of(destination)
                if receiver and receiver not in self.host_locals and any(map(self._holds_host, sources)):
                    found.add(receiver)
                continue
            receiver = call.receiver.strip().rstrip(".->").strip()
            into_device = receiver.isidentifier() and receiver not in self.host_locals
            if call.name in self._host.transfers and into_device and self._holds_host(call.args):
                found.add(receiver)
        return found

    def _memory_of(self, text: str) -> str:
        """The tensor whose memory `text` gives (`out` of `out.data_ptr()`), or ""."""
        for call in _calls(text):
            receiver = call.receiver.strip().rstrip(".->").strip()
            if call.member and call.name in self._host.memory and receiver.isidentifier():
                return receiver
        return ""

    def _holds_host(self, text: str) -> bool:
        names = set(re.findall(r"(?<![\w.>])[A-Za-z_]\w*", text))
        return bool(names & self.host_locals) or self._host.moves_to_host(text)

    def _computes(self, text: str) -> bool:
        """Whether `text` calls something other than a transfer or an allocation on a host value."""
        moves = (*self._host.to_host, *self._host.transfers)
        return any(
            call.name not in moves
            and not any(fnmatchcase(call.name, pattern) for pattern in self._allocations)
            and (self._holds_host(call.args) or self._holds_host(call.receiver))
            for call in _calls(text)
        )


def is_host_fallback(statements: list[str], host: HostTransfers, allocations: tuple[str, ...] = ()) -> bool:
    """Whether a body made of `statements` runs its operator on the host (see the module's docstring)."""
    if not statements:
        return False
    *leading, last = statements
    flow = _HostFlow(host, allocations)
    for statement in leading:
        flow.read(statement)
    returned = _RETURN.fullmatch(last)
    if returned is None:
        flow.read(last)
        return flow.computed and bool(flow.copied_into(last))
    value = returned["value"].strip()
    flow.read(value)
    return flow.computed and _returns_copies(flow, value)


def _returns_copies(flow: _HostFlow, value: str) -> bool:
    """Whether a returned value is a copy back, or a tuple or braced list of copies back."""
    if value in flow.copied_back or flow.copies_back(value):
        return True
    if value[:1] in ("(", "{") and skip_group(value, 0) == len(value):
        parts = [part.strip() for part in split_top_level(value[1:-1])]
        return bool(parts) and all(part and _returns_copies(flow, part) for part in parts)
    return False


def called_functions(statement: str) -> list[str]:
    """The last components of the functions a statement calls, not its methods, in order."""
    return [call.name for call in _calls(statement) if not call.member]
