import ast
import re
import warnings
from textwrap import dedent

import pytest
from air.index.model import PyAssign, PyBinding, PyCall, PyDef, PyImport
from air.index.python import (
    _CHILD_FIELDS,
    _SINGLE,
    _TRIPLE,
    extract_python,
    extract_scopes,
    function_end,
    function_spans,
    literal_spans,
    module_name,
)
from air.index.python_lexical import LexicalPython
from hypothesis import given, settings
from hypothesis import strategies as st


def facts(source: str, module: str | None = "torch_foo.mod", is_package: bool = False):
    result = extract_python(dedent(source), module, is_package)
    assert result.error is None
    return result


def calls_named(result, qualname: str) -> list[PyCall]:
    return [call for call in result.calls if call.qualname == qualname]


# --- imports and name resolution --------------------------------------------


def test_aliased_module_import_resolves_calls():
    result = facts(
        """\
        import torch.utils as tu
        tu.rename_privateuse1_backend("foo")
        """
    )
    assert result.imports == (PyImport(1, "torch.utils", None, "tu"),)
    assert result.calls == (PyCall(2, "torch.utils.rename_privateuse1_backend", ("foo",), ()),)


def test_dotted_import_binds_its_first_part():
    result = facts(
        """\
        import torch.utils
        torch.utils.rename_privateuse1_backend("foo")
        """
    )
    assert result.imports == (PyImport(1, "torch.utils", None, "torch"),)
    assert calls_named(result, "torch.utils.rename_privateuse1_backend")


def test_from_import_alias_resolves_to_the_imported_name():
    result = facts(
        """\
        from torch.utils import rename_privateuse1_backend as rename
        rename("foo")
        """
    )
    assert result.imports == (PyImport(1, "torch.utils", "rename_privateuse1_backend", "rename"),)
    assert result.calls[0].qualname == "torch.utils.rename_privateuse1_backend"


def test_unimported_names_resolve_to_themselves():
    result = facts("foo.bar(1)\nprint(x)\n")
    assert [call.qualname for call in result.calls] == ["foo.bar", "print"]


def test_module_level_rebinding_is_followed_one_level():
    result = facts(
        """\
        import torch
        T = torch
        _C = torch._C
        T.cuda.is_available()
        _C._set_device(0)
        """
    )
    assert [call.qualname for call in result.calls] == ["torch.cuda.is_available", "torch._C._set_device"]


def test_imports_inside_functions_and_try_blocks_are_recorded():
    result = facts(
        """\
        try:
            import torch_npu as backend
        except ImportError:
            backend = None

        def load():
            from torch_foo import ops
            ops.register()
        """
    )
    assert [(i.module, i.name, i.alias) for i in result.imports] == [
        ("torch_npu", None, "backend"),
        ("torch_foo", "ops", "ops"),
    ]
    assert result.calls[0].qualname == "torch_foo.ops.register"


def test_bindings_of_names_and_attributes_to_calls_and_names_anywhere():
    result = facts(
        """\
        import torch.library as tl
        registry = tl.Library(
            "aten", "IMPL")
        alias: tl.Library = registry
        class Holder:
            def __init__(self):
                self._lib = self.other = tl.Library("_", "IMPL")
                first, second = tl.Library("a", "DEF"), None
                count = 3
        """
    )
    assert result.bindings == (
        PyBinding(2, "registry", "torch.library.Library(...)"),
        PyBinding(4, "alias", "registry"),
        PyBinding(7, "self._lib", "torch.library.Library(...)"),
        PyBinding(7, "self.other", "torch.library.Library(...)"),
    )
    assert {call.line for call in calls_named(result, "torch.library.Library")} == {2, 7, 8}


def test_relative_imports_resolve_against_the_containing_package():
    result = facts(
        """\
        from . import device
        from .ops import impl as op_impl
        from ..common import helper
        """,
        module="torch_foo.backend.mod",
    )
    assert [(i.module, i.name, i.alias) for i in result.imports] == [
        ("torch_foo.backend", "device", "device"),
        ("torch_foo.backend.ops", "impl", "op_impl"),
        ("torch_foo.common", "helper", "helper"),
    ]


