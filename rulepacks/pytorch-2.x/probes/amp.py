"""Probes of automatic mixed precision on the device, in its autocast dtype
(torch.get_autocast_dtype)."""


def autocast_context(ctx):
    torch = ctx.torch
    dtype = torch.get_autocast_dtype(ctx.type)
    with torch.autocast(device_type=ctx.type, dtype=dtype):
        enabled = torch.is_autocast_enabled(ctx.type)
        torch.mm(torch.randn(4, 4, device=ctx.device), torch.randn(4, 4, device=ctx.device))
    assert enabled, f"torch.is_autocast_enabled({ctx.type!r}) is False inside torch.autocast"
    return f"torch.autocast(device_type={ctx.type!r}, dtype={dtype}) enters and runs ops"


def downcast(ctx):
    torch = ctx.torch
    dtype = torch.get_autocast_dtype(ctx.type)
    with torch.autocast(device_type=ctx.type, dtype=dtype):
        out = torch.mm(torch.randn(4, 4, device=ctx.device), torch.randn(4, 4, device=ctx.device))
    assert out.dtype == dtype, f"torch.mm of float32 inputs under autocast gave {out.dtype}, not {dtype}"
    return f"torch.mm of float32 inputs gives {dtype} under autocast"


def grad_scaler(ctx):
    torch = ctx.torch
    model = torch.nn.Linear(4, 1).to(ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(ctx.type)
    before = model.weight.detach().clone()
    with torch.autocast(device_type=ctx.type, dtype=torch.get_autocast_dtype(ctx.type)):
        loss = model(torch.ones(2, 4, device=ctx.device)).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    assert not torch.equal(before.cpu(), model.weight.detach().cpu()), "the scaled step left the weights unchanged"
    return f"torch.amp.GradScaler({ctx.type!r}) scales, steps and updates"
