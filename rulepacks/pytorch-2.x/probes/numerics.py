"""Probes of numerical results. The reference is the CPU: float32 ops against CPU float32 within
atol 1e-5, rtol 1.3e-6; float16 ops against the same ops in float16 on the CPU within atol 1e-3,
rtol 1e-3; bfloat16 within atol 1e-2, rtol 1.6e-2 (the checklist's tolerances)."""


def _cases(torch):
    generator = torch.Generator().manual_seed(0)
    a = torch.rand(32, 32, generator=generator)
    b = torch.rand(32, 32, generator=generator) / 32
    return {
        "add": lambda t: t["a"] + t["b"],
        "mul": lambda t: t["a"] * t["b"],
        "exp": lambda t: t["a"].exp(),
        "softmax": lambda t: t["a"].softmax(-1),
        "sum": lambda t: t["b"].sum(-1),
        "mm": lambda t: t["a"] @ t["b"],
    }, {"a": a, "b": b}


def _compare(ctx, dtype, atol, rtol):
    torch = ctx.torch
    cases, inputs = _cases(torch)
    host = {name: value.to(dtype) for name, value in inputs.items()}
    device = {name: value.to(ctx.device) for name, value in host.items()}
    for name, op in cases.items():
        expected, got = op(host), op(device)
        assert got.dtype == dtype, f"{name} gave {got.dtype}"
        try:
            torch.testing.assert_close(got.cpu().float(), expected.float(), atol=atol, rtol=rtol)
        except AssertionError as mismatch:
            raise AssertionError(f"{name} in {dtype}: {str(mismatch).splitlines()[0]}") from None
    return f"{', '.join(cases)} in {dtype} match the CPU within atol {atol:g}, rtol {rtol:g}"


def float32_ops(ctx):
    return _compare(ctx, ctx.torch.float32, 1e-5, 1.3e-6)


def float16_ops(ctx):
    return _compare(ctx, ctx.torch.float16, 1e-3, 1e-3)


def bfloat16_ops(ctx):
    return _compare(ctx, ctx.torch.bfloat16, 1e-2, 1.6e-2)


def large_reduction(ctx):
    torch = ctx.torch
    count = 1 << 25
    half = torch.ones(count, device=ctx.device, dtype=torch.float16)
    mean = float(half.mean().cpu())
    assert mean == 1.0, f"the float16 mean of 2**25 ones is {mean}"
    total = float(torch.ones(count, device=ctx.device, dtype=torch.bfloat16).sum().cpu())
    assert total == count, f"the bfloat16 sum of 2**25 ones is {total}"
    return "float16 mean and bfloat16 sum of 2**25 ones are exact (accumulated in float32)"


def matmul_determinism(ctx):
    torch = ctx.torch
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(256, 256, generator=generator).to(ctx.device)
    b = torch.randn(256, 256, generator=generator).to(ctx.device)
    first = (a @ b).cpu()
    assert all(torch.equal(first, (a @ b).cpu()) for _ in range(3)), "the same matmul gave different results"
    return "a 256x256 matmul repeats bit for bit"
