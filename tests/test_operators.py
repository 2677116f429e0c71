"""Operator registrations (C++ blocks, Python, codegen op lists) and their coverage."""

from __future__ import annotations

import importlib.util
import json
import shutil

import pytest
from air.errors import PackError
from air.evidence import Evaluator, clause_from_data
from air.evidence.base import Context
from air.evidence.kernel_bodies import KernelReader
from air.evidence.stubs import StubRules
from air.graph import operators
from air.graph.catalog import Catalog, family
from air.graph.operators import find_registrations
from air.index import build_index
from air.index.cpp import builds
from air.pack.conditions import parse_condition
from air.pack.load import load_pack
from air.scoring.operators import operator_coverage
from helpers.packs import TINY_CLAUSE, TINY_HEADER, TINY_ROWS, write_pack
from helpers.paths import REPO_ROOT, SHIPPED_PACK_DIR
from helpers.trees import write_tree

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
    write_tree(tmp_path, files)
    index = build_index(tmp_path)
    return find_registrations(index, syntax)


def test_cpp_blocks_through_aliases_and_wrappers(tmp_path, syntax):
    found = registered(tmp_path, syntax, {"csrc/ops.cpp": BLOCKS})
    ops = {(r.op, r.key, r.line) for r in found.ops}
    assert ops == {
        ("add.Tensor", "MY_KEY", 7),
        ("mul.Tensor", "MY_KEY", 9),
        ("abs.out", "PrivateUse1", 11),
        ("relu", "XPU", 12),
        ("topk", "CPU", 13),
    }
    assert [(r.key, r.line) for r in found.fallbacks] == [("PrivateUse1", 15)]


KEYED = {
    "csrc/register.h": """\
#pragma once
constexpr auto kAmpKey = c10::DispatchKey::AutocastPrivateUse1;
#define VENDOR_OP(op, fn, key) lib.impl(#op, torch::dispatch(key, TORCH_FN(fn)))
#define VENDOR_BLOCK(k) \\
  TORCH_LIBRARY_IMPL(aten, k, lib) { lib.impl("neg", &neg); lib.impl("exp", &exp); }
void add_all(torch::Library& target, c10::DispatchKey key);
""",
    "csrc/register.cpp": """\
#include "register.h"
void add_all(torch::Library& target, c10::DispatchKey key) {
  target.impl("sin", torch::dispatch(key, &sin));
  target.impl("cos", &cos);
}
""",
    "csrc/ops.cpp": """\
#include "register.h"
TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  lib.impl("add.Tensor", torch::dispatch(c10::DispatchKey::AutogradPrivateUse1, TORCH_FN(add)));
  lib.impl("sub.Tensor", ::torch::dispatch(kAmpKey, &sub));
  lib->impl("tan", c10::DispatchKey::AutocastPrivateUse1, &tan);
  VENDOR_OP(mul.Tensor, mul, c10::DispatchKey::AutocastPrivateUse1);
  VENDOR_OP(div.Tensor, div, c10::DispatchKey::PrivateUse1);
  add_all(lib, c10::DispatchKey::AutogradPrivateUse1);
  #include "ops.inc"
}
VENDOR_BLOCK(PrivateUse1)
""",
    "csrc/ops.inc": 'lib.impl("abs", &abs);\nlib.impl("relu", torch::dispatch(c10::DispatchKey::Meta, &relu));\n',
    "csrc/xmacro.cpp": """\
#define ENTRY(name, fn) m.impl(#name, TORCH_FN(fn));
TORCH_LIBRARY_IMPL(aten, XPU, m) {
#include "list.def"
}
""",
    "csrc/list.def": "ENTRY(floor, floor_impl)\nENTRY(ceil, ceil_impl)\n",
    "csrc/own_block.inc": 'TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("round", &round_cpu); }\n',
    "csrc/includes_own_block.cpp": 'TORCH_LIBRARY_IMPL(aten, XPU, m) {\n#include "own_block.inc"\n}\n',
}


def test_registrations_through_keys_wrappers_and_fragments(tmp_path, syntax):
    found = registered(tmp_path, syntax, KEYED)
    ops = {(r.op, r.key, r.source.path, r.line) for r in found.ops}
    assert ops == {
        ("add.Tensor", "c10::DispatchKey::AutogradPrivateUse1", "csrc/ops.cpp", 3),  # the registration's own key
        ("sub.Tensor", "kAmpKey", "csrc/ops.cpp", 4),  # an alias, resolved when constraints are checked
        ("tan", "c10::DispatchKey::AutocastPrivateUse1", "csrc/ops.cpp", 5),  # the key between name and function
        ("mul.Tensor", "c10::DispatchKey::AutocastPrivateUse1", "csrc/ops.cpp", 6),  # a macro taking the key
        ("div.Tensor", "c10::DispatchKey::PrivateUse1", "csrc/ops.cpp", 7),
        ("sin", "c10::DispatchKey::AutogradPrivateUse1", "csrc/ops.cpp", 8),  # a function taking library and key
        ("cos", "PrivateUse1", "csrc/ops.cpp", 8),
        ("abs", "PrivateUse1", "csrc/ops.inc", 1),  # a fragment included in the block
        ("relu", "c10::DispatchKey::Meta", "csrc/ops.inc", 2),
        ("neg", "PrivateUse1", "csrc/ops.cpp", 11),  # a wrapper macro that writes the block itself
        ("exp", "PrivateUse1", "csrc/ops.cpp", 11),
        ("floor", "XPU", "csrc/list.def", 1),  # an X-macro list, expanded by the including file's macro
        ("ceil", "XPU", "csrc/list.def", 2),
        ("round", "CPU", "csrc/own_block.inc", 1),  # a fragment with a block of its own counts once, as its own
    }


def test_the_key_a_registration_names_decides_whether_it_is_a_device_kernel(tmp_path):
    write_tree(tmp_path, KEYED)
    pack = load_pack("pytorch-2.x")
    evaluator = Evaluator(Context(build_index(tmp_path), pack.symbols, pack.operators, pack.framework.cpp))
    coverage = operator_coverage(pack, evaluator)
    # the autograd key's kernels count as the device's (add, sin), not the autocast key's (mul,
    # sub through its alias), Meta's (relu) or CPU's (round)
    assert coverage.registered == len({"div.Tensor", "cos", "abs", "neg", "exp", "floor", "ceil", "add.Tensor", "sin"})


def test_a_category_whose_search_ran_out_of_time_is_left_out_of_the_summary(tmp_path, monkeypatch):
    write_tree(tmp_path, KEYED)
    pack = load_pack("pytorch-2.x")
    monkeypatch.setattr(
        "air.evidence.ops.measure", lambda clause, hits, context: None
    )  # as a timed-out search leaves it
    evaluator = Evaluator(Context(build_index(tmp_path), pack.symbols, pack.operators, pack.framework.cpp))
    coverage = operator_coverage(pack, evaluator)
    assert coverage is not None and coverage.categories == ()


def test_fragments_that_include_themselves_and_expansions_that_fan_out_end(tmp_path, syntax, monkeypatch):
    fan_out = "".join(f"#define LEVEL{n}(x) " + " ".join([f"LEVEL{n + 1}(x)"] * 5) + "\n" for n in range(2))
    found = registered(
        tmp_path,
        syntax,
        {
            "csrc/loop.inc": '#include "loop.inc"\n' * 20 + 'm.impl("abs", &abs);\n',
            "csrc/ops.cpp": 'TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n#include "loop.inc"\n#include "loop.inc"\n}\n',
        },
    )
    assert [(r.op, r.source.path) for r in found.ops] == [("abs", "csrc/loop.inc")]  # read once
    monkeypatch.setattr(operators, "MAX_BLOCK_STATEMENTS", 10)
    found = registered(
        tmp_path / "fan",
        syntax,
        {
            "csrc/fan.cpp": fan_out
            + "#define LEVEL2(x) m.impl(#x, &x);\nTORCH_LIBRARY_IMPL(aten, XPU, m) { LEVEL0(neg) }\n",
        },
    )
    assert len(found.ops) == 10  # of the 25 the macros write, the first MAX_BLOCK_STATEMENTS


