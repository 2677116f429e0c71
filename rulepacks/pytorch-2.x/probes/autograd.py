"""Probes of autograd on the device. The numerical reference is the same computation in
float32 on the CPU, within the checklist's float32 tolerance (atol 1e-5, rtol 1.3e-6)."""


def _inputs(torch, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0)) / 2


def backward_runs(ctx):
    torch = ctx.torch
    x = _inputs(torch, 8, 8).to(ctx.device).requires_grad_()
    torch.nn.functional.gelu(x @ x).sum().backward()
    assert x.grad is not None and x.grad.device.type == ctx.type, "no gradient on the device"
    assert bool(torch.isfinite(x.grad).all().cpu()), "the gradient is not finite"
    return "gelu(x @ x).sum().backward() leaves a finite gradient on the device"


def grad_parity(ctx):
    torch = ctx.torch
    host = _inputs(torch, 8, 8)
    x = host.to(ctx.device, copy=True).requires_grad_()
    torch.nn.functional.gelu(x @ x).sum().backward()
    reference = host.requires_grad_()
    torch.nn.functional.gelu(reference @ reference).sum().backward()
    error = float((x.grad.cpu() - reference.grad).abs().max())
    assert torch.allclose(x.grad.cpu(), reference.grad, atol=1e-5, rtol=1.3e-6), (
        f"the largest difference is {error:.3g}"
    )
    return f"the gradient of gelu(x @ x).sum() matches the CPU's within atol 1e-5, rtol 1.3e-6 (largest difference {error:.2g})"


def autograd_grad(ctx):
    torch = ctx.torch
    x = _inputs(torch, 4).to(ctx.device).requires_grad_()
    (gradient,) = torch.autograd.grad((x * x).sum(), x)
    assert gradient.device.type == ctx.type
    torch.testing.assert_close(gradient.cpu(), 2 * x.detach().cpu())
    return "torch.autograd.grad((x * x).sum(), x) == 2 * x on the device"


def accumulate(ctx):
    torch = ctx.torch
    x = torch.ones(3, device=ctx.device, requires_grad=True)
    (2 * x).sum().backward()
    (2 * x).sum().backward()
    assert bool(x.grad.cpu().eq(4).all()), f"x.grad == {x.grad.cpu().tolist()} after two backward calls, not 4"
    return "two backward calls accumulate: x.grad == 4"


def custom_function(ctx):
    torch = ctx.torch

    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(_ctx, x):
            return x * 2

        @staticmethod
        def backward(_ctx, grad):
            return grad * 2

    x = torch.ones(4, device=ctx.device, requires_grad=True)
    Twice.apply(x).sum().backward()
    assert bool(x.grad.cpu().eq(2).all()), f"x.grad == {x.grad.cpu().tolist()}"
    return "a custom torch.autograd.Function runs forward and backward on the device"


def checkpointing(ctx):
    torch = ctx.torch
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8)).to(ctx.device)
    x = _inputs(torch, 4, 8).to(ctx.device).requires_grad_()
    checkpoint(model, x, use_reentrant=False).sum().backward()
    checkpointed = x.grad.clone()
    x.grad = None
    model(x).sum().backward()
    torch.testing.assert_close(checkpointed.cpu(), x.grad.cpu())
    return "torch.utils.checkpoint gives the gradients of the plain forward"


def mixed_backward(ctx):
    torch = ctx.torch
    dtype = torch.get_autocast_dtype(ctx.type)
    model = torch.nn.Linear(8, 8).to(ctx.device)
    with torch.autocast(device_type=ctx.type, dtype=dtype):
        out = model(torch.randn(4, 8, device=ctx.device))
    assert out.dtype == dtype, f"the autocast forward gave {out.dtype}, not {dtype}"
    out.float().sum().backward()
    assert model.weight.grad.dtype == torch.float32, f"the weight's gradient is {model.weight.grad.dtype}"
    return f"a {dtype} autocast forward gives float32 gradients"


def higher_order(ctx):
    torch = ctx.torch
    x = _inputs(torch, 4).to(ctx.device).requires_grad_()
    (first,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    (second,) = torch.autograd.grad(first.sum(), x)
    torch.testing.assert_close(second.cpu(), 6 * x.detach().cpu())
    return "the second derivative of sum(x ** 3) is 6 * x on the device"
