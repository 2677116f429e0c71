"""Probes of a PJRT plugin through JAX: its devices, a compiled function, transfers, collectives.

Each probe takes the session's context (`probe_session.Context`): `ctx.jax`, `ctx.device` (the
platform's name) and `ctx.devices`. A probe passes by returning what it saw, is skipped by
raising unittest.SkipTest, and fails by raising.
"""

import unittest

import numpy as np


def devices(ctx):
    found = ctx.jax.devices(ctx.device)
    assert found, f"jax.devices({ctx.device!r}) is empty"
    platforms = {device.platform for device in found}
    assert platforms == {ctx.device}, f"jax.devices({ctx.device!r}) lists devices of {sorted(platforms)}"
    return f"jax.devices({ctx.device!r}) lists {len(found)} {found[0].device_kind} devices"


def jit(ctx):
    jax = ctx.jax
    x = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    on_device = jax.device_put(x, ctx.devices[0])
    y = jax.jit(lambda a: jax.numpy.tanh(a @ a.T) + 1)(on_device)
    np.testing.assert_allclose(np.asarray(y), np.tanh(x @ x.T) + 1, rtol=1e-5, atol=1e-6)
    return f"jit(tanh(a @ a.T) + 1) on {ctx.devices[0]} matches NumPy to 1e-5"


def transfer(ctx):
    values = np.random.default_rng(0).standard_normal((128, 33)).astype(np.float32)
    back = np.asarray(ctx.jax.device_put(values, ctx.devices[0]))
    np.testing.assert_array_equal(back, values)
    return f"a 128x33 float32 array comes back from {ctx.devices[0]} unchanged"


def collectives(ctx):
    jax = ctx.jax
    count = len(ctx.devices)
    if count < 2:
        raise unittest.SkipTest(f"needs two devices of {ctx.device!r}; found {count}")
    summed = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i", devices=ctx.devices)(
        np.arange(count, dtype=np.float32)
    )
    assert np.all(np.asarray(summed) == count * (count - 1) / 2), f"psum gave {np.asarray(summed)}"
    return f"psum over {count} devices gives {count * (count - 1) // 2} on each"
