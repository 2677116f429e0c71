"""The test inventory: tests counted, skips and their reasons, shared machinery and CI, read statically."""

from __future__ import annotations

from air.index import build_index
from air.report.markdown import render_markdown
from air.run import check
from air.scoring.test_inventory import test_inventory as take_inventory
from helpers.paths import FIXTURES

SKIPS = """\
import pytest
import unittest


@unittest.skipIf(not HAS_DEVICE, "no device here")
def test_a():
    pass


@pytest.mark.skipif(
    True,
    reason="needs two devices",
)
def test_b():
    pass


def test_c(self):
    self.skipTest("flaky on the emulator")


@pytest.mark.xfail
def test_d():
    pass


def skip_connection(x):  # a function whose name starts with skip is not a skip
    return x
"""


def inventory_of(root, pack):
    index = build_index(root)
    return take_inventory(index, pack.test_syntax)


def test_markers_are_counted_in_code_not_in_strings(pack, tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_ops.py").write_text(
        "from torch.testing._internal.common_device_type import dtypes\n\n\n"
        "@dtypes(torch.float32)\n"
        "def test_mm(device, dtype):\n"
        '    with pytest.raises(RuntimeError, match=r"dtypes?"):\n'
        "        run(\"dtypes\", 'op_db')\n"
    )
    inventory = inventory_of(tmp_path, pack)
    assert dict(inventory.markers) == {"dtypes": 2}  # the import and the decorator


def test_fixture_inventory(pack):
    inventory = inventory_of(FIXTURES / "tests_full", pack)
    assert (inventory.test_files, inventory.python_tests, inventory.cpp_tests) == (2, 16, 0)
    assert dict(inventory.markers)["instantiate_device_type_tests"] == 2  # the import and the call
    assert [(s.decorator, s.reason) for s in inventory.skips] == [
        ("skipIfTorchDynamo", "graph breaks on the device copy"),
        ("unittest.skip", "waiting for the int64 kernels"),
    ]
    assert inventory.skip_total == 2
    (workflow,) = inventory.ci
    assert workflow.path == ".github/workflows/nightly.yml"
    assert set(workflow.signals) == {
        "runs tests",
        "device-generic suite",
        "PyTorch nightly",
        "scheduled",
        "pytorch-integration-tests",
    }


def test_a_test_script_is_one_test_and_a_module_of_helpers_none(pack):
    inventory = inventory_of(FIXTURES / "tests_scripts", pack)
    assert (inventory.test_files, inventory.python_tests) == (2, 2)  # test_transfer.py, test_grad.py


def test_skip_reasons(tmp_path, pack):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_skips.py").write_text(SKIPS)
    inventory = inventory_of(tmp_path, pack)
    assert [(s.line, s.decorator, s.reason) for s in inventory.skips] == [
        (5, "unittest.skipIf", "no device here"),
        (10, "pytest.mark.skipif", "needs two devices"),
        (19, "self.skipTest", "flaky on the emulator"),
        (22, "pytest.mark.xfail", ""),
    ]
    assert ("(no reason given)", 1) in inventory.skip_reasons
    assert inventory.python_tests == 4


def test_report_lists_the_inventory(pack):
    text = render_markdown(check(FIXTURES / "tests_full", pack))
    section = text.split("## Test inventory", 1)[1].split("\n## ", 1)[0]
    assert "Python tests: 16" in section
    assert "| waiting for the int64 kernels | 1 |" in section
    assert "`.github/workflows/nightly.yml`" in section
