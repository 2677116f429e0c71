"""Findings in a backend's tests count only where a test that runs on its device holds them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from air.evidence import Evaluator, clause_from_data, semgrep
from air.evidence.base import Context
from air.graph.live_tests import LiveTests
from air.graph.test_syntax import lines_from, lines_naming, numbered_lines
from air.index import build_index
from air.pack.load import load_pack
from air.run import check
from helpers.trees import write_tree

NAMES = ("torch_zz", "zz", "PrivateUse1")
USE = re.compile(r"\buse\((\d+)\)")


def live(root: Path, pack, files: dict[str, str]) -> LiveTests:
    return LiveTests(build_index(write_tree(root, files)), pack.test_syntax, lambda: NAMES)


def running(tests: LiveTests, path: str) -> list[int]:
    """The N of each `use(N)` of `path` that a test running on the device holds."""
    lines = tests.index.by_path[path].text.splitlines()
    return [int(match[1]) for n, line in enumerate(lines, 1) if (match := USE.search(line)) and tests.runs(path, n)]


DECORATED = """import unittest
import pytest
import torch_zz

class TestZz(unittest.TestCase):
    @pytest.mark.xfail(reason="leaks")
    def test_a(self):
        use(1)

    @unittest.skipIf(True, "never")
    def test_b(self):
        use(2)

    @unittest.skipIf(not torch_zz.is_available(), "needs a device")
    def test_c(self):
        use(3)

    @skipIfZZ
    def test_d(self):
        use(4)

    @onlyCUDA
    def test_e(self):
        use(5)

    @onlyPRIVATEUSE1
    @pytest.mark.xfail(
        reason="spans lines",
    )
    def test_f(self):
        use(6)

    @pytest.mark.xfail(torch_zz.version() < 2, reason="old")
    def test_g(self):
        use(7)

    @unittest.expectedFailure
    def test_h(self):
        use(8)

    def test_i(self):
        use(9)
"""


def test_decorators_that_keep_a_test_off_the_device(tmp_path, pack):
    tests = live(tmp_path, pack, {"tests/test_zz.py": DECORATED})
    assert running(tests, "tests/test_zz.py") == [3, 7, 9]  # test_c and test_g decide at run time


STATEMENTS = """import pytest
import torch_zz

def test_a():
    pytest.skip("no runtime yet")
    use(1)

def test_b():
    if not torch_zz.is_available():
        pytest.skip("needs a device")
    use(2)

class TestC:
    pytestmark = pytest.mark.skip(reason="flaky")

    def test_c(self):
        use(3)

class TestD:
    mark = pytest.mark.skip(reason="a marker kept for later")

    def test_d(self):
        self.skipTest("broken on zz")
        use(4)

    def test_e(self):
        use(5)
"""


def test_skip_statements_at_the_top_of_a_body(tmp_path, pack):
    tests = live(tmp_path, pack, {"tests/test_zz.py": STATEMENTS})
    assert running(tests, "tests/test_zz.py") == [2, 5]


def test_a_module_that_skips_itself(tmp_path, pack):
    source = (
        "import unittest\nimport torch_zz\n\nraise unittest.SkipTest('zz tests need a board')\n\n"
        "def test_a():\n    use(1)\n"
    )
    marked = (
        "import pytest\nimport torch_zz\npytestmark = [pytest.mark.skip(reason='later')]\n\ndef test_a():\n    use(1)\n"
    )
    tests = live(tmp_path, pack, {"tests/test_a.py": source, "tests/test_b.py": marked})
    assert running(tests, "tests/test_a.py") == running(tests, "tests/test_b.py") == []


SUITE = """import torch_zz

class TestOps:
    def test_add(self):
        use(1)

    def test_mul(self):
        use(2)

    def test_div(self):
        use(3)

    def test_sub(self):
        use(4)

class TestOther:
    def test_mul(self):
        use(5)

def test_pow():
    use(6)
