"""`air pack test`: fixture expectations, inline annotations, and rows lacking fixtures."""

from __future__ import annotations

import functools
from collections.abc import Callable
from operator import attrgetter
from pathlib import Path

import pytest
from air.pack.load import load_pack
from air.packtest import FixtureResult, FixtureSet, annotations, check_fixture, run_pack_tests, untested_rows
from helpers.packs import REGISTERS, TINY_ROWS, add_fixture, shipped_pack, write_pack

RUNTIME_ROW = """\
  - id: tiny-runtime
    item: "1.1.2"
    title: Works at run time
    priority: 2
    evidence:
      tests:
        python_call: {name: torch.utils.rename_privateuse1_backend}
        scope: tests
    score:
      1: tests
    runtime: {command: "python -c 'import torch'"}
    remediation: Test it.
    docs: [https://example.org/doc]
"""


def tiny_pack(tmp_path, rows: str = TINY_ROWS):
    directory = write_pack(tmp_path, rows=rows)
    return directory, directory / "fixtures"


def test_both_ends_of_a_row_pass(tmp_path):
    directory, fixtures = tiny_pack(tmp_path)
    add_fixture(fixtures, "full", "rows: {tiny-row: 2}\n", {"pkg/__init__.py": REGISTERS})
    add_fixture(fixtures, "bare", "rows: {tiny-row: 0}\n", {"pkg/__init__.py": "import torch\n"})
    result = run_pack_tests(load_pack(str(directory)))
    assert result.passed, [f.failures for f in result.fixtures] + result.untested
    assert [f.name for f in result.fixtures] == ["bare", "full"]


def test_a_row_without_its_zero_fixture_is_untested(tmp_path):
    directory, fixtures = tiny_pack(tmp_path)
    add_fixture(fixtures, "full", "rows: {tiny-row: 2}\n", {"pkg/__init__.py": REGISTERS})
    result = run_pack_tests(load_pack(str(directory)))
    assert not result.passed
    assert result.untested == ["tiny-row (1.1.1): no fixture where it scores 0"]


def test_runtime_rows_need_one_and_unknown(tmp_path):
    directory, fixtures = tiny_pack(tmp_path, TINY_ROWS + RUNTIME_ROW)
    add_fixture(fixtures, "full", "rows: {tiny-row: 2, tiny-runtime: 0}\n", {"pkg/__init__.py": REGISTERS})
    result = run_pack_tests(load_pack(str(directory)))
    assert "tiny-runtime (1.1.2): no fixture where it scores 1 or unknown" in result.untested
    failures = result.fixtures[0].failures
    assert any(f.startswith("tiny-runtime (1.1.2): expected 0, got unknown: needs a runtime check") for f in failures)


def test_wrong_outcome_and_unknown_row_are_reported(tmp_path):
    directory, fixtures = tiny_pack(tmp_path)
    root = add_fixture(fixtures, "full", "rows: {tiny-row: 0, no-such-row: 2}\n", {"pkg/__init__.py": REGISTERS})
    failures = check_fixture(load_pack(str(directory)), root).failures
    assert "expected.yaml: no row 'no-such-row' in pack tiny" in failures
    assert any(f.startswith("tiny-row (1.1.1): expected 0, got 2") for f in failures)


def test_annotations_check_the_cited_line(tmp_path):
    directory, fixtures = tiny_pack(tmp_path)
    source = (
        "import torch\n"
        'torch.utils.rename_privateuse1_backend("a")  # air: expect tiny-row\n'
        "# air: reject tiny-row\n"
        "x = 1\n"
        "# air: expect tiny-row\n"
        "y = 2\n"
    )
    root = add_fixture(fixtures, "full", "rows: {tiny-row: 2}\n", {"pkg/__init__.py": source})
    found = [(a.kind, a.row, a.line, a.written_at) for a in annotations(root)]
    assert found == [("expect", "tiny-row", 2, 2), ("reject", "tiny-row", 4, 3), ("expect", "tiny-row", 6, 5)]
    failures = check_fixture(load_pack(str(directory)), root).failures
    assert failures == ["pkg/__init__.py:5: expected tiny-row to cite line 6; it cites pkg/__init__.py:2"]


