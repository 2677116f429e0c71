"""Probes of the device itself: strings, queries and the Python frontend.

Each probe takes the session's context (`probe_session.Context`): `ctx.torch`, `ctx.device`,
`ctx.type` and `ctx.module` (torch.<type>). A probe passes by returning what it saw, is
skipped by raising unittest.SkipTest, and fails by raising.
"""

import os
import subprocess
import sys
import unittest


def _module(ctx):
    if ctx.module is None:
        raise AssertionError(f"torch.{ctx.type} does not exist")
    return ctx.module


def device_string(ctx):
    torch = ctx.torch
    for spelling in (ctx.type, f"{ctx.type}:0"):
        tensor = torch.empty(2, device=spelling)
        assert tensor.device.type == ctx.type, f"torch.empty(device={spelling!r}) is on {tensor.device}"
    assert torch.device(f"{ctx.type}:0").index == 0
    return f"torch.empty(2, device={ctx.type!r}) and device='{ctx.type}:0' give tensors on the device"


def is_available(ctx):
    available = _module(ctx).is_available()
    assert available is True, f"torch.{ctx.type}.is_available() returned {available!r}"
    return f"torch.{ctx.type}.is_available() is True"


def device_count(ctx):
    count = _module(ctx).device_count()
    assert isinstance(count, int) and count >= 1, f"torch.{ctx.type}.device_count() returned {count!r}"
    return f"torch.{ctx.type}.device_count() == {count}"


def _set_back(read, write, what):
    """What `read` gives, written back with `write`, which must leave it as it was."""
    value = read()
    write(value)
    assert read() == value, f"setting the {what} it reported changed the {what}"
    return value


def current_device(ctx):
    module = _module(ctx)
    current = _set_back(module.current_device, module.set_device, "current device")
    return f"torch.{ctx.type}.current_device() == {current!r}, and set_device takes it back"


def synchronize(ctx):
    x = ctx.torch.ones(1024, device=ctx.device) * 2
    _module(ctx).synchronize()
    assert float(x.sum().cpu()) == 2048.0
    return f"torch.{ctx.type}.synchronize() returns after queued work"


def multi_index(ctx):
    count = _module(ctx).device_count()
    if count < 2:
        raise unittest.SkipTest(f"torch.{ctx.type}.device_count() == {count}: needs two devices")
    tensor = ctx.torch.empty(1, device=f"{ctx.type}:1")
    assert tensor.device.index == 1, f"device='{ctx.type}:1' gave {tensor.device}"
    return f"device='{ctx.type}:1' addresses the second of {count} devices"


def tensor_to(ctx):
    torch = ctx.torch
    host = torch.arange(6.0)
    moved = host.to(ctx.device)
    assert moved.device.type == ctx.type, f"Tensor.to gave {moved.device}"
    assert torch.equal(moved.cpu(), host), "the values changed on the round trip"
    method = getattr(host, ctx.type, None)
    assert method is not None, f"Tensor.{ctx.type}() does not exist"
    assert method().device.type == ctx.type, f"Tensor.{ctx.type}() gave another device"
    flag = getattr(moved, f"is_{ctx.type}", None)
    assert flag is True, f"Tensor.is_{ctx.type} is {flag!r} on the device"
    return f"Tensor.to({ctx.type!r}), Tensor.{ctx.type}() and Tensor.is_{ctx.type} work; values survive the round trip"


def module_to(ctx):
    torch = ctx.torch
    model = torch.nn.Linear(4, 4).to(ctx.device)
    assert all(p.device.type == ctx.type for p in model.parameters()), "a parameter stayed elsewhere"
    out = model(torch.ones(2, 4, device=ctx.device))
    assert out.device.type == ctx.type and out.shape == (2, 4)
    return f"nn.Linear(4, 4).to({ctx.type!r}) runs its forward on the device"


def _accelerator(ctx):
    accelerator = getattr(ctx.torch, "accelerator", None)
    if accelerator is None:
        raise AssertionError("torch.accelerator does not exist in this torch")
    return accelerator


def accelerator_current(ctx):
    found = _accelerator(ctx).current_accelerator()
    assert found is not None and found.type == ctx.type, f"torch.accelerator.current_accelerator() is {found!r}"
    index = _accelerator(ctx).current_device_index()
    return f"torch.accelerator.current_accelerator() is {found}, current_device_index() == {index}"


def accelerator_count(ctx):
    count = _accelerator(ctx).device_count()
    assert count >= 1, f"torch.accelerator.device_count() == {count}"
    return f"torch.accelerator.device_count() == {count}"


def accelerator_available(ctx):
    assert _accelerator(ctx).is_available() is True, "torch.accelerator.is_available() is not True"
    return "torch.accelerator.is_available() is True"


def accelerator_synchronize(ctx):
    x = ctx.torch.ones(16, device=ctx.device) + 1
    _accelerator(ctx).synchronize()
    assert float(x.sum().cpu()) == 32.0
    return "torch.accelerator.synchronize() returns after queued work"


def accelerator_stream(ctx):
    accelerator = _accelerator(ctx)
    stream = _set_back(accelerator.current_stream, accelerator.set_stream, "current stream")
    return f"torch.accelerator.current_stream() is {stream}, and set_stream takes it back"


def autoload(ctx):
    """A fresh interpreter, told to autoload, resolves the device without importing the backend."""
    program = f"import torch; t = torch.empty(1, device={ctx.type!r}); print(t.device.type)"
    environment = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "1"}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=environment, timeout=300)
    assert done.returncode == 0, (done.stderr.strip().splitlines() or ["failed"])[-1]
    return f"`import torch; torch.empty(1, device={ctx.type!r})` works with TORCH_DEVICE_BACKEND_AUTOLOAD=1"
