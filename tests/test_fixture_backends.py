"""End to end on the pack's fixture backends, beyond what their expected.yaml files state."""

from __future__ import annotations

import pytest
from air.report.json_report import to_dict
from air.report.markdown import render_markdown
from air.run import check
from helpers.paths import FIXTURES
from helpers.reports import REPORT_VALIDATOR
from helpers.trees import write_tree


def test_docs_vendored_and_comments_never_count(pack):
    report = check(FIXTURES / "pu1_partial", pack)
    paths = {f.path for row in report.rows for f in row.evidence}
    assert not any(p.startswith(("docs/", "third_party/")) for p in paths)
    guard = next(r for r in report.rows if r.id == "guard-register-pu1")
    assert {f.line for f in guard.evidence if f.path == "csrc/guard_b.cpp"} == {3, 8}  # not the commented line 9


def test_empty_directory(tmp_path, pack):
    report = check(tmp_path, pack)
    assert report.integration_path.id == "none"
    assert report.readiness == 0
    assert len(report.rows) == len(pack.rows)
    scored = [r for r in report.rows if r.outcome == "scored"]
    assert scored and all(r.points == 0 for r in scored)
    assert all(r.reason for r in report.rows if r.outcome != "scored" or r.points != 2)


def test_a_backend_without_build_metadata_of_its_own_is_named_after_its_registering_package(tmp_path, pack):
    files = {
        "tools/bench/setup.py": "from setuptools import setup\nsetup(name='npx-bench', version='3.1')\n",
        "tools/bench/npx_bench/__init__.py": "",
        "torch_npx/__init__.py": "import torch\nfrom torch_npx import _bind\n",
        "torch_npx/_bind.py": "from torch.utils import rename_privateuse1_backend as _rename\n_rename('npx')\n",
    }
    write_tree(tmp_path, files)
    report = check(tmp_path, pack)
    assert (report.backend.name, report.backend.version) == ("torch_npx", None)


def test_a_lone_script_that_registers_the_device_does_not_name_the_backend(tmp_path, pack):
    root = tmp_path / "vpu-backend"
    root.mkdir()
    (root / "register_vpu.py").write_text("import torch\ntorch.utils.rename_privateuse1_backend('vpu')\n")
    assert check(root, pack).backend.name == "vpu-backend"


@pytest.mark.parametrize(
    "helper",
    [
        ("setup.py", "from setuptools import setup\nsetup(name='xpu-lint', version='1.0', packages=['xpu_lint'])\n"),
        (
            "pyproject.toml",
            "[project]\nname = 'xpu-lint'\nversion = '1.0'\n[tool.setuptools.packages.find]\ninclude = ['xpu_lint*']\n",
        ),
        (
            "setup.cfg",
            "[metadata]\nname = xpu-lint\nversion = 1.0\n[options]\npackages = find:\n"
            "[options.packages.find]\ninclude = xpu_lint*\n",
        ),
    ],
)
def test_a_helper_distribution_at_the_top_level_does_not_name_the_backend_beside_it(tmp_path, pack, helper):
    build_file, text = helper
    files = {
        build_file: text,
        "xpu_lint/__init__.py": "",
        "torch_xpq/__init__.py": "import torch\ntorch.utils.rename_privateuse1_backend('xpq')\n",
    }
    write_tree(tmp_path, files)
    assert check(tmp_path, pack).backend.name == "torch_xpq"


