"""The operator sweep: PyTorch's own OpInfo database (torch.testing._internal, shipped in the
wheel; it needs numpy and expecttest in the probed interpreter), for every OpInfo whose name
matches `--ops` (globs, separated by commas).

For every dtype an OpInfo declares for the CPU, its first SAMPLES sample inputs run on the device
and on the CPU, and are compared as PyTorch's own TestCommon.test_compare_cpu does (outputs
post-processed by the sample, atol 1e-3, rtol 1e-3). For an OpInfo that supports autograd in
float32, the gradients of those samples (variant GRADIENTS) are compared alike: the reference is
the CPU's.

Each entry is `pass`, `fallback` (right, but an operator it reached has no kernel of its own for
the device's dispatch key, nor a composite one: it ran through a fallback), `mismatch` (with the
largest difference), `unsupported` (no kernel), `error` (with the exception type), `skipped`
(the OpInfo skips or expects that comparison to fail: random or uninitialised outputs) or, once
the sweep's budget is spent, `not run`. The probe passes when no entry is a mismatch or an
error."""

import fnmatch
import time
import unittest

SAMPLES = 3
OUTCOMES = ("pass", "fallback", "mismatch", "unsupported", "error", "skipped", "not run")
TOLERANCE = {"atol": 1e-3, "rtol": 1e-3}
UNSUPPORTED = ("not implemented for", "could not run", "no kernel", "not supported", "unsupported")
GRADIENTS = "float32 backward"
COMPOSITE = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutograd")
NOT_TENSORS = ("Scalar", "ScalarList", "TensorList", "GenericList")  # how the profiler records other arguments


def sweep(ctx):
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    except ImportError as missing:
        raise unittest.SkipTest(f"the OpInfo database cannot load here: {missing}") from None
    torch = ctx.torch
    pattern = ctx.options.get("ops") or "*"
    globs = [glob.strip() for glob in pattern.split(",") if glob.strip()]
    key = "PrivateUse1" if torch._C._get_privateuse1_backend_name() == ctx.type else ctx.type.upper()
    deadline = time.monotonic() + float(ctx.options.get("ops_budget") or 120)
    matrix = []
    for op in op_db:
        name = f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name
        if not any(fnmatch.fnmatchcase(name, glob) for glob in globs):
            continue
        for dtype in sorted(op.supported_dtypes("cpu"), key=str):
            shown = str(dtype).removeprefix("torch.")
            outcome = _excused(op, dtype, ctx.type, deadline) or _outcome(torch, op, dtype, ctx.device, key)
            matrix.append([name, shown, *outcome])
        if op.supports_autograd and torch.float32 in op.supported_backward_dtypes("cpu"):
            outcome = _excused(op, torch.float32, ctx.type, deadline) or _gradient_outcome(torch, op, ctx.device)
            matrix.append([name, GRADIENTS, *outcome])
    if not matrix:
        raise unittest.SkipTest(f"no OpInfo matches {pattern!r}")
    counts = {outcome: sum(1 for entry in matrix if entry[2] == outcome) for outcome in OUTCOMES}
    detail = ", ".join(f"{count} {outcome}" for outcome, count in counts.items() if count)
    failing = counts["mismatch"] + counts["error"]
    return {"detail": f"{len(matrix)} entries: {detail}", "matrix": matrix, "passed": not failing}


def _excused(op, dtype, device_type, deadline):
    """Why the op is not measured in `dtype` (the budget is spent, or the OpInfo skips its
    comparison with the CPU), as an (outcome, detail); None when it is."""
    if time.monotonic() >= deadline:
        return "not run", "the sweep's budget ran out"
    if any(_skips_comparison(decorator, device_type, dtype) for decorator in op.decorators):
        return "skipped", "the OpInfo skips its comparison with the CPU"
    return None


def _skips_comparison(decorator, device_type, dtype):
    active = getattr(decorator, "is_active", None)
    if active is None:
        return False
    return any(active("TestCommon", "test_compare_cpu", device, dtype, {}) for device in (device_type, "cuda"))


def _outcome(torch, op, dtype, device, key):
    """The (outcome, detail) of the op's samples in `dtype` on the device against the CPU. The
    device runs are profiled, and the operators they reach followed down (see `_borrowed`): one
    the device has no kernel for ran through a fallback."""
    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))[:SAMPLES]
    except Exception as error:
        return "error", f"the CPU samples fail: {type(error).__name__}"
    borrowed = set()
    for sample in samples:
        try:
            expected = sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs))
        except Exception:
            continue  # the CPU itself refuses this sample: nothing to compare
        moved = _on_device(torch, sample, device)
        try:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as run:
                result = moved.output_process_fn_grad(op(moved.input, *moved.args, **moved.kwargs))
        except Exception as error:
            return _failed(error)
        borrowed |= _borrowed(torch, run.events(), key)
        differs = _differs(torch, _comparable(torch, _on_cpu(torch, result)), _comparable(torch, expected))
        if differs:
            return differs
    if borrowed:
        return "fallback", f"no kernel of its own for {', '.join(sorted(borrowed)[:3])}"
    return "pass", ""


def _gradient_outcome(torch, op, device):
    """The (outcome, detail) of the gradients of the op's float32 samples on the device against
    the CPU's: the same seeded output gradients pulled back through both."""
    try:
        samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=True))[:SAMPLES]
    except Exception as error:
        return "error", f"the CPU samples fail: {type(error).__name__}"
    compared = 0
    for sample in samples:
        try:
            expected = _gradients(torch, op, sample)
        except Exception:
            continue  # the CPU itself refuses this sample: nothing to compare
        if expected is None:
            continue  # nothing in it is differentiable
        try:
            actual = _gradients(torch, op, _on_device(torch, sample, device))
        except Exception as error:
            return _failed(error)
        if actual is None or [grad is None for grad in actual] != [grad is None for grad in expected]:
            return "mismatch", "the device's gradients reach other inputs"
        differs = _differs(
            torch, [grad for grad in actual if grad is not None], [grad for grad in expected if grad is not None]
        )
        if differs:
            return differs
        compared += 1
    return ("pass", "") if compared else ("skipped", "no sample has a gradient the CPU computes")


