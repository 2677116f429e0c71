"""`cpp_class` and `cpp_macro` on C++ classes: upstream hierarchies, registrar objects, stub
bodies, registration sites and the lines findings cite. Sources are written inline."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from air.evidence import Evaluator, clause_from_data
from air.evidence.base import Context, UpstreamCode
from air.evidence.stubs import StubRules, declared_constants, is_stub
from air.index import build_index
from air.index.cpp import body_statements, extract_cpp
from air.pack.framework import load_framework
from helpers.paths import REPO_ROOT
from helpers.trees import write_tree

UPSTREAM = UpstreamCode(
    bases={
        "up::Base": (),
        "up::Middle": ("up::Base",),
        "up::Leaf": ("up::Middle",),
        "other::Base": (),
        "other::Derived": ("other::Base",),
        "up::Sibling": ("up::Base",),
    },
    inert_calls=("CHECK", "CHECK_*", "WARN*"),
)


def hits(root: Path, data: dict, upstream: UpstreamCode = UPSTREAM) -> list:
    evaluator = Evaluator(Context(build_index(root), {}, upstream=upstream))
    return evaluator.result(clause_from_data("x", data)).counted()


def classes(root: Path, spec: dict) -> list[str]:
    return sorted({h.capture("CLASS") for h in hits(root, {"cpp_class": spec})})


# --- upstream hierarchies ---------------------------------------------------------


def test_a_class_deriving_from_an_upstream_descendant_counts(tmp_path):
    write_tree(
        tmp_path,
        {
            "a.h": "namespace dev {\nstruct Direct : public up::Base { void run() override; };\n"
            "class ViaLeaf final : up::Leaf { void run() override; };\n"
            "struct ViaTree : ViaLeaf {};\n"
            "struct Unrelated : other::Derived { void run() override; };\n}\n",
        },
    )
    assert classes(tmp_path, {"derives_from": "Base"}) == ["Direct", "Unrelated", "ViaLeaf", "ViaTree"]
    assert classes(tmp_path, {"derives_from": "up::Base"}) == ["Direct", "ViaLeaf", "ViaTree"]
    assert classes(tmp_path, {"derives_from": "up::Middle"}) == ["ViaLeaf", "ViaTree"]
    # A base the tree writes is matched on its last component (`at::Allocator` is c10's):
    # only the framework's descendants are told apart by the qualified name.
    assert classes(tmp_path, {"derives_from": "other::Base"}) == ["Direct", "Unrelated"]


def test_without_upstream_data_only_the_named_base_counts(tmp_path):
    write_tree(tmp_path, {"a.h": "struct A : up::Base { void f(); };\nstruct B : up::Leaf { void f(); };\n"})
    found = hits(tmp_path, {"cpp_class": {"derives_from": "Base"}}, upstream=UpstreamCode())
    assert [h.capture("CLASS") for h in found] == ["A"]


def test_not_derives_from_leaves_out_a_branch_of_the_hierarchy(tmp_path):
    write_tree(
        tmp_path,
        {
            "a.h": "struct Mine : up::Base { void f(); };\nstruct Reused : up::Sibling { void f(); };\n"
            "struct ReusedAgain : Reused { void g(); };\n"
        },
    )
    spec = {"derives_from": "Base", "not_derives_from": "up::Sibling"}
    assert classes(tmp_path, spec) == ["Mine"]


def test_members_of_an_upstream_class_never_count_even_where_the_tree_holds_a_copy(tmp_path):
    write_tree(
        tmp_path,
        {
            "vendored/middle.h": "namespace up {\nstruct Middle : Base {\n  void run() { work(); }\n};\n}\n",
            "mine.h": "struct Mine : up::Middle {\n  void other() { work(); }\n};\n",
        },
    )
    assert classes(tmp_path, {"derives_from": "up::Base", "overrides": ["run"]}) == ["Middle"]  # the copy's own
    assert classes(tmp_path, {"derives_from": "up::Base", "overrides": ["other"]}) == ["Mine"]


def test_the_shipped_framework_maps_upstream_classes_to_their_bases():
    bases = load_framework("pytorch").upstream.bases
    assert "c10::Allocator" in bases["c10::DeviceAllocator"]
    assert "at::AcceleratorHooksInterface" in bases["at::PrivateUse1HooksInterface"]
    assert load_framework("pytorch").upstream.inert_calls
    virtuals = load_framework("pytorch").upstream.virtual_constness(["at::PrivateUse1HooksInterface"])
    assert virtuals["getDefaultGenerator"] == {True}  # const, here and in at::AcceleratorHooksInterface


# --- the lines findings cite --------------------------------------------------------


def test_an_override_is_cited_at_its_definition_in_or_out_of_the_class(tmp_path):
    write_tree(
        tmp_path,
        {
            "g.h": "struct G : up::Base {\n  int inside() const override { return compute(); }\n"
            "  int outside() const override;\n  int declared() const override;\n};\n",
            "g.cpp": '#include "g.h"\n\nint G::outside() const {\n  return compute();\n}\n',
        },
    )
    found = hits(tmp_path, {"cpp_class": {"derives_from": "Base", "overrides": ["inside", "outside", "declared"]}})
    assert [(h.path, h.line, h.capture("METHOD")) for h in found] == [
        ("g.cpp", 3, "outside"),
        ("g.h", 2, "inside"),
        ("g.h", 4, "declared"),
    ]


def test_an_inherited_override_is_cited_where_the_tree_ancestor_defines_it(tmp_path):
    write_tree(
        tmp_path,
        {
            "a.h": "struct Mid : up::Base {\n  void run() override { go(); }\n};\n"
            "struct Leaf : Mid {\n  void stop() override { halt(); }\n};\n"
        },
    )
    found = hits(tmp_path, {"cpp_class": {"derives_from": "Base", "overrides": ["run", "stop"], "name": "Leaf"}})
    assert [(h.line, h.capture("METHOD")) for h in found] == [(2, "run"), (5, "stop")]


# --- hidden virtuals ------------------------------------------------------------------


HOOKS = UpstreamCode(
    bases={"up::Hooks": ("up::Accelerator",), "up::Accelerator": ()},
    virtuals={"up::Accelerator": {"const": ("current", "generator")}, "up::Hooks": {"mutable": ("reset",)}},
)


@pytest.mark.parametrize(
    ("declaration", "counts"),
    [
        ("int generator(int i) { return make(i); }", False),  # not const, the virtual is
        ("virtual int generator(int i) { return make(i); }", False),
        ("void reset() const { clear(); }", False),  # const, the virtual is not
        ("int generator(int i) const { return make(i); }", True),  # matches, unmarked
        ("int generator(int i) override { return make(i); }", True),  # the compiler checks it
        ("int helper(int i) { return make(i); }", True),  # no virtual of that name
    ],
)
def test_a_declaration_hiding_the_upstream_virtual_is_no_override(tmp_path, declaration, counts):
    method = declaration.split("(")[0].split()[-1]
    source = f"struct H : up::Hooks {{\n  bool built() const override {{ return true; }}\n  {declaration}\n}};\n"
    write_tree(tmp_path, {"h.h": source})
    spec = {"derives_from": "Hooks", "overrides": [method]}
    assert bool(hits(tmp_path, {"cpp_class": spec}, upstream=HOOKS)) == counts
    hidden = hits(tmp_path, {"cpp_class": {**spec, "hides": True}}, upstream=HOOKS)
    assert [h.line for h in hidden] == ([] if counts else [3])


def test_without_any_override_marked_a_class_hides_nothing(tmp_path):
    write_tree(tmp_path, {"h.h": "struct H : up::Hooks {\n  int generator(int i) { return make(i); }\n};\n"})
    assert hits(tmp_path, {"cpp_class": {"derives_from": "Hooks", "overrides": ["generator"]}}, upstream=HOOKS)


# --- stubs ----------------------------------------------------------------------------

RULES = StubRules(
    ("CHECK", "CHECK_*", "WARN*"), frozenset({"defaultStream", "DEFAULT"}), value_types=frozenset({"DeviceIndex"})
)


@pytest.mark.parametrize(
    "body",
    [
        "{}",
        "{ return; }",
        "{ return false; }",
        "{ (void)index; return -1; }",
        "{ static_cast<void>(index); return 0.5f; }",
        "{ return {}; }",
        "{ return nullptr; }",
        '{ throw std::logic_error("not on this device"); }',
        '{ CHECK(false, "unsupported"); }',
        '{ CHECK_NOT_IMPLEMENTED(0, "later"); }',
        '{ ANY_MACRO(false, "fails whatever its name"); }',
        '{ VENDOR_UNSUPPORTED("record"); }',
        '{ std::cerr << "no events" << std::endl; return 0.0; }',
        '{ WARN_ONCE("single device"); return up::DeviceIndex(1); }',
        "{ std::lock_guard<std::mutex> lock(mutex_); return up::Kind::None; }",
        '{ CHECK(index < 4, "bad index"); return static_cast<int>(0); }',
        "{ return up::Stream(up::Stream::DEFAULT, device); }",
        "{ return defaultStream(device.index()); }",
        "{ int unused = 3; return kNoDevice; }",
        '{ static const char *reason = "later"; up::Guard &g = up::Guard::none; return {}; }',
        '{ return std::string("dev"); }',
        "{ return std :: make_pair(up::kDevice, 0); }",
        "{ void* data = nullptr; return {data, data, &release, up::DeviceIndex(0)}; }",  # a constant local, an address
        "{ auto* none = NULL; return {none, &Vendor::free}; }",
        "{ return &release; }",  # the address of what the body does not build
        "{ return DeviceIndex(0); }",  # a value type named without its namespace
        "{ using up::DeviceIndex; typedef int Index; return DeviceIndex(0); }",
    ],
)
def test_stub_bodies(body):
    assert is_stub(statements_of(body), RULES)


@pytest.mark.parametrize(
    "body",
    [
        "{ vendor_set_device(index); }",
        "{ return vendor_device_count(); }",
        "{ return up::runtime::count(); }",
        "{ current_ = index; }",
        "{ return current_; }",
        "{ return CURRENT_DEVICE; }",
        "{ auto old = current(); set(index); return old; }",
        "{ if (index < 0) { return 0; } return probe(index); }",
        "{ CHECK(index >= 0); vendor_sync(index); }",
        "{ return pool_[index % pool_.size()]; }",
        "{ return up::Stream(up::Stream::UNSAFE, device, next_id(priority)); }",
        '{ log("sync"); vendor_sync(); }',
        "{ return up::getHostAllocator(up::kDevice); }",
        "{ return up::GetAllocator(up::DeviceType::Private); }",
        '{ return vendor::registry::lookup(up::Kind::Host, "pinned"); }',
        "{ void* data = vendor_malloc(n); return {data, data, &release, up::DeviceIndex(0)}; }",
        "{ void* data = nullptr; data = vendor_malloc(n); return {data, &release}; }",
        "{ return {&buffer_[offset], &release}; }",
        "{ return DeviceIndex(CURRENT_DEVICE); }",
        "{ static PinnedPool pool(vendor_host_register); return &pool; }",  # a singleton the body builds
        "{ static vendor::HostCache cache; return &cache; }",
    ],
)
def test_bodies_that_implement_something(body):
    assert not is_stub(statements_of(body), RULES)


@pytest.mark.parametrize(
    ("body", "stub"),
    [
        ("{ return m(index); }", True),  # the member calls itself: it never returns
        ("{ this->m(index); }", True),
        ("{ return ::m(index); }", False),  # the free function it names
        ("{ return impl_->m(index); }", False),
        ("{ return m(index, 0); }", False),  # another overload, given more
    ],
)
def test_a_member_function_that_only_calls_itself(body, stub):
    assert is_stub(statements_of(body), replace(RULES, own_name="m")) is stub


KERNEL_RULES = StubRules(
    allocations=("empty",), value_types=frozenset({"Tensor"}), metadata_calls=("size", "sizes", "options", "dtype")
)


@pytest.mark.parametrize(
    ("body", "stub"),
    [
        (
            "{ auto n = index.size(0); auto out = at::empty({n}, index.options()); return std::make_tuple(out, n); }",
            True,
        ),
        ("{ auto o = index.options().dtype(at::kLong); return {at::empty({1}, o), at::Tensor()}; }", True),
        ("{ auto n = index.size(0); auto out = at::empty({n}, index.options()); fill(out); return {out, n}; }", False),
        ("{ auto n = index.size(0); return std::make_tuple(compute(index), n); }", False),
        ("{ auto v = index.values(); return std::make_tuple(v); }", False),  # not metadata: the values
    ],
)
def test_a_kernel_that_only_reads_metadata_and_allocates(body, stub):
    assert is_stub(statements_of(body), replace(KERNEL_RULES, unchanged=frozenset({"index"}))) is stub


@pytest.mark.parametrize(
    ("body", "stub"),
    [
        ("{ return up::Stream(up::Stream::UNSAFE, index, 0); }", True),  # the caller's argument, a constant id
        ("{ return {up::Stream::UNSAFE, index, 0}; }", True),
        ("{ return up::Stream(up::Stream::UNSAFE, index, next_id()); }", False),
        ("{ return up::make_stream<Impl>(index); }", False),  # a function given the argument
        ("{ return index; }", True),  # handed back as it is
        ("{ return pool_[index]; }", False),
    ],
)
def test_a_value_made_of_the_callers_arguments_and_constants(body, stub):
    rules = replace(RULES, value_types=frozenset({"Stream"}), unchanged=frozenset({"index"}))
    assert is_stub(statements_of(body), rules) is stub


@pytest.mark.parametrize(
    ("body", "stub"),
    [
        ("{ return single(index); }", True),
        ("{ return this->single(index); }", True),
        ("{ return impl_->single(index); }", False),  # another object's member
        ("{ return real(index); }", False),
    ],
)
def test_returning_what_a_stub_member_gives(body, stub):
    assert is_stub(statements_of(body), replace(RULES, stub_members=frozenset({"single"}))) is stub


@pytest.mark.parametrize(
    ("body", "stub"),
    [
        ("{ auto s = up::Stream(up::Stream::DEFAULT, index); return s; }", True),
        ("{ up::Stream s{up::Stream::DEFAULT, index}; VENDOR_LOG_DEBUG(s); return s; }", True),
        ("{ const auto s = single(index); return s; }", True),
        ("{ auto s = single(index); vendor_set(index); return s; }", False),
    ],
)
def test_a_local_bound_to_a_placeholder(body, stub):
    rules = replace(RULES, inert_calls=(*RULES.inert_calls, "*_LOG_*"), stub_members=frozenset({"single"}))
    assert is_stub(statements_of(body), rules) is stub


def test_a_constant_return_may_implement_the_method():
    assert not is_stub(statements_of("{ return true; }"), StubRules(constant_is_real=True))
    assert is_stub(statements_of("{ throw 1; }"), StubRules(constant_is_real=True))


def statements_of(body: str) -> list[str]:
    facts = extract_cpp(f"int S::m(int index) const {body}\n")
    (definition,) = facts.method_defs
    return body_statements(facts.stripped, definition.body)


GUARD = """struct G : up::Base {
  int get() const override { return vendor_get(); }
  void set(int d) const override;
  double elapsed() const override { (void)d; return 0.0; }
  up::Stream pool(bool high) const override { return defaultStream(high); }
};
"""
GUARD_CPP = '#include "g.h"\nvoid G::set(int d) const {\n  CHECK(false, "single device");\n}\n'


@pytest.mark.parametrize(
    "overrides, real, stub",
    [
        (["get"], ["get"], []),
        (["get", "set"], [], ["set"]),
        (["elapsed"], [], ["elapsed"]),
        (["get", "pool"], [], ["pool"]),
    ],
)
def test_bodies_option_keeps_real_or_stub_overrides_and_cites_the_stubs(tmp_path, overrides, real, stub):
    write_tree(tmp_path, {"g.h": GUARD, "g.cpp": GUARD_CPP})
    spec = {"derives_from": "Base", "overrides": overrides, "placeholders": ["defaultStream"]}
    assert [h.capture("METHOD") for h in hits(tmp_path, {"cpp_class": {**spec, "bodies": "real"}})] == real
    assert [h.capture("METHOD") for h in hits(tmp_path, {"cpp_class": {**spec, "bodies": "stub"}})] == stub


def test_without_overrides_a_class_is_judged_by_its_member_functions(tmp_path):
    write_tree(
        tmp_path,
        {
            "a.h": "struct Empty : up::Base {};\n"
            "struct OnlyCtor : up::Base { OnlyCtor() { init(); } ~OnlyCtor() override { fini(); } };\n"
            "struct Stubs : up::Base { int a() const override { return 0; } void b() override {} };\n"
            "struct Real : up::Base { int a() const override { return 0; } void b() override { go(); } };\n"
            "struct Inherits : Real {};\n",
        },
    )
    assert classes(tmp_path, {"derives_from": "Base"}) == ["Empty", "Inherits", "OnlyCtor", "Real", "Stubs"]
    assert classes(tmp_path, {"derives_from": "Base", "bodies": "real"}) == ["Inherits", "Real"]
    assert classes(tmp_path, {"derives_from": "Base", "bodies": "stub"}) == ["Stubs"]


def test_the_inert_calls_come_from_the_framework(tmp_path):
    write_tree(tmp_path, {"a.h": 'struct A : up::Base {\n  void run() override { CHECK_ARG(x > 0, "x"); }\n};\n'})
    spec = {"cpp_class": {"derives_from": "Base", "overrides": ["run"], "bodies": "stub"}}
    assert [h.line for h in hits(tmp_path, spec)] == [2]
    assert hits(tmp_path, spec, upstream=UpstreamCode(bases=UPSTREAM.bases)) == []


# --- registrar objects and registration ------------------------------------------------

REGISTRATIONS = [
    "static Registrar g_reg(Kind::Dev, new Impl());",
    "namespace {\nconst ns::Registrar registered{Kind::Dev, &impl_instance};\n}",
    "auto reg = ns::Registrar{Kind::Dev, new Impl};",
    "static auto reg = ns::Registrar(Kind::Dev, new Impl());",
    "static ns::Registrar UNIQUE_NAME(g)(Kind::Dev, new Impl());",
    "#define MY_REGISTER(T) static ns::Registrar g_##T(Kind::Dev, new T());\nMY_REGISTER(Impl)",
    "REGISTER_IMPL(Dev, Impl);",
]


@pytest.mark.parametrize("registration", REGISTRATIONS)
def test_a_registrar_object_counts_like_the_macro(tmp_path, registration):
    write_tree(
        tmp_path,
        {
            "impl.h": "struct Impl : up::Base { int get() const override { return probe(); } };\n"
            "extern Impl impl_instance;\n",
            "reg.cpp": '#include "impl.h"\n' + registration + "\n",
        },
    )
    found = hits(tmp_path, {"cpp_macro": {"name": ["REGISTER_IMPL", "Registrar"], "capture": ["KEY", "IMPL"]}})
    assert [h.capture("KEY").rpartition("::")[2] for h in found] == ["Dev"]
    spec = {"derives_from": "Base", "registered_by": ["REGISTER_IMPL", "Registrar"]}
    assert classes(tmp_path, spec) == ["Impl"]


def test_a_registrar_template_argument_is_captured_first(tmp_path):
    write_tree(
        tmp_path,
        {
            "a.cpp": "static ns::AllocReg<Kind::Dev> installed(&the_allocator);\n"
            "const ns::AllocReg<Kind::Other> other{&cpu_allocator};\n"
        },
    )
    found = hits(tmp_path, {"cpp_macro": {"name": "AllocReg", "capture": ["KEY", "ALLOCATOR"]}})
    assert [(h.line, h.capture("KEY"), h.capture("ALLOCATOR")) for h in found] == [
        (1, "Kind::Dev", "&the_allocator"),
        (2, "Kind::Other", "&cpu_allocator"),
    ]


@pytest.mark.parametrize(
    "initialiser",
    [
        "struct Init { Init() { install(Kind::Dev, &the_allocator); } } init_once;",
        "static bool installed = [] { install(Kind::Dev, &the_allocator); return true; }();",
        "static bool install_all() { install(Kind::Dev, &the_allocator); return true; }\n"
        "static const bool installed = install_all();",
        "__attribute__((constructor)) static void on_load() { install(Kind::Dev, &the_allocator); }",
        "void init_module(py::module& m) { install(Kind::Dev, &the_allocator); }\n"
        "PYBIND11_MODULE(_C, m) { init_module(m); }",
    ],
)
def test_a_registration_in_a_function_run_at_load_counts(tmp_path, initialiser):
    write_tree(tmp_path, {"init.cpp": initialiser + "\n"})
    found = hits(tmp_path, {"cpp_macro": {"name": "install", "capture": ["KEY", "ALLOCATOR"]}})
    assert [(h.capture("KEY"), h.capture("ALLOCATOR")) for h in found] == [("Kind::Dev", "&the_allocator")]


def test_each_registration_site_counts_even_for_one_class_name(tmp_path):
    write_tree(
        tmp_path,
        {
            "a.cpp": "namespace {\nstruct Impl : up::Base { int get() const override { return a(); } };\n}\n"
            "REGISTER_IMPL(Dev, Impl);\n",
            "b.cpp": "namespace {\nstruct Impl : up::Base { int get() const override { return b(); } };\n"
            "static Registrar reg(Kind::Dev, new Impl());\n}\n",
        },
    )
    found = hits(tmp_path, {"cpp_macro": {"name": ["REGISTER_IMPL", "Registrar"], "capture": ["KEY", "IMPL"]}})
    assert [(h.path, h.line) for h in found] == [("a.cpp", 4), ("b.cpp", 3)]
    assert len({h.capture("IMPL").split()[-1].rstrip("()") for h in found}) == 1  # one class name, two sites


# --- the script that reads the upstream headers --------------------------------------------


def load_script():
    path = REPO_ROOT / "frameworks" / "pytorch" / "gen_class_hierarchy.py"
    spec = importlib.util.spec_from_file_location("gen_class_hierarchy", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_hierarchy_script_reads_qualified_classes_and_their_descendants(tmp_path):
    script = load_script()
    write_tree(
        tmp_path,
        {
            "c10/core/Alloc.h": "namespace c10 {\nstruct API Allocator { virtual void* get() = 0; };\n"
            "/* namespace fake { */\nstruct DeviceAllocator : public Allocator {};\n}\n",
            "ATen/Host.h": 'namespace at {\nusing c10::Allocator;\nconst char* s = "namespace x {";\n'
            "struct HostAllocator : at::Allocator {};\n"
            "namespace detail {\ntemplate <class T> struct Caching : public HostAllocator {};\n}\n}\n",
            "torch/csrc/Other.h": "namespace torch::jit {\nstruct Allocator {};\nstruct Unrelated : Allocator {};\n}\n",
            "torch/csrc/Named.h": "namespace torch { namespace autograd {\nstruct Function {};\n}}\n"
            "namespace torch::jit {\nstruct Function {};\nstruct GraphFunction : Function {};\n}\n",
        },
    )
    headers = script.read_headers(tmp_path)
    assert set(headers.classes) >= {
        "c10::Allocator",
        "c10::DeviceAllocator",
        "at::HostAllocator",
        "at::detail::Caching",
        "torch::jit::Allocator",
        "torch::autograd::Function",
    }
    assert headers.aliases["at::Allocator"] == ("c10::Allocator", "at")
    bases = script.hierarchy(headers, {"c10::Allocator", "torch::autograd::Function"})
    assert bases == {
        "at::HostAllocator": ["c10::Allocator"],
        "at::detail::Caching": ["at::HostAllocator"],
        "c10::Allocator": [],
        "c10::DeviceAllocator": ["c10::Allocator"],
        "torch::autograd::Function": [],
    }
    assert "torch::jit::GraphFunction" in script.hierarchy(headers, {"Function"})
    with_ancestors = script.hierarchy(headers, {"c10::DeviceAllocator"})
    assert with_ancestors == {"c10::Allocator": [], "c10::DeviceAllocator": ["c10::Allocator"]}
    assert script.virtual_members(headers, with_ancestors) == {"c10::Allocator": {"mutable": ["get"]}}


def test_the_constants_a_file_declares_at_any_scope():
    code = """
    constexpr c10::DeviceIndex only_index{0};
    struct G {
      static constexpr c10::DeviceType kind = c10::DeviceType::PrivateUse1;
      static const std::vector<int> sizes = {1, 2};
      static constexpr int width() { return 4; }
      const int counted = next();
      static int mutable_count = 0;
    };
    """
    assert declared_constants(code) == {"only_index", "kind", "sizes"}


def test_a_class_only_declared_beside_an_implemented_one_is_another_projects(tmp_path):
    write_tree(
        tmp_path,
        {
            "vendor/pg.h": "struct Vendor : up::Base { void a() override; void b() override; int n() { return 1; } };\n",
            "own.h": "struct Own : up::Base { void a() override; };\n",
            "own.cpp": '#include "own.h"\nvoid Own::a() { go(); }\n',
            "inline.h": "struct Inline : up::Base { void a() override { go(); } void b() override; };\n",
        },
    )
    assert classes(tmp_path, {"derives_from": "Base"}) == ["Inline", "Own"]
