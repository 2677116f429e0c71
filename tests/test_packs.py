"""Pack loading: the shipped pack is valid, and every kind of broken pack fails in one line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from air.errors import PackError
from air.pack.load import load_pack
from air.pack.shipped import shipped_packs
from helpers.packs import TINY_CLAUSE, TINY_HEADER, TINY_ROWS, declared_rows, load_error, write_pack
from helpers.paths import SHIPPED_PACK


def test_shipped_pack_loads_every_row_its_files_declare():
    assert SHIPPED_PACK in shipped_packs()
    pack = load_pack(SHIPPED_PACK)
    ids = [row.id for row in pack.rows]
    assert len(set(ids)) == len(ids)
    assert sorted(ids) == sorted(row["id"] for row in declared_rows())
    assert pack.digest.startswith("sha256:") and len(pack.digest) == len("sha256:") + 64


def test_minimal_pack_loads(tmp_path):
    pack = load_pack(str(write_pack(tmp_path)))
    assert [row.id for row in pack.rows] == ["tiny-row"]
    assert pack.rows[0].score[2].evaluate({"call": _Present()}) is True


class _Present:
    decided = True

    def count(self):
        return 1


def test_digest_is_stable_and_content_sensitive(tmp_path):
    first = load_pack(str(write_pack(tmp_path, name="a"))).digest
    assert load_pack(str(write_pack(tmp_path, name="b"))).digest == first
    changed = load_pack(str(write_pack(tmp_path, rows=TINY_ROWS.replace("Do it.", "Do it now."), name="c"))).digest
    assert changed != first


@pytest.mark.parametrize(
    ("rows", "fragments"),
    [
        (
            TINY_ROWS.replace("    priority: 1\n", "    priority: 1\n    prority: 2\n"),
            ["01.yaml:7", "rows[0]", "unknown key 'prority'"],
        ),
        (TINY_ROWS.replace("      2: call", "      2: call and"), ["01.yaml:11", "cannot parse condition"]),
        (TINY_ROWS.replace("      2: call", "      2: call and missing"), ["undefined evidence missing"]),
        (TINY_ROWS.replace("python_call:", "python_cal:"), ["01.yaml:9", "unknown key 'python_cal'"]),
        (TINY_ROWS.replace("    priority: 1", "    priority: 4"), ["01.yaml:6", "rows[0].priority"]),
        (TINY_ROWS.replace("tiny-row", "Tiny_Row"), ["rows[0].id"]),
        (TINY_ROWS.replace("section: device-registration", "section: nowhere"), ["unknown section 'nowhere'"]),
        (TINY_ROWS + TINY_ROWS.split("rows:\n", 1)[1], ["duplicate row id 'tiny-row'", "01.yaml:14"]),
        (
            TINY_ROWS.replace("      call:\n", "      call:\n        text: {pattern: '(a+)+b'}\n"),
            ["needs exactly one of"],
        ),
        (TINY_ROWS.replace(TINY_CLAUSE, "text: {pattern: '(a+)+b'}"), ["backtrack catastrophically"]),
        (TINY_ROWS.replace(TINY_CLAUSE, "text: {pattern: '(unclosed'}"), ["invalid regular expression"]),
        (
            TINY_ROWS.replace("      call:\n", "      call:\n        where: {X: {symbol: nope}}\n"),
            ["unknown symbol set 'nope'"],
        ),
        (
            TINY_ROWS.replace("      call:\n", "      call:\n        where: {X: {matches: '(a*)*'}}\n"),
            ["where.X.matches", "backtrack"],
        ),
        (
            TINY_ROWS.replace("      call:\n", "      call:\n        where: {X: {defined_matches: '(a*)*'}}\n"),
            ["where.X.defined_matches", "backtrack"],
        ),
        (
            TINY_ROWS.replace("      call:\n", "      call:\n        where: {X: {bound_matches: '(unclosed'}}\n"),
            ["where.X.bound_matches", "invalid regular expression"],
        ),
        (
            TINY_ROWS.replace("      call:\n", "      call:\n        file_matches: '(a*)*'\n"),
            ["call.file_matches", "backtrack"],
        ),
        ("rows: [\n", ["invalid YAML"]),
        ("section: a\nsection: b\nrows: []\n", ["01.yaml:2", "duplicate key 'section'"]),
        (
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(7)),
            ["alias expansion bomb"],
        ),
    ],
)
def test_broken_rows_fail_in_one_line(tmp_path, rows, fragments):
    message = load_error(write_pack(tmp_path, rows=rows))
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(
    ("header", "fragment"),
    [
        (TINY_HEADER.replace('">=0.1"', '">=99"'), "needs air >=99"),
        (TINY_HEADER.replace("version: 1.0.0", "version: one"), "pack.yaml:2"),
        (TINY_HEADER + "colour: blue\n", "unknown key 'colour'"),
        (TINY_HEADER.replace("framework: pytorch", "framework: tensorflow"), "unknown framework 'tensorflow'"),
        (TINY_HEADER + "rows: ['nothing/*.yaml']\n", "no row files match"),
        (TINY_HEADER + "evidence:\n  shared: {text: {literal: x}, bogus: 1}\n", "unknown key 'bogus'"),
    ],
)
def test_broken_headers_fail_in_one_line(tmp_path, header, fragment):
    assert fragment in load_error(write_pack(tmp_path, header=header))


def test_use_of_undefined_shared_evidence(tmp_path):
    rows = TINY_ROWS.replace(TINY_CLAUSE, "use: nowhere")
    assert "no shared evidence named 'nowhere'" in load_error(write_pack(tmp_path, rows=rows))


def test_cyclic_extends(tmp_path):
    write_pack(tmp_path, header=TINY_HEADER + "extends: ../two\n", name="one")
    write_pack(tmp_path, header=TINY_HEADER + "extends: ../one\n", name="two")
    assert "forms a cycle" in load_error(tmp_path / "one")


def test_extends_overrides_rows_by_id(tmp_path):
    write_pack(tmp_path, name="base")
    child_rows = TINY_ROWS.replace("title: A row", "title: A better row")
    child = write_pack(tmp_path, header=TINY_HEADER + "extends: ../base\n", rows=child_rows, name="child")
    pack = load_pack(str(child))
    assert [row.title for row in pack.rows] == ["A better row"]


def test_unknown_pack_name_lists_shipped_packs():
    with pytest.raises(PackError) as error:
        load_pack("no-such-pack")
    assert "pytorch-2.x" in str(error.value)


def test_yaml_is_loaded_safely(tmp_path):
    rows = TINY_ROWS.replace("title: A row", "title: !!python/object/apply:os.system ['touch pwned']")
    message = load_error(write_pack(tmp_path, rows=rows))
    assert "01.yaml" in message
    assert not Path("pwned").exists()


def test_error_names_line_in_folded_file(tmp_path):
    rows = textwrap.dedent(TINY_ROWS).replace("    docs: [https://example.org/doc]", "    docs: [ftp://nope]")
    assert "01.yaml:13" in load_error(write_pack(tmp_path, rows=rows))


def test_a_quick_reference_entry_must_name_evidence_its_row_has(tmp_path):
    rows = TINY_ROWS.replace("id: tiny-row", "id: device-rename-pu1")
    message = load_error(write_pack(tmp_path, rows=rows))
    assert "report.yaml" in message and "row 'device-rename-pu1' has no evidence named 'cpp'" in message


def test_the_old_paths_key_names_its_new_name(tmp_path):
    rows = TINY_ROWS.replace("    priority: 1\n", "    priority: 1\n    paths: [privateuse1]\n")
    message = load_error(write_pack(tmp_path, rows=rows))
    assert "01.yaml:7 at rows[0].paths: `paths` is now `integration_paths`: rename the key" in message


def test_integration_paths_must_be_the_frameworks(tmp_path):
    rows = TINY_ROWS.replace("    priority: 1\n", "    priority: 1\n    integration_paths: [privateuse1]\n")
    assert load_pack(str(write_pack(tmp_path / "a", rows=rows))).rows[0].paths == ("privateuse1",)
    message = load_error(write_pack(tmp_path / "b", rows=rows.replace("[privateuse1]", "[sideways]")))
    assert "rows[0].integration_paths[0]: unknown integration path 'sideways'" in message
