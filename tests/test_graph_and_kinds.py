"""The dependency graph and each evidence kind on small trees written here."""

from __future__ import annotations

from pathlib import Path

import pytest
from air.evidence import Evaluator, clause_from_data, semgrep
from air.evidence.base import Context
from air.evidence.python_call import call_hint
from air.graph.dependencies import DependencyGraph
from air.index import build_index
from air.index.python import extract_python
from air.regex import PatternTimeout
from helpers.trees import write_tree


def hits(root: Path, data: dict, symbols=None) -> list:
    evaluator = Evaluator(Context(build_index(root), symbols or {}))
    return evaluator.result(clause_from_data("x", data)).counted()


PACKAGE = {
    "setup.py": 'from setuptools import setup\nsetup(name="foo", entry_points={"torch.backends": ["foo = foo:_auto"]})\n',
    "foo/__init__.py": "from foo import init\n\ndef _auto():\n    init.run()\n",
    "foo/init.py": "import torch.utils as tu\nimport foo.dev as dev\n\ndef run():\n"
    "    tu.rename_privateuse1_backend('foo')\n    torch._register_device_module('foo', dev)\n",
    "foo/dev/__init__.py": "from .api import *\n",
    "foo/dev/api.py": "def is_available():\n    return True\n",
    "csrc/a.cpp": '#include "b.h"\n',
    "csrc/b.h": "#pragma once\n",
}


def test_graph_edges_and_reachability(tmp_path):
    index = build_index(write_tree(tmp_path, PACKAGE))
    dependencies = DependencyGraph(index)
    for source in index.files:
        dependencies.expand(source.path)
    dependencies.entry_points("torch.backends")
    assert "foo/init.py" in dependencies.successors("foo/__init__.py")
    assert "foo/dev/__init__.py" in dependencies.successors("foo/init.py")
    assert "csrc/b.h" in dependencies.successors("csrc/a.cpp")
    assert "foo/__init__.py" in dependencies.successors("entry:torch.backends:foo")


def test_graph_entry_point_reaches_registration(tmp_path):
    spec = {
        "graph": {
            "from": {"entry_point": "torch.backends"},
            "reaches": {"python_call": "torch.utils.rename_privateuse1_backend"},
        }
    }
    found = hits(write_tree(tmp_path, PACKAGE), spec)
    assert [(h.path, h.line, h.capture("ENTRY")) for h in found] == [("foo/init.py", 5, "foo:_auto")]


def test_graph_bound_module_exports_through_star_import(tmp_path):
    spec = {
        "graph": {"from": {"call_arg": {"call": "torch._register_device_module", "arg": 1}}, "exports": "is_available"}
    }
    found = hits(write_tree(tmp_path, PACKAGE), spec)
    assert [(h.path, h.line) for h in found] == [("foo/dev/api.py", 1)]
    missing = {**spec, "graph": {**spec["graph"], "exports": "synchronize"}}
    assert hits(tmp_path, missing) == []


def test_graph_bound_module_counts_registrations_of_the_clause_scope_only(tmp_path):
    write_tree(
        tmp_path,
        {
            "foo/__init__.py": "",
            "foo/dev.py": "def is_available():\n    return True\n",
            "tests/test_dev.py": "import torch\nimport foo.dev as dev\n\ntorch._register_device_module('foo', dev)\n",
        },
    )
    origin = {"call_arg": {"call": "torch._register_device_module", "arg": 1}}
    spec = {"graph": {"from": origin, "exports": "is_available"}}
    assert hits(tmp_path, spec) == []  # a test that registers the product's module is not the product registering it
    everywhere = [(h.path, h.line) for h in hits(tmp_path, {**spec, "scope": "all"})]
    assert everywhere == [("foo/dev.py", 1)]


def test_graph_module_that_binds_itself(tmp_path):
    write_tree(
        tmp_path,
        {
            "foo/__init__.py": "import sys\nimport torch\n\ndef device_count():\n    return 1\n\n"
            "torch.__setattr__('foo', sys.modules[__name__])\n"
        },
    )
    spec = {"graph": {"from": {"call_arg": {"call": "torch.__setattr__", "arg": 1}}, "exports": "device_count"}}
    assert [(h.path, h.line) for h in hits(tmp_path, spec)] == [("foo/__init__.py", 4)]


def exported(root: Path, call: str, arg: int, functions: list[str]) -> list[tuple[str, int, str]]:
    spec = {"graph": {"from": {"call_arg": {"call": call, "arg": arg}}, "exports": functions}}
    return sorted((h.path, h.line, h.capture("FUNCTION")) for h in hits(root, spec))


