"""git as the tests run it: with a fixed identity, failing loudly."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run `git args` in `root` and return its output, stripped; `env`, when given, is git's whole environment."""
    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout.strip()