def _differs(torch, actual, expected):
    """None when `actual` matches `expected` within TOLERANCE; else the (outcome, detail)."""
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True, check_device=False, **TOLERANCE)
    except AssertionError:
        return "mismatch", f"largest difference {_largest_difference(torch, actual, expected):.3g}"
    except Exception as error:
        return "error", f"comparing: {type(error).__name__}"
    return None


def _gradients(torch, op, sample):
    """The gradients (on the CPU) of the sample's inputs that require one, for output gradients
    drawn from a generator seeded alike every time; None when nothing is differentiable."""
    from torch.utils._pytree import tree_leaves

    def differentiable(values):
        return [value for value in tree_leaves(values) if isinstance(value, torch.Tensor) and value.requires_grad]

    inputs = differentiable([sample.input, sample.args, sample.kwargs])
    outputs = differentiable(sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs)))
    if not inputs or not outputs:
        return None
    generator = torch.Generator().manual_seed(0)
    seeds = [torch.randn(output.shape, dtype=output.dtype, generator=generator).to(output.device) for output in outputs]
    grads = torch.autograd.grad(outputs, inputs, seeds, allow_unused=True)
    return [None if grad is None else grad.cpu() for grad in grads]


def _on_device(torch, sample, device):
    """The sample with its tensors moved to the device (leaves still, as they were on the CPU)."""

    def moved(value):
        if not isinstance(value, torch.Tensor):
            return value
        return value.detach().to(device).requires_grad_(value.requires_grad)

    placed = sample.transform(moved)
    if "device" in placed.kwargs:  # a factory: it makes its output where it is told
        placed.kwargs = {**placed.kwargs, "device": device}
    return placed


def _failed(error):
    message = str(error).lower()
    unsupported = isinstance(error, NotImplementedError) or any(word in message for word in UNSUPPORTED)
    return "unsupported" if unsupported else "error", f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"


def _borrowed(torch, events, key):
    """The operators (aten::op.overload) a profiled run reached on the device that have no kernel
    of the device's dispatch `key` (or of its sparse twins) and no composite one: they ran
    through a fallback. A composite kernel is followed down to the operators it calls."""
    borrowed = set()
    pending = [event for event in events if event.cpu_parent is None]
    while pending:
        event = pending.pop()
        served, overloads = _served(torch, event.name, event.input_dtypes, key)
        if served == "composite":
            pending.extend(event.cpu_children)
        elif served == "none":
            borrowed.add(overloads[0])
    return borrowed


def _served(torch, name, recorded, key):
    """How the device serves an operator call the profiler recorded (its name and the dtypes of
    its arguments, "Scalar" and the like for what is not a tensor): by a `kernel` of its own, a
    `composite` one, or `none`, with the overloads the call fits. A call that fits no overload
    (not an operator) is followed down as a composite one would be."""
    try:
        schemas = torch._C._jit_get_schemas_for_operator(name)
    except RuntimeError:
        schemas = []
    overloads = [
        f"{name}.{schema.overload_name}" if schema.overload_name else name
        for schema in schemas
        if len(schema.arguments) == len(recorded)
        and all(_fits(str(argument.type), dtype) for argument, dtype in zip(schema.arguments, recorded))
    ]
    if not overloads:
        return "composite", overloads
    if any(_has(torch, overload, k) for overload in overloads for k in (key, f"Sparse{key}", f"SparseCsr{key}")):
        return "kernel", overloads
    if any(_has(torch, overload, k) for overload in overloads for k in (*COMPOSITE, f"Autograd{key}")):
        return "composite", overloads
    return "none", overloads


def _has(torch, overload, key):
    """Whether the dispatcher holds a kernel of `key` for `overload` (the interpreter's own
    operators, which it also lists, are not in the dispatcher)."""
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key(overload, key)
    except RuntimeError:
        return False


def _fits(declared, recorded):
    """Whether an argument declared `declared` can be one the profiler recorded as `recorded`."""
    tensor = declared.startswith("Tensor") and not declared.startswith("Tensor[]")
    return recorded == "" or tensor == (recorded not in NOT_TENSORS)


def _on_cpu(torch, value):
    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, (list, tuple)):
        return type(value)(_on_cpu(torch, item) for item in value)
    return value


def _comparable(torch, value):
    """`value` with its one-byte floats (float8) widened: torch.testing cannot subtract them."""
    if isinstance(value, torch.Tensor):
        narrow = value.dtype.is_floating_point and value.dtype.itemsize == 1
        return value.float() if narrow else value
    if isinstance(value, (list, tuple)):
        return type(value)(_comparable(torch, item) for item in value)
    return value


def _largest_difference(torch, actual, expected):
    pairs = [(actual, expected)] if isinstance(actual, torch.Tensor) else list(zip(actual, expected))
    worst = 0.0
    for got, wanted in pairs:
        if (
            isinstance(got, torch.Tensor)
            and isinstance(wanted, torch.Tensor)
            and got.shape == wanted.shape
            and got.numel()
        ):
            wide = torch.complex128 if got.is_complex() or wanted.is_complex() else torch.float64
            worst = max(worst, float((got.to(wide) - wanted.to(wide)).abs().nan_to_num(0).max()))
    return worst
