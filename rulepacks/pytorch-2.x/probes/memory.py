"""Probes of the device's memory: usage queries, the cache, running out, pinned host memory."""

MIB = 1 << 20


def _module(ctx):
    if ctx.module is None:
        raise AssertionError(f"torch.{ctx.type} does not exist")
    return ctx.module


def _query(ctx, name):
    function = getattr(_module(ctx), name, None)
    if function is None:
        raise AssertionError(f"torch.{ctx.type}.{name} does not exist")
    return function


def memory_allocated(ctx):
    allocated = _query(ctx, "memory_allocated")
    before = allocated()
    block = ctx.torch.empty(8 * MIB, dtype=ctx.torch.uint8, device=ctx.device)
    grown = allocated() - before
    del block
    assert grown >= 8 * MIB, f"memory_allocated() grew by {grown} bytes for an 8 MiB tensor"
    return f"torch.{ctx.type}.memory_allocated() grows by {grown} bytes for an 8 MiB tensor"


def empty_cache(ctx):
    block = ctx.torch.empty(8 * MIB, dtype=ctx.torch.uint8, device=ctx.device)
    del block
    _query(ctx, "empty_cache")()
    return f"torch.{ctx.type}.empty_cache() runs"


def max_memory_allocated(ctx):
    return _covers_a_live_block(ctx, "max_memory_allocated")


def memory_reserved(ctx):
    return _covers_a_live_block(ctx, "memory_reserved")


def _covers_a_live_block(ctx, name):
    """torch.<device>.`name`() counts at least the 8 MiB of a tensor alive."""
    query = _query(ctx, name)
    block = ctx.torch.empty(8 * MIB, dtype=ctx.torch.uint8, device=ctx.device)
    counted = query()
    del block
    assert counted >= 8 * MIB, f"{name}() is {counted} with an 8 MiB tensor alive"
    return f"torch.{ctx.type}.{name}() == {counted} with an 8 MiB tensor alive"


def memory_summary(ctx):
    summary = _query(ctx, "memory_summary")()
    assert isinstance(summary, str) and summary.strip(), f"memory_summary() returned {summary!r}"
    return f"torch.{ctx.type}.memory_summary() reports {len(summary.splitlines())} lines"


def out_of_memory(ctx):
    """An allocation far beyond any device must raise an error the program can catch."""
    torch = ctx.torch
    try:
        torch.empty(1 << 52, dtype=torch.uint8, device=ctx.device)
    except RuntimeError as error:
        kind = type(error).__name__
        return f"allocating 4 PiB raises {kind}: {str(error).splitlines()[0][:120]}"
    raise AssertionError("allocating 4 PiB on the device succeeded")


def pinned_loader(ctx):
    torch = ctx.torch
    data = torch.utils.data.TensorDataset(torch.arange(16.0).reshape(8, 2))
    loader = torch.utils.data.DataLoader(data, batch_size=4, pin_memory=True)
    batches = [batch for (batch,) in loader]
    assert all(batch.is_pinned() for batch in batches), "DataLoader(pin_memory=True) gave unpinned batches"
    moved = batches[0].to(ctx.device, non_blocking=True)
    assert torch.equal(moved.cpu(), torch.arange(8.0).reshape(4, 2))
    return "DataLoader(pin_memory=True) yields pinned batches that copy to the device"
