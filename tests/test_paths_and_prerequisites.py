"""Integration paths (hybrid, autoload), remediations chosen by the evidence, and the static
prerequisites of runtime rows, on small trees written here."""

from __future__ import annotations

import shutil

import pytest
from air.errors import PackError
from air.pack import shipped
from air.pack.framework import load_framework
from air.pack.load import load_pack
from air.resources import data_dir
from air.run import check
from air.scoring.rows import RUNTIME_REMEDY
from helpers.packs import TINY_ROWS, load_error, write_pack
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


def test_a_prerequisite_ruled_out_by_what_is_found_names_it_and_nothing_missing(tmp_path):
    rows = RUNTIME_ROWS.replace("    requires: hook", "    requires: hook and not stubs").replace(
        "text: {literal: never_here}", "text: {literal: StubTimer, languages: [cpp]}"
    )
    pack = load_pack(str(write_pack(tmp_path, rows=rows)))
    tree = write_tree(
        tmp_path / "tree", {"csrc/stubs.cpp": "struct S : torch::profiler::impl::ProfilerStubs { StubTimer t; };\n"}
    )
    row = row_of(check(tree, pack), "timing")
    assert (row.outcome, row.points) == ("scored", 0)
    assert "not found" not in row.reason
    assert "which is absent; found, which it rules out: stubs found by a clause" in row.reason


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
    tested_row = row_of(check(tested, pack), "timing")
    assert tested_row.points == 1
    # at its static best, the row asks for the runtime check, not for code that is there
    assert tested_row.remediation == RUNTIME_REMEDY and "air check --runtime" in RUNTIME_REMEDY


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


@pytest.mark.parametrize(
    "files",
    [
        {
            "ind/__init__.py": "from torch._inductor.codegen.common import register_backend_for_device as reg\n"
            "reg('ind', Scheduling, Wrapper)\n"
        },
        {
            "ind/__init__.py": "import torch._inductor.codegen.common as common\n"
            "common.register_device_op_overrides('ind', Overrides())\n"
        },
        {
            "ind/__init__.py": "import torch\ntorch._dynamo.device_interface.register_interface_for_device('ind', Iface)\n"
        },
        {
            "ind/__init__.py": "from torch._dynamo.backends.common import aot_autograd\n"
            "ind_backend = aot_autograd(fw_compiler=lower)\n"
        },
        {
            "ind/__init__.py": "from functorch.compile import aot_module_simplified\n\n"
            "def run(gm, inputs):\n    return aot_module_simplified(gm, inputs, fw_compiler=lower)\n"
        },
        {
            "ind/__init__.py": "import functools\n\ndef _compile(gm, example_inputs, *, level=1):\n    return gm\n\n"
            "def get_backend(level):\n    return functools.partial(_compile, level=level)\n"
        },
        {
            "ind/__init__.py": "class Backend:\n    def __call__(self, graph_module, example_inputs):\n        return graph_module\n"
        },
        {
            "ind/__init__.py": "import torch\nfrom ind.factory import make\n\nfast = torch.compile(model, backend=make())\n"
        },
        {
            "ind/__init__.py": "import torch\nimport ind.compiler as compiler\n\n"
            "fast = torch._dynamo.optimize(backend=compiler.lower)(model)\n"
        },
        {"pyproject.toml": '[project]\nname = "ind"\n[project.entry-points.torch_dynamo_backends]\nind = "ind:c"\n'},
    ],
    ids=[
        "inductor-backend",
        "op-overrides",
        "device-interface",
        "aot-autograd",
        "aot-module",
        "factory",
        "callable-class",
        "factory-passed",
        "optimize-passed",
        "entry-point",
    ],
)
def test_every_spelling_of_a_compile_backend_decides_compile_only(tmp_path, pack, files):
    path = check(write_tree(tmp_path / "tree", files), pack).integration_path
    assert (path.id, path.key) == ("compile-only", None)


