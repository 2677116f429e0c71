"""Probes of torch.compile on the device (the default backend, Inductor)."""


def _model(ctx):
    ctx.torch.manual_seed(0)
    return ctx.torch.nn.Sequential(ctx.torch.nn.Linear(16, 16), ctx.torch.nn.ReLU()).to(ctx.device)


def compile_runs(ctx):
    torch = ctx.torch
    out = torch.compile(_model(ctx))(torch.randn(4, 16, device=ctx.device))
    assert out.shape == (4, 16) and out.device.type == ctx.type
    return "torch.compile(model) runs a Linear + ReLU model on the device"


def compile_correct(ctx):
    torch = ctx.torch
    model = _model(ctx)
    x = torch.randn(4, 16, device=ctx.device)
    torch.testing.assert_close(torch.compile(model)(x).cpu(), model(x).cpu())
    return "torch.compile(model)(x) matches model(x) (torch.testing.assert_close)"


def reduce_overhead(ctx):
    torch = ctx.torch
    model = _model(ctx)
    compiled = torch.compile(model, mode="reduce-overhead")
    x = torch.randn(4, 16, device=ctx.device)
    for _ in range(3):
        out = compiled(x)
    torch.testing.assert_close(out.cpu(), model(x).cpu())
    return "torch.compile(mode='reduce-overhead') runs three calls with the right result"
