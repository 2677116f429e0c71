"""The kernels Python registrations name, and when they run on the host (`air.graph.python_kernels`)."""

from __future__ import annotations

import pytest
from air.graph.host_fallback import HostTransfers, is_host_fallback
from air.graph.python_kernels import kernel_statements

MODULE = """\
import functools
import torch

def on_host(x, *, out):
    a, b = torch.frexp(x.cpu())
    out.copy_(a)
    return (out, b.dev())

@torch.library.impl("ns::decorated", "K")
def decorated(x):
    return x.sin()

lib.impl("op", on_host, "K")
torch.library.impl("ns::op", "K")(functools.partial(on_host, out=None))
torch.library.impl("ns::op", "K", func=lambda x: torch.cos(x.cpu()).to(x.device))
lib.impl("op", make_kernel(), "K")
"""

HOST = HostTransfers(device=('"cpu"', "'cpu'"), to_host=("cpu",), transfers=("to", "copy_", "dev"))


@pytest.mark.parametrize(
    ("line", "callee", "found"),
    [
        (
            13,
            "impl",
            (
                "on_host",
                ["a = torch.frexp(x.cpu())", "b = torch.frexp(x.cpu())", "out.copy_(a)", "return (out, b.dev())"],
            ),
        ),
        (9, "impl", ("decorated", ["return x.sin()"])),
        (
            14,
            "impl",
            (
                "on_host",
                ["a = torch.frexp(x.cpu())", "b = torch.frexp(x.cpu())", "out.copy_(a)", "return (out, b.dev())"],
            ),
        ),
        (15, "impl", ("lambda", ["return torch.cos(x.cpu()).to(x.device)"])),
        (16, "impl", None),  # a kernel a call makes: not known
    ],
)
def test_kernel_statements(line, callee, found):
    assert kernel_statements(MODULE, line, callee, 1 if line in (13, 16) else 2, ("func",)) == found


@pytest.mark.parametrize(
    ("statements", "fallback"),
    [
        (["a = torch.frexp(x.cpu())", "b = torch.frexp(x.cpu())", "out.copy_(a)", "return (out, b.dev())"], True),
        (["return torch.cos(x.cpu()).to(x.device)"], True),
        (["v = torch.sort(x.cpu())", "return {v.dev(), x}"], False),  # one of the values returned is not copied back
        (["n = int(x.cpu().numel())", "return kernel(x, n)"], False),  # the host only read a count
        (["return x.sin()"], False),
    ],
)
def test_host_fallbacks_return_every_value_copied_back(statements, fallback):
    assert is_host_fallback(statements, HOST) is fallback


def test_unparsable_module_names_no_kernel():
    assert kernel_statements("def f(:\n", 1, "impl", 1, ()) is None