TWO_CLAUSE_ROW = """\
section: device-registration
rows:
  - id: tiny-row
    item: "1.1.1"
    title: A row
    priority: 1
    evidence:
      mentioned:
        text: {pattern: 'rename_privateuse1_backend'}
      called:
        python_call: {name: torch.utils.rename_privateuse1_backend}
    score:
      2: called
      1: mentioned
    remediation: Do it.
    docs: [https://example.org/doc]
"""


def test_the_first_finding_shown_is_from_the_clause_that_earned_the_points(tmp_path):
    directory, fixtures = tiny_pack(tmp_path, TWO_CLAUSE_ROW)
    files = {
        "pkg/a.pyi": "def rename_privateuse1_backend(name: str) -> None: ...  # air: expect tiny-row\n",
        "pkg/b.py": "NAME = 'rename_privateuse1_backend'  # air: expect tiny-row\n",
        "pkg/c.py": "import torch\n\n# air: first tiny-row\ntorch.utils.rename_privateuse1_backend('tiny')\n",
    }
    root = add_fixture(fixtures, "full", "rows: {tiny-row: 2}\n", files)
    assert check_fixture(load_pack(str(directory)), root).failures == []
    (root / "pkg/c.py").unlink()  # the row now earns 1, from the mentions: the stub's comes last
    (root / "expected.yaml").write_text("rows: {tiny-row: 1}\n")
    (root / "pkg/b.py").write_text("NAME = 'rename_privateuse1_backend'  # air: first tiny-row\n")
    assert check_fixture(load_pack(str(directory)), root).failures == []
    (root / "pkg/a.pyi").write_text("# air: first tiny-row\ndef rename_privateuse1_backend(name: str) -> None: ...\n")
    failures = check_fixture(load_pack(str(directory)), root).failures
    assert "pkg/a.pyi:1: expected tiny-row to cite line 2 first; it cites pkg/b.py:1" in failures


def test_the_backend_name_is_checked(tmp_path):
    directory, fixtures = tiny_pack(tmp_path)
    files = {"pkg/__init__.py": REGISTERS, "setup.py": "from setuptools import setup\nsetup(name='torch-tiny')\n"}
    root = add_fixture(fixtures, "full", "name: torch-tiny\nrows: {tiny-row: 2}\n", files)
    assert check_fixture(load_pack(str(directory)), root).failures == []
    (root / "expected.yaml").write_text("name: tiny\nrows: {tiny-row: 2}\n")
    assert check_fixture(load_pack(str(directory)), root).failures == ["name: expected tiny, got torch-tiny"]


def test_a_broken_expected_file_fails_in_one_line(tmp_path):
    from air.errors import PackError

    directory, fixtures = tiny_pack(tmp_path)
    root = add_fixture(fixtures, "bad", "rows: {tiny-row: 3}\n", {})
    with pytest.raises(PackError, match=r"expected.yaml:1 at rows.tiny-row"):
        check_fixture(load_pack(str(directory)), root)


SHIPPED_FIXTURES = FixtureSet(shipped_pack().fixtures, "").fixtures()


@pytest.fixture(scope="module")
def shipped_fixture_result(pack) -> Callable[[Path], FixtureResult]:
    """The result of one fixture of the shipped pack, checked at most once in the run."""
    return functools.cache(lambda directory: check_fixture(pack, directory))


@pytest.mark.parametrize("directory", SHIPPED_FIXTURES, ids=attrgetter("name"))
def test_shipped_fixture_passes(directory, shipped_fixture_result):
    result = shipped_fixture_result(directory)
    if result.failures:
        unmet = "".join(f"\n  {failure}" for failure in result.failures)
        pytest.fail(f"fixture {result.name}: {len(result.failures)} expectation(s) not met:{unmet}", pytrace=False)


def test_every_row_is_encoded_and_has_fixtures_at_both_ends(pack, shipped_fixture_result):
    results = [shipped_fixture_result(directory) for directory in SHIPPED_FIXTURES]
    assert untested_rows(pack, results) == []


def test_shipped_pack_has_fixtures():
    assert len(SHIPPED_FIXTURES) >= 5