def test_graph_module_built_by_a_factory_and_bound_with_setattr(tmp_path):
    write_tree(
        tmp_path,
        {
            "foo/__init__.py": (
                "import torch\n"
                "from types import ModuleType\n"
                "from foo import _impl\n"
                "\n"
                "def _build_module():\n"
                "    ns = ModuleType('foo')\n"
                "    setattr(ns, 'is_available', _impl.available)\n"
                "    ns.__dict__.update(device_count=_impl.count)\n"
                "    other = ModuleType('other')\n"
                "    other.synchronize = _impl.sync\n"
                "    return ns\n"
                "\n"
                "setattr(torch, 'foo', _build_module())\n"
            ),
            "foo/_impl.py": "def available():\n    return True\n",
        },
    )
    found = exported(tmp_path, "torch.__setattr__", 1, ["is_available", "device_count", "synchronize"])
    assert found == [("foo/__init__.py", 7, "is_available"), ("foo/__init__.py", 8, "device_count")]


def test_graph_module_object_in_a_variable_passed_through_a_helper(tmp_path):
    write_tree(
        tmp_path,
        {
            "foo/__init__.py": "",
            "foo/device.py": (
                "import importlib.util\n"
                "import torch as _t\n"
                "from . import runtime\n"
                "\n"
                "device_module = importlib.util.module_from_spec(importlib.util.spec_from_loader('fd', loader=None))\n"
                "vars(device_module).update({'synchronize': runtime.sync})\n"
                "for _name in ['manual_seed', 'initial_seed']:\n"
                "    setattr(device_module, _name, getattr(runtime, _name))\n"
                "\n"
                "def _bind(name, module):\n"
                "    _t._register_device_module(name, module)\n"
                "\n"
                "_bind('foo', module=device_module)\n"
            ),
        },
    )
    found = exported(
        tmp_path, "torch._register_device_module", 1, ["synchronize", "manual_seed", "initial_seed", "device_count"]
    )
    assert found == [
        ("foo/device.py", 6, "synchronize"),
        ("foo/device.py", 8, "initial_seed"),
        ("foo/device.py", 8, "manual_seed"),
    ]


CLASS_MODULE = {
    "foo/__init__.py": "import torch\nfrom foo.api import FooModule\n\n"
    "torch._register_device_module('foo', FooModule)\n",
    "foo/api.py": (
        "from foo.streams import FooStream\n"
        "\n"
        "class _Base:\n"
        "    @classmethod\n"
        "    def synchronize(cls):\n"
        "        pass\n"
        "\n"
        "class FooModule(_Base):\n"
        "    Stream = FooStream\n"
        "\n"
        "    @staticmethod\n"
        "    def is_available():\n"
        "        return True\n"
        "\n"
        "    def device_count(self):\n"
        "        return 1\n"
        "\n"
        "    class Event:\n"
        "        pass\n"
    ),
    "foo/streams.py": "class FooStream:\n    pass\n",
}


def test_graph_class_bound_as_a_module_exposes_class_level_members(tmp_path):
    write_tree(tmp_path, CLASS_MODULE)
    found = exported(
        tmp_path, "torch._register_device_module", 1, ["is_available", "synchronize", "Stream", "Event", "device_count"]
    )
    assert found == [
        ("foo/api.py", 5, "synchronize"),
        ("foo/api.py", 9, "Stream"),
        ("foo/api.py", 12, "is_available"),
        ("foo/api.py", 18, "Event"),
    ]  # device_count needs an instance


def test_graph_module_bound_by_plain_attribute_assignment(tmp_path):
    write_tree(
        tmp_path,
        {
            "foo/__init__.py": "import torch\nimport foo.dev\n\ndef _install():\n    torch.foo = foo.dev\n",
            "foo/dev.py": "def device_count():\n    return 1\n",
            "bar/__init__.py": "import torch\nfrom bar.api import BarModule\ntorch.bar: type = BarModule\n",
            "bar/api.py": "class BarModule:\n    @staticmethod\n    def device_count():\n        return 2\n",
            "baz/__init__.py": "import torch\nimport baz.dev\ntorch.Tensor.baz = baz.dev\ntorch.baz == baz.dev\n",
            "baz/dev.py": "def device_count():\n    return 3\n",
        },
    )
    found = exported(tmp_path, "torch.__setattr__", 1, ["device_count"])
    assert found == [("bar/api.py", 3, "device_count"), ("foo/dev.py", 1, "device_count")]


