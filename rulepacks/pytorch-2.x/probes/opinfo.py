"""The operator sweep: PyTorch's own OpInfo database (torch.testing._internal, shipped in the
wheel; it needs numpy and expecttest in the probed interpreter). For every OpInfo whose name
matches `--ops` (globs, separated by commas) and every dtype it declares for the CPU, the first SAMPLES sample inputs run on
the device and on the CPU and are compared as PyTorch's own TestCommon.test_compare_cpu does
(outputs post-processed by the sample, atol 1e-3, rtol 1e-3). Each (op, dtype) is `pass`,
`fallback` (right, but the operator has no kernel of its own for the device's dispatch key, nor
a composite one: it ran through a fallback), `mismatch` (with the largest difference),
`unsupported` (no kernel), `error` (with the exception type), `skipped` (the OpInfo skips or
expects that comparison to fail: random or uninitialised outputs) or, once the sweep's budget
is spent, `not run`. The probe passes when no pair is a mismatch or an error."""

import fnmatch
import time
import unittest

SAMPLES = 3
OUTCOMES = ("pass", "fallback", "mismatch", "unsupported", "error", "skipped", "not run")
TOLERANCE = {"atol": 1e-3, "rtol": 1e-3}
UNSUPPORTED = ("not implemented for", "could not run", "no kernel", "not supported", "unsupported")


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
            if time.monotonic() >= deadline:
                matrix.append([name, shown, "not run", "the sweep's budget ran out"])
            elif any(_skips_comparison(decorator, ctx.type, dtype) for decorator in op.decorators):
                matrix.append([name, shown, "skipped", "the OpInfo skips its comparison with the CPU"])
            else:
                matrix.append([name, shown, *_outcome(torch, op, dtype, ctx.device, key)])
    if not matrix:
        raise unittest.SkipTest(f"no OpInfo matches {pattern!r}")
    counts = {outcome: sum(1 for entry in matrix if entry[2] == outcome) for outcome in OUTCOMES}
    detail = ", ".join(f"{count} {outcome}" for outcome, count in counts.items() if count)
    failing = counts["mismatch"] + counts["error"]
    return {"detail": f"{len(matrix)} (op, dtype) pairs: {detail}", "matrix": matrix, "passed": not failing}


def _skips_comparison(decorator, device_type, dtype):
    active = getattr(decorator, "is_active", None)
    if active is None:
        return False
    return any(active("TestCommon", "test_compare_cpu", device, dtype, {}) for device in (device_type, "cuda"))


def _outcome(torch, op, dtype, device, key):
    """The (outcome, detail) of the op's samples in `dtype` on the device against the CPU. The
    operators they reach on the device are watched (see `_has_kernel`): one without a kernel of
    the device's ran through a fallback."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Watched(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            reached.add(func.name())
            return func(*args, **(kwargs or {}))

    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))[:SAMPLES]
    except Exception as error:
        return "error", f"the CPU samples fail: {type(error).__name__}"
    reached = set()
    for sample in samples:
        try:
            expected = sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs))
        except Exception:
            continue  # the CPU itself refuses this sample: nothing to compare
        moved = sample.transform(lambda t: t.to(device) if isinstance(t, torch.Tensor) else t)
        if "device" in moved.kwargs:  # a factory: it makes its output where it is told
            moved.kwargs = {**moved.kwargs, "device": device}
        try:
            result = moved.output_process_fn_grad(op(moved.input, *moved.args, **moved.kwargs))
            with Watched():  # again, apart: the watch can change results (conjugate views)
                op(moved.input, *moved.args, **moved.kwargs)
        except Exception as error:
            message = str(error).lower()
            unsupported = isinstance(error, NotImplementedError) or any(word in message for word in UNSUPPORTED)
            return (
                "unsupported" if unsupported else "error",
                f"{type(error).__name__}: {str(error).splitlines()[0][:120]}",
            )
        actual, expected = _comparable(torch, _on_cpu(torch, result)), _comparable(torch, expected)
        try:
            torch.testing.assert_close(actual, expected, equal_nan=True, check_device=False, **TOLERANCE)
        except AssertionError:
            return "mismatch", f"largest difference {_largest_difference(torch, actual, expected):.3g}"
        except Exception as error:
            return "error", f"comparing: {type(error).__name__}"
    borrowed = sorted(name for name in reached if not _has_kernel(torch, name, key))
    if borrowed:
        return "fallback", f"no kernel of its own for {', '.join(borrowed[:3])}"
    return "pass", ""


def _has_kernel(torch, name, key):
    """Whether the operator `name` (aten::op.overload) runs a kernel of the device's dispatch `key`
    (or of its sparse twins) or one that serves every device. A structured operator's functional form serves every device
    by calling its out= form, which must then have the device's kernel."""
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    if any(has(name, k) for k in (key, f"Sparse{key}", f"SparseCsr{key}", "CompositeExplicitAutograd")):
        return True
    if not has(name, "CompositeExplicitAutogradNonFunctional"):
        return False
    base, _, overload = name.partition(".")
    for out in (f"{base}.out", f"{base}.{overload}_out"):
        try:
            if has(out, key) or has(out, "CompositeExplicitAutograd"):
                return True
        except RuntimeError:  # no such out= form
            continue
    return False


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
