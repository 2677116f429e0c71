"""What a check leaves in a result cache."""

from __future__ import annotations

from pathlib import Path

from air import cache


def cache_entries(cache_directory: Path) -> list[Path]:
    """The result entries kept in `cache_directory`, in a stable order."""
    return sorted((cache_directory / cache.ENTRY_DIR).glob("*/*.json"))
