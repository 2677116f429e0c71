"""Renamed rows: `redirects` maps an id a row had before to the id it has now, so that fixtures,
overrides and lookups naming the old id still reach the row."""

from __future__ import annotations

import pytest
from air.pack.load import load_pack
from air.packtest import check_fixture
from helpers.packs import REGISTERS, TINY_HEADER, TINY_ROWS, add_fixture, load_error, write_pack

RENAMED = TINY_HEADER + "redirects: {tiny-old: tiny-row}\n"


def test_a_lookup_by_the_old_id_finds_the_row(tmp_path):
    pack = load_pack(str(write_pack(tmp_path, header=RENAMED)))
    assert pack.row("tiny-old") is pack.row("tiny-row") is pack.rows[0]
    assert pack.resolved("tiny-old") == "tiny-row" and pack.resolved("other") == "other"
    with pytest.raises(KeyError):
        pack.row("other")


def test_a_fixture_naming_the_old_id_checks_the_row(tmp_path):
    directory = write_pack(tmp_path, header=RENAMED)
    source = REGISTERS.replace("air: expect tiny-row", "air: expect tiny-old")
    root = add_fixture(directory / "fixtures", "full", "rows: {tiny-old: 2}\n", {"pkg/__init__.py": source})
    result = check_fixture(load_pack(str(directory)), root)
    assert result.failures == [] and result.outcomes == {"tiny-row": 2}
    (root / "expected.yaml").write_text("rows: {tiny-old: 0}\n")
    assert check_fixture(load_pack(str(directory)), root).failures[0].startswith("tiny-row (1.1.1): expected 0, got 2")


def test_an_override_may_name_the_old_id_and_a_pack_inherits_the_redirects(tmp_path):
    write_pack(tmp_path, header=RENAMED, name="base")
    child = tmp_path / "child"
    child.mkdir()
    (child / "pack.yaml").write_text(TINY_HEADER + "extends: ../base\noverrides:\n  tiny-old: {priority: 2}\n")
    pack = load_pack(str(child))
    assert pack.row("tiny-old").priority == 2 and pack.overridden == {"tiny-row": frozenset({"priority"})}


@pytest.mark.parametrize(
    ("redirects", "fragment"),
    [
        ("{tiny-row: tiny-row}", "pack.yaml:5 at redirects.tiny-row: 'tiny-row' is the id of a row"),
        ("{tiny-old: tiny-new}", "at redirects.tiny-old: 'tiny-new' is not the id of a row of the pack"),
        ("{Tiny-Old: tiny-row}", "redirects"),
    ],
)
def test_broken_redirects_fail_in_one_line(tmp_path, redirects, fragment):
    assert fragment in load_error(
        write_pack(tmp_path, header=TINY_HEADER + f"redirects: {redirects}\n", rows=TINY_ROWS)
    )


def test_the_shipped_pack_still_answers_to_its_terse_ids(pack):
    assert pack.row("dt-bf16").id == "dtype-bfloat16" and pack.row("opcat-unary").id == "operators-unary"
    assert len(pack.redirects) == 129 and not set(pack.redirects) & {row.id for row in pack.rows}
