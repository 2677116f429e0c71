"""Probes of the device's random number generation."""


def _module(ctx):
    if ctx.module is None:
        raise AssertionError(f"torch.{ctx.type} does not exist")
    return ctx.module


def manual_seed(ctx):
    torch, module = ctx.torch, _module(ctx)
    module.manual_seed(1234)
    first = torch.randn(16, device=ctx.device).cpu()
    module.manual_seed(1234)
    again = torch.randn(16, device=ctx.device).cpu()
    assert torch.equal(first, again), "the same seed gave different numbers"
    return f"torch.{ctx.type}.manual_seed(1234) makes torch.randn repeat"


def generator(ctx):
    torch = ctx.torch
    first = torch.randn(16, device=ctx.device, generator=torch.Generator(device=ctx.device).manual_seed(7))
    again = torch.randn(16, device=ctx.device, generator=torch.Generator(device=ctx.device).manual_seed(7))
    assert first.device.type == ctx.type
    assert torch.equal(first.cpu(), again.cpu()), "two generators seeded alike gave different numbers"
    return f"torch.Generator(device={ctx.type!r}) seeds torch.randn reproducibly"


def rng_state(ctx):
    torch, module = ctx.torch, _module(ctx)
    state = module.get_rng_state()
    first = torch.randn(16, device=ctx.device).cpu()
    module.set_rng_state(state)
    again = torch.randn(16, device=ctx.device).cpu()
    assert torch.equal(first, again), "restoring the state did not repeat the numbers"
    return f"torch.{ctx.type}.get_rng_state()/set_rng_state() restore the stream of numbers"


def initial_seed(ctx):
    module = _module(ctx)
    ctx.torch.manual_seed(4321)  # seeds every device
    seed = module.initial_seed()
    assert seed == 4321, f"torch.{ctx.type}.initial_seed() == {seed} after torch.manual_seed(4321)"
    return f"torch.{ctx.type}.initial_seed() == 4321 after torch.manual_seed(4321)"
