"""Vendor packs: a pack that extends another is tested with its parent's fixtures for the rows
it inherits, and needs fixtures only for what it adds or rescores."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from air.pack.load import load_pack
from air.packtest import run_pack_tests
from helpers.packs import REGISTERS, TINY_HEADER, TINY_ROWS, add_fixture, write_pack

ROOT = Path(__file__).resolve().parents[1]
CHILD = TINY_HEADER.replace("id: tiny", "id: vendor") + "extends: ../tiny\n"
ADDED_ROW = TINY_ROWS.replace("tiny-row", "vendor-row").replace('"1.1.1"', '"1.1.2"')


def base_with_fixtures(tmp_path) -> Path:
    base = write_pack(tmp_path)
    add_fixture(base / "fixtures", "full", "rows: {tiny-row: 2}\n", {"pkg/__init__.py": REGISTERS})
    expected = "rows: {tiny-row: 0}\nremediations: {tiny-row: Do it}\n"
    add_fixture(base / "fixtures", "bare", expected, {"pkg/__init__.py": "import torch\n"})
    return base


def vendor(tmp_path, extra: str = "", rows: str | None = None) -> Path:
    base_with_fixtures(tmp_path)
    return write_pack(tmp_path, CHILD + extra, rows, name="vendor")


def failures(result) -> list[str]:
    return [failure for fixture in result.fixtures for failure in fixture.failures] + result.untested


def test_inherited_rows_are_tested_by_the_parents_fixtures(tmp_path):
    result = run_pack_tests(load_pack(str(vendor(tmp_path))))
    assert result.passed, failures(result)
    assert [fixture.name for fixture in result.fixtures] == ["tiny/bare", "tiny/full"]


def test_an_override_that_leaves_the_outcome_keeps_the_parents_fixtures(tmp_path):
    result = run_pack_tests(load_pack(str(vendor(tmp_path, "overrides:\n  tiny-row: {priority: 3}\n"))))
    assert result.passed, failures(result)


def test_an_override_of_the_wording_drops_only_the_parents_checks_of_the_words(tmp_path):
    result = run_pack_tests(load_pack(str(vendor(tmp_path, "overrides:\n  tiny-row: {remediation: Call it.}\n"))))
    assert result.passed, failures(result)


def test_a_rescored_row_needs_fixtures_of_the_vendor(tmp_path):
    child = vendor(tmp_path, "overrides:\n  tiny-row: {score: {1: call}}\n")
    result = run_pack_tests(load_pack(str(child)))
    assert result.untested == ["tiny-row (1.1.1): no fixture where it scores 1 or 0"]
    add_fixture(child / "fixtures", "calls", "rows: {tiny-row: 1}\n", {"pkg/__init__.py": REGISTERS})
    add_fixture(child / "fixtures", "silent", "rows: {tiny-row: 0}\n", {"pkg/__init__.py": "import torch\n"})
    result = run_pack_tests(load_pack(str(child)))
    assert result.passed, failures(result)
    assert [fixture.name for fixture in result.fixtures] == ["calls", "silent", "tiny/bare", "tiny/full"]


def test_an_added_row_needs_fixtures_of_the_vendor(tmp_path):
    result = run_pack_tests(load_pack(str(vendor(tmp_path, rows=ADDED_ROW))))
    assert result.untested == ["vendor-row (1.1.2): no fixture where it scores 2 or 0"]


def test_one_fixture_of_the_parent_is_named_with_its_pack(tmp_path):
    result = run_pack_tests(load_pack(str(vendor(tmp_path))), only="tiny/full")
    assert [fixture.name for fixture in result.fixtures] == ["tiny/full"] and result.passed


def test_the_example_vendor_pack_passes_its_tests():
    completed = subprocess.run(
        [sys.executable, "-m", "air", "pack", "test", "examples/vendor-pack"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(ROOT / "engine")},
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    summary = completed.stdout.splitlines()[-1]
    assert re.fullmatch(r"\d+ passed, 0 failed \(\d+ fixtures, 0 failed; 0 rows untested\)", summary), summary
    assert "ok   pytorch-2.x/pu1_full" in completed.stdout


def test_pack_test_shows_each_row_with_expected_and_actual_outcomes_and_as_json():
    command = [sys.executable, "-m", "air", "pack", "test", "examples/vendor-pack", "--fixture", "acme_full"]
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "engine")}
    verbose = subprocess.run([*command, "-v"], cwd=ROOT, capture_output=True, text=True, timeout=300, env=environment)
    assert verbose.returncode == 0, verbose.stderr
    rows = [line.split() for line in verbose.stdout.splitlines() if line.startswith("     ok   ")]
    assert rows and all(line[-2] == "got" and line[-3] == f"{line[-1]}," for line in rows)
    done = subprocess.run([*command, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300, env=environment)
    data = json.loads(done.stdout)
    [fixture] = data["fixtures"]
    assert fixture["name"] == "acme_full" and fixture["passed"] and data["failed"] == 0
    assert data["passed"] == len(fixture["rows"]) == len(rows)
    assert all(row["expected"] == row["actual"] and row["passed"] for row in fixture["rows"])


def test_pack_new_scaffolds_a_vendor_pack_that_passes_its_tests_as_generated(tmp_path):
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "engine")}
    air_command = [sys.executable, "-m", "air"]
    created = subprocess.run(
        [*air_command, "pack", "new", "acme-npu", "-o", str(tmp_path)], capture_output=True, text=True, env=environment
    )
    assert created.returncode == 0, created.stderr
    pack = tmp_path / "acme-npu"
    assert sorted(str(path.relative_to(pack)) for path in pack.rglob("*") if path.is_file()) == [
        "README.md",
        "fixtures/acme_bare/acme_backend/__init__.py",
        "fixtures/acme_bare/expected.yaml",
        "fixtures/acme_full/acme_backend/__init__.py",
        "fixtures/acme_full/expected.yaml",
        "pack.yaml",
        "rows/acme.yaml",
    ]
    tested = subprocess.run(
        [*air_command, "pack", "test", str(pack)], capture_output=True, text=True, env=environment, timeout=900
    )
    assert tested.returncode == 0, tested.stdout[-3000:] + tested.stderr
    assert "ok   acme_full (1 rows)" in tested.stdout and "ok   acme_bare (1 rows)" in tested.stdout
    again = subprocess.run(
        [*air_command, "pack", "new", "acme-npu", "-o", str(tmp_path)], capture_output=True, text=True, env=environment
    )
    assert again.returncode == 2 and "already exists" in again.stderr
    refused = subprocess.run(
        [*air_command, "pack", "new", "Bad_Name", "-o", str(tmp_path)], capture_output=True, text=True, env=environment
    )
    assert refused.returncode == 2 and "lowercase words joined by hyphens" in refused.stderr
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    unwritable = subprocess.run(
        [*air_command, "pack", "new", "acme-npu", "-o", str(blocker)], capture_output=True, text=True, env=environment
    )
    assert unwritable.returncode == 2 and "cannot write the pack" in unwritable.stderr