def test_relative_imports_in_init_resolve_against_the_package_itself():
    result = facts("from . import device\nfrom .ops import impl\n", module="torch_foo", is_package=True)
    assert [(i.module, i.name) for i in result.imports] == [("torch_foo", "device"), ("torch_foo.ops", "impl")]


def test_relative_imports_without_a_known_module_drop_the_dots():
    result = facts("from .ops import impl\nfrom . import device\n", module=None)
    assert [(i.module, i.name) for i in result.imports] == [("ops", "impl"), ("", "device")]


def test_relative_import_beyond_the_top_package_keeps_its_name():
    result = facts("from ...ops import impl\n", module="torch_foo.mod")
    assert result.imports[0].module == "ops"


# --- calls ------------------------------------------------------------------


def test_decorator_calls_are_recorded():
    result = facts(
        """\
        import torch

        @torch.library.impl("aten::add.Tensor", "privateuseone")
        def add(a, b):
            return a
        """
    )
    assert calls_named(result, "torch.library.impl") == [
        PyCall(3, "torch.library.impl", ("aten::add.Tensor", "privateuseone"), ())
    ]


def test_call_arguments_are_rendered_by_kind():
    result = facts(
        """\
        import torch
        import torch_foo
        torch._register_device_module("foo", torch_foo.device)
        f(1, 2.5, True, None, b"raw", items[0], *rest, key=torch_foo.Key, n=3, **extra)
        """
    )
    register, f = result.calls
    assert register == PyCall(3, "torch._register_device_module", ("foo", "torch_foo.device"), ())
    assert f.args == ("1", "2.5", "True", "None", "b'raw'", "items[0]", "*rest")
    assert f.kwargs == (("key", "torch_foo.Key"), ("n", "3"))


def test_long_arguments_are_truncated():
    result = facts(f"f({' + '.join(['value'] * 100)})\n")
    assert len(result.calls[0].args[0]) <= 200


def test_calls_on_call_results_and_subscripts_are_skipped_but_methods_are_not():
    result = facts(
        """\
        import torch
        get()()
        handlers[0]()
        torch.backends.foo.enable()
        """
    )
    assert [call.qualname for call in result.calls] == ["get", "torch.backends.foo.enable"]


# --- setattr and module attribute assignments ----------------------------------


def test_setattr_and_dunder_setattr_on_a_module_are_assignments():
    result = facts(
        """\
        import torch
        import torch_foo
        setattr(torch, "foo", torch_foo)
        torch.__setattr__("bar", torch_foo.bar)
        """
    )
    assert result.assigns == (
        PyAssign(3, "torch.foo", "torch_foo"),
        PyAssign(4, "torch.bar", "torch_foo.bar"),
    )
    assert calls_named(result, "setattr")


def test_setattr_inside_a_function_is_an_assignment():
    result = facts(
        """\
        import torch
        def patch():
            setattr(torch.Tensor, "npu", lambda self: self)
        """
    )
    assert result.assigns == (PyAssign(3, "torch.Tensor.npu", "lambda self: self"),)


def test_module_level_attribute_assignment_on_an_import_is_recorded():
    result = facts(
        """\
        import torch
        from torch_foo import ops
        torch.foo = ops
        if True:
            torch.Tensor.npu = ops.to_npu
        """
    )
    assert result.assigns == (
        PyAssign(3, "torch.foo", "torch_foo.ops"),
        PyAssign(5, "torch.Tensor.npu", "torch_foo.ops.to_npu"),
    )


def test_attribute_assignments_on_locals_and_inside_functions_are_not():
    result = facts(
        """\
        import torch
        config = make()
        config.debug = True

        def setup():
            state = State()
            state.ready = True
        """
    )
    assert result.assigns == ()


# --- definitions ------------------------------------------------------------


def test_definitions_are_qualified_and_bases_resolved():
    result = facts(
        """\
        from torch._dynamo.device_interface import DeviceInterface

        class FooInterface(DeviceInterface):
            @staticmethod
            def synchronize():
                def inner():
                    pass

        async def fetch():
            pass
        """
    )
    assert result.defs == (
        PyDef(3, "class", "FooInterface", ("torch._dynamo.device_interface.DeviceInterface",)),
        PyDef(5, "function", "FooInterface.synchronize", (), ("staticmethod",)),
        PyDef(6, "function", "FooInterface.synchronize.inner"),
        PyDef(9, "function", "fetch"),
    )


