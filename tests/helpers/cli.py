"""Running the `air` command line in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PINNED_DATE = "1767225600"  # SOURCE_DATE_EPOCH: 2026-01-01, so that reports compare byte for byte


def air(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`python -m air ARGS`, its output captured, with the report date pinned and `env` added."""
    environment = {**os.environ, "SOURCE_DATE_EPOCH": PINNED_DATE, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "air", *args], capture_output=True, text=True, cwd=cwd, env=environment, timeout=timeout
    )
