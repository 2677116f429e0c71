"""Time and peak memory of each hostile tree: appended by test_hostile_trees.py, printed by conftest.py
after the run."""

from __future__ import annotations

HOSTILE_TREES: list[str] = []