def test_definitions_in_blocks_are_qualified_by_the_definitions_around_them():
    result = facts(
        """\
        if ready:
            def build():
                try:
                    class Impl:
                        def run(self):
                            pass
                except ImportError:
                    def fallback():
                        pass
        def after(hook=lambda: None):
            pass
        """
    )
    assert [(d.line, d.name) for d in result.defs] == [
        (2, "build"),
        (4, "build.Impl"),
        (5, "build.Impl.run"),
        (8, "build.fallback"),
        (10, "after"),
    ]


# --- the walk ---------------------------------------------------------------

EVERY_KIND_OF_NODE = """\
    import a.b as c
    from .. import d, e as f
    global g
    @c.deco(1)
    class K(c.Base, metaclass=M):
        x: int = 1
        def m(self, p, /, q=2, *r, s, t=3, **u) -> None:
            nonlocal v
            async def inner():
                async with w() as (y, z):
                    async for i in aiter():
                        await i
            return lambda k=1: {**k, "a": [*y], 'b': {1, 2}}[0:1:2]
    try:
        del x[0], y.z
    except* (E, F) as err:
        raise G from err
    finally:
        assert q, "m"
    while (n := next(it)) is not None:
        yield from (j for j in n if j if not j)
        yield {k: v for k, v in n.items()}
    else:
        x += 1
    match command:
        case [1, *rest] | {"k": 2, **others} if rest:
            pass
        case Point(0, y=None) | None as p:
            pass
        case str() | _:
            pass
    print(f"{x!r:>{width}} {y + 1}", -x, a if b else c, x @ y, x < y <= z, b and c, *args, k=v, **kw)
"""


def test_child_fields_lead_to_every_node_but_the_singletons_of_contexts_and_operators():
    tree = ast.parse(dedent(EVERY_KIND_OF_NODE))
    reached, pending = [], [tree]
    while pending:
        node = pending.pop()
        reached.append(node)
        for name in _CHILD_FIELDS[type(node)]:
            value = getattr(node, name)
            pending.extend(child for child in (value if isinstance(value, list) else [value]) if child is not None)
    singletons = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
    assert sorted(map(id, reached)) == sorted(id(node) for node in ast.walk(tree) if not isinstance(node, singletons))


def test_child_fields_leave_out_names_strings_and_numbers():
    assert _CHILD_FIELDS[ast.Name] == ()
    assert _CHILD_FIELDS[ast.Global] == ()
    assert _CHILD_FIELDS[ast.ImportFrom] == ("names",)
    assert _CHILD_FIELDS[ast.FunctionDef] == ("args", "body", "decorator_list", "returns")
    assert _CHILD_FIELDS[ast.BinOp] == ("left", "right")
    assert _CHILD_FIELDS[type(None)] == ()


# --- scopes -----------------------------------------------------------------


def scopes(source: str) -> dict:
    return {scope.name: scope for scope in extract_scopes(dedent(source), "pkg.mod")}


def test_scope_bindings_cover_every_spelling_of_an_attribute_assignment():
    found = scopes(
        """\
        from pkg import impl as _impl
        from types import ModuleType

        def build():
            ns = ModuleType("x")
            ns.a = _impl.a
            setattr(ns, "b", _impl.b)
            ns.__setattr__("c", _impl.c)
            ns.__dict__.update(d=_impl.d, **extra)
            vars(ns).update({"e": _impl.e, key: 1}, f=2)
            ns.__dict__.update(dict(g=3))
            vars(ns)["h"] = lambda: True
            ns.__dict__[name] = 4
            return ns
        """
    )
    build = found["build"]
    assert [(b.line, b.target, b.value) for b in build.bindings] == [
        (5, "ns", "types.ModuleType(...)"),
        (6, "ns.a", "pkg.impl.a"),
        (7, "ns.b", "pkg.impl.b"),
        (8, "ns.c", "pkg.impl.c"),
        (9, "ns.d", "pkg.impl.d"),
        (10, "ns.f", "2"),
        (10, "ns.e", "pkg.impl.e"),
        (11, "ns.g", "3"),
        (12, "ns.h", "lambda: True"),
    ]
    assert build.returns == ("ns",)
    assert (build.kind, build.lines, build.params) == ("function", (4, 14), ())


