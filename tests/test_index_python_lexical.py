"""Lexical reading of Python tests agrees with the parser on the forms it covers."""

from __future__ import annotations

from air.index.python import extract_python
from air.index.python_lexical import LexicalPython
from hypothesis import given, settings
from hypothesis import strategies as st

SOURCE = """\
import torch
import torch.distributed as dist
from torch.testing._internal.common_device_type import (
    instantiate_device_type_tests,
    ops as device_ops,
)
from .helpers import make_tensor
from torch.testing._internal.common_utils import skipIfTorchDynamo


class TestThing(torch.testing._internal.common_utils.TestCase):
    @device_ops(op_db, allowed_dtypes=(torch.float32,))
    def test_a(self, device, dtype, op):
        torch.save({"w": make_tensor(device)}, "w.pt")
        x = torch.load("w.pt", map_location="npu", weights_only=True)
        # torch.save(x, "commented.pt")
        print("torch.save(not a call)")
        (x * 2).sum().backward()
        dist.all_reduce(x)

    @skipIfTorchDynamo
    def test_b(self):
        pass


instantiate_device_type_tests(TestThing, globals())
"""


def lexical(source: str = SOURCE) -> LexicalPython:
    return LexicalPython(source, "pkg.tests.test_thing", False)


def test_blanking_keeps_offsets_and_lines():
    text = 'x = "a # b"  # comment\ny = 1\n'
    blanked = LexicalPython(text, None, False).code
    assert len(blanked) == len(text) and blanked.count("\n") == 2
    assert "comment" not in blanked and "a # b" not in blanked and "y = 1" in blanked


def test_blanking_keeps_the_line_breaks_of_a_literal_over_several_lines():
    text = 'x = """é\r\n😀 \ud800\r"""  # ü\ny = 1\n'
    assert LexicalPython(text, None, False).code == "x = " + "    \r\n   \r   " + "     " + "\ny = 1\n"


def test_string_prefixes_are_blanked_with_their_strings():
    text = "x = rb'a' + f\"{y}\" + bar('c')\n"
    assert LexicalPython(text, None, False).code == "x = " + " " * 5 + " + " + " " * 6 + " + bar(   )\n"


def test_imports_resolve_like_the_parser():
    aliases = lexical().aliases
    assert aliases["dist"] == "torch.distributed"
    assert aliases["device_ops"] == "torch.testing._internal.common_device_type.ops"
    assert aliases["make_tensor"] == "pkg.tests.helpers.make_tensor"
    assert aliases["torch"] == "torch"


def test_import_records_match_the_parser():
    source = SOURCE + "import os.path, json as j\nfrom . import sibling\nfrom .pkg import *\n"
    parsed = extract_python(source, "pkg.tests.test_thing", False).imports
    read = LexicalPython(source, "pkg.tests.test_thing", False).imports
    assert {(i.module, i.name, i.alias) for i in read} == {(i.module, i.name, i.alias) for i in parsed}
    assert ("pkg.tests", "sibling", "sibling") in {(i.module, i.name, i.alias) for i in read}


def test_imports_continued_with_a_backslash_match_the_parser():
    source = (
        "from torch.testing._internal.common_device_type import \\\n"
        "    (instantiate_device_type_tests, ops)\n"
        "from torch.testing._internal \\\n    import common_utils as cu, \\\n    common_dtype\n"
        "import torch.distributed as dist, \\\n    os.path\n"
        "ops(op_db)\n"
    )
    parsed = extract_python(source, "pkg.tests.test_thing", False).imports
    read = LexicalPython(source, "pkg.tests.test_thing", False).imports
    assert {(i.module, i.name, i.alias) for i in read} == {(i.module, i.name, i.alias) for i in parsed}
    assert len(read) == 6
    assert (
        LexicalPython(source, None, False).calls_of("ops")[0].qualname
        == "torch.testing._internal.common_device_type.ops"
    )


def test_the_first_binding_of_a_name_wins_as_in_the_parser():
    source = "from a import x\nimport b as x\nx()\n"
    parsed = extract_python(source, None).calls[0].qualname
    assert LexicalPython(source, None, False).calls_of("x")[0].qualname == parsed == "a.x"


def test_calls_match_the_parser():
    wanted = {
        "torch.save",
        "torch.load",
        "torch.testing._internal.common_device_type.ops",
        "torch.distributed.all_reduce",
        "torch.testing._internal.common_device_type.instantiate_device_type_tests",
        "torch.testing._internal.common_utils.skipIfTorchDynamo",
    }
    words = {"save", "load", "device_ops", "all_reduce", "instantiate_device_type_tests", "skipIfTorchDynamo"}
    found = {(c.line, c.qualname) for w in words for c in lexical().calls_of(w)}
    parsed = {
        (c.line, c.qualname) for c in extract_python(SOURCE, "pkg.tests.test_thing").calls if c.qualname in wanted
    }
    assert found == parsed
    assert (16, "torch.save") not in found  # commented out
    assert all(line != 17 for line, _ in found)  # inside a string