"""


@pytest.mark.parametrize(
    "listing",
    [
        ("test/skipped_tests.txt", "test/test_ops.py::TestOps::test_add\ntest_pow\ntest_file_io.py\n"),
        ("test/disabled_tests.yaml", "- TestOps.test_add\n- test_pow\n- test_file_io.py\n"),
    ],
)
def test_skip_lists_name_tests_and_files(tmp_path, pack, listing):
    path, text = listing
    files = {
        path: text,
        "test/test_ops.py": SUITE,
        "test/test_file_io.py": "import torch_zz\n\ndef test_io():\n    use(0)\n",
        "test/unsupported_test_cases.json": '{"test_mul_zz (__main__.TestOpsPRIVATEUSE1)": "no kernel",'
        ' "test_div_zz_float16 (__main__.TestOpsPRIVATEUSE1)": "fp16 only"}',
    }
    tests = live(tmp_path, pack, files)
    # test_add and test_pow are listed; test_mul only in TestOps (instantiated for the device); one
    # dtype variant of test_div leaves its other variants running; the whole file is listed
    assert running(tests, "test/test_ops.py") == [3, 4, 5]
    assert running(tests, "test/test_file_io.py") == []


def test_only_test_files_that_name_the_backend_count(tmp_path, pack):
    files = {
        "tests/conftest.py": "import torch_zz\n\ndef test_fixture():\n    use(1)\n",
        "tests/device_utils.py": "import torch_zz\n\ndef test_helper():\n    use(2)\n",
        "tests/model.py": "import torch_zz\nuse(3)\n",
        "tests/test_cpu.py": "import torch\n\ndef test_cpu():\n    use(4)\n",
        "tests/test_via_helper.py": "from devices import to_dev\n\ndef test_dev():\n    use(5)\n",
        "tests/devices.py": "def to_dev(t):\n    return t.to('zz')\n",
        "tests/test_zz_utils.py": "import torch_zz\n\ndef test_utility():\n    use(6)\n",
        "examples/train.py": "import torch_zz\nfrom model import Net\nuse(7)\n",
        "tests/check_streams.py": "import torch_zz\nuse(8)\n",  # a script: no file imports it
    }
    tests = live(tmp_path, pack, files)
    runs = [path for path in sorted(files) if running(tests, path)]
    assert runs == ["tests/check_streams.py", "tests/test_via_helper.py", "tests/test_zz_utils.py"]


def test_disabled_cpp_tests(tmp_path, pack):
    source = (
        '#include "zz/device.h"\n\nTEST(ZzMemory, Allocates) {\n  use(1);\n}\n\n'
        "TEST(ZzMemory, DISABLED_Frees) {\n  use(2);\n}\n\nTEST_F(DISABLED_ZzStream, Waits) {\n  use(3);\n}\n"
    )
    tests = live(tmp_path, pack, {"tests/zz_test.cpp": source})
    assert running(tests, "tests/zz_test.cpp") == [1]


def test_a_clause_counts_running_tests_unless_it_takes_any_test_file(tmp_path, pack):
    root = write_tree(tmp_path, {"tests/test_zz.py": DECORATED, "examples/demo.py": "import torch_zz\nuse(1)\n"})
    evaluator = Evaluator(Context(build_index(root), {}))
    evaluator.context.live_tests = LiveTests(evaluator.context.index, pack.test_syntax, lambda: NAMES)
    data = {"text": {"pattern": r"\buse\(", "languages": ["python"]}, "scope": "tests"}
    counted = evaluator.result(clause_from_data("x", data))
    assert [(h.path, h.line) for h in counted.counted()] == [("tests/test_zz.py", n) for n in (16, 35, 42)]
    assert ("tests/test_zz.py", 8) in [(h.path, h.line) for h in counted.not_run]  # use(1): an xfail test
    everything = evaluator.result(clause_from_data("x", {**data, "any_test_file": True}))
    assert len(everything.counted()) == 10


def test_definitions_indented_with_a_form_feed_are_read(tmp_path, pack):
    source = (
        "import pytest\nimport torch_zz\n\f\n"
        "@pytest.mark.skip(reason='broken')\n\fdef test_a():\n    use(1)\n\n"
        "\fdef test_b():\n    use(2)\n"
    )
    tests = live(tmp_path, pack, {"tests/test_feed.py": source})
    assert running(tests, "tests/test_feed.py") == [2]


def test_numbered_lines_gives_each_line_once_with_its_start():
    code = "a\nbb skip skip\n\nccc skip"
    assert numbered_lines(code, [0, 5, 10, 20]) == [(1, 0), (2, 2), (4, 16)]


def test_lines_from_a_line_start():
    text = "a\nbb\n\nccc"
    assert lines_from(text, 2, 1) == "bb"
    assert lines_from(text, 2, 2) == "bb\n"
    assert lines_from(text, 2, 9) == "bb\n\nccc"
    assert lines_from(text, 6, 1) == "ccc"


def test_lines_naming_words_in_any_ascii_case():
    code = "x = 1\n@SkipIf(é)\n# \u212aip, \u017fkip\nd = 'é' ; expectedFailure\n\u0130\u0130 = fail"
    assert lines_naming(code, ("skip", "fail")) == [(2, 6), (4, 29), (5, 55)]  # no Kelvin sign nor long s
    assert lines_naming(code, ("é",)) == [(2, 6), (4, 29)]
    assert lines_naming(code, ("'?'",)) == []  # a word's `?` is only ever a `?`


SEMGREP_TESTS_ROW = """\
section: device-registration
rows:
  - id: vendor-tested-rename
    item: "1.1.1"
    title: A test renames the device (semgrep)
    priority: 1
    evidence:
      tested:
        semgrep: {rule: {languages: [python], pattern: "use($N)"}, capture: [N], prefilter: ["use("]}
        scope: tests
    score: {2: tested}
    remediation: Test it.
    docs: [https://example.org/rename]
"""


@pytest.mark.skipif(semgrep.executable() is None, reason="the semgrep extra is not installed")
def test_a_batched_clause_counts_only_tests_that_run_on_the_device(tmp_path):
    pack_dir = write_tree(
        tmp_path / "pack",
        {
            "pack.yaml": "id: vendor\nversion: 1.0.0\nframework: pytorch\nrequires_air: '>=0.1'\n"
            "extends: pytorch-2.x\nrows: ['rows/*.yaml']\n",
            "rows/vendor.yaml": SEMGREP_TESTS_ROW,
        },
    )
    backend = write_tree(
        tmp_path / "backend",
        {
            "torch_zz/__init__.py": "import torch\ntorch.utils.rename_privateuse1_backend('zz')\n",
            "tests/test_zz.py": DECORATED,
        },
    )
    report = check(backend, load_pack(str(pack_dir)))
    row = next(row for row in report.rows if row.id == "vendor-tested-rename")
    counted = sorted(finding.line for finding in row.evidence)
    assert row.points == 2 and counted == [16, 35, 42]
