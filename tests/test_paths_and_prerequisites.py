"""Integration paths (hybrid, autoload), remediations chosen by the evidence, and the static
prerequisites of runtime rows, on small trees written here."""

from __future__ import annotations

import pytest
from air.pack.load import load_pack
from air.run import check
from helpers.packs import load_error, write_pack
from helpers.trees import write_tree

RUNTIME_ROWS = """\
section: profiler
rows:
  - id: timing
    item: "15.3"
    title: Kernel timing
    priority: 2
    evidence:
      tests:
        python_call: {name: torch.profiler.profile}
        scope: tests
      hook:
        describe: a profiler hook of any kind
        text: {pattern: '\\bProfilerStubs\\b', languages: [cpp]}
      stubs:
        describe: stubs found by a clause that can be undecided
        text: {literal: never_here}
    score:
      1: tests
    runtime: {command: run the profiler}
    requires: hook
    remediation:
      - when: tests and not hook
        say: Add a profiler hook; the tests are there.
      - say: Add a profiler hook and tests.
    docs: [https://example.org/doc]
"""


def row_of(report, row_id: str):
    return next(row for row in report.rows if row.id == row_id)


@pytest.mark.parametrize(
    ("rows", "fragment"),
    [
        (
            RUNTIME_ROWS.replace("    runtime: {command: run the profiler}\n", "").replace(
                "      1: tests", "      2: tests"
            ),
            "only a row with a runtime check has a static prerequisite",
        ),
        (
            RUNTIME_ROWS.replace("      - say: Add a profiler hook and tests.", "      - when: hook\n        say: x"),
            "the last remediation is the one shown otherwise",
        ),
        (
            RUNTIME_ROWS.replace("      - when: tests and not hook\n", "      - "),
            "only the last remediation may omit `when`",
        ),
        (RUNTIME_ROWS.replace("    requires: hook", "    requires: hook and nothing"), "undefined evidence nothing"),
    ],
)
def test_broken_prerequisites_and_remediations_fail_in_one_line(tmp_path, rows, fragment):
    assert fragment in load_error(write_pack(tmp_path, rows=rows))


def test_an_absent_prerequisite_scores_zero_and_is_named(tmp_path):
    pack = load_pack(str(write_pack(tmp_path, rows=RUNTIME_ROWS)))
    tree = write_tree(tmp_path / "tree", {"tests/test_prof.py": "import torch\ntorch.profiler.profile()\n"})
    row = row_of(check(tree, pack), "timing")
    assert (row.outcome, row.points) == ("scored", 0)
    assert "cannot work without its static prerequisite (`hook`)" in row.reason
    assert "not found: a profiler hook of any kind" in row.reason
    assert row.remediation == "Add a profiler hook; the tests are there."


def test_a_present_prerequisite_leaves_the_runtime_check_to_decide(tmp_path):
    pack = load_pack(str(write_pack(tmp_path, rows=RUNTIME_ROWS)))
    tree = write_tree(tmp_path / "tree", {"csrc/stubs.cpp": "struct S : torch::profiler::impl::ProfilerStubs {};\n"})
    row = row_of(check(tree, pack), "timing")
    assert row.outcome == "unknown" and "needs a runtime check" in row.reason
    assert row.remediation == "Add a profiler hook and tests."
    tested = write_tree(
        tmp_path / "tested",
        {
            "csrc/stubs.cpp": "struct S : torch::profiler::impl::ProfilerStubs {};\n",
            "tests/test_prof.py": "import torch\ntorch.profiler.profile()\n",
        },
    )
    assert row_of(check(tested, pack), "timing").points == 1


def test_a_prerequisite_that_cannot_be_decided_is_not_a_zero(tmp_path, monkeypatch):
    rows = RUNTIME_ROWS.replace("    requires: hook", "    requires: stubs").replace(
        "text: {literal: never_here}", "semgrep: {rule: {pattern: never_here(), languages: [python]}}"
    )
    pack = load_pack(str(write_pack(tmp_path, rows=rows)))
    monkeypatch.setattr("air.evidence.semgrep.executable", lambda: None)
    row = row_of(check(write_tree(tmp_path / "tree", {"a.py": "never_here()\n"}), pack), "timing")
    assert row.outcome == "unknown" and "semgrep is not installed" in row.reason


def test_an_autoload_entry_point_alone_never_decides_privateuse1(tmp_path, pack):
    only_entry = write_tree(
        tmp_path / "entry",
        {
            "pyproject.toml": '[project]\nname = "foo"\n[project.entry-points."torch.backends"]\nfoo = "foo:_autoload"\n',
            "foo/__init__.py": "def _autoload():\n    pass\n",
        },
    )
    report = check(only_entry, pack)
    assert report.integration_path.id == "none"
    assert "pu1_entry_point" in {signal.name for signal in report.integration_path.signals}


