"""A pack that extends another changes fields of inherited rows with `overrides`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from air.pack.load import load_pack
from helpers.packs import TINY_HEADER, TINY_ROWS, load_error, write_pack

ROOT = Path(__file__).resolve().parents[1]
CHILD = TINY_HEADER.replace("id: tiny", "id: child") + "extends: ../base\n"


def child_pack(tmp_path, overrides: str, rows: str | None = None) -> Path:
    write_pack(tmp_path, name="base")
    return write_pack(tmp_path, CHILD + overrides, rows, name="child")


def test_an_override_changes_only_the_fields_it_gives(tmp_path):
    pack = load_pack(str(child_pack(tmp_path, "overrides:\n  tiny-row: {priority: 3, title: A rarer row}\n")))
    base = load_pack(str(tmp_path / "base")).rows[0]
    (row,) = pack.rows
    assert (row.priority, row.title) == (3, "A rarer row")
    assert (row.evidence, row.score_text, row.remediation) == (base.evidence, base.score_text, base.remediation)
    assert pack.overridden == {"tiny-row": frozenset({"priority", "title"})}
    assert pack.own_rows == frozenset()


def test_an_override_may_change_the_scoring(tmp_path):
    overrides = """\
overrides:
  tiny-row:
    evidence:
      call: {python_call: {name: torch.utils.rename_privateuse1_backend}}
      text: {text: {literal: rename_privateuse1_backend}}
    score:
      2: call
      1: text
"""
    (row,) = load_pack(str(child_pack(tmp_path, overrides))).rows
    assert set(row.evidence) == {"call", "text"} and row.score_text == {2: "call", 1: "text"}


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ("overrides:\n  no-row: {priority: 1}\n", "pack.yaml:7 at overrides.no-row: no row 'no-row' in tiny"),
        ("overrides:\n  tiny-row: {colour: red}\n", "at overrides.tiny-row.colour: unknown key 'colour'"),
        ("overrides:\n  tiny-row: {id: other}\n", "unknown key 'id'"),
        ("overrides:\n  tiny-row: {}\n", "overrides.tiny-row"),
        ("overrides:\n  tiny-row: {priority: 5}\n", "at overrides.tiny-row.priority"),
        ("overrides:\n  tiny-row: {paths: [fork]}\n", "`paths` is now `integration_paths`"),
        (
            "overrides:\n  tiny-row: {score: {2: missing}}\n",
            "overrides.tiny-row.score.2: condition refers to undefined",
        ),
    ],
)
def test_broken_overrides_fail_in_one_line(tmp_path, overrides, fragment):
    assert fragment in load_error(child_pack(tmp_path, overrides))


def test_a_row_of_the_pack_itself_is_changed_where_it_is_written(tmp_path):
    child = child_pack(tmp_path, "overrides:\n  tiny-row: {priority: 2}\n", rows=TINY_ROWS)
    assert "row 'tiny-row' is defined by this pack's row files: change it there" in load_error(child)


def test_only_a_pack_that_extends_overrides(tmp_path):
    message = load_error(write_pack(tmp_path, header=TINY_HEADER + "overrides:\n  tiny-row: {priority: 2}\n"))
    assert "at overrides: only a pack that `extends` another overrides rows" in message


def test_a_pack_that_only_overrides_needs_no_row_files(tmp_path):
    pack = load_pack(str(child_pack(tmp_path, "overrides:\n  tiny-row: {priority: 2}\n")))
    assert [row.priority for row in pack.rows] == [2]
    (tmp_path / "child" / "pack.yaml").write_text(CHILD + "rows: ['rows/*.yaml']\n")
    assert "no row files match rows/*.yaml" in load_error(tmp_path / "child")


def test_every_row_field_but_the_id_can_be_overridden():
    schema = json.loads((ROOT / "schemas" / "row.schema.json").read_text())["$defs"]
    assert set(schema["row_change"]["properties"]) == set(schema["row"]["properties"]) - {"id"}
