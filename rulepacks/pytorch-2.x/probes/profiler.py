"""Probes of torch.profiler on the device: activity of the device itself, not only the CPU's."""


def _kind(ctx):
    """The name the profiler gives the device's activity and its events' device type."""
    return "PrivateUse1" if ctx.torch._C._get_privateuse1_backend_name() == ctx.type else ctx.type.upper()


def _profiled(ctx):
    torch = ctx.torch
    activity = getattr(torch.profiler.ProfilerActivity, _kind(ctx), None)
    if activity is None:
        raise AssertionError(f"torch.profiler has no activity for {ctx.type!r}")
    x = torch.randn(64, 64, device=ctx.device)
    with torch.profiler.profile(activities={torch.profiler.ProfilerActivity.CPU, activity}) as profile:
        (x @ x).sum().cpu()
    return profile


def device_traces(ctx):
    events = _profiled(ctx).events()
    on_device = [event for event in events if event.device_type.name == _kind(ctx)]
    assert on_device, f"the trace holds {len(events)} events, none of them on the device"
    return f"torch.profiler records {len(on_device)} device events for a matmul"


def kernel_timing(ctx):
    averages = _profiled(ctx).key_averages()
    timed = [event.key for event in averages if getattr(event, "device_time_total", 0) > 0]
    assert timed, "no operator reports device time"
    return f"key_averages() reports device time for {', '.join(sorted(timed)[:3])}"