@pytest.mark.parametrize(
    "device",
    [
        {  # an in-tree key, through a guard registrar object
            "gaudix/setup.py": "from setuptools import setup\nsetup(name='torch-gaudix', packages=['torch_gaudix'])\n",
            "gaudix/torch_gaudix/__init__.py": "import torch\n",
            "gaudix/torch_gaudix/csrc/guard.cpp": (
                "static c10::impl::DeviceGuardImplRegistrar reg(c10::DeviceType::HPU, new GaudixGuard());\n"
            ),
        },
        {  # PrivateUse1, kernels and a guard registered in C++, the slot's name given elsewhere
            "gaudix/pyproject.toml": "[project]\nname = 'torch-gaudix'\nversion = '0.3'\n",
            "gaudix/torch_gaudix/__init__.py": "import torch\n",
            "gaudix/torch_gaudix/csrc/ops.cpp": 'TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n  m.impl("abs", &abs_impl);\n}\n',
            "gaudix/torch_gaudix/csrc/guard.cpp": "C10_REGISTER_GUARD_IMPL(PrivateUse1, GaudixGuard);\n",
        },
    ],
)
def test_a_compile_backend_shipped_beside_the_device_package_does_not_name_it(tmp_path, pack, device):
    """The compiler's entry point names its own backend: that name is not the device package's."""
    compiler = {
        "graphc/setup.py": (
            "from setuptools import setup\nsetup(name='graphc', version='2.0', packages=['graphc'],\n"
            "      entry_points={'torch_dynamo_backends': ['fastgraph = graphc.backend:fastgraph']})\n"
        ),
        "graphc/graphc/backend.py": COMPILER_MODULE,
    }
    write_tree(tmp_path, {**compiler, **device})
    assert check(tmp_path, pack).backend.name == "torch-gaudix"


COMPILER_MODULE = "".join(f"def fastgraph_{i}(gm, example_inputs):\n    return gm\n\n\n" for i in range(20))


def test_operator_coverage_shows_native_fallback_missing_and_undecided(pack):
    fallbacks = check(FIXTURES / "ops_host_fallback", pack)
    unary = next(c for c in fallbacks.operators.categories if c.item == "8.2.1")
    assert (unary.covered, unary.total, unary.missing) == (10, 12, ())
    assert unary.fallback == ("sin", "cos")
    assert fallbacks.operators.per_op_fallbacks == 9
    markdown = render_markdown(fallbacks)
    assert "| # | Category | Native | Per-op fallback | Stub | Missing | Composite (no kernel needed) |" in markdown
    assert "| 8.1.3 | Tensor.item() via \\_local_scalar_dense | 0/1 | `_local_scalar_dense` | — | — | — |" in markdown
    stubs = check(FIXTURES / "ops_stub_kernels", pack)
    unary = next(c for c in stubs.operators.categories if c.item == "8.2.1")
    assert (unary.covered, unary.stub) == (0, ("abs", "neg"))
    assert "Operators registered with a stub kernel only, which computes nothing: 8" in render_markdown(stubs)
    codegen = check(FIXTURES / "ops_py_codegen", pack)
    reduction = next(c for c in codegen.operators.categories if c.item == "8.2.3")
    assert reduction.undecided.startswith("codegen/families.yml names template tree_reduce")
    assert "sum.dim_IntList" not in reduction.missing and reduction.total == 9
    assert "| 8.2.3 | Reduction ops | ?/9 |" in render_markdown(codegen)
    assert REPORT_VALIDATOR.validate(to_dict(codegen)) is None


def test_a_topological_sort_is_no_device_topology(pack):
    report = check(FIXTURES / "negations", pack)
    assert "device-topology" not in {candidate.id for candidate in report.upstream}
    graph = (FIXTURES / "negations" / "torch_ng" / "graph.py").read_text()
    assert "topological_sort" in graph and "TopologicalSorter" in graph


OPS = "".join(f"  - {name}\n" for name in ("add.Tensor", "mul.Tensor", "abs", "neg", "exp", "relu"))


@pytest.mark.parametrize(
    "op_list",
    [
        "backend: Tpx\nsupported:\n" + OPS + "autograd:\n  - native_layer_norm\n",
        "backend: Tpx\nkernels:\n  PrivateUse1:\n"
        + OPS.replace("  -", "    -")
        + "  AutogradPrivateUse1:\n    - gelu\n",
    ],
)
def test_an_op_list_autograd_section_counts_alike_for_both_autograd_rows(tmp_path, pack, op_list):
    files = {
        "tpx/ops/kernels.yaml": op_list,
        "tpx/CMakeLists.txt": "set(OPS ops/kernels.yaml)\n",
        "tpx/ops/add.cpp": 'TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("add.Tensor", &add); }\n',
    }
    write_tree(tmp_path, files)
    rows = {row.id: row for row in check(tmp_path, pack).rows}
    assert rows["autograd-key-registered"].points == rows["fallback-autograd-key"].points == 2
    assert any(e.path == "tpx/ops/kernels.yaml" for e in rows["autograd-key-registered"].evidence)
