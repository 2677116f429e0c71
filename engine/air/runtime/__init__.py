"""Runtime verification: `air check --runtime` runs the pack's probes against the installed
backend (`air.runtime.supervisor`, which starts `worker.py` in the probed interpreter), and the
rows they decide score by what happened (`air.scoring.probes`). Only `--runtime` runs code."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_BUDGET = 1800.0  # seconds for the whole suite
DEFAULT_OPS_BUDGET = 120.0  # seconds for a sweep of the operators
MAX_OPS_BUDGET = 1500.0  # within the timeout a pack gives its sweep


@dataclass(frozen=True)
class RuntimeOptions:
    """What `--runtime` was given: the interpreter to probe, the device (by default the one the
    source names), the module to import first (by default the backend's package, when it
    imports), the budget of the whole suite in seconds, and for a sweep of the operators the
    glob of those to sweep and its own budget."""

    python: str
    device: str | None = None
    module: str | None = None
    budget: float = DEFAULT_BUDGET
    ops: str | None = None
    ops_budget: float = DEFAULT_OPS_BUDGET
