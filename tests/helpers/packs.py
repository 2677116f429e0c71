"""Packs for tests: the shipped one, what its row files declare, and a tiny one written on disk."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from air.errors import PackError
from air.pack.diff import read_pack
from air.pack.load import Pack, load_pack

from helpers.paths import SHIPPED_PACK, SHIPPED_PACK_DIR
from helpers.trees import write_tree

TINY_HEADER = """\
id: tiny
version: 1.0.0
framework: pytorch
requires_air: ">=0.1"
"""
TINY_CLAUSE = "python_call: {name: torch.utils.rename_privateuse1_backend}"  # the one row's one clause
TINY_ROWS = (
    """\
section: device-registration
rows:
  - id: tiny-row
    item: "1.1.1"
    title: A row
    priority: 1
    evidence:
      call:
        """
    + TINY_CLAUSE
    + """
    score:
      2: call
    remediation: Do it.
    docs: [https://example.org/doc]
"""
)


@functools.cache
def shipped_pack() -> Pack:
    """The shipped pack, loaded once per test run."""
    return load_pack(SHIPPED_PACK)


@functools.cache
def declared_rows(pack_directory: Path = SHIPPED_PACK_DIR) -> tuple[dict, ...]:
    """The rows a pack's row files declare, each with its file's `section`: read as written, with
    only their row families expanded, not through the pack loader."""
    return tuple(read_pack(pack_directory).rows.values())


def write_pack(root: Path, header: str = TINY_HEADER, rows: str | None = TINY_ROWS, name: str = "tiny") -> Path:
    """A pack directory `root/name` with `header` as its pack.yaml and `rows` as its one row file
    (none when `rows` is None)."""
    pack = root / name
    pack.mkdir(parents=True)
    (pack / "pack.yaml").write_text(header)
    if rows is not None:
        (pack / "rows").mkdir()
        (pack / "rows" / "01.yaml").write_text(rows)
    return pack


def load_error(path: Path) -> str:
    """The message of the PackError loading `path` raises, checked to be one line."""
    with pytest.raises(PackError) as error:
        load_pack(str(path))
    message = str(error.value)
    assert "\n" not in message
    return message


REGISTERS = (
    'import torch\n\n# air: expect tiny-row\ntorch.utils.rename_privateuse1_backend("tiny")\n'  # tiny-row earns 2
)


def add_fixture(fixtures: Path, name: str, expected: str, files: dict[str, str]) -> Path:
    """A fixture tree `fixtures/name` with `expected` as its expected.yaml."""
    return write_tree(fixtures / name, {"expected.yaml": expected, **files})
