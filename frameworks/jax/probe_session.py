"""The JAX probe session: air's probe worker runs `start` in the probed interpreter before any
probe, and hands each probe the context it returns.

`start` imports jax, then the module that loads the plugin: `--import MODULE` when given (it must
import), else the plugin's package when it imports (a plugin JAX discovers through its
jax_plugins entry point needs none). The platform probed (`--device`, the plugin's platform name
such as "tt", or "cpu") must then list a device, or no probe runs.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import platform
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass
class Context:
    """What a probe is given: jax, the platform probed (`device`), its devices, and the options
    the check was given."""

    jax: Any
    device: str
    devices: list[Any]
    options: dict[str, str | None]


def start(options: dict[str, str | None]) -> tuple[Context, dict[str, str]]:
    import jax

    loaded = options.get("import")
    backend = importlib.import_module(loaded) if loaded else _imported(options.get("package"))
    name = (options["device"] or "").partition(":")[0]
    devices = jax.devices(name)  # raises when the platform is unknown or has no device
    environment = {
        "python": platform.python_version(),
        "jax": jax.__version__,
        "jaxlib": _distribution_version("jaxlib"),
        "platform": f"{name} ({len(devices)} devices: {devices[0].device_kind})",
    }
    if backend is not None:
        environment["backend"] = f"{backend.__name__} {_distribution_version(backend.__name__.split('.')[0])}"
    return Context(jax, name, devices, options), environment


def _imported(package: str | None) -> ModuleType | None:
    if not package or not package.isidentifier():
        return None
    try:
        return importlib.import_module(package)
    except ImportError:
        return None  # a plugin JAX discovers by itself, or one installed under another name


def _distribution_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"