def test_python_registrations(tmp_path, syntax):
    found = registered(tmp_path, syntax, {"pkg/ops.py": PYTHON})
    assert {(r.op, r.key, r.how) for r in found.ops} == {
        ("neg", "PrivateUse1", "python"),
        ("exp", "privateuseone", "python"),
    }


def test_codegen_op_lists(tmp_path, syntax):
    found = registered(
        tmp_path,
        syntax,
        {
            "codegen/dev_functions.yaml": OP_LIST,
            "config/other.yaml": "supported:\n  - x\n",
            "CMakeLists.txt": "set(OP_LIST codegen/dev_functions.yaml)\n",
        },
    )
    assert {(r.op, r.key) for r in found.ops} == {  # `backend: Dev` names the backend, not a key
        ("sqrt", "PrivateUse1"),
        ("sin", "PrivateUse1"),
        ("cos", "PrivateUse1"),
        ("tan", "PrivateUse1"),
        ("log", "SparsePrivateUse1"),
        ("cat.out", "PrivateUse1"),
    }
    assert all(r.source.path == "codegen/dev_functions.yaml" for r in found.ops)


UNARY_LIST = "supported:\n" + "".join(f"  - {op}\n" for op in ("abs", "neg", "exp", "log", "sqrt"))


def test_op_lists_count_only_when_the_build_or_a_codegen_script_names_them(tmp_path, syntax):
    lists = {
        f"codegen/{name}.yaml": UNARY_LIST
        for name in ("by_bazel", "by_pyproject", "by_script", "unused", "by_docs", "by_test")
    }
    found = registered(
        tmp_path,
        syntax,
        {
            **lists,
            "codegen/quantized.yaml": "backend: QuantizedPrivateUse1\n" + UNARY_LIST,
            "BUILD.bazel": 'genrule(name = "ops", srcs = ["codegen/by_bazel.yaml", "codegen/quantized.yaml"])\n',
            "pyproject.toml": '[tool.devgen]\nop_lists = ["codegen/by_pyproject.yaml"]\n',
            "tools/regen.py": 'SOURCE = "by_script.yaml"\n',
            "docs/ops.md": "The kernels are listed in codegen/by_docs.yaml.\n",
            "tests/test_lists.py": 'LIST = "codegen/by_test.yaml"\n',
        },
    )
    assert {(r.source.path, r.key) for r in found.ops} == {
        ("codegen/by_bazel.yaml", "PrivateUse1"),
        ("codegen/by_pyproject.yaml", "PrivateUse1"),
        ("codegen/by_script.yaml", "PrivateUse1"),
        ("codegen/quantized.yaml", "QuantizedPrivateUse1"),
    }
    assert {r.source.path for r in found.unused} == {
        "codegen/unused.yaml",
        "codegen/by_docs.yaml",
        "codegen/by_test.yaml",
    }


def test_yaml_that_is_not_an_op_list_or_is_hostile_gives_nothing(tmp_path, syntax):
    recursive = "supported: &a\n  - func: x\n  - *a\n"
    found = registered(
        tmp_path,
        syntax,
        {"a.yaml": "supported:\n  - apples\n  - pears\n", "b.yaml": recursive, "c.yaml": "supported: [unclosed\n"},
    )
    assert found.ops == ()


OPS = ["add.Tensor", "mul.Tensor", "sub.Tensor", "div.Tensor", "abs", "neg"]


def test_hostile_key_fields_of_an_op_list_end(tmp_path, syntax):
    """A key field that aliases itself, a billion-laughs alias chain, or an item whose one key is
    written twice: each read once, in bounded time, and none ends the check."""
    laughs = "".join(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]\n" for i in range(1, 12))
    recursive = "x: &r [*r]\nops:\n" + "".join(f"  - func: {op}\n    dispatch: *r\n" for op in OPS)
    bomb = (
        "l0: &l0 [PrivateUse1]\n" + laughs + "ops:\n" + "".join(f"  - func: {op}\n    dispatch: *l11\n" for op in OPS)
    )
    doubled = "ops:\n" + "".join(f"  - {{{op}: 1, {op}: 2}}\n" for op in OPS)
    found = registered(tmp_path, syntax, {"r.yaml": recursive, "b.yaml": bomb, "d.yaml": doubled})
    assert {(r.op, r.source.path) for r in found.ops} <= {(op, path) for op in OPS for path in ("r.yaml", "b.yaml")}


def test_family():
    assert family("add_.Tensor") == family("add.out") == family("add") == "add"
    assert family("convolution_backward_overrideable") == "convolution_backward"
    assert family("_copy_from") == "_copy_from"


def test_coverage_counts_families_and_alternatives_and_leaves_out_composites(tmp_path):
    pack = load_pack("pytorch-2.x")
    (tmp_path / "ops.cpp").write_text(BLOCKS)
    (tmp_path / "more.cpp").write_text('TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("matmul", &own_matmul); }\n')
    index = build_index(tmp_path)
    evaluator = Evaluator(Context(index, pack.symbols, pack.operators))
    data = {
        "ops": {"of": ["add.Tensor", "abs", "sub.Tensor", "relu|gelu", "matmul"]},
        "where": {"KEY": {"symbol": "kernel_key"}},
    }
    result = evaluator.result(clause_from_data("native", data))
    assert result.coverage.covered == ("add.Tensor", "abs", "relu|gelu")
    assert result.coverage.missing == ("sub.Tensor",)
    assert result.coverage.composite == ("matmul",)
    assert result.coverage.overridden == ("matmul",)  # a composite the backend registers all the same
    assert result.covered_share() == 0.75
    assert parse_condition("coverage(native) >= 0.75").evaluate({"native": result}) is True
    assert parse_condition("coverage(native) > 0.75").evaluate({"native": result}) is False


CATALOG = SHIPPED_PACK_DIR / "data" / "aten-ops-2.13.json"
OPS_HEADER = (
    TINY_HEADER
    + """\
operators:
  catalog: data/aten-ops.json
  namespace: aten
  blocks: [TORCH_LIBRARY_IMPL]
  fallback: fallback
  python_impl: [torch.library.impl]
  python_library: torch.library.Library
  python_arguments:
    library: {namespace: [0, ns], key: [2, dispatch_key]}
    library_impl: {op: [0, op_name], key: [2, dispatch_key]}
    library_fallback: {kernel: [0, fallback_fn], key: [1, dispatch_key]}
    impl_on_library: {op: [1, name], key: [2, dispatch_key]}
    impl: {op: [0, qualname], key: [1, types, device_types]}
  wildcard_namespace: _
  op_list_default_key: PrivateUse1
  kernel_keys: device_key
"""
)


@pytest.mark.parametrize(
    ("header", "rows", "fragment"),
    [
        (TINY_HEADER, TINY_ROWS.replace(TINY_CLAUSE, "ops: {of: [add]}"), "needs an `operators` section"),
        (OPS_HEADER, TINY_ROWS.replace(TINY_CLAUSE, "ops: {of: [addd]}"), "in no operator catalog of the pack: addd"),
        (
            OPS_HEADER,
            TINY_ROWS.replace("      2: call", "      2: coverage(call) >= 1"),
            "coverage(call) needs an `ops` clause",
        ),
        (OPS_HEADER.replace("kernel_keys: device_key", "kernel_keys: nope"), TINY_ROWS, "unknown symbol set 'nope'"),
        (OPS_HEADER.replace("aten-ops.json", "missing.json"), TINY_ROWS, "no operator catalog"),
    ],
)
def test_broken_operator_packs(tmp_path, header, rows, fragment):
    pack = write_pack(tmp_path, header=header, rows=rows)
    (pack / "data").mkdir()
    shutil.copyfile(CATALOG, pack / "data" / "aten-ops.json")  # a catalog is named inside its pack
    with pytest.raises(PackError) as error:
        load_pack(str(pack))
    assert fragment in str(error.value)


