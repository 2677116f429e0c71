"""Trees of files written on disk for a test to check."""

from __future__ import annotations

from pathlib import Path


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write each file of `files` (a path relative to `root`, and its text or bytes) under `root`."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root
