"""Probes of saving and loading device tensors."""

import io


def _model(ctx):
    ctx.torch.manual_seed(0)
    return ctx.torch.nn.Linear(4, 4).to(ctx.device)


def _saved(torch, state):
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return buffer


def save(ctx):
    buffer = _saved(ctx.torch, _model(ctx).state_dict())
    size = len(buffer.getvalue())
    assert size > 0
    return f"torch.save of a device state_dict writes {size} bytes"


def load_map_location(ctx):
    torch = ctx.torch
    loaded = torch.load(_saved(torch, {"w": torch.ones(2)}), map_location=ctx.device)
    assert loaded["w"].device.type == ctx.type, f"map_location={ctx.type!r} gave {loaded['w'].device}"
    assert torch.equal(loaded["w"].cpu(), torch.ones(2))
    return f"torch.load(map_location={ctx.type!r}) puts a CPU checkpoint on the device"


def device_to_cpu(ctx):
    torch = ctx.torch
    state = _model(ctx).state_dict()
    loaded = torch.load(_saved(torch, state), map_location="cpu")
    assert all(value.device.type == "cpu" for value in loaded.values())
    for name, value in state.items():
        assert torch.equal(loaded[name], value.cpu()), f"{name} changed"
    return "a device checkpoint loads on the CPU with map_location='cpu', values intact"


def weights_only(ctx):
    torch = ctx.torch
    state = _model(ctx).state_dict()
    loaded = torch.load(_saved(torch, state), weights_only=True)
    assert all(value.device.type == ctx.type for value in loaded.values()), "weights_only loading moved tensors"
    return "torch.load(weights_only=True) loads a device state_dict"


def safetensors(ctx):
    import unittest

    try:
        from safetensors.torch import load, save
    except ImportError:
        raise unittest.SkipTest("safetensors is not installed in the probed interpreter") from None
    torch = ctx.torch
    loaded = load(save({"w": torch.ones(2, device=ctx.device)}))
    assert torch.equal(loaded["w"], torch.ones(2))
    return "safetensors saves and loads a device tensor"