# --- Fallback kernels are not native kernels -----------------------------------

FORWARDING = """\
#include <torch/library.h>
namespace dev {
void run_on_host(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  note_slow_path(op);
  at::native::cpu_fallback(op, stack);
}
static void host_round_trip(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (verbose()) { log_op(op); }
  run_on_host(op, stack);
}
at::Tensor erf_on_host(const at::Tensor& self) {
  return at::native::call_fallback_fn<&host_round_trip, ATEN_OP(erf)>::call(self);
}
at::Tensor topk_guarded(const at::Tensor& self) {
  if (self.dim() > 8) {
    return at::native::call_fallback_fn<&run_on_host, ATEN_OP(topk)>::call(self);
  }
  return launch_topk(self);
}
at::Tensor amax_by_mode(const at::Tensor& self, int mode) {
  if (mode == 0) {
    return launch_amax(self);
  } else {
    return at::native::call_fallback_fn<&run_on_host, ATEN_OP(amax)>::call(self);
  }
}
at::Tensor log_queued(const at::Tensor& self) {
  return Queue::current()->run_on_host(self);
}
at::Tensor exp_noted(const at::Tensor& self) {
  return launch_noted(self, "faster than cpu_fallback");
}
}  // namespace dev

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  lib.impl("sin", torch::CppFunction::makeFromBoxedFunction<&dev::host_round_trip>());
  lib.impl("cos",
           torch::CppFunction::makeFromBoxedFunction<dev::run_on_host>());
  lib.impl("erf", TORCH_FN(dev::erf_on_host));
  lib.impl("tan", [](const at::Tensor& x) {
    return at::native::call_fallback_fn<&at::native::cpu_fallback, ATEN_OP(tan)>::call(x);
  });
  lib.impl("topk", &dev::topk_guarded);
  lib.impl("abs", &dev::abs_kernel);
  lib.impl("exp", &dev::exp_noted);
  lib.impl("amax", TORCH_FN(dev::amax_by_mode));
  lib.impl("log", TORCH_FN(dev::log_queued));
}
"""


def test_kernels_that_forward_to_the_cpu_fallback_are_fallbacks(tmp_path, syntax):
    found = registered(tmp_path, syntax, {"csrc/register.cpp": FORWARDING})
    kinds = {r.op: (r.kernel, r.via) for r in found.ops}
    assert kinds == {
        "sin": ("fallback", "host_round_trip"),
        "cos": ("fallback", "run_on_host"),
        "erf": ("fallback", "erf_on_host"),
        "tan": ("fallback", "cpu_fallback"),
        "topk": ("native", ""),
        "abs": ("native", ""),
        "exp": ("native", ""),
        "amax": ("native", ""),
        "log": ("native", ""),
    }


# --- Kernels read from their bodies ----------------------------------------------

KERNEL_BODIES = """\
namespace dev {
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  const c10::OptionalDeviceGuard guard(at::device_of(self));
  return at::empty(self.sizes(), self.options());
}
Tensor& fill_(Tensor& self, const Scalar& value) { return self; }
Tensor mul(const Tensor& self, const Tensor& other) { TORCH_CHECK(false, "mul: not implemented"); }
Tensor div(const Tensor& self, const Tensor& other) { return refuse(self); }
Tensor refuse(const Tensor& self) { throw std::logic_error("unsupported"); }
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options) { return at::empty(size, options); }
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  auto out = at::empty_like(self);
  launch_sub(self, other, alpha, out);
  return out;
}
Tensor sin(const Tensor& self) {
  auto host = self.to(at::kCPU);
  auto result = at::native::sin(host);
  return result.to(self.device());
}
Tensor& cos_out(const Tensor& self, Tensor& out) {
  auto out_host = out.cpu();
  at::cpu::cos_out(out_host, self.cpu());
  out.copy_(out_host);
  return out;
}
Tensor tan(const Tensor& self) {
  std::cout << self.cpu() << std::endl;
  TORCH_CHECK(self.abs().max().cpu().item<float>() < 1e6f, "too large");
  auto out = at::empty_like(self);
  launch_tan(self, out);
  return out;
}
Tensor copy_back(const Tensor& self) { return self.cpu().to(self.device()); }
}
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", TORCH_FN(dev::add));
  m.impl("fill_.Scalar", &dev::fill_);
  m.impl("mul.Tensor", dev::mul);
  m.impl("div.Tensor", TORCH_FN(dev::div));
  m.impl("neg", [](const Tensor& self) { return self; });
  m.impl("empty_strided", TORCH_FN(dev::empty_strided));
  m.impl("sub.Tensor", TORCH_FN(dev::sub));
  m.impl("sin", TORCH_FN(dev::sin));
  m.impl("cos.out", TORCH_FN(dev::cos_out));
  m.impl("exp", [](const Tensor& self) { return at::exp(self.cpu()).to(self.device()); });
  m.impl("tan", TORCH_FN(dev::tan));
  m.impl("clone", TORCH_FN(dev::copy_back));
  m.impl("abs", TORCH_FN(dev::undefined_here));
}
"""


def kernel_reader(index, syntax) -> KernelReader:
    """The kernel reader a check of the shipped pack uses (see `air.evidence.ops.registrations`)."""
    upstream = load_pack("pytorch-2.x").framework.upstream
    return KernelReader(index, StubRules(upstream.inert_calls, allocations=upstream.allocations), syntax.host_fallback)


def test_kernel_bodies_tell_stubs_and_cpu_fallbacks_written_by_hand(tmp_path, syntax):
    write_tree(tmp_path, {"csrc/kernels.cpp": KERNEL_BODIES})
    index = build_index(tmp_path)
    bodies = kernel_reader(index, syntax)
    kinds = {r.op: (r.kernel, r.via) for r in find_registrations(index, syntax, bodies).ops}
    assert kinds == {
        "add.Tensor": ("stub", "dev::add"),
        "fill_.Scalar": ("stub", "dev::fill_"),
        "mul.Tensor": ("stub", "dev::mul"),
        "div.Tensor": ("stub", "dev::div"),
        "neg": ("stub", ""),
        "empty_strided": ("native", ""),  # an allocation operator returns an allocation
        "sub.Tensor": ("native", ""),
        "sin": ("fallback", "dev::sin"),
        "cos.out": ("fallback", "dev::cos_out"),
        "exp": ("fallback", ""),
        "tan": ("native", ""),  # the host only prints and checks a scalar
        "clone": ("native", ""),  # a round trip computing nothing on the host
        "abs": ("native", ""),  # not defined in the tree
    }
    assert {r.kernel for r in find_registrations(index, syntax).ops} == {"native"}


