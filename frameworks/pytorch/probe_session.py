"""The PyTorch probe session: air's probe worker runs `start` in the probed interpreter before
any probe, and hands each probe the context it returns.

`start` imports torch, then the module that loads the backend: `--import MODULE` when given
(it must import), else the backend's package when it imports (a backend that autoloads needs
none). The device must then hold a tensor, or no probe runs.
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
    """What a probe is given: torch, the device to probe (`device`, e.g. "npu" or "npu:0"), its
    type, the module torch binds for that type (`torch.npu`, None when there is none), and the
    options the check was given (`ops`, `ops_budget`)."""

    torch: Any
    device: str
    type: str
    module: ModuleType | None
    options: dict[str, str | None]


def start(options: dict[str, str | None]) -> tuple[Context, dict[str, str]]:
    import torch

    device = options["device"] or ""
    loaded = options.get("import")
    if loaded:
        backend = importlib.import_module(loaded)
    else:
        backend = _imported(options.get("package"))
    torch.empty(1, device=device)  # raises when the device cannot hold a tensor
    kind = torch.device(device).type
    environment = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "device": device,
    }
    if backend is not None:
        environment["backend"] = f"{backend.__name__} {_version(backend)}"
    return Context(torch, device, kind, getattr(torch, kind, None), options), environment


def _imported(package: str | None) -> ModuleType | None:
    if not package or not package.isidentifier():
        return None
    try:
        return importlib.import_module(package)
    except ImportError:
        return None  # a backend that autoloads, or one installed under another name


def _version(module: ModuleType) -> str:
    version = getattr(module, "__version__", None)
    if isinstance(version, str):
        return version
    try:
        return importlib.metadata.version(module.__name__.split(".")[0])
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"