def test_in_tree_registrations_decide_over_an_entry_point(tmp_path, pack):
    tree = write_tree(
        tmp_path / "xla",
        {
            "setup.py": "from setuptools import setup\nsetup(name='bar', entry_points={'torch.backends': ['bar = bar:load']})\n",
            "csrc/ops.cc": 'TORCH_LIBRARY_IMPL(aten, XLA, m) {\n  m.impl("mm", mm);\n}\n',
        },
    )
    report = check(tree, pack)
    assert (report.integration_path.id, report.integration_path.key) == ("fork", "XLA")


PU1 = "import torch\ntorch.utils.rename_privateuse1_backend('hx')\n"


@pytest.mark.parametrize(
    ("patch", "fork_rows_apply"),
    [
        ("--- a/torch/csrc/Module.cpp\n+++ b/torch/csrc/Module.cpp\n@@ -1 +1,2 @@\n+  init_hx();\n", False),
        (
            "diff --git a/c10/core/DeviceType.h b/c10/core/DeviceType.h\n--- a/c10/core/DeviceType.h\n"
            "+++ b/c10/core/DeviceType.h\n@@ -30,2 +30,3 @@\n   PrivateUse1 = 20,\n+  HX = 21, // hx\n",
            True,
        ),
        ("--- c10/core/DispatchKey.h.orig\n+++ c10/core/DispatchKey.h\n@@ -1 +1,2 @@\n+  HXKey,\n", True),
        (
            "--- a/c10/core/DeviceType.h\n+++ b/c10/core/DeviceType.h\n@@ -1 +1,2 @@\n+  case DeviceType::HX:\n"
            "--- a/aten/src/ATen/Hx.h\n+++ b/aten/src/ATen/Hx.h\n@@ -1 +1,2 @@\n+  HX = 3,\n",
            False,
        ),
    ],
)
def test_fork_rows_of_a_hybrid_apply_only_when_its_patches_add_a_key(tmp_path, pack, patch, fork_rows_apply):
    tree = write_tree(tmp_path / "hybrid", {"hx/__init__.py": PU1, "patches/core.patch": patch})
    report = check(tree, pack)
    assert report.integration_path.id == "hybrid"
    assert report.integration_path.note.startswith("requires a patched PyTorch: 1 patch")
    row = row_of(report, "device-fork-devicetype")
    assert (row.outcome != "not_applicable") == fork_rows_apply
    if not fork_rows_apply:
        assert "its patches add no DeviceType or DispatchKey value" in row.reason
    assert row_of(report, "device-rename-pu1").points == 2


def test_a_hybrid_registering_its_guard_as_cudas_gets_the_fork_rows(tmp_path, pack):
    tree = write_tree(
        tmp_path / "imp",
        {
            "hx/__init__.py": PU1,
            "csrc/guard.cpp": (
                "struct G : c10::impl::DeviceGuardImplInterface {\n"
                "  c10::DeviceIndex deviceCount() const noexcept override { return hx_count(); }\n};\n"
                "C10_REGISTER_GUARD_IMPL(CUDA, G);\n"
            ),
        },
    )
    report = check(tree, pack)
    assert report.integration_path.id == "hybrid"
    assert "fork" in report.integration_path.applies
    assert row_of(report, "guard-register-fork").points == 2


KERNELS = 'TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n  m.impl("add.Tensor", add);\n}\n'


@pytest.mark.parametrize(
    ("uses", "hidden"),
    [
        ({"csrc/act.cpp": "#  include <ext_kernels/act.h>\n"}, True),  # headers of an empty submodule
        ({"hx/ops.py": "import hx.ext_kernels.act as act\n"}, True),  # a module of the package
        ({"scripts/build.sh": "cmake -S ext-kernels -B build\n", "hx/x.py": "import ext_kernels\n"}, False),
    ],
)
def test_rows_reading_kernels_are_unknown_when_an_empty_submodule_holds_code_the_product_uses(
    tmp_path, pack, uses, hidden
):
    tree = write_tree(
        tmp_path / "tree",
        {
            ".gitmodules": '[submodule "k"]\n  path = ext-kernels\n',
            "csrc/ops.cpp": KERNELS,
            "hx/__init__.py": PU1,
            **uses,
        },
    )
    (tree / "ext-kernels").mkdir()
    report = check(tree, pack)
    binary, methods = row_of(report, "operators-binary"), row_of(report, "device-generate-methods")
    assert report.index.absent_submodules == ("ext-kernels",)
    assert (binary.outcome == "unknown") == hidden
    assert binary.reason.startswith("kernels may live in submodule ext-kernels, not present") == hidden
    assert (methods.outcome, methods.points) == ("scored", 0)  # reads no kernels
