"""The kernels Python registrations name, and when they run on the host (`air.graph.python_kernels`)."""

from __future__ import annotations

import pytest
from air.evidence.stubs import StubRules, is_python_stub
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

def unsupported(name):
    '''Raises for an operator without a kernel.'''
    def raiser(*args, **kwargs):
        '''No kernel yet.'''
        raise NotImplementedError(name)
    return raiser

@torch.library.impl("ns::placeholder", "K")
def placeholder(x):
    ...

def checked(x):
    if x.dim() == 0:
        raise RuntimeError("scalar")
    return x.sin()

lib.impl("other", unsupported("other"), "K")
lib.impl("checked", checked, "K")
torch.library.impl("ns::none", "K", func=lambda x: None)
"""

HOST = HostTransfers(device=('"cpu"', "'cpu'"), to_host=("cpu",), transfers=("to", "copy_", "dev"))


ON_HOST = ["a = torch.frexp(x.cpu())", "b = torch.frexp(x.cpu())", "out.copy_(a)", "return (out, b.dev())"]


@pytest.mark.parametrize(
    ("line", "callee", "found"),
    [
        (13, "impl", ("on_host", ON_HOST, False)),
        (9, "impl", ("decorated", ["return x.sin()"], False)),
        (14, "impl", ("on_host", ON_HOST, False)),
        (15, "impl", ("lambda", ["return torch.cos(x.cpu()).to(x.device)"], False)),
        (16, "impl", None),  # a kernel a call makes: not known
        (34, "impl", ("raiser", ["'No kernel yet.'", "raise NotImplementedError(name)"], True)),
        (25, "impl", ("placeholder", ["..."], True)),
        (35, "impl", ("checked", ["return x.sin()"], False)),  # raises only on one path
        (36, "impl", ("lambda", ["return None"], True)),
    ],
)
def test_kernel_statements(line, callee, found):
    kernel = kernel_statements(MODULE, line, callee, 1 if line in (13, 16, 34, 35) else 2, ("func",))
    read = None if kernel is None else (kernel.name, kernel.statements, is_python_stub(kernel.body, StubRules()))
    assert read == found


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
