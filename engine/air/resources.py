"""Where the shipped data lives: inside the wheel (`air/_data`), or beside `engine/` in a checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
SCHEMA_FILES = ("row", "pack", "framework", "report", "fixture", "backends", "probes")  # schemas/<name>.schema.json


@cache
def data_dir(kind: str) -> Path:
    """`kind` is one of "rulepacks", "frameworks", "schemas"."""
    installed = PACKAGE_DIR / "_data" / kind
    if installed.is_dir():
        return installed
    return PACKAGE_DIR.parent.parent / kind