@pytest.mark.parametrize(
    "code",
    [
        "import torch\nfast = torch.compile(model, backend='inductor')\n",
        "import torch\nfast = torch.compile(model)\n",
        "import torch\nbackend = 'vendor'\nfast = torch._dynamo.optimize(backend)(model)\n",
        "def fold(gm, example_inputs=None):\n    return gm\n",
        "def lower(gm, example_inputs, options):\n    return gm\n",
        "class Tracer:\n    def __init__(self, gm, example_inputs):\n        self.gm = gm\n",
    ],
    ids=["named-backend", "default-backend", "optimize-by-name", "graph-pass", "three-parameters", "constructor"],
)
def test_using_torch_compile_is_no_compile_backend(tmp_path, pack, code):
    path = check(write_tree(tmp_path / "tree", {"zoo/__init__.py": code}), pack).integration_path
    assert path.id == "none"


COMPILER = "def graph_compiler(gm, example_inputs):\n    return gm\n"
OWN_OP_KERNEL = "import torch\ntorch.library.impl('acc::fused', 'PrivateUse1')(fused)\n"


@pytest.mark.parametrize(
    ("files", "verdict", "key"),
    [
        ({"acc/graph.py": COMPILER, "acc/ops.py": OWN_OP_KERNEL}, "compile-only", "PrivateUse1"),
        ({"acc/graph.py": COMPILER, "csrc/ops.cpp": KERNELS.replace("aten", "acc")}, "compile-only", "PrivateUse1"),
        ({"acc/graph.py": COMPILER, "acc/ops.py": OWN_OP_KERNEL, "acc/__init__.py": PU1}, "privateuse1", "PrivateUse1"),
        ({"acc/ops.py": OWN_OP_KERNEL}, "privateuse1", "PrivateUse1"),
    ],
    ids=["python-kernels", "cpp-kernels", "names-the-slot", "no-compile-backend"],
)
def test_a_compile_backend_using_another_packages_privateuse1_device_is_compile_only(
    tmp_path, pack, files, verdict, key
):
    path = check(write_tree(tmp_path / "tree", files), pack).integration_path
    assert (path.id, path.key) == (verdict, key)
    assert ("the device is another package's" in path.note) == (verdict == "compile-only")


MODEL_TEST = (
    "import torch\nimport acc\nfrom transformers import T5Model\n\n"
    "def test_t5():\n    model = T5Model.from_pretrained('t5-small')\n    torch.compile(model)(x).sum().backward()\n"
)


@pytest.mark.parametrize(
    ("product", "runs"),
    [
        ({"acc/__init__.py": COMPILER}, True),
        ({"acc/__init__.py": "from torch._dynamo import register_backend\nregister_backend(lower, 'acc')\n"}, True),
        ({"acc/__init__.py": COMPILER + PU1}, False),  # a device of its own needs kernels for its tensors
        ({"acc/__init__.py": COMPILER, "csrc/guard.cpp": "C10_REGISTER_GUARD_IMPL(PrivateUse1, Guard);\n"}, False),
        ({"acc/__init__.py": "x = 1\n"}, False),
    ],
    ids=["compiler-function", "dynamo-backend", "renamed-slot", "guard", "neither"],
)
def test_a_compile_backend_runs_models_only_without_a_device_of_its_own(tmp_path, pack, product, runs):
    report = check(write_tree(tmp_path / "tree", {**product, "tests/test_t5.py": MODEL_TEST}), pack)
    for row_id in ("model-t5", "autograd-backward-runs", "ecosystem-transformers"):
        row = row_of(report, row_id)
        assert (row.points == 1) == runs, (row_id, row.reason)
        assert ("cannot work without its static prerequisite" in row.reason) == (not runs)
    higher_order = row_of(report, "autograd-higher-order")  # AOTAutograd compiles no double backward
    assert (higher_order.outcome, higher_order.points) == ("scored", 0)


