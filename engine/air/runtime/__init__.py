"""Runtime verification: `air check --runtime` runs the pack's probes against the installed
backend (`air.runtime.supervisor`, which starts `worker.py` in the probed interpreter), and the
rows they decide score by what happened (`air.scoring.probes`). Only `--runtime` runs code."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_BUDGET = 1800.0  # seconds for the whole suite


@dataclass(frozen=True)
class RuntimeOptions:
    """What `--runtime` was given: the interpreter to probe, the device (by default the one the
    source names), the module to import first (by default the backend's package, when it
    imports), and the budget of the whole suite in seconds."""

    python: str
    device: str | None = None
    module: str | None = None
    budget: float = DEFAULT_BUDGET
