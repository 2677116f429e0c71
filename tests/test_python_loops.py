"""Operator names built from loop variables over literal data (`air.index.python_loops`)."""

from __future__ import annotations

import pytest
from air.index.python_loops import loop_argument_values

MODULE = """\
import torch

NAMES = ["abs", "neg"]
OPS = {"aten.sin": f, **{f"aten.{n}.out": g for n in NAMES}, **helpers()}

for name, fn in OPS.items():
    torch.library.impl(name.replace("aten.", "aten::"), "privateuseone")(fn)

for dim in (1, 2):
    for kind in ["max", "avg"]:
        lib.impl(f"{kind}_pool{dim}d", fn, "PrivateUse1")

for i, pre in enumerate(["", "bi"]):
    torch.library.impl("aten::upsample_" + pre + f"linear{i + 1}d", "privateuseone")(up)

for name in discovered():
    torch.library.impl(name, "privateuseone")(fn)

torch.library.impl(OPS, "privateuseone")(fn)
"""


@pytest.mark.parametrize(
    ("line", "callee", "values"),
    [
        (7, "impl", ("aten::abs.out", "aten::neg.out", "aten::sin")),  # keys, merged and comprehended
        (11, "impl", ("avg_pool1d", "avg_pool2d", "max_pool1d", "max_pool2d")),  # nested loops, f-string
        (14, "impl", ("aten::upsample_bilinear2d", "aten::upsample_linear1d")),  # enumerate, + and arithmetic
        (17, "impl", ()),  # a loop over what a call returns: nothing is known
        (19, "impl", ()),  # no loop
        (7, "replace", ("aten.",)),  # the calls of another callee on the line: its own argument
    ],
)
def test_loop_values(line, callee, values):
    assert loop_argument_values(MODULE, line, callee, 0) == values


OBJECTS = """\
import torch

ops = torch.ops.ns
short = ops
PAIRS = [short.add.Tensor, torch.ops.ns.mul]

for op in sorted(PAIRS, key=str):
    name = op.name()
    lib.impl(name, fn)

for op, fn in table(PAIRS).items():
    impl(str(op._schema).split("(")[0], "k")(fn)

for op in PAIRS:
    impl(helper(op), "k")(fn)
"""


@pytest.mark.parametrize(
    ("line", "callee", "values"),
    [
        (9, "impl", ("torch.ops.ns.add.Tensor", "torch.ops.ns.mul")),  # aliases resolved, a body-assigned name
        (
            12,
            "impl",
            ("torch.ops.ns.add.Tensor", "torch.ops.ns.mul"),
        ),  # a mapping built from the list, read with builtins
        (15, "impl", ()),  # read through a function of the tree: nothing is known
    ],
)
def test_loops_over_object_references(line, callee, values):
    assert loop_argument_values(OBJECTS, line, callee, 0) == values


def test_unparsable_text_gives_nothing():
    assert loop_argument_values("for x in [1:\n  impl(x)\n", 2, "impl", 0) == ()


REGISTRY = """\
REGISTERED = []
TABLE = {}


def register(op_name):
    def decorator(fn):
        REGISTERED.append((op_name, fn))
        return fn

    return decorator


def _unary(name, suffix=""):
    register(f"ns::{name}{suffix}")(make(name))


register("ns::add.Tensor")(add)
_unary("neg")
_unary(name="exp", suffix=".out")
TABLE["ns::mul"] = mul
REGISTERED.append(("ns::sub", sub))
REGISTERED.append((computed(), sub))
"""

LOOPS = """\
from .ops import REGISTERED as found, TABLE

for op_name, fn in found:
    impl(op_name, "k")(fn)

for entry in TABLE.items():
    impl(entry[0], "k")(entry[1])
"""


def test_registries_filled_through_functions_and_wrappers():
    text = REGISTRY + "\nfor op, fn in REGISTERED:\n    impl(op, 'k')(fn)\n"
    line = text.count("\n")
    assert loop_argument_values(text, line, "impl", 0) == ("ns::add.Tensor", "ns::exp.out", "ns::neg", "ns::sub")


def test_registries_imported_from_another_module():
    imported = {"found": (REGISTRY, "REGISTERED"), "TABLE": (REGISTRY, "TABLE")}.get
    assert loop_argument_values(LOOPS, 4, "impl", 0, imported) == (
        "ns::add.Tensor",
        "ns::exp.out",
        "ns::neg",
        "ns::sub",
    )
    assert loop_argument_values(LOOPS, 7, "impl", 0, imported) == ("ns::mul",)
    assert loop_argument_values(LOOPS, 4, "impl", 0) == ()  # without the other module, nothing is known


def test_loops_over_data_the_function_binds_before_them():
    text = (
        "def install(lib):\n"
        "    ops = (torch.ops.ns.mm.default, torch.ops.ns.bmm.default)\n"
        "    for op in ops:\n"
        "        lib.impl(op._schema.name, wrap(op))\n"
        "    later = ['ns::add']\n"
    )
    assert loop_argument_values(text, 4, "impl", 0) == ("torch.ops.ns.bmm.default", "torch.ops.ns.mm.default")
