"""The registry of evidence kinds is the one list: each kind keeps the protocol, and the README,
the row schema and `air pack kinds` name exactly the registered kinds."""

from __future__ import annotations

import json
import subprocess
import sys

from air.evidence import KINDS, kind_table
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
    schema = json.loads((REPO_ROOT / "schemas" / "row.schema.json").read_text())
    clause = schema["$defs"]["clause"]
    required = {key for option in clause["oneOf"] for key in option["required"]} - {"use"}
    assert required == set(KINDS)
    assert set(KINDS) <= clause["properties"].keys()


def test_pack_kinds_prints_the_registry():
    shown = subprocess.run([sys.executable, "-m", "air", "pack", "kinds"], capture_output=True, text=True, check=True)
    assert shown.stdout == kind_table()
    assert all(f"| `{name}` |" in shown.stdout for name in KINDS)


def test_which_kinds_read_only_cpp():
    only_cpp = {name for name, module in KINDS.items() if module.reads_only_cpp({})}
    assert only_cpp == {"cpp_macro", "cpp_class"}
    assert KINDS["text"].reads_only_cpp({"languages": ["cpp"]})
    assert not KINDS["text"].reads_only_cpp({"languages": ["cpp", "python"]})
    assert KINDS["structural"].reads_only_cpp({"language": "cpp"})