def test_the_kernels_of_many_registrations_are_looked_for_in_one_pass(tmp_path, syntax, monkeypatch):
    """One search of the tree per kernel made a tree registering thousands of kernels take minutes."""
    kernels = [f"k{number}" for number in range(40)]
    files = {
        f"csrc/op{number}.cpp": f"Tensor {name}(const Tensor& self) {{ return self; }}\n"
        for number, name in enumerate(kernels)
    }
    registrations = "".join(f'  m.impl("op{number}", TORCH_FN({name}));\n' for number, name in enumerate(kernels))
    files["csrc/register.cpp"] = "TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n" + registrations + "}\n"
    write_tree(tmp_path, files)
    index = build_index(tmp_path)
    searched: list[str] = []  # the literals a search of their own was made for
    one_search = type(index)._searched

    def counted(self, kinds, literal):
        if (kinds, literal) not in self._by_literal:
            searched.append(literal)
        return one_search(self, kinds, literal)

    monkeypatch.setattr(type(index), "_searched", counted)
    bodies = kernel_reader(index, syntax)
    found = find_registrations(index, syntax, bodies).ops
    assert len(found) == 40 and {r.kernel for r in found} == {"stub"}
    assert not set(kernels) & set(searched)  # each kernel's files came from the one pass


def evaluate_clause(tmp_path, files: dict[str, str], data: dict):
    write_tree(tmp_path, files)
    pack = load_pack("pytorch-2.x")
    index = build_index(tmp_path)
    context = Context(index, pack.symbols, pack.operators, upstream=pack.framework.upstream)
    return Evaluator(context).result(clause_from_data("native", data))


def test_coverage_tells_native_kernels_from_per_op_fallbacks(tmp_path):
    data = {"ops": {"of": ["abs", "sin", "cos|tan", "neg"]}, "where": {"KEY": {"symbol": "kernel_key"}}}
    result = evaluate_clause(tmp_path, {"csrc/register.cpp": FORWARDING}, data)
    assert [hit.capture("OP") for hit in result.hits] == ["abs"]
    assert result.coverage.covered == ("abs",)
    assert result.coverage.fallback == ("sin", "cos|tan")
    assert result.coverage.missing == ("neg",)
    assert result.covered_share() == 0.25
    per_op = evaluate_clause(tmp_path, {}, {"ops": {"fallback": "per_op"}})
    assert sorted(hit.capture("OP") for hit in per_op.hits) == ["cos", "erf", "sin", "tan"]


def test_coverage_counts_stub_kernels_apart(tmp_path):
    data = {"ops": {"of": ["add", "sub", "sin", "mul", "pow"]}, "where": {"KEY": {"symbol": "kernel_key"}}}
    result = evaluate_clause(tmp_path, {"csrc/kernels.cpp": KERNEL_BODIES}, data)
    assert result.coverage.covered == ("sub",)
    assert result.coverage.fallback == ("sin",)
    assert result.coverage.stub == ("add", "mul")
    assert result.coverage.missing == ("pow",)
    assert result.covered_share() == 0.2


# --- Empty blocks register nothing ----------------------------------------------

EMPTY_BLOCKS = """\
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // m.impl("abs", &abs_kernel);
  /* m.impl("neg", &neg_kernel); */
}
TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
#if false
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&boxed>());
#endif
}
/*
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("exp", &exp_kernel); }
*/
#if (0)
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("log", &log_kernel); }
#elif 1
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#if 0
  m.impl("sqrt", &sqrt_kernel);
#else
#endif
}
#endif
"""


def test_blocks_with_nothing_but_comments_or_dead_code_register_nothing(tmp_path, syntax):
    found = registered(tmp_path, syntax, {"csrc/empty.cpp": EMPTY_BLOCKS})
    assert found.ops == () and found.fallbacks == ()


def test_a_wrapper_may_hold_the_whole_block(tmp_path, syntax):
    source = """\
#define DEV_FALLBACK(key, fn) TORCH_LIBRARY_IMPL(_, key, reg) { reg.fallback(torch::CppFunction::makeFromBoxedFunction<&fn>()); }
#define DEV_KERNELS(key) TORCH_LIBRARY_IMPL(aten, key, reg) { reg.impl("relu", &relu_kernel); }
#define DEV_NOTHING(key) TORCH_LIBRARY_IMPL(aten, key, reg) { }
DEV_FALLBACK(PrivateUse1, host_fallback)
DEV_KERNELS(AutogradPrivateUse1)
DEV_NOTHING(PrivateUse1)
"""
    found = registered(tmp_path, syntax, {"csrc/wrapped.cpp": source})
    assert [(r.op, r.key, r.line) for r in found.ops] == [("relu", "AutogradPrivateUse1", 5)]
    assert [(r.key, r.line) for r in found.fallbacks] == [("PrivateUse1", 4)]


# --- Op lists in any shape --------------------------------------------------------

KEYED_JSON = """\
{
\t"add.Tensor": {"dispatch": "PrivateUse1", "template": "binary"},
\t"sub.Tensor": {"dispatch": ["PrivateUse1", "AutogradPrivateUse1"], "template": "binary"},
\t"mul.Tensor": {"template": "binary"},
\t"aten::div.Tensor": {"template": "binary"},
\t"neg": {"template": "unary"},
\t"version": {"template": "none"}
}
"""
SECTIONED_YAML = """\
device: Dev
elementwise_kernels:
  - name: aten::abs
    backend: AutogradPrivateUse1
    kernel: kernels/abs.cu
  - op: exp
    kernel: kernels/exp.cu
  - name: aten::log
    kernel: kernels/log.cu
  - {name: sqrt, kernel: kernels/sqrt.cu}
  - {name: rsqrt, kernel: kernels/rsqrt.cu}
reductions: [sum.dim_IntList, mean.dim, "amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"]
owners:
  - name: alice
  - name: bob
"""


def test_op_lists_in_any_shape(tmp_path, syntax):
    files = {
        "gen/ops.json": KEYED_JSON,
        "gen/templates/binary.cpp.j2": "TORCH_LIBRARY_IMPL(aten, {{key}}, m) {}\n",
        "gen/templates/unary.cpp.j2": "// unary\n",
        "codegen/device_ops.yml": SECTIONED_YAML,
        "codegen/kernels/abs.cu": "",
        "codegen/kernels/exp.cu": "",
        "codegen/kernels/log.cu": "",
        "codegen/kernels/sqrt.cu": "",
        "codegen/kernels/rsqrt.cu": "",
        "Makefile": "gen: gen/ops.json codegen/device_ops.yml\n\tpython3 -m devgen $^\n",
    }
    found = registered(tmp_path, syntax, files)
    listed = {(r.source.path, r.op, r.key, r.kernel, r.via) for r in found.ops}
    assert listed == {
        ("gen/ops.json", "add.Tensor", "PrivateUse1", "native", "template binary"),
        ("gen/ops.json", "sub.Tensor", "PrivateUse1", "native", "template binary"),
        ("gen/ops.json", "sub.Tensor", "AutogradPrivateUse1", "native", "template binary"),
        ("gen/ops.json", "mul.Tensor", "PrivateUse1", "native", "template binary"),
        ("gen/ops.json", "div.Tensor", "PrivateUse1", "native", "template binary"),
        ("gen/ops.json", "neg", "PrivateUse1", "native", "template unary"),
        ("codegen/device_ops.yml", "abs", "AutogradPrivateUse1", "native", ""),
        ("codegen/device_ops.yml", "exp", "PrivateUse1", "native", ""),
        ("codegen/device_ops.yml", "log", "PrivateUse1", "native", ""),
        ("codegen/device_ops.yml", "sqrt", "PrivateUse1", "native", ""),
        ("codegen/device_ops.yml", "rsqrt", "PrivateUse1", "native", ""),
        ("codegen/device_ops.yml", "sum.dim_IntList", "PrivateUse1", "native", ""),
        ("codegen/device_ops.yml", "mean.dim", "PrivateUse1", "native", ""),
        ("codegen/device_ops.yml", "amax", "PrivateUse1", "native", ""),
    }
    assert {r.line for r in found.ops if r.op == "exp"} == {6}


