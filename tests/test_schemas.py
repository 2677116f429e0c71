"""Schema validation: the native check never accepts a document that `jsonschema` rejects."""

from __future__ import annotations

import copy
import datetime
import subprocess
import sys
from pathlib import Path

import pytest
from air.errors import PackError
from air.pack.families import expand_families
from air.pack.load import _score_levels_as_text
from air.pack.schemas import _natively_valid, defined_properties, validate_document, validator
from air.yamldoc import load_yaml
from helpers.paths import SHIPPED_PACK_DIR

ROWS = sorted((SHIPPED_PACK_DIR / "rows").glob("*.yaml"))


def rows_document(path: Path):
    document = expand_families(load_yaml(path), defined_properties("row", "row"))
    _score_levels_as_text(document)
    return document


def mutations(row: dict) -> list[dict]:
    """Ways to break a row: each breaks the row schema somewhere different."""
    broken = []
    for change in (
        lambda r: r.pop("id"),
        lambda r: r.update(id="Not An Id"),
        lambda r: r.update(priority="urgent"),
        lambda r: r.update(typo=1),
        lambda r: r.update(docs="https://example.org"),
        lambda r: r.update(title=""),
        lambda r: r.update(score={"3": "x"}),
        lambda r: r.update(evidence={"x": {"text": {"literal": "a"}, "python_call": {"name": "a"}}}),
        lambda r: r.update(evidence={"x": {"text": {}}}),
        lambda r: r.update(title=datetime.date(2024, 1, 1)),  # a YAML date: not a JSON value
    ):
        mutated = copy.deepcopy(row)
        change(mutated)
        broken.append(mutated)
    return broken


@pytest.mark.parametrize("path", ROWS, ids=[p.stem for p in ROWS])
def test_native_and_jsonschema_agree_on_the_pack_and_its_mutations(path):
    document = rows_document(path)
    assert _natively_valid(document.data, "row") and validator("row").is_valid(document.data)
    for row in document.data["rows"][:3]:
        for mutated in mutations(row):
            data = {**document.data, "rows": [mutated]}
            assert not validator("row").is_valid(data), mutated
            assert not _natively_valid(data, "row"), mutated


def test_where_the_engines_differ_jsonschema_decides(tmp_path):
    document = rows_document(ROWS[0])
    document.data["rows"][0]["id"] += "\n"  # `re`'s `$` accepts a final line break; the native engine does not
    assert not _natively_valid(document.data, "row") and validator("row").is_valid(document.data)
    validate_document(document, "row")  # valid, as jsonschema says


def test_a_document_the_native_check_rejects_is_reported_by_jsonschema(tmp_path):
    path = tmp_path / "rows.yaml"
    path.write_text(ROWS[0].read_text().replace("priority:", "priority_typo:", 1))
    with pytest.raises(PackError, match="unknown key 'priority_typo'"):
        validate_document(rows_document(path), "row")


def test_the_module_the_native_validator_would_import_mid_check_is_imported_with_the_schemas():
    """jsonschema-rs imports `decimal` from native code on its first validation, where an
    interrupt during that import aborts the process; air imports it first."""
    program = "import sys, air.pack.schemas; print('decimal' in sys.modules)"
    shown = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "True"