def test_setattr_in_a_loop_over_literal_names_binds_each_name():
    found = scopes(
        """\
        __all__ = ["synchronize", "empty_cache"]
        names = unknown()
        for name in ("is_available", "device_count"):
            setattr(module, name, getattr(impl, name))
        for name in names:
            setattr(module, name, None)

        def build(target):
            for exported in __all__:
                setattr(target, exported, getattr(impl, exported))
        """
    )
    assert [b.target for b in found[""].bindings] == ["__all__", "names", "module.is_available", "module.device_count"]
    assert [b.target for b in found["build"].bindings] == ["target.synchronize", "target.empty_cache"]


def test_scopes_nest_and_classes_keep_decorators_and_attributes():
    found = scopes(
        """\
        import functools

        class Device(Base):
            count = 2
            first, second = 1, 2
            left, right = pair

            @staticmethod
            def is_available():
                return True

            @functools.lru_cache()
            def cached(self):
                def inner(x, *, y):
                    pass
        """
    )
    assert list(found) == ["", "Device", "Device.is_available", "Device.cached", "Device.cached.inner"]
    device = found["Device"]
    assert [(b.target, b.value) for b in device.bindings] == [("count", "2"), ("first", "1"), ("second", "2")]
    assert [(m.name, m.decorators) for m in device.members] == [
        ("Device.is_available", ("staticmethod",)),
        ("Device.cached", ("functools.lru_cache",)),
    ]
    assert found["Device.cached.inner"].params == ("x", "y")
    assert found[""].members[0].bases == ("Base",)


def test_scopes_of_source_that_does_not_parse_are_none():
    assert extract_scopes("def (:\n", "pkg.mod") == ()


# --- failures ---------------------------------------------------------------


def test_syntax_error_is_reported_with_its_line():
    result = extract_python("x = 1\ndef broken(:\n", "m")
    assert result.error is not None and result.error.startswith("line 2:")
    assert result.module == "m" and result.calls == ()


def test_null_byte_is_reported_with_its_line():
    assert extract_python("x = 1\ny = 2\0\n", "m").error == "line 2: source contains a null byte"


@pytest.mark.parametrize("depth", [100, 700, 5000])
def test_deep_nesting_does_not_raise(depth):
    result = extract_python("x = f(" + " + ".join(["1"] * depth) + ")\n", "m")
    assert result.error is not None or result.calls


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(text):
    extract_python(text, "pkg.mod")
    assert len(without_comments(text)) == len(text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "import a.b as c\n",
                "from . import x\n",
                "c.f(x, y=1)\n",
                "def g(:\n",
                "class K(c.B):\n",
                "    pass\n",
                "setattr(a, 'z', 1)\n",
                "a.q = 2\n",
                "#\n",
                "def h(p, *q, r=1):\n",
                "    return p\n",
                "for n in ('u', 'v'):\n",
                "    setattr(a, n, 3)\n",
                "vars(a).update({'w': 4}, k=5)\n",
                "a.__dict__['y'] = 6\n",
                "    @staticmethod\n",
                "    def s():\n",
                "        pass\n",
            ]
        )
    )
)
def test_python_like_text_never_raises(lines):
    extract_python("".join(lines), "pkg.mod", is_package=True)
    extract_scopes("".join(lines), "pkg.mod", is_package=True)


# --- module names -----------------------------------------------------------


@pytest.mark.parametrize(
    "path, expected",
    [
        ("src/torch_foo/utils/mem.py", "torch_foo.utils.mem"),
        ("src/torch_foo/utils/__init__.py", "torch_foo.utils"),
        ("src/torch_foo/__init__.py", "torch_foo"),
        ("setup.py", "setup"),
        ("scripts/run.py", "run"),
        ("src/torch_foo/csrc/ops.cpp", None),
        ("src/torch_foo/README.md", None),
    ],
)
def test_module_name(path, expected):
    assert module_name(path, {"src/torch_foo", "src/torch_foo/utils"}) == expected


def test_module_name_stops_at_a_package_tree_root():
    assert module_name("pkg/mod.py", {"", "pkg"}) == "pkg.mod"
    assert module_name("__init__.py", {""}) is None