def test_lists_that_are_mostly_not_operators_are_not_op_lists(tmp_path, syntax):
    words = "tasks:\n" + "".join(
        f"  - {word}\n"
        for word in ("build", "lint", "test", "view", "clone", "sort", "package", "upload", "notify", "publish", "tag")
    )
    people = "".join(f"- name: {name}\n  role: dev\n" for name in ("ann", "abs", "bo", "cy", "dee", "eve", "fay"))
    few = "ops: [abs, neg, exp, log]\n"
    limits = "".join(f"{name}:\n  max: {n}\n  min: 0\n  all: true\n" for n, name in enumerate(("a", "b", "c")))
    found = registered(
        tmp_path, syntax, {"ci/tasks.yaml": words, "team.yaml": people, "few.yaml": few, "limits.yaml": limits}
    )
    assert found.ops == ()


def test_what_an_op_list_names_but_the_tree_lacks_leaves_coverage_undecided(tmp_path):
    listed = "".join(
        f"- op: {op}\n  template: {template}\n"
        for op, template in (
            ("abs", "pointwise"),
            ("neg", "pointwise"),
            ("exp", "pointwise"),
            ("log", "special"),
            ("sin", "fallback_tpl"),
        )
    )
    files = {
        "codegen/ops.yaml": listed,
        "codegen/templates/pointwise.jinja": "{{ op }}\n",
        "codegen/templates/fallback_tpl.jinja": "m.impl({{ op }}, boxed<&at::native::cpu_fallback>());\n",
        "csrc/log.cpp": 'TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("log", &log_kernel); }\n',
        "codegen/generate.sh": "python3 -m devgen codegen/ops.yaml build/gen\n",
    }
    data = {"ops": {"of": ["abs", "log", "sin"]}, "where": {"KEY": {"symbol": "kernel_key"}}}
    decided = evaluate_clause(tmp_path, files, data)
    assert decided.decided
    assert (decided.coverage.covered, decided.coverage.fallback) == (("abs", "log"), ("sin",))
    assert decided.coverage.sources == ("op list codegen/ops.yaml (template pointwise)",)
    data["ops"]["of"] = ["abs", "log", "sin", "neg", "exp"]
    (tmp_path / "codegen/templates/pointwise.jinja").unlink()
    undecided = evaluate_clause(tmp_path, {}, data)
    assert not undecided.decided
    assert undecided.undecided_reason == (
        "codegen/ops.yaml names template pointwise, which is not in the tree, for abs, neg, exp"
    )
    assert undecided.coverage.unresolved == ("abs", "neg", "exp")
    assert (undecided.coverage.covered, undecided.coverage.missing, undecided.coverage.total) == (("log",), (), 5)
    kernels = {
        "codegen/ops.yaml": "".join(
            f"- aten::{op}:\n    source: kernels/{op}.cc\n" for op in ("abs", "neg", "exp", "log", "sin")
        ),
        "CMakeLists.txt": "add_custom_command(OUTPUT ops.cpp DEPENDS codegen/ops.yaml)\n",
    }
    missing_file = evaluate_clause(tmp_path / "files", kernels, data)
    assert missing_file.undecided_reason.startswith(
        "codegen/ops.yaml names file kernels/abs.cc, which is not in the tree"
    )
    present = {f"codegen/kernels/{op}.cc": "\0binary\0" if op == "abs" else "" for op in ("abs", "neg", "exp", "log")}
    present["codegen/ops.yaml"] = kernels["codegen/ops.yaml"].replace("kernels/sin.cc", "kernels/sin.mlu")
    present["CMakeLists.txt"] = kernels["CMakeLists.txt"]
    resolved = evaluate_clause(tmp_path / "present", present, data)
    assert resolved.decided and resolved.coverage.covered == ("abs", "log", "sin", "neg", "exp")


# --- Python libraries held in variables --------------------------------------------

PYTHON_LIBRARIES = """\
import torch
import torch.library as tl
from torch.library import Library


class _Registry:
    def __init__(self):
        self._lib = tl.Library("aten", "IMPL", "PrivateUse1")
        self._lib.impl("neg", _neg)


frag = torch.library.Library("aten", "FRAGMENT")
reg = frag
reg.impl("exp", _exp, "PrivateUse1")
reg.impl(op_name="log", fn=_log, dispatch_key="AutogradPrivateUse1")


@tl.impl(frag, "sqrt", "PrivateUse1")
def _sqrt(x):
    return x


torch.library.register_kernel("aten::sin", "privateuseone", _sin)


@tl.register_kernel("aten::cos", ["cpu", "privateuseone"])
def _cos(x):
    return x


custom = Library("mydev", "DEF")
custom.impl("my_op", _my_op, "PrivateUse1")
host = Library("_", "IMPL", "PrivateUse1")
boxed = host
boxed.fallback(_to_host)
unused = Library("_", "IMPL", "AutogradPrivateUse1")
"""


def test_python_registrations_through_library_objects_in_variables(tmp_path, syntax):
    found = registered(tmp_path, syntax, {"pkg/ops.py": PYTHON_LIBRARIES})
    assert sorted((r.op, r.key, r.line) for r in found.ops) == [
        ("cos", "cpu", 26),
        ("cos", "privateuseone", 26),
        ("exp", "PrivateUse1", 14),
        ("log", "AutogradPrivateUse1", 15),
        ("neg", "PrivateUse1", 9),
        ("sin", "privateuseone", 23),
        ("sqrt", "PrivateUse1", 18),
    ]
    assert [(r.op, r.namespace, r.key, r.line) for r in found.fallbacks] == [("*", "_", "PrivateUse1", 35)]


def _generator():
    path = REPO_ROOT / "rulepacks" / "pytorch-2.x" / "data" / "gen_aten_ops.py"
    spec = importlib.util.spec_from_file_location("gen_aten_ops", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("entry", "name", "flags"),
    [
        ({"dispatch": {"Meta, CompositeExplicitAutogradNonFunctional": "k"}}, "fold", ["composite_explicit"]),
        (
            {"dispatch": {"CPU": "a", "CompositeExplicitAutograd": "b"}, "tags": "core"},
            "fold",
            ["composite_explicit", "core"],
        ),
        ({"dispatch": {"CompositeExplicitAutograd": "stub"}}, "fold_overrideable", []),
        ({"dispatch": {"CPU, CUDA": "k"}}, "fold.out", []),
        ({"structured_delegate": "fold.out"}, "fold", []),
        ({}, "fold", ["composite"]),
    ],
)
def test_generator_flags_ops_served_by_a_composite_kernel(entry, name, flags):
    assert _generator().flags_of(entry, name) == flags


def test_explicit_composite_needs_no_kernel_only_when_its_whole_family_needs_none(tmp_path):
    path = tmp_path / "ops.json"
    path.write_text(
        json.dumps(
            {
                "framework_version": "0",
                "ops": {
                    "fold": ["composite_explicit"],
                    "fold.out": [],
                    "wrap": ["composite_explicit"],
                    "wrap.out": ["composite_explicit"],
                    "unwrap": ["composite"],
                    "unwrap.grad_input": [],
                    "hook": ["composite_explicit"],
                    "hook_overrideable": [],
                },
            }
        )
    )
    catalog = Catalog.load(path)
    assert [catalog.is_composite(name) for name in ("fold", "wrap", "wrap.out", "unwrap", "hook", "nothing")] == [
        False,
        True,
        True,
        True,
        False,
        False,
    ]


def variants_catalog(tmp_path, variants):
    ops = {
        "fold.dim": [],
        "fold.dim_out": [],
        "fold_.dim": [],
        "fold.other": [],
        "fold.pair_out": [],
        "fold": [],
        "spin": ["composite_explicit"],
        "spin.generator_out": [],
        "warp": [],
        "warp_overrideable": [],
        "knit.dim": [],
    }
    path = tmp_path / "ops.json"
    path.write_text(json.dumps({"framework_version": "0", "ops": ops, **variants}))
    return Catalog.load(path)


