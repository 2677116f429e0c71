from __future__ import annotations

import os

import pytest
from air.pack.load import Pack
from helpers.measurements import HOSTILE_TREES
from helpers.packs import shipped_pack


@pytest.fixture(scope="session")
def pack() -> Pack:
    return shipped_pack()


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory):
    """Every test's result cache lives in a temporary directory, never in the user's."""
    previous = os.environ.get("AIR_CACHE")
    os.environ["AIR_CACHE"] = str(tmp_path_factory.mktemp("air-cache"))
    yield
    if previous is None:
        os.environ.pop("AIR_CACHE", None)
    else:
        os.environ["AIR_CACHE"] = previous


def pytest_terminal_summary(terminalreporter):
    """Time and peak memory of each hostile tree, measured by test_hostile_trees.py."""
    if HOSTILE_TREES:
        terminalreporter.section("hostile trees")
        for line in HOSTILE_TREES:
            terminalreporter.write_line(line)
