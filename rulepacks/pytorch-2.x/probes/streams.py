"""Probes of streams and events, through torch.<device>.Stream and torch.<device>.Event."""


def _module(ctx):
    if ctx.module is None:
        raise AssertionError(f"torch.{ctx.type} does not exist")
    for name in ("Stream", "Event"):
        if getattr(ctx.module, name, None) is None:
            raise AssertionError(f"torch.{ctx.type}.{name} does not exist")
    return ctx.module


def stream_class(ctx):
    module = _module(ctx)
    stream = module.Stream()
    with module.stream(stream):
        y = ctx.torch.ones(256, device=ctx.device) * 3
    stream.synchronize()
    assert float(y.sum().cpu()) == 768.0
    return f"work queued under torch.{ctx.type}.stream(torch.{ctx.type}.Stream()) gives the right result"


def current_stream(ctx):
    module = _module(ctx)
    original = module.current_stream()
    other = module.Stream()
    with module.stream(other):
        inside = module.current_stream()
    assert inside == other, f"inside torch.{ctx.type}.stream(s), current_stream() is {inside}, not s"
    assert module.current_stream() == original, "leaving the stream context did not restore the stream"
    return f"torch.{ctx.type}.current_stream() follows torch.{ctx.type}.stream(s) and is restored after it"


def stream_synchronize(ctx):
    stream = _module(ctx).Stream()
    with _module(ctx).stream(stream):
        y = ctx.torch.ones(1 << 16, device=ctx.device).cumsum(0)
    stream.synchronize()
    assert stream.query() is True, "query() is not True after synchronize()"
    assert float(y[-1].cpu()) == float(1 << 16)
    return "Stream.synchronize() waits for the work, then query() is True"


def event_record(ctx):
    module = _module(ctx)
    event = module.Event()
    ctx.torch.ones(256, device=ctx.device).sum()
    event.record()
    event.synchronize()
    assert event.query() is True, "query() is not True after the event completed"
    return f"torch.{ctx.type}.Event() records on the current stream and completes"


def wait_stream(ctx):
    module = _module(ctx)
    producer, consumer = module.Stream(), module.Stream()
    with module.stream(producer):
        x = ctx.torch.full((1024,), 2.0, device=ctx.device)
    consumer.wait_stream(producer)
    with module.stream(consumer):
        y = x * 2
    consumer.synchronize()
    assert float(y.sum().cpu()) == 4096.0
    return "Stream.wait_stream(other) orders work across two streams"


def event_wait(ctx):
    module = _module(ctx)
    producer, consumer = module.Stream(), module.Stream()
    event = module.Event()
    with module.stream(producer):
        x = ctx.torch.full((1024,), 3.0, device=ctx.device)
        event.record(producer)
    consumer.wait_event(event)
    with module.stream(consumer):
        y = x + 1
    event.synchronize()
    consumer.synchronize()
    assert float(y.sum().cpu()) == 4096.0
    return "Stream.wait_event(e) and Event.synchronize() order and finish the work"


def elapsed_time(ctx):
    module = _module(ctx)
    start, end = module.Event(enable_timing=True), module.Event(enable_timing=True)
    start.record()
    x = ctx.torch.randn(256, 256, device=ctx.device)
    for _ in range(10):
        x = x @ x.clamp(-1, 1)
    end.record()
    end.synchronize()
    milliseconds = start.elapsed_time(end)
    assert isinstance(milliseconds, float) and milliseconds > 0, f"elapsed_time() == {milliseconds!r}"
    return f"Event.elapsed_time() measures {milliseconds:.3f} ms over ten matmuls"