def test_a_kernel_serves_the_overloads_that_share_its_signature(tmp_path):
    catalog = variants_catalog(
        tmp_path, {"variants": [["fold.dim", "fold.dim_out", "fold_.dim"], ["fold.other", "fold.pair_out"]]}
    )
    served = catalog.served(["fold_.dim"])
    assert [catalog.is_served(name, served) for name in ("fold.dim", "fold.dim_out", "fold.other", "fold")] == [
        True,
        True,
        False,
        False,
    ]
    assert not catalog.is_served("fold.dim", catalog.served(["fold.pair_out", "fold"]))
    # an explicit composite runs through another overload of its family
    assert catalog.is_served("spin", catalog.served(["spin.generator_out"]))
    # a backend hook does the work of the operator it stands for
    assert catalog.is_served("warp", catalog.served(["warp_overrideable"]))
    # a bare name that is no overload (an op list naming the family), or one bound by a
    # dispatch stub's name, tells only the family; an overload the catalog does not know, nothing
    assert catalog.is_served("knit.dim", catalog.served(["knit"]))
    assert catalog.is_served("fold.dim", catalog.served(["fold.other"], by_family=["fold.other"]))
    assert not catalog.is_served("fold.dim", catalog.served(["fold.bogus"]))


def test_a_catalog_without_variants_counts_families(tmp_path):
    catalog = variants_catalog(tmp_path, {})
    assert catalog.is_served("fold.dim", catalog.served(["fold.other"]))
    assert not catalog.is_served("warp", catalog.served(["spin"]))


def test_coverage_leaves_out_ops_served_by_an_explicit_composite(tmp_path):
    pack = load_pack("pytorch-2.x")
    (tmp_path / "ops.cpp").write_text(BLOCKS)
    index = build_index(tmp_path)
    evaluator = Evaluator(Context(index, pack.symbols, pack.operators))
    listed = ["binary_cross_entropy_with_logits", "abs", "convolution", "clone|_copy_from", "empty_like|zeros_like"]
    data = {"ops": {"of": listed}, "where": {"KEY": {"symbol": "kernel_key"}}}
    result = evaluator.result(clause_from_data("native", data))
    assert result.coverage.composite == ("binary_cross_entropy_with_logits", "empty_like|zeros_like")
    assert result.coverage.covered == ("abs",)
    assert result.coverage.missing == ("convolution", "clone|_copy_from")


# --- Global fallbacks: a CPU fallback, or the backend's own capture ----------------

CAPTURE_LAMBDA = """\
namespace gx { struct Graph { static Graph& open(); void record(const c10::OperatorHandle&, torch::jit::Stack*); }; }
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("abs", &gx::abs_kernel); }
TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedLambda(
      [](const c10::OperatorHandle& op, torch::jit::Stack* stack) { gx::Graph::open().record(op, stack); }));
}
"""

CAPTURE_THROUGH_HELPER = """\
static void lower_into_program(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  auto* builder = current_builder();
  builder->emit(op.schema(), stack);
}
static void install_catch_all(torch::Library& lib) {
  lib.fallback(torch::CppFunction::makeFromBoxedFunction<&lower_into_program>());
}
TORCH_LIBRARY_IMPL(aten, MTIA, lib) { lib.impl("abs", TORCH_FN(abs_mtia)); }
TORCH_LIBRARY_IMPL(_, MTIA, lib) { install_catch_all(lib); }
TORCH_LIBRARY_IMPL(_, AutogradMTIA, lib) { lib.fallback(torch::autograd::autogradNotImplementedFallback()); }
"""

HOST_GLOBAL = """\
static void log_then_host(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (verbose()) { warn_once(op); }
  at::native::cpu_fallback(op, stack);
}
TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&log_then_host>());
}
"""


@pytest.mark.parametrize(
    ("source", "key", "via"),
    [
        (CAPTURE_LAMBDA, "PrivateUse1", "gx::Graph::open"),
        (CAPTURE_THROUGH_HELPER, "MTIA", "lower_into_program"),
    ],
)
def test_a_global_fallback_of_the_backends_own_leaves_per_op_coverage_undecided(tmp_path, syntax, source, key, via):
    found = registered(tmp_path, syntax, {"csrc/capture.cpp": source})
    assert [(r.key, r.kernel, r.via) for r in found.fallbacks if r.key == key] == [(key, "native", via)]
    data = {"ops": {"of": ["abs", "neg", "exp"]}, "where": {"KEY": {"symbol": "kernel_key"}}}
    result = evaluate_clause(tmp_path, {}, data)
    assert result.coverage.covered == ("abs",)
    assert result.coverage.missing == ()
    assert not result.decided
    assert result.undecided_reason.startswith(f"every operator reaches {via}, the backend's own global kernel")
    assert "neg, exp" in result.undecided_reason and "--runtime" in result.undecided_reason
    cpu_only = evaluate_clause(tmp_path, {}, {"ops": {"fallback": "global", "kernel": "fallback"}})
    assert cpu_only.hits == []


def test_a_global_cpu_fallback_keeps_coverage_decided(tmp_path, syntax):
    found = registered(tmp_path, syntax, {"csrc/host.cpp": HOST_GLOBAL})
    assert [(r.kernel, r.via) for r in found.fallbacks] == [("fallback", "log_then_host")]
    data = {"ops": {"of": ["abs", "neg"]}, "where": {"KEY": {"symbol": "kernel_key"}}}
    result = evaluate_clause(tmp_path, {}, data)
    assert result.decided and result.coverage.missing == ("abs", "neg")
    cpu_only = evaluate_clause(tmp_path, {}, {"ops": {"fallback": "global", "kernel": "fallback"}})
    assert [hit.capture("VIA") for hit in cpu_only.hits] == ["log_then_host"]


SHADOWING_GLOBAL = """\
namespace dev {
static void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  %s
  at::native::cpu_fallback(op, stack);
}
TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&dev::cpu_fallback>());
}
}
"""


@pytest.mark.parametrize(
    ("first", "kernel"),
    [
        ('TORCH_CHECK(false, "no host fallback for ", op.schema().name());', "stub"),
        ('throw std::runtime_error("unsupported");', "stub"),
        ("dev::count_host_op(op);", "fallback"),
    ],
)
def test_a_function_named_like_the_frameworks_fallback_is_judged_by_its_body(tmp_path, syntax, first, kernel):
    index = build_index(write_tree(tmp_path, {"csrc/fallback.cpp": SHADOWING_GLOBAL % first}))
    found = find_registrations(index, syntax, kernel_reader(index, syntax))
    assert [r.kernel for r in found.fallbacks] == [kernel]
    cpu_only = evaluate_clause(tmp_path, {}, {"ops": {"fallback": "global", "kernel": "fallback"}})
    assert bool(cpu_only.hits) == (kernel == "fallback")


# --- Registrations naming their own key inside definition blocks ----------------

KEYED_IN_DEF_BLOCKS = """\
#define VND_CAST_POLICY(op, fn, key) lib.impl(op, key, fn)
TORCH_LIBRARY_FRAGMENT(aten, lib) {
  VND_CAST_POLICY("conv2d", vnd::conv2d_cast, c10::DispatchKey::AutocastPrivateUse1);
  lib.def("vnd_only(Tensor x) -> Tensor");
  lib.impl("relu", &vnd::relu_no_key);
}
TORCH_LIBRARY(aten, reg) {
  reg.impl("mm", torch::dispatch(c10::DispatchKey::PrivateUse1, TORCH_FN(vnd::mm_kernel)));
}
TORCH_LIBRARY(vnd, ops) {
  ops.def("scale(Tensor x) -> Tensor", {at::Tag::pt2_compliant_tag});
  ops.def("shift", &vnd::shift);
  ops.def("pad(Tensor x) -> Tensor");
}
"""


