"""The registry of evidence kinds is the one list: each kind keeps the protocol, and the README,
the row schema and `air pack kinds` name exactly the registered kinds, with each kind's own schema."""

from __future__ import annotations

import json
import subprocess
import sys

from air.evidence import KINDS, kind_table
from air.pack.schemas import schema
from helpers.packs import TINY_CLAUSE, TINY_ROWS, load_error, write_pack
from helpers.paths import REPO_ROOT


def test_every_kind_keeps_the_protocol():
    for name, module in KINDS.items():
        assert isinstance(module.SUMMARY, str) and module.SUMMARY, name
        for function in ("literals", "reads_only_cpp"):
            assert callable(getattr(module, function, None)), f"{name} lacks {function}"
        assert callable(getattr(module, "evaluate", None)) != callable(getattr(module, "run_batch", None)), name


def test_the_readme_table_is_the_registry():
    readme = (REPO_ROOT / "README.md").read_text()
    start = readme.index("| kind | finds |")
    assert readme[start : readme.index("\n\n", start) + 1] == kind_table()


def test_the_row_schema_has_a_clause_key_for_each_kind_and_no_other():
    shipped = json.loads((REPO_ROOT / "schemas" / "row.schema.json").read_text())
    assert not set(KINDS) & (shipped["$defs"].keys() | shipped["$defs"]["clause"]["properties"].keys())
    clause = schema("row")["$defs"]["clause"]
    required = {key for option in clause["oneOf"] for key in option["required"]} - {"use"}
    assert required == set(KINDS)
    for name, module in KINDS.items():
        assert clause["properties"][name] == {"$ref": f"#/$defs/{name}"}
        assert schema("row")["$defs"][name] is module.SCHEMA


def test_a_spec_is_validated_by_its_kinds_schema(tmp_path):
    rows = TINY_ROWS.replace(TINY_CLAUSE, "python_assign: {target: x, pattern: y}")
    assert "'pattern'" in load_error(write_pack(tmp_path, rows=rows))


def test_a_spec_is_validated_by_its_kinds_own_checks(tmp_path):
    rows = TINY_ROWS.replace(TINY_CLAUSE, "text: {pattern: '(unclosed'}")
    assert "01.yaml:9" in load_error(write_pack(tmp_path, rows=rows))
    rows = TINY_ROWS.replace(TINY_CLAUSE, "ops: {of: [add]}")
    assert "`ops` evidence needs an `operators` section" in load_error(write_pack(tmp_path / "ops", rows=rows))
    rows = TINY_ROWS.replace(TINY_CLAUSE, "text: {pattern: 'compare\\(', helpers: {body: 'allclose'}}")
    assert "the pattern says {helpers}, and it does not" in load_error(write_pack(tmp_path / "helpers", rows=rows))
    rows = TINY_ROWS.replace(TINY_CLAUSE, "text: {pattern: '(?:{helpers})\\(', helpers: {body: '(unclosed'}}")
    assert "01.yaml:9" in load_error(write_pack(tmp_path / "body", rows=rows))


def test_pack_schema_prints_the_completed_schema():
    shown = subprocess.run(
        [sys.executable, "-m", "air", "pack", "schema", "row"], capture_output=True, text=True, check=True
    )
    assert json.loads(shown.stdout)["$defs"]["ops"] == KINDS["ops"].SCHEMA


def test_pack_kinds_prints_the_registry():
    shown = subprocess.run([sys.executable, "-m", "air", "pack", "kinds"], capture_output=True, text=True, check=True)
    assert shown.stdout == kind_table()
    assert all(f"| `{name}` |" in shown.stdout for name in KINDS)


def test_which_kinds_read_only_cpp():
    only_cpp = {name for name, module in KINDS.items() if module.reads_only_cpp({})}
    assert only_cpp == {"cpp_macro", "cpp_class", "cpp_field"}
    assert KINDS["text"].reads_only_cpp({"languages": ["cpp"]})
    assert not KINDS["text"].reads_only_cpp({"languages": ["cpp", "python"]})
    assert KINDS["structural"].reads_only_cpp({"language": "cpp"})