def test_arguments_render_like_the_parser():
    (load,) = list(lexical().calls_of("load"))
    (parsed,) = [c for c in extract_python(SOURCE, None).calls if c.qualname == "torch.load"]
    assert load.args == parsed.args == ("w.pt",)
    assert load.kwargs == parsed.kwargs == (("map_location", "npu"), ("weights_only", "True"))


def test_method_of_an_expression_is_not_resolved():
    assert [c.qualname for c in lexical().calls_of("backward")] == []


NESTED = '''\
class A:
    def m(self):
        def inner():
            pass

    """
def not_a_def():
    """
    def n(self, x=(
        1)):
        pass
if X:
    def b():
        pass
'''


def test_definitions_are_named_as_the_parser_names_them():
    defs = {(d.kind, d.name, d.bases) for d in lexical().defs}
    assert ("class", "TestThing", ("torch.testing._internal.common_utils.TestCase",)) in defs
    assert ("function", "TestThing.test_a", ()) in defs
    parsed = [(d.line, d.kind, d.name) for d in extract_python(NESTED, None).defs]
    assert [(d.line, d.kind, d.name) for d in LexicalPython(NESTED, None, False).defs] == parsed
    assert [name for _line, _kind, name in parsed] == ["A", "A.m", "A.m.inner", "A.n", "b"]


def test_assignments():
    source = 'import torch\nimport torch_x\n\ntorch.xdev = torch_x.device\nsetattr(torch, "ydev", torch_x)\ndef f():\n    torch.inner = 1\n'
    assigns = {(a.line, a.target, a.value) for a in LexicalPython(source, None, False).assigns}
    assert assigns == {(4, "torch.xdev", "torch_x.device"), (5, "torch.ydev", "torch_x")}
    parsed = {(a.line, a.target, a.value) for a in extract_python(source, None).assigns}
    assert assigns == parsed


def test_any_callee():
    calls = {(c.line, c.qualname) for c in LexicalPython("import a.b as m\nm.f(1)\ng()\n", None, False).calls_of("")}
    assert calls == {(2, "a.b.f"), (3, "g")}


def test_calls_through_an_alias():
    source = "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(net)\n"
    (call,) = LexicalPython(source, None, False).calls_of("DistributedDataParallel")
    assert (call.line, call.qualname, call.args) == (2, "torch.nn.parallel.DistributedDataParallel", ("net",))


ASSIGNED_ALIASES = """\
import torch
from torch import _register_device_module

name_slot = (
    torch.utils.rename_privateuse1_backend
)
bind = _register_device_module
unbound = helpers.rename_privateuse1_backend
compared = bind == torch.utils.rename_privateuse1_backend

name_slot("dev")
bind("dev", module)
unbound("dev")
"""


def test_calls_through_an_assigned_alias_agree_with_the_parser():
    reading = LexicalPython(ASSIGNED_ALIASES, None, False)
    words = ["rename_privateuse1_backend", "_register_device_module"]
    found = {(c.line, c.qualname, c.args) for word in words for c in reading.calls_of(word)}
    assert found == {
        (11, "torch.utils.rename_privateuse1_backend", ("dev",)),
        (12, "torch._register_device_module", ("dev", "module")),
    }
    parsed = extract_python(ASSIGNED_ALIASES, None).calls
    assert found == {(c.line, c.qualname, c.args) for c in parsed if c.qualname.rpartition(".")[2] in words}


@given(st.text(), st.sampled_from(["", "save", "impl", "x"]))
@settings(max_examples=200, deadline=None)
def test_any_text_reads_without_raising(text, word):
    reading = LexicalPython(text, "pkg.mod", False)
    for call in reading.calls_of(word):
        assert call.line >= 1
    assert all(d.line >= 1 for d in reading.defs)
    assert all(a.line >= 1 for a in reading.assigns)


def test_strings_that_stand_as_statements_are_blanked_and_other_strings_kept():
    source = (
        "'''Example: torch.Event() in a docstring'''\n"
        "def sync(stream):\n"
        '    r"""\n'
        "    old = stream.record_event()  # disabled code kept in a string\n"
        '    """\n'
        "    label = register(\n"
        '        """an argument on its own line"""\n'
        "    )\n"
        "    text = \\\n"
        "        'a continued assignment'\n"
        "    'disabled(call)'; # trailing comment\n"
        '    return "kept"\n'
    )
    text = LexicalPython(source, None, False).without_comments
    assert len(text) == len(source) and text.count("\n") == source.count("\n")
    for blanked in ("torch.Event()", "record_event", "disabled(call)", "trailing comment"):
        assert blanked not in text
    for kept in ("an argument on its own line", "a continued assignment", '"kept"'):
        assert kept in text


def test_strings_after_many_strings_on_one_line_are_told_apart():
    """A line of many implicitly joined strings, then statements: lines are found from the last
    string on, not from the text's start for each string (which took seconds on such a line)."""
    joined = "x = " + " ".join(["'piece'"] * 5000)
    source = f"{joined}\n    'indented after it'\n'''a statement of its own'''\ny = (\n    'inside brackets'\n)\n"
    text = LexicalPython(source, None, False).without_comments
    assert text.startswith(joined) and "inside brackets" in text
    assert "a statement of its own" not in text and "indented after it" not in text