def test_graph_module_passed_by_keyword(tmp_path):
    write_tree(
        tmp_path,
        {
            **CLASS_MODULE,
            "foo/__init__.py": (
                "import torch\nfrom foo.api import FooModule\n\n"
                "torch._register_device_module(device_type='foo', module=FooModule)\n"
            ),
        },
    )
    by_keyword = {"call": "torch._register_device_module", "arg": 1, "keyword": "module"}
    spec = {"graph": {"from": {"call_arg": by_keyword}, "exports": "is_available"}}
    assert [(h.path, h.line) for h in hits(tmp_path, spec)] == [("foo/api.py", 12)]
    positional = {"call": "torch._register_device_module", "arg": 1}
    positional_only = {"graph": {**spec["graph"], "from": {"call_arg": positional}}}
    assert hits(tmp_path, positional_only) == []


def test_graph_instance_bound_as_a_module_exposes_its_methods(tmp_path):
    write_tree(
        tmp_path,
        {
            **CLASS_MODULE,
            "foo/__init__.py": "import torch\nimport foo.api as api\n\n"
            "torch._register_device_module('foo', api.FooModule())\n",
        },
    )
    found = exported(tmp_path, "torch._register_device_module", 1, ["device_count", "synchronize"])
    assert found == [("foo/api.py", 5, "synchronize"), ("foo/api.py", 15, "device_count")]


def test_graph_class_and_instance_defined_beside_the_registration(tmp_path):
    write_tree(
        tmp_path,
        {
            "foo/__init__.py": (
                "import torch\n"
                "\n"
                "class _Api:\n"
                "    @classmethod\n"
                "    def device_count(cls):\n"
                "        return 1\n"
                "\n"
                "    def synchronize(self):\n"
                "        pass\n"
                "\n"
                "def _install():\n"
                "    torch._register_device_module('foo', _Api)\n"
                "    api = _Api()\n"
                "    torch._register_device_module('bar', api)\n"
            )
        },
    )
    spec = {
        "graph": {
            "from": {"call_arg": {"call": "torch._register_device_module", "arg": 1}},
            "exports": ["device_count", "synchronize"],
        }
    }
    found = sorted((h.capture("MODULE"), h.capture("FUNCTION"), h.line) for h in hits(tmp_path, spec))
    assert found == [("_Api", "device_count", 5), ("api", "device_count", 5), ("api", "synchronize", 8)]


def test_graph_flow_ends_on_cycles_and_on_what_it_cannot_follow(tmp_path):
    write_tree(
        tmp_path,
        {
            "foo/__init__.py": (
                "import torch\n"
                "a = b\n"
                "b = a\n"
                "torch._register_device_module('foo', a)\n"
                "for name in NAMES:\n"
                "    setattr(torch, name, wrap(name))\n"
                "torch._register_device_module('bar', unknown.thing(1)[0])\n"
            )
        },
    )
    assert exported(tmp_path, "torch._register_device_module", 1, ["is_available"]) == []
    assert exported(tmp_path, "torch.__setattr__", 1, ["is_available"]) == []


def test_python_call_resolves_aliases_and_captures(tmp_path):
    write_tree(
        tmp_path,
        {
            "a.py": "from torch.library import impl as reg\n\n"
            "@reg('aten::add.Tensor', 'privateuseone')\ndef add(): pass\n"
        },
    )
    found = hits(
        tmp_path,
        {"python_call": {"name": "torch.library.impl", "capture": ["OP", "KEY"]}, "where": {"KEY": {"symbol": "pu1"}}},
        {"pu1": ("PrivateUse1",)},
    )
    assert found == [] or found[0].capture("OP") == "aten::add.Tensor"
    found = hits(
        tmp_path,
        {"python_call": {"name": "torch.library.impl", "capture": ["OP", "KEY"]}, "where": {"KEY": {"symbol": "pu1"}}},
        {"pu1": ("PrivateUse1", "privateuseone")},
    )
    assert [(h.line, h.capture("OP")) for h in found] == [(3, "aten::add.Tensor")]


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nnamed = (\n    torch.utils.rename_privateuse1_backend\n)\nnamed('dev')\n",
        "from torch.utils import rename_privateuse1_backend\nnamed=rename_privateuse1_backend;named('dev')\n",
    ],
)
def test_python_call_through_a_name_assigned_the_callee(tmp_path, source):
    write_tree(tmp_path, {"dev/__init__.py": source})
    found = hits(tmp_path, {"python_call": {"name": "torch.utils.rename_privateuse1_backend", "capture": ["NAME"]}})
    assert [h.capture("NAME") for h in found] == ["dev"]


def test_a_comparison_or_an_augmented_assignment_binds_no_alias(tmp_path):
    source = "import torch\nsame = x == torch.utils.rename_privateuse1_backend\nsame += torch.utils.rename_privateuse1_backend\nsame('dev')\n"
    write_tree(tmp_path, {"dev/__init__.py": source})
    assert hits(tmp_path, {"python_call": {"name": "torch.utils.rename_privateuse1_backend"}}) == []


