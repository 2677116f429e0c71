"""Probes of the DataLoader beside the device."""


def multiworker(ctx):
    torch = ctx.torch
    torch.ones(1, device=ctx.device)  # the device is initialised before the workers fork
    items = list(torch.utils.data.DataLoader(range(64), batch_size=8, num_workers=2))
    assert sum(len(batch) for batch in items) == 64
    return "DataLoader(num_workers=2) delivers every item after the device is initialised"
