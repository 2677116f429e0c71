"""Operator registrations (C++ blocks, Python, codegen op lists) and their coverage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from air.errors import PackError
from air.evidence import Evaluator, clause_from_data
from air.evidence.base import Context
from air.expr import parse_condition
from air.index import build_index
from air.operators import family, find_registrations
from air.packs import load_pack
from test_packs import HEADER, ROWS, write_pack

BLOCKS = """\
#include <torch/library.h>
#define MY_KEY PrivateUse1
#define MY_IMPL(ns, k, m) TORCH_LIBRARY_IMPL(ns, k, m)
#define OWN_LIBRARY_IMPL(ns, k, m) static ::torch::Library lib_##ns(k, m)

TORCH_LIBRARY_IMPL(aten, MY_KEY, m) {
  m.impl("add.Tensor", TORCH_FN(add));
  // m.impl("sub.Tensor", TORCH_FN(sub));
  m.impl(TORCH_SELECTIVE_NAME("aten::mul.Tensor"), &mul);
}
MY_IMPL(aten, PrivateUse1, m) { m.impl("abs.out", &abs_out); }
OWN_LIBRARY_IMPL(aten, XPU, m) { m.impl("relu", &relu); }
TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("topk", &topk); }
TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}
"""
PYTHON = """\
import torch
from torch.library import Library

lib = Library("aten", "IMPL", "PrivateUse1")
lib.impl("neg", lambda x: x)

@torch.library.impl("aten::exp", "privateuseone")
def exp(x):
    return x
"""
OP_LIST = """\
backend: Dev
supported:
  - sqrt
  - func: sin
  - cos
  - tan
  - func: log
    dispatch:
      SparsePrivateUse1: sparse_log
generated:
  - schema: "aten::cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)"
"""


@pytest.fixture(scope="module")
def syntax():
    return load_pack("pytorch-2.x").operators


def registered(tmp_path, syntax, files: dict[str, str]):
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    index = build_index(tmp_path)
    try:
        found = find_registrations(index, syntax)
    finally:
        index.close()
    return found


def test_cpp_blocks_through_aliases_and_wrappers(tmp_path, syntax):
    found = registered(tmp_path, syntax, {"csrc/ops.cpp": BLOCKS})
    ops = {(r.op, r.key, r.line) for r in found.ops}
    assert ops == {("add.Tensor", "MY_KEY", 7), ("mul.Tensor", "MY_KEY", 9), ("abs.out", "PrivateUse1", 11),
                   ("relu", "XPU", 12), ("topk", "CPU", 13)}
    assert [(r.key, r.line) for r in found.fallbacks] == [("PrivateUse1", 15)]


def test_python_registrations(tmp_path, syntax):
    found = registered(tmp_path, syntax, {"pkg/ops.py": PYTHON})
    assert {(r.op, r.key, r.how) for r in found.ops} == {("neg", "PrivateUse1", "python"), ("exp", "privateuseone", "python")}


def test_codegen_op_lists(tmp_path, syntax):
    found = registered(tmp_path, syntax, {"codegen/dev_functions.yaml": OP_LIST, "config/other.yaml": "supported:\n  - x\n"})
    assert {(r.op, r.key) for r in found.ops} == {
        ("sqrt", "PrivateUse1"), ("sin", "PrivateUse1"), ("cos", "PrivateUse1"), ("tan", "PrivateUse1"),
        ("log", "SparsePrivateUse1"), ("cat.out", "PrivateUse1"),
    }
    assert all(r.source.path == "codegen/dev_functions.yaml" for r in found.ops)


def test_yaml_that_is_not_an_op_list_or_is_hostile_gives_nothing(tmp_path, syntax):
    recursive = "supported: &a\n  - func: x\n  - *a\n"
    found = registered(tmp_path, syntax, {"a.yaml": "supported:\n  - apples\n  - pears\n", "b.yaml": recursive,
                                          "c.yaml": "supported: [unclosed\n"})
    assert found.ops == ()


def test_family():
    assert family("add_.Tensor") == family("add.out") == family("add") == "add"
    assert family("convolution_backward_overrideable") == "convolution_backward"
    assert family("_copy_from") == "_copy_from"


def test_coverage_counts_families_and_alternatives_and_leaves_out_composites(tmp_path):
    pack = load_pack("pytorch-2.x")
    (tmp_path / "ops.cpp").write_text(BLOCKS)
    index = build_index(tmp_path)
    evaluator = Evaluator(Context(index, pack.symbols, pack.operators))
    data = {"ops": {"of": ["add.Tensor", "abs", "sub.Tensor", "relu|gelu", "matmul"]}, "where": {"KEY": {"symbol": "kernel_key"}}}
    result = evaluator.result(clause_from_data("native", data))
    index.close()
    assert result.coverage.covered == ("add.Tensor", "abs", "relu|gelu")
    assert result.coverage.missing == ("sub.Tensor",)
    assert result.coverage.composite == ("matmul",)
    assert result.covered_share() == 0.75
    assert parse_condition("coverage(native) >= 0.75").evaluate({"native": result}) is True
    assert parse_condition("coverage(native) > 0.75").evaluate({"native": result}) is False


CATALOG = Path(__file__).resolve().parent.parent / "rulepacks" / "pytorch-2.x" / "data" / "aten-ops.json"
OPS_HEADER = HEADER + """\
operators:
  catalog: data/aten-ops.json
  namespace: aten
  blocks: [TORCH_LIBRARY_IMPL]
  fallback: fallback
  python_impl: [torch.library.impl]
  python_library: torch.library.Library
  op_list_default_key: PrivateUse1
  kernel_keys: device_key
"""


@pytest.mark.parametrize(
    ("header", "rows", "fragment"),
    [
        (HEADER, ROWS.replace("python_call: {name: torch.utils.rename_privateuse1_backend}", "ops: {of: [add]}"),
         "needs an `operators` section"),
        (OPS_HEADER, ROWS.replace("python_call: {name: torch.utils.rename_privateuse1_backend}", "ops: {of: [addd]}"),
         "not in the operator catalog: addd"),
        (OPS_HEADER, ROWS.replace("      2: call", "      2: coverage(call) >= 1"), "coverage(call) needs an `ops` clause"),
        (OPS_HEADER.replace("kernel_keys: device_key", "kernel_keys: nope"), ROWS, "unknown symbol set 'nope'"),
        (OPS_HEADER.replace("aten-ops.json", "missing.json"), ROWS, "no operator catalog"),
    ],
)
def test_broken_operator_packs(tmp_path, header, rows, fragment):
    pack = write_pack(tmp_path, header=header, rows=rows)
    (pack / "data").mkdir()
    shutil.copyfile(CATALOG, pack / "data" / "aten-ops.json")  # a catalog is named inside its pack
    with pytest.raises(PackError) as error:
        load_pack(str(pack))
    assert fragment in str(error.value)