def test_python_assign_and_def(tmp_path):
    write_tree(
        tmp_path, {"a.py": "import torch\ntorch.Tensor.foo = lambda self: self\n\nclass I(torch.Iface):\n    pass\n"}
    )
    assert [h.line for h in hits(tmp_path, {"python_assign": {"target": "torch.Tensor.*"}})] == [2]
    assert [h.capture("NAME") for h in hits(tmp_path, {"python_def": {"class": "*", "bases": "Iface"}})] == ["I"]


def test_python_def_reads_class_heads_through_imports(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/ops.py": 'from torch.autograd import Function as F\n"""\nclass InDocs(F):\n"""\n'
            "class Mine(\n    F,\n    metaclass=Meta,\n):\n    def forward(ctx): ...\n"
        },
    )
    found = hits(tmp_path, {"python_def": {"class": "*", "bases": "torch.autograd.Function"}})
    assert [(h.line, h.capture("NAME")) for h in found] == [(5, "Mine")]
    assert [h.line for h in hits(tmp_path, {"python_def": {"function": "forward"}})] == [9]


PY_BACKEND = {
    "pkg/core.py": "import torch._C._distributed_c10d as _d\n\n"
    "class Root(_d.Backend):\n"
    "    def allreduce(self, t, o):\n        return self._engine.reduce(t, o)\n\n"
    "    def barrier(self, o=None):\n        ...\n",
    "pkg/mid.py": "from pkg import core\n\nclass Middle(core.Root):\n"
    "    def barrier(self, o=None):\n        warnings.warn('no barrier')\n        return {}\n",
    "pkg/leaf.py": "from pkg.mid import Middle as M\n\nclass Leaf(M):\n"
    "    @staticmethod\n    def send(t, dst):\n        return NotImplemented\n"
    "    def recv(self, t, src):\n        x = None\n        return -1\n",
    "pkg/other.py": "class Unrelated(object):\n    def allreduce(self, t, o):\n        return t\n",
}


def test_python_def_follows_tree_classes_to_the_named_base(tmp_path):
    write_tree(tmp_path, PY_BACKEND)
    found = hits(tmp_path, {"python_def": {"class": "*", "bases": "torch._C._distributed_c10d.Backend"}})
    assert sorted(h.capture("NAME") for h in found) == ["Leaf", "Middle", "Root"]
    inherited = hits(tmp_path, {"python_def": {"class": "Leaf", "bases": "*.Backend", "overrides": ["allreduce"]}})
    assert [(h.path, h.line, h.capture("METHOD")) for h in inherited] == [("pkg/core.py", 4, "allreduce")]


STUB_MODULE = {
    "dev/__init__.py": """\
import types
import torch
from dev import _ext
from dev.impl import Runtime

def _count():
    if _ext is None:
        raise NotImplementedError
    else:
        return 0

def _sync(device=None):
    wait = getattr(_ext, "wait", None)
    return wait(device) if wait else None

mod = types.ModuleType("dev")
setattr(mod, "device_count", _count)
mod.synchronize = _sync
mod.is_available = Runtime.is_available
mod.manual_seed = Runtime.manual_seed
mod.initial_seed = Runtime.initial_seed
torch._register_device_module("dev", mod)
""",
    "dev/impl.py": """\
from dev import _ext

class Runtime:
    @staticmethod
    def is_available():
        return getattr(_ext, "probe")()

    @classmethod
    def manual_seed(cls, seed):
        getattr(_ext, "seed", lambda s: None)(seed)

    @staticmethod
    def initial_seed():
        return _ext.initial_seed()
""",
}


def test_graph_tells_real_functions_of_the_bound_module_from_stubs(tmp_path):
    write_tree(tmp_path, STUB_MODULE)
    functions = ["device_count", "synchronize", "is_available", "manual_seed", "initial_seed"]

    def found(bodies: str) -> list[tuple[str, str, int]]:
        spec = {
            "from": {"call_arg": {"call": "torch._register_device_module", "arg": 1}},
            "exports": functions,
            "bodies": bodies,
        }
        return sorted((h.capture("FUNCTION"), h.path, h.line) for h in hits(tmp_path, {"graph": spec}))

    assert found("stub") == [
        ("device_count", "dev/__init__.py", 17),
        ("manual_seed", "dev/__init__.py", 20),
        ("synchronize", "dev/__init__.py", 18),
    ]
    assert found("real") == [("initial_seed", "dev/__init__.py", 21), ("is_available", "dev/__init__.py", 19)]


def test_python_def_tells_real_methods_from_stubs(tmp_path):
    write_tree(tmp_path, PY_BACKEND)

    def classes(overrides: list[str], bodies: str) -> list[tuple[str, str, int]]:
        spec = {"class": "*", "bases": "*.Backend", "overrides": overrides, "bodies": bodies}
        return sorted((h.capture("NAME"), h.path, h.line) for h in hits(tmp_path, {"python_def": spec}))

    assert classes(["allreduce"], "real") == [
        ("Leaf", "pkg/core.py", 4),
        ("Middle", "pkg/core.py", 4),
        ("Root", "pkg/core.py", 4),
    ]
    assert classes(["allreduce"], "stub") == []
    assert classes(["barrier"], "stub") == [
        ("Leaf", "pkg/mid.py", 4),
        ("Middle", "pkg/mid.py", 4),
        ("Root", "pkg/core.py", 7),
    ]
    assert classes(["send", "recv"], "stub") == [("Leaf", "pkg/leaf.py", 5), ("Leaf", "pkg/leaf.py", 7)]
    assert classes(["send", "recv"], "real") == []


def test_cpp_macro_through_alias_and_wrapper(tmp_path):
    write_tree(
        tmp_path,
        {
            "key.h": "#define TPU PrivateUse1\n#define REG(name) \\\n  c10::register_privateuse1_backend(#name);\n",
            "a.cpp": '#include "key.h"\nREG(tpu)\nTORCH_LIBRARY_IMPL(aten, TPU, m) { m.impl("abs", abs); }\n'
            "// TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {}\n",
            "unused.cpp": '#define NEVER_USED() c10::register_privateuse1_backend("x");\n',
        },
    )
    symbols = {"pu1": ("PrivateUse1",)}
    found = hits(
        tmp_path,
        {"cpp_macro": {"name": "TORCH_LIBRARY_IMPL", "capture": ["NS", "KEY"]}, "where": {"KEY": {"symbol": "pu1"}}},
        symbols,
    )
    assert [(h.path, h.line) for h in found] == [("a.cpp", 3)]
    renamed = hits(tmp_path, {"cpp_macro": {"name": "register_privateuse1_backend", "capture": ["NAME"]}})
    assert [(h.path, h.line, h.capture("NAME"), h.capture("VIA")) for h in renamed] == [("a.cpp", 2, '"tpu"', "REG")]


WRAPPED_KEYS = {
    "reg.h": """\
#pragma once
void register_on(torch::Library& lib, c10::DispatchKey key, const char* /*why*/);
#define VENDOR_REGISTER(op, fn, key) lib.impl(#op, torch::dispatch(key, TORCH_FN(fn)))
""",
    "reg.cpp": """\
#include "reg.h"
void register_on(torch::Library& lib, c10::DispatchKey key, const char*) {
  lib.impl("add.Tensor", torch::dispatch(key, TORCH_FN(add)));
  lib.impl("sub.Tensor", torch::dispatch(key, TORCH_FN(sub)));
}
template <typename Lib>
static auto forward_to(Lib&& target, const c10::DispatchKey when) -> void {
  register_on(target, when, "forwarded");
}
void unused_helper(c10::DispatchKey unused) { torch::dispatch(unused, nullptr); }
""",
    "use.cpp": """\
#include "reg.h"
TORCH_LIBRARY_FRAGMENT(aten, lib) {
  register_on(lib, c10::DispatchKey::AutogradSlot1, "grad");
  forward_to(lib, c10::DispatchKey::AutocastSlot1);
  VENDOR_REGISTER(mul.Tensor, mul, c10::DispatchKey::Slot1);
  lib.impl("div.Tensor", torch::dispatch(c10::DispatchKey::Slot1, TORCH_FN(div)));
}
""",
}


def test_cpp_macro_through_functions_and_macros_that_take_the_key(tmp_path):
    write_tree(tmp_path, WRAPPED_KEYS)
    found = hits(tmp_path, {"cpp_macro": {"name": "torch::dispatch", "capture": ["KEY", "FN"]}})
    assert sorted({(h.path, h.line, h.capture("KEY"), h.capture("VIA")) for h in found}) == [
        ("reg.cpp", 10, "unused", None),  # a function nobody calls keeps its call as written
        ("use.cpp", 3, "c10::DispatchKey::AutogradSlot1", "register_on"),
        ("use.cpp", 4, "c10::DispatchKey::AutocastSlot1", "register_on"),  # through forward_to, then register_on
        ("use.cpp", 5, "c10::DispatchKey::Slot1", "VENDOR_REGISTER"),
        ("use.cpp", 6, "c10::DispatchKey::Slot1", None),
    ]


def test_cpp_class_transitive_overrides_and_registration(tmp_path):
    write_tree(
        tmp_path,
        {
            "h.h": "struct Base : public at::PrivateUse1HooksInterface { bool isBuilt() const override; };\n"
            "struct API Hooks final : public Base { bool isAvailable() const override; };\n"
            "struct Orphan : public at::PrivateUse1HooksInterface { bool isAvailable() const override; };\n",
            "r.cpp": "static auto* h = new Hooks();\nat::PrivateUse1HooksInterface* get() { return h; }\n",
            "s.cpp": "void f() { at::RegisterPrivateUse1HooksInterface(get()); }\n",
        },
    )
    spec = {"derives_from": "PrivateUse1HooksInterface", "overrides": ["isBuilt", "isAvailable"]}
    found = [(h.line, h.capture("CLASS"), h.capture("METHOD")) for h in hits(tmp_path, {"cpp_class": spec})]
    assert found == [(1, "Hooks", "isBuilt"), (2, "Hooks", "isAvailable")]  # the inherited one where Base declares it
    registered = {**spec, "overrides": ["isAvailable"], "registered_by": "RegisterPrivateUse1HooksInterface"}
    assert [h.capture("CLASS") for h in hits(tmp_path, {"cpp_class": registered})] == ["Hooks"]


def test_text_cites_the_line_of_its_first_cite_group(tmp_path):
    write_tree(tmp_path, {"a.cpp": "CALL(\n  first,\n  second);\nCALL(second);\n"})
    pattern = r"CALL\((?:\s*first,(?P<CITE1>)\s*|\s*)(?P<CITE2>)second(?P<NAME>\w*)"
    found = hits(tmp_path, {"text": {"pattern": pattern}})
    assert [(h.line, h.captures) for h in found] == [(2, (("NAME", ""),)), (4, (("NAME", ""),))]


def test_file_matches_keeps_findings_of_files_whose_code_matches(tmp_path):
    write_tree(
        tmp_path,
        {
            "a.py": "run(1)\nassert done()\n",
            "b.py": "run(2)\n# assert done()\n",
            "c.py": "run(3)\n",
        },
    )
    data = {"text": {"pattern": r"run\(", "languages": ["python"]}, "file_matches": r"(?m)^assert\b"}
    assert [h.path for h in hits(tmp_path, data)] == ["a.py"]


def test_text_build_and_file_kinds(tmp_path):
    write_tree(
        tmp_path,
        {
            "a.cpp": '/* OutOfMemoryError */\nTORCH_CHECK_WITH(OutOfMemoryError, p, "oom");\n',
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch>=2.4"]\n',
            "patches/core.patch": "diff --git a/c10/core/DeviceType.h b/c10/core/DeviceType.h\n",
        },
    )
    assert [h.line for h in hits(tmp_path, {"text": {"pattern": r"TORCH_CHECK_WITH\(\s*OutOfMemoryError"}})] == [2]
    assert [h.capture("SPEC") for h in hits(tmp_path, {"build": {"requirement": "torch"}})] == [">=2.4"]
    found = hits(tmp_path, {"file": {"glob": "*.patch", "matches": "(?m)^diff --git a/c10/"}})
    assert [h.path for h in found] == ["patches/core.patch"]


def test_structural_pattern(tmp_path):
    write_tree(
        tmp_path, {"a.cpp": 'TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n  m.impl("add.Tensor", TORCH_FN(add));\n}\n'}
    )
    found = hits(tmp_path, {"structural": {"language": "cpp", "pattern": "m.impl($OP, $$$)", "capture": ["OP"]}})
    assert [(h.line, h.capture("OP")) for h in found] == [(2, '"add.Tensor"')]


def test_structural_pattern_in_a_worker_pool(tmp_path):
    write_tree(
        tmp_path, {f"f{i}.py": f"import torch\ntorch.utils.rename_privateuse1_backend('d{i}')\n" for i in range(70)}
    )
    spec = {
        "structural": {"language": "python", "pattern": "torch.utils.rename_privateuse1_backend($N)", "capture": ["N"]}
    }
    assert sorted(h.capture("N") for h in hits(tmp_path, spec)) == sorted(f"'d{i}'" for i in range(70))


SEMGREP_RULE = {
    "semgrep": {
        "rule": {"languages": ["python"], "pattern": "torch.utils.rename_privateuse1_backend($N)"},
        "capture": ["N"],
        "prefilter": ["rename_privateuse1_backend"],
    }
}


@pytest.mark.skipif(semgrep.executable() is None, reason="the semgrep extra is not installed")
def test_semgrep_kind_batched(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/a.py": "import torch\ntorch.utils.rename_privateuse1_backend('x')\n",
            "tests/test_a.py": "import torch\ntorch.utils.rename_privateuse1_backend('y')\n",
        },
    )
    evaluator = Evaluator(Context(build_index(tmp_path), {}))
    clause = clause_from_data("s", {**SEMGREP_RULE, "scope": "all"})
    evaluator.prepare([clause])
    result = evaluator.result(clause)
    assert result.decided
    assert sorted((h.path, h.line, h.capture("N")) for h in result.hits) == [
        ("pkg/a.py", 2, "'x'"),
        ("tests/test_a.py", 2, "'y'"),
    ]


def test_semgrep_missing_leaves_clause_undecided(tmp_path, monkeypatch):
    write_tree(tmp_path, {"a.py": "import torch\ntorch.utils.rename_privateuse1_backend('x')\n"})
    monkeypatch.setattr("air.evidence.semgrep.executable", lambda: None)
    evaluator = Evaluator(Context(build_index(tmp_path), {}))
    result = evaluator.result(clause_from_data("s", SEMGREP_RULE))
    assert not result.decided and "semgrep is not installed" in result.undecided_reason


def test_shared_evidence_finds_the_same_hits_and_keeps_each_description(tmp_path):
    write_tree(tmp_path, {"a.py": "import torch\ntorch.utils.rename_privateuse1_backend('foo')\n"})
    evaluator = Evaluator(Context(build_index(tmp_path), {}))
    spec = {"python_call": {"name": "torch.utils.rename_privateuse1_backend"}}
    first = clause_from_data("rename", {**spec, "describe": "the backend is renamed"})
    second = clause_from_data("rename", {**spec, "describe": "a rename in Python"})
    evaluator.evaluate_all([first, second])
    assert evaluator.result(first).hits == evaluator.result(second).hits != []
    assert [evaluator.result(c).clause.description() for c in (first, second)] == [
        "the backend is renamed",
        "a rename in Python",
    ]


def test_an_optional_constraint_holds_when_its_capture_is_absent(tmp_path):
    source = (
        "import torch\n\nwith torch.autocast('zz'):\n    pass\nwith torch.autocast('zz', enabled=False):\n    pass\n"
        "with torch.autocast('zz', enabled=True):\n    pass\n"
    )
    call = {"name": "torch.autocast", "capture_keywords": {"enabled": "ENABLED"}}
    root = write_tree(tmp_path, {"pkg/amp.py": source})
    optional = hits(root, {"python_call": call, "where": {"ENABLED": {"not_in": ["False"], "optional": True}}})
    assert [h.line for h in optional] == [3, 7]
    required = hits(root, {"python_call": call, "where": {"ENABLED": {"not_in": ["False"]}}})
    assert [h.line for h in required] == [7]


def test_a_product_clause_says_where_in_tests_it_is_found_unless_told_not_to(tmp_path):
    root = write_tree(tmp_path, {"pkg/__init__.py": "import torch\n", "tests/test_x.py": "SUPPORTED = 1\n"})
    evaluator = Evaluator(Context(build_index(root), {}))
    data = {"text": {"literal": "SUPPORTED", "languages": ["python"]}}
    found = evaluator.result(clause_from_data("x", data))
    assert found.count() == 0 and [h.path for h in found.test_only_hits()] == ["tests/test_x.py"]
    quiet = evaluator.result(clause_from_data("x", {**data, "tests_fallback": False}))
    assert quiet.count() == 0 and quiet.test_only_hits() == []


def test_a_deferred_search_in_the_tests_counts_the_same_and_is_done_once_the_deferral_ends(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "import torch\nMODE = 'eager'\n",
            "tests/test_x.py": "import torch\nDEVICE_NAME = 'zz'\n",
            "tests/test_y.py": "import torch\nMODE = 'graph'\n",
        },
    )
    evaluator = Evaluator(Context(build_index(root), {}))
    only_tests = clause_from_data("d", {"text": {"literal": "DEVICE_NAME", "languages": ["python"]}})
    everywhere = clause_from_data("m", {"text": {"literal": "MODE", "languages": ["python"]}})
    with evaluator.fallbacks_deferred():
        deferred = evaluator.result(only_tests)
        assert deferred.count() == 0 and deferred.test_only_hits() == []
        assert [h.path for h in evaluator.result(everywhere).counted()] == ["pkg/__init__.py"]
    whole = evaluator.result(only_tests)
    assert whole.count() == 0 and [h.path for h in whole.test_only_hits()] == ["tests/test_x.py"]
    evaluator.evaluate_all([only_tests, everywhere])
    assert evaluator.result(only_tests) == whole


def test_python_assign_finds_attributes_set_in_function_bodies(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/attrs.py": """\
import torch.storage as st
from torch.storage import _StorageBase as SB

class Installer:
    def run(self, fn):
        SB.npx = fn
        for owner in (object(),):
            owner.npx = fn

def install(fn):
    st._StorageBase.is_npx = property(fn)
"""
        },
    )
    found = hits(tmp_path, {"python_assign": {"target": "torch.storage._StorageBase.*"}})
    assert [(h.line, h.capture("TARGET")) for h in found] == [
        (6, "torch.storage._StorageBase.npx"),
        (11, "torch.storage._StorageBase.is_npx"),
    ]


@pytest.mark.parametrize(
    ("source", "may_call"),
    [
        ("import torch\ntorch.compile(m)\n", True),
        ("import torch as t\nt.compile(m)\n", True),
        ("from torch import compile\ncompile(m)\n", True),
        ("from torch import (  # see f()\n    _dynamo as re,\n)\nre.compile(m)\n", True),
        ("import torch\nx = (torch\n     .compile(m))\n", True),
        ("import torch\n(torch).compile(m)\n", True),
        ("import re\nre.compile('x')\n", False),  # `import re` binds `re` to itself
        ("import triton\nprogram = triton.compile(kernel)\n", False),
        ("def build(self):\n    return self.model.compile(m)\n", False),
        ("import torch\nx = torch.jit.compile(m)\n", False),  # `.jit.compile` ends another name
    ],
)
def test_a_file_is_parsed_for_a_call_only_where_the_callee_may_resolve_to_it(source, may_call):
    assert call_hint("torch.compile")(source) is may_call
    parsed = [call for call in extract_python(source, "pkg.a").calls if call.qualname == "torch.compile"]
    assert may_call or not parsed  # never a file the parser finds the call in


def test_a_clause_whose_files_cannot_be_chosen_in_time_is_undecided(tmp_path, monkeypatch):
    write_tree(tmp_path, {"pkg/slow.py": "import torch\ntorch.utils.rename_privateuse1_backend('x')\n"})
    evaluator = Evaluator(Context(build_index(tmp_path), {}))
    slow = clause_from_data("slow", {"python_call": {"name": "torch.utils.rename_privateuse1_backend"}})

    def hint_past_its_budget(text):
        raise PatternTimeout("(a+)+$", "pkg/slow.py")

    monkeypatch.setattr("air.evidence.python_call.call_hint", lambda name, resolved=True: hint_past_its_budget)
    evaluator.prepare([slow])
    result = evaluator.result(slow)
    assert not result.decided
    assert result.undecided_reason == "pattern timed out on pkg/slow.py"


def test_a_requirement_admits_a_release_range_by_its_pins(tmp_path):
    pins = {
        "a/requirements.txt": "torch==2.7.1+cpu\n",
        "b/requirements.txt": "torch>=2.1,<2.5\n",
        "c/requirements.txt": "torch\n",
        "d/requirements.txt": "torch~=2.3.0\n",
    }
    root = write_tree(tmp_path, pins)
    found = hits(root, {"build": {"requirement": "torch"}, "where": {"SPEC": {"admits_release": ">=2.5"}}})
    assert sorted(h.path for h in found) == ["a/requirements.txt", "c/requirements.txt"]


def test_text_code_only_blanks_cpp_string_literals_too(tmp_path):
    write_tree(
        tmp_path,
        {
            "names.cc": 'const char* Name() { return "KIND_HALF"; }\nvoid Log() { Print("use KIND_HALF here"); }\n',
            "real.cc": "bool Half(Kind k) { return k == KIND_HALF; }\n",
        },
    )
    spec = {"pattern": r"\bKIND_HALF\b", "languages": ["cpp"]}
    assert sorted(h.path for h in hits(tmp_path, {"text": spec})) == ["names.cc", "names.cc", "real.cc"]
    assert [h.path for h in hits(tmp_path, {"text": {**spec, "code_only": True}})] == ["real.cc"]


def test_file_also_matches_reads_the_files_it_follows_once_and_only_inside_the_tree(tmp_path):
    follows = r"(?m)^\s*uses:\s*\./(?P<PATH>\S+\.yml)"
    root = write_tree(
        tmp_path / "tree",
        {
            "ci/nightly.yml": "on: {schedule: [{cron: '0 1 * * *'}]}\njobs:\n  a:\n    uses: ./ci/loop.yml\n",
            "ci/loop.yml": "jobs:\n  b:\n    uses: ./ci/nightly.yml\n  c:\n    uses: ./ci/run.yml\n",
            "ci/run.yml": "steps:\n  - run: pytest tests\n",
            "ci/weekly.yml": "on: {schedule: [{cron: '0 1 * * 0'}]}\njobs:\n  d:\n    uses: ./../outside.yml\n",
        },
    )
    (tmp_path / "outside.yml").write_text("steps:\n  - run: pytest tests\n")
    clause = {"file": {"glob": "ci/*.yml", "matches": r"\bcron\b", "also_matches": [r"\bpytest\b"], "follows": follows}}
    assert [(hit.path, hit.line) for hit in hits(root, clause)] == [("ci/nightly.yml", 1)]
    without = {"file": {key: value for key, value in clause["file"].items() if key != "follows"}}
    assert hits(root, without) == []