def test_registrations_in_definition_blocks_are_on_their_own_key_or_catch_all(tmp_path, syntax):
    found = registered(tmp_path, syntax, {"csrc/defs.cpp": KEYED_IN_DEF_BLOCKS})
    catch_all = syntax.catch_all_key
    assert sorted((r.op, r.key, r.line) for r in found.ops) == [
        ("conv2d", "c10::DispatchKey::AutocastPrivateUse1", 3),
        ("mm", "c10::DispatchKey::PrivateUse1", 8),
        ("relu", catch_all, 5),
    ]
    # a schema, with or without its tags, is no kernel
    assert [(r.namespace, r.op, r.key) for r in found.elsewhere] == [("vnd", "shift", catch_all)]


# --- Kernels of an in-tree key bound by the framework's own op list -------------------

IN_TREE_KERNELS = {
    "src/Fallback.cpp": "TORCH_LIBRARY_IMPL(_, XPU, m) { m.fallback(makeFromBoxedFunction<&host>()); }\n",
    "src/Stubs.cpp": """\
REGISTER_XPU_DISPATCH(abs_stub, &xpu::abs_kernel);
REGISTER_XPU_DISPATCH(
    div_true_stub,
    &xpu::div_true_kernel);
REGISTER_XPU_DISPATCH(at::native::_amp_update_scale_stub, &xpu::amp_update);
REGISTER_XPU_DISPATCH(LayerNormKernel, &xpu::layer_norm_kernel);
REGISTER_XPU_DISPATCH(no_such_operator_stub, &xpu::other);
#define MY_STUB(op) REGISTER_XPU_DISPATCH(op##_stub, &xpu::op##_kernel)
MY_STUB(neg);
""",
    "src/Structured.cpp": """\
TORCH_IMPL_FUNC(add_out_xpu)
(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  xpu::add(self, other, alpha, out);
}
TORCH_IMPL_FUNC(topk_out_xpu)(const Tensor& self, int64_t k, const Tensor& values);
TORCH_IMPL_FUNC(helper_out_xpu) (const Tensor& self) { }
""",
    "src/Functions.cpp": """\
namespace at::native {
Tensor empty_xpu(IntArrayRef size) { return xpu::allocate(size); }
Tensor& arange_xpu_out(const Scalar& start, const Scalar& end, const Scalar& step, Tensor& out) {
  return xpu::arange(start, end, step, out);
}
Tensor& masked_fill__xpu(Tensor& self, const Tensor& mask, const Scalar& value) { return self; }
Tensor XPUFunctions::sum_xpu(const Tensor& self) { return self.helper_xpu(); }
static void launch_xpu(const Tensor& self) { other.sort_xpu(self); }
static Tensor mean_xpu(const Tensor& self) { return self; }
}
""",
    "include/Functions.h": """\
Tensor view_xpu(const Tensor& self, IntArrayRef size);
inline Tensor max_xpu(const Tensor& self) { return self; }
#include "inline/helpers.h"
Tensor min_xpu(const Tensor& self) { return self; }
""",
    "tests/test_kernels.cpp": "Tensor mul_xpu(const Tensor& a) { return a; }\n",
}


def test_kernels_of_an_in_tree_key_are_known_by_their_names(tmp_path, syntax):
    found = registered(tmp_path, syntax, IN_TREE_KERNELS)
    named = {(r.op, r.key, r.how, r.source.path, r.line, r.via) for r in found.ops if r.how != "block"}
    assert named == {
        ("abs", "XPU", "dispatch stub", "src/Stubs.cpp", 1, "abs_stub"),
        ("div", "XPU", "dispatch stub", "src/Stubs.cpp", 2, "div_true_stub"),  # a variant: its longest known part
        ("_amp_update_scale", "XPU", "dispatch stub", "src/Stubs.cpp", 5, "_amp_update_scale_stub"),
        ("neg", "XPU", "dispatch stub", "src/Stubs.cpp", 9, "neg_stub"),  # through a macro of the tree's
        ("add.out", "XPU", "structured kernel", "src/Structured.cpp", 1, "add_out_xpu"),
        ("empty", "XPU", "kernel name", "src/Functions.cpp", 2, "empty_xpu"),
        ("arange.out", "XPU", "kernel name", "src/Functions.cpp", 3, "arange_xpu_out"),
        ("masked_fill_", "XPU", "kernel name", "src/Functions.cpp", 6, "masked_fill__xpu"),
        ("sum", "XPU", "kernel name", "src/Functions.cpp", 7, "sum_xpu"),
        ("min", "XPU", "kernel name", "include/Functions.h", 4, "min_xpu"),
    }  # not: a stub without the suffix, declarations, static or inline functions, member calls,
    # names of no operator, tests


@pytest.mark.parametrize(
    ("registration", "counted"),
    [
        ("", False),  # nothing registers on XPU: a function named `_xpu` is no kernel of it
        ('TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("neg", &neg); }', False),
        ('TORCH_LIBRARY_IMPL(aten, XPU, m) { m.impl("neg", &neg); }', True),
        ('#define DEV_KEY XPU\nTORCH_LIBRARY_IMPL(aten, DEV_KEY, m) { m.impl("neg", &neg); }', True),
        ('TORCH_LIBRARY_IMPL(aten, c10::DispatchKey::XPU, m) { m.impl("neg", &neg); }', True),
        ("REGISTER_XPU_DISPATCH(exp_stub, &exp_kernel);", True),
        ("REGISTER_PRIVATEUSE1_DISPATCH(exp_stub, &exp_kernel);", False),  # not a key of in-tree kernels
    ],
)
def test_kernels_named_for_an_in_tree_key_count_only_when_the_tree_registers_on_it(
    tmp_path, syntax, registration, counted
):
    files = {
        "src/Register.cpp": registration + "\n",
        "src/Kernels.cpp": "Tensor empty_xpu(IntArrayRef size) { return allocate(size); }\n"
        "TORCH_IMPL_FUNC(abs_out_xpu) (const Tensor& self, const Tensor& out) { run(self, out); }\n",
    }
    found = registered(tmp_path, syntax, files)
    assert bool({r.op for r in found.ops} & {"empty", "abs.out"}) == counted


def test_coverage_says_which_operators_only_kernel_names_cover(tmp_path):
    files = {**IN_TREE_KERNELS, "src/Block.cpp": 'TORCH_LIBRARY_IMPL(aten, XPU, m) { m.impl("abs", &abs); }\n'}
    data = {
        "ops": {"of": ["abs", "div.Tensor", "empty.memory_format", "relu"]},
        "where": {"KEY": {"symbol": "kernel_key"}},
    }
    result = evaluate_clause(tmp_path, files, data)
    assert result.coverage.covered == ("abs", "div.Tensor", "empty.memory_format")
    assert result.coverage.sources == (
        "2 by the names of kernels of XPU (dispatch stub, kernel name), "
        "which the framework's own op list binds to their operators, not the tree",
    )


# --- Block macros written out: registrar objects ---------------------------------------