def test_a_row_at_full_score_asks_for_nothing_and_a_partial_one_says_what_is_left(tmp_path):
    """A remediation chosen by what the evidence shows still never reaches a row with nothing to fix."""
    rows = TINY_ROWS.replace(
        "    remediation: Do it.\n",
        "    remediation:\n      - {when: call, say: Call it once more.}\n      - say: Do it.\n",
    )
    pack = load_pack(str(write_pack(tmp_path, rows=rows)))
    full = write_tree(
        tmp_path / "full", {"pkg/__init__.py": "import torch\ntorch.utils.rename_privateuse1_backend('x')\n"}
    )
    bare = write_tree(tmp_path / "bare", {"pkg/__init__.py": "import torch\n"})
    assert (row_of(check(full, pack), "tiny-row").points, row_of(check(full, pack), "tiny-row").remediation) == (2, "")
    assert (row_of(check(bare, pack), "tiny-row").points, row_of(check(bare, pack), "tiny-row").remediation) == (
        0,
        "Do it.",
    )


STUB_GUARD = """\
#include <c10/core/impl/DeviceGuardImplInterface.h>
namespace acme {
struct AcmeGuard final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return c10::DeviceType::PrivateUse1; }
  c10::Device exchangeDevice(c10::Device d) const override { return d; }
  c10::Device getDevice() const override { return c10::Device(c10::DeviceType::PrivateUse1, 0); }
  void setDevice(c10::Device) const override {}
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const noexcept override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
};
%s
}  // namespace acme
"""
STUB_HOOKS = """\
#include <ATen/detail/PrivateUse1HooksInterface.h>
namespace acme {
struct AcmeHooks : public at::PrivateUse1HooksInterface {
  bool hasPrimaryContext(c10::DeviceIndex) const override { TORCH_CHECK(false, "not yet"); }
  c10::DeviceIndex deviceCount() const override { return 1; }
};
static bool acme_hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new AcmeHooks());
  return true;
}();
}  // namespace acme
"""


@pytest.mark.parametrize(
    "registration",
    [
        "C10_REGISTER_GUARD_IMPL(PrivateUse1, AcmeGuard);",
        "static c10::impl::DeviceGuardImplRegistrar acme_guard(c10::DeviceType::PrivateUse1, new AcmeGuard());",
    ],
)
def test_a_row_earning_one_for_stubs_asks_for_real_bodies_not_for_what_exists(tmp_path, pack, registration):
    """Stub overrides earn 1; the remediation then asks to give them bodies, never to subclass,
    override or register what the backend already subclasses, overrides and registers."""
    root = write_tree(
        tmp_path / "acme",
        {"csrc/AcmeGuard.cpp": STUB_GUARD % registration, "csrc/AcmeHooks.cpp": STUB_HOOKS},
    )
    report = check(root, pack)
    for row_id in (
        "guard-impl-class",
        "guard-register-pu1",
        "guard-device-ops",
        "guard-stream-ops",
        "hook-device-count",
    ):
        row = row_of(report, row_id)
        assert row.points == 1, (row_id, row.reason)
        assert row.remediation.startswith("Give "), (row_id, row.remediation)
        assert not row.remediation.startswith(("Subclass", "Register", "Override")), (row_id, row.remediation)
    assert "throws" in row_of(report, "hook-has-primary-context").remediation


def test_a_core_runtime_that_the_tree_may_replace_names_a_signal_of_the_framework(tmp_path, monkeypatch):
    shutil.copytree(data_dir("frameworks"), tmp_path / "frameworks")
    runtime = tmp_path / "frameworks/pytorch/core_runtime.yaml"
    runtime.write_text(runtime.read_text().replace("unless: fork_guard_key", "unless: own_guard"))
    monkeypatch.setattr(shipped, "data_dir", lambda kind: tmp_path / kind)
    with pytest.raises(PackError, match="core_runtime.yaml.*undefined evidence own_guard"):
        load_framework("pytorch")