# --- comments ---------------------------------------------------------------


def test_strip_comments_keeps_strings_length_and_lines():
    text = 'x = "# not a comment"  # a comment\n# whole line\ny = 1\n'
    stripped = without_comments(text)
    assert stripped == 'x = "# not a comment"             \n            \ny = 1\n'
    assert len(stripped) == len(text)


def test_strip_comments_survives_unclosed_strings():
    text = 'x = """never closed # here\ny = 1  # real\n'
    stripped = without_comments(text)
    assert len(stripped) == len(text)
    assert [i for i, c in enumerate(stripped) if c == "\n"] == [i for i, c in enumerate(text) if c == "\n"]
    assert "# real" not in stripped


def test_literal_spans_take_prefixes_and_skip_quotes_that_open_nothing():
    text = "é = rb'a#' + U\"y\" # it's \"quoted\"\nz = 'open\nw = f'''é\n''' # 😀\n"
    strings, comments = literal_spans(text)
    assert [text[start:end] for start, end in strings] == ["rb'a#'", 'U"y"', "f'''é\n'''"]
    assert [text[start:end] for start, end in comments] == ['# it\'s "quoted"', "# 😀"]


_PIECES_OF_LITERALS = ["'", '"', "'''", '"""', "#", "\\", "\n", "\r", " ", "r", "b", "F", "x", "é", "\ud800", "😀"]
_PREFIXED_LITERAL = re.compile(rf"[rRbBuUfF]{{0,2}}(?:{_TRIPLE}|{_SINGLE})|#[^\n]*", re.DOTALL)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES_OF_LITERALS), max_size=40).map("".join))
def test_literal_spans_are_what_one_scan_for_literals_and_their_prefixes_finds(text):
    strings, comments = literal_spans(text)
    assert sorted(strings + comments) == [match.span() for match in _PREFIXED_LITERAL.finditer(text)]
    assert all(text[start] == "#" for start, _end in comments)


def test_warnings_from_the_analysed_code_do_not_fail_the_parse():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = extract_python('pattern = "\\d+"\nok = x is 1\n', "m")
    assert result.error is None


def test_leading_byte_order_mark_is_ignored():
    result = extract_python("\ufeffimport torch\ntorch.foo()\n", "m")
    assert result.error is None and result.calls[0] == PyCall(2, "torch.foo", (), ())


def test_bare_decorator_is_recorded_as_a_call_on_the_definition():
    facts = extract_python(
        "from torch._dynamo import register_backend\n\n@register_backend\ndef my_backend(gm, inputs):\n    return gm\n",
        "m",
    )
    assert [(c.line, c.qualname, c.args) for c in facts.calls] == [
        (3, "torch._dynamo.register_backend", ("my_backend",))
    ]


def without_comments(text: str) -> str:
    return LexicalPython(text, None, False).without_comments


def test_a_name_assigned_is_bound_as_itself_not_as_what_it_aliases():
    source = "import torch\n_saved = torch.load\ntorch.load = _wrapped\n"
    (module,) = [scope for scope in extract_scopes(source, "pkg") if scope.kind == "module"]
    assert [(b.line, b.target) for b in module.bindings] == [(2, "_saved"), (3, "torch.load")]


FUNCTIONS = dedent(
    """\
    SIZES = (
        1,
        2,
    )

    class TestOps:
        def test_a(self):
            def helper():
                return 1
            return helper()

        def test_b(self):
            pass
    """
)


@pytest.mark.parametrize(
    ("line", "end"),
    [
        (2, None),  # a continuation line of a module-level statement
        (6, None),  # the class body outside its methods
        (7, None),  # a def line is not in its own body
        (9, 10),  # a nested helper belongs to the test that defines it
        (10, 10),
        (13, 13),
    ],
)
def test_function_end_is_the_outermost_function_holding_the_line(line, end):
    assert function_end(function_spans(FUNCTIONS), line) == end


def test_function_end_reads_past_brackets_and_continued_lines():
    code = "def f(\n    a,\n):\n    x = g(\n1)\n    y = 1 + \\\n2\n    return x\nz = 1\n"
    assert [function_end(function_spans(code), line) for line in (4, 5, 7, 8, 9)] == [8, 8, 8, 8, None]