REGISTRARS = {
    "csrc/named.cpp": """\
static void fill(torch::Library& lib);
static const torch::detail::TorchLibraryInit aten_init(
    torch::Library::IMPL, &fill, "aten", std::make_optional(c10::DispatchKey::PrivateUse1), __FILE__, __LINE__);
void fill(torch::Library& lib) {
  lib.impl("add.Tensor", TORCH_FN(add));
}
static void fill_checked(torch::Library& m) { m.impl("sub.Tensor", TORCH_FN(sub)); }
static const torch::detail::TorchLibraryInit checked(
    torch::Library::IMPL,
    (c10::impl::dispatch_key_allowlist_check(c10::DispatchKey::PrivateUse1) ? &fill_checked : [](torch::Library&) -> void {}),
    "aten", std::make_optional(c10::DispatchKey::PrivateUse1), __FILE__, __LINE__);
""",
    "csrc/elsewhere.cpp": """\
static const TorchLibraryInit C10_CONCATENATE(init_, __COUNTER__)(
    torch::Library::IMPL, ns::fill_vision, "torchvision", c10::DispatchKey::XPU, __FILE__, __LINE__);
void use() { if (fill_vision(x)) { x.impl("torchvision::roi_align", &wrong); } }
""",
    "csrc/vision.cpp": """\
namespace ns {
void fill_vision(torch::Library& m) const {
  m.impl(TORCH_SELECTIVE_NAME("torchvision::nms"), TORCH_FN(nms));
}
}
""",
    "csrc/lazy.cpp": """\
bool lazily() {
  auto fill_lazily = [](torch::Library& m) -> void {
    m.impl("mul.Tensor", &mul);
  };
  static const torch::detail::TorchLibraryInit lazy(
      torch::Library::IMPL, fill_lazily, "aten", std::optional<c10::DispatchKey>(c10::DispatchKey::AutogradXPU),
      __FILE__, __LINE__);
  return true;
}
""",
    "csrc/inline.cpp": """\
static const torch::detail::TorchLibraryInit defined(
    torch::Library::FRAGMENT,
    [](torch::Library& m) {
      m.def("fused(Tensor x) -> Tensor");
      m.impl("fused", torch::dispatch(c10::DispatchKey::PrivateUse1, &fused));
      m.impl("fused", &fused_everywhere);
    },
    "mydev", std::nullopt, __FILE__, __LINE__);
static const torch::detail::TorchLibraryInit wildcard(
    torch::Library::IMPL, [](torch::Library& m) { m.fallback(makeFromBoxedFunction<&host>()); },
    "_", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
void never_defined(torch::Library& m);
static const torch::detail::TorchLibraryInit missing(
    torch::Library::IMPL, &never_defined, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
#define OWN_INIT(ns, k, fn) static const torch::detail::TorchLibraryInit init_##ns(torch::Library::IMPL, &fn, #ns, k, __FILE__, __LINE__);
""",
}


def test_registrar_objects_written_out_register_what_their_function_does(tmp_path, syntax):
    found = registered(tmp_path, syntax, REGISTRARS)
    assert sorted((r.namespace, r.op, r.key, r.source.path, r.line) for r in found.ops + found.elsewhere) == [
        ("aten", "add.Tensor", "c10::DispatchKey::PrivateUse1", "csrc/named.cpp", 5),
        ("aten", "mul.Tensor", "c10::DispatchKey::AutogradXPU", "csrc/lazy.cpp", 3),
        ("aten", "sub.Tensor", "c10::DispatchKey::PrivateUse1", "csrc/named.cpp", 7),  # as the macro writes it
        ("mydev", "fused", syntax.catch_all_key, "csrc/inline.cpp", 6),  # a definition library: no key, catch-all
        ("mydev", "fused", "c10::DispatchKey::PrivateUse1", "csrc/inline.cpp", 5),  # or its own key
        ("torchvision", "nms", "c10::DispatchKey::XPU", "csrc/vision.cpp", 3),
    ]
    assert [(r.key, r.source.path) for r in found.fallbacks] == [("c10::DispatchKey::PrivateUse1", "csrc/inline.cpp")]


# --- torch.library spellings ---------------------------------------------------------

PYTHON_SPELLINGS = {
    "pkg/__init__.py": "",
    "pkg/_lib.py": 'import torch\nlib = torch.library.Library("mydev", "FRAGMENT")\n'
    'aten = torch.library.Library("aten", "IMPL", "PrivateUse1")\n',
    "pkg/ops.py": """\
import torch
import external_package
from torch.library import Library, impl, impl_abstract, register_fake
from . import _lib
from ._lib import lib as shared


class Ops:
    lib = Library("mydev", "DEF")
    device = torch.library.Library("aten", "IMPL", "PrivateUse1")

    def register(self):
        self.lib.impl("op_a", _a, "PrivateUse1")
        Ops.device.impl("add.Tensor", _add)

    @classmethod
    def more(cls):
        cls.lib.impl("op_b", _b, "Meta")


impl(shared, "op_c", "PrivateUse1")(_c)
impl(_lib.lib, name="op_d", dispatch_key="Meta")(_d)
shared.impl(op_name="op_e", fn=_e, dispatch_key="PrivateUse1")
_lib.aten.impl(torch.ops.aten.mul.Tensor, _mul)
register_fake("mydev::op_f")(_f)
impl_abstract(qualname="mydev::op_g", func=_g)
torch.library.register_fake(torch.ops.mydev.op_h.default)(_h)
torch.library.register_kernel(op="mydev::op_i", device_types="privateuseone", func=_i)
impl(external_package.lib, "op_j", "PrivateUse1")(_j)
""",
}


def test_python_registrations_in_every_spelling(tmp_path, syntax):
    found = registered(tmp_path, syntax, PYTHON_SPELLINGS)
    assert sorted((r.namespace, r.op, r.key, r.line) for r in found.ops + found.elsewhere) == [
        ("aten", "add.Tensor", "PrivateUse1", 14),  # a class attribute, through the class
        ("aten", "mul.Tensor", "PrivateUse1", 24),  # a library of another module, an operator object
        ("mydev", "op_a", "PrivateUse1", 13),  # a class attribute, through an instance
        ("mydev", "op_b", "Meta", 18),  # ... and through `cls`
        ("mydev", "op_c", "PrivateUse1", 21),  # a library imported from another module
        ("mydev", "op_d", "Meta", 22),
        ("mydev", "op_e", "PrivateUse1", 23),
        ("mydev", "op_f", "Meta", 25),  # fake kernels are Meta kernels
        ("mydev", "op_g", "Meta", 26),
        ("mydev", "op_h", "Meta", 27),
        ("mydev", "op_i", "privateuseone", 28),
    ]  # not op_j: the library of a package outside the tree names no namespace the check sees


def test_ops_clauses_reach_every_namespace_when_asked(tmp_path):
    data = {
        "ops": {"any": True, "namespaces": "all"},
        "where": {"NAMESPACE": {"equals": "mydev"}, "KEY": {"in": ["Meta"]}},
    }
    result = evaluate_clause(tmp_path, PYTHON_SPELLINGS, data)
    assert sorted(hit.capture("OP") for hit in result.hits) == ["op_b", "op_d", "op_f", "op_g", "op_h"]
    catalog_only = evaluate_clause(tmp_path / "catalog", PYTHON_SPELLINGS, {"ops": {"any": True}})
    assert {hit.capture("NAMESPACE") for hit in catalog_only.hits} == {"aten"}


def test_a_kernel_body_is_read_as_each_build_compiles_it():
    body = "\n#if A\n  a();\n#  if INNER\n  inner();\n#  endif\n#elif B\n  b();\n#else\n  c();\n#endif\n#ifdef D\n  d();\n#endif\n  done();\n"
    assert [" ".join(build.split()) for build in builds(body)] == [
        "a(); # if INNER inner(); # endif d(); done();",  # an inner group stays whole
        "b(); done();",
        "c(); done();",
    ]
    assert builds("  x();\n#if A\n  y();\n") == ["  x();\n#if A\n  y();\n"]  # a group that never closes
    assert builds("  x();\n") == ["  x();\n"]
