"""Probes of torch.distributed with the backend registered for the device, in one process:
a group of one rank (store in memory), so that every collective's result is its input."""

import unittest


def _group(ctx):
    dist = ctx.torch.distributed
    if not dist.is_available():
        raise AssertionError("torch.distributed is not available in this torch")
    if not dist.is_initialized():
        dist.init_process_group(store=dist.HashStore(), rank=0, world_size=1)
    return dist


def _tensor(ctx):
    return ctx.torch.arange(4.0, device=ctx.device)


def init_process_group(ctx):
    dist = _group(ctx)
    x = _tensor(ctx)
    dist.all_reduce(x)
    return f"init_process_group() ({dist.get_backend_config()}) runs a collective on {ctx.type}"


def all_reduce(ctx):
    dist, x = _group(ctx), _tensor(ctx)
    dist.all_reduce(x)
    assert ctx.torch.equal(x.cpu(), ctx.torch.arange(4.0)), "all_reduce over one rank changed the tensor"
    return "all_reduce on a device tensor"


def broadcast(ctx):
    dist, x = _group(ctx), _tensor(ctx)
    dist.broadcast(x, src=0)
    assert ctx.torch.equal(x.cpu(), ctx.torch.arange(4.0))
    return "broadcast of a device tensor"


def all_gather(ctx):
    dist, x = _group(ctx), _tensor(ctx)
    gathered = [ctx.torch.empty_like(x)]
    dist.all_gather(gathered, x)
    assert ctx.torch.equal(gathered[0].cpu(), ctx.torch.arange(4.0))
    return "all_gather of device tensors"


def reduce_scatter(ctx):
    dist, x = _group(ctx), _tensor(ctx)
    out = ctx.torch.empty_like(x)
    dist.reduce_scatter(out, [x])
    assert ctx.torch.equal(out.cpu(), ctx.torch.arange(4.0))
    return "reduce_scatter of device tensors"


def barrier(ctx):
    _group(ctx).barrier()
    return "barrier() returns"


def all_to_all(ctx):
    dist, x = _group(ctx), _tensor(ctx)
    out = [ctx.torch.empty_like(x)]
    dist.all_to_all(out, [x])
    assert ctx.torch.equal(out[0].cpu(), ctx.torch.arange(4.0))
    return "all_to_all of device tensors"


def send_recv(ctx):
    raise unittest.SkipTest("send/recv needs two ranks; the probes run one")
