"""Named capture constraints: defined once in a pack, given by name as a clause's `where`."""

from __future__ import annotations

import pytest
from air.pack.load import load_pack
from helpers.packs import TINY_HEADER, TINY_ROWS, load_error, write_pack

CONSTRAINTS = (
    TINY_HEADER
    + """\
constraints:
  on_device_key: {KEY: {symbol: device_key}}
  custom_namespace: {NAMESPACE: {not_in: [aten, _]}}
"""
)
CALL = "python_call: {name: torch.utils.rename_privateuse1_backend}"
MACRO = "cpp_macro: {name: TORCH_LIBRARY_IMPL, capture: [NAMESPACE, KEY]}"


def rows_where(where: str) -> str:
    return TINY_ROWS.replace(CALL, f"{MACRO}\n        where: {where}")


def clause_where(tmp_path, where: str, header: str = CONSTRAINTS) -> dict:
    pack = load_pack(str(write_pack(tmp_path, header=header, rows=rows_where(where))))
    return pack.rows[0].evidence["call"].where


def test_a_name_stands_for_its_constraints(tmp_path):
    assert clause_where(tmp_path, "on_device_key") == {"KEY": {"symbol": "device_key"}}


def test_a_list_merges_names_and_maps_in_order(tmp_path):
    where = clause_where(tmp_path, "[custom_namespace, {KEY: {equals: Meta}}]")
    assert list(where.items()) == [("NAMESPACE", {"not_in": ["aten", "_"]}), ("KEY", {"equals": "Meta"})]


def test_a_row_file_may_define_constraints_for_every_file(tmp_path):
    rows = rows_where("meta_key").replace("rows:\n", "constraints:\n  meta_key: {KEY: {in: [Meta]}}\nrows:\n")
    pack = load_pack(str(write_pack(tmp_path, rows=rows)))
    assert pack.rows[0].evidence["call"].where == {"KEY": {"in": ["Meta"]}}
    assert pack.constraints["meta_key"] == {"KEY": {"in": ["Meta"]}}


def test_a_pack_inherits_the_constraints_of_the_pack_it_extends(tmp_path):
    write_pack(tmp_path, header=CONSTRAINTS, name="base")
    child = write_pack(
        tmp_path, header=TINY_HEADER + "extends: ../base\n", rows=rows_where("on_device_key"), name="child"
    )
    assert load_pack(str(child)).rows[0].evidence["call"].where == {"KEY": {"symbol": "device_key"}}


@pytest.mark.parametrize(
    ("where", "header", "fragment"),
    [
        ("on_host_key", CONSTRAINTS, "01.yaml:10 at rows[0].evidence.call.where: no constraints named 'on_host_key'"),
        ("[on_device_key, {KEY: {in: [Meta]}}]", CONSTRAINTS, "where[1]: capture KEY is constrained twice"),
        ("[]", CONSTRAINTS, "where: [] should be non-empty"),
        (
            "on_device_key",
            CONSTRAINTS.replace("symbol: device_key", "symbol: host_key"),
            "unknown symbol set 'host_key'",
        ),
        ("custom_namespace", CONSTRAINTS.replace("not_in:", "nto_in:"), "pack.yaml:7 at constraints.custom_namespace"),
    ],
)
def test_broken_constraints_fail_in_one_line(tmp_path, where, header, fragment):
    assert fragment in load_error(write_pack(tmp_path, header=header, rows=rows_where(where)))


def test_constraints_are_defined_once(tmp_path):
    rows = rows_where("on_device_key").replace("rows:\n", "constraints:\n  on_device_key: {KEY: {in: [X]}}\nrows:\n")
    message = load_error(write_pack(tmp_path, header=CONSTRAINTS, rows=rows))
    assert "01.yaml:3 at constraints.on_device_key: constraints 'on_device_key' is defined twice" in message
