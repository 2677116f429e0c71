from __future__ import annotations

import re
import textwrap

import pytest
from air.index.cpp import (
    FunctionBodies,
    block_span,
    body_statements,
    calls_between,
    expand_macro,
    expand_macros,
    extract_cpp,
    find_calls,
    find_constants,
    find_constructions,
    find_type_aliases,
    parameters_before,
    resolve_alias,
    strip_comments,
)
from air.index.cpp.lexing import Braces, Brackets, lexemes, occurrences
from air.index.cpp.preprocessor import DIRECTIVE, directive_lines
from air.index.model import CppCall, CppClass, CppDefine, CppInclude
from hypothesis import given, settings
from hypothesis import strategies as st


def method_names(cls) -> tuple[str, ...]:
    """The names of a class's methods, each once, in order."""
    return tuple(dict.fromkeys(method.name for method in cls.methods))


def source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def calls_in(text: str, *names: str) -> list[CppCall]:
    return find_calls(extract_cpp(source(text)), set(names))


def class_named(text: str, name: str) -> CppClass:
    (found,) = [cls for cls in extract_cpp(source(text)).classes if cls.name == name]
    return found


# --- strip_comments ---------------------------------------------------------


def blanks(comment: str) -> str:
    return "".join(char if char == "\n" else " " for char in comment)


def test_comments_are_blanked_in_place():
    text = "int a; // line\nint /* block\n spans */ b;\n"
    expected = "int a; " + blanks("// line") + "\nint " + blanks("/* block\n spans */") + " b;\n"
    assert strip_comments(text) == expected


def test_literals_survive_comment_stripping():
    text = source(
        r"""
        const char* a = "// not a comment";
        const char* b = "quote \" /* still a string */";
        char c = '"'; char d = '/';
        auto e = R"x(// raw "/* kept */")x"; // gone
        int f = 1'000'000; // gone too
        """
    )
    stripped = strip_comments(text)
    assert '"// not a comment"' in stripped
    assert r'"quote \" /* still a string */"' in stripped
    assert """'"'; char d = '/';""" in stripped
    assert 'R"x(// raw "/* kept */")x";' in stripped
    assert "1'000'000;" in stripped
    assert "gone" not in stripped


def test_lexemes_find_raw_strings_and_numbers_before_the_quote_they_hold():
    text = """a = u8R"d(x"y)d" + LR"(z)" + xR"(w)" + 1'000 + x1'0' + .5'0' + a / 2 + "s" + 'c'; // end"""
    assert [(kind, text[start:end]) for kind, start, end in lexemes(text)] == [
        ("raw_string", 'u8R"d(x"y)d"'),
        ("raw_string", 'LR"(z)"'),
        ("string", '"(w)"'),  # `xR` is a name, not a raw string's prefix
        ("number", "1'000"),
        ("char", "'0'"),  # `x1` and `.5` begin no number
        ("char", "'0'"),
        ("string", '"s"'),
        ("char", "'c'"),
        ("line_comment", "// end"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "#include <a>\n  #define B \\\n  1\n\t#if X\nint x; #define C\n#endif",
        "x\n#define A \\\n#define B\n# \n#",
        "a # b\r\n\f\v# pragma once\r\n\r# not a line start\n##",
        "no directive at all",
    ],
)
def test_directive_lines_are_what_a_multiline_search_finds(text):
    conditional = re.compile(r"^[ \t]*#[ \t]*(?:if|endif)\b.*", re.M)
    for pattern in (DIRECTIVE, conditional):
        assert [match.span() for match in directive_lines(pattern, text)] == [
            match.span() for match in pattern.finditer(text)
        ]


@pytest.mark.parametrize("quoted", [False, True])
def test_brackets_are_matched_outside_literals(quoted):
    text = "f(a, g(b, c), [d]) + h(\")\", '(', x)" if quoted else "f(a, g(b, c), [d])"
    brackets = Brackets(text)
    assert (brackets.group(1), brackets.group(6), brackets.group(14)) == ((17, [3, 12]), (11, [8]), (16, []))
    if quoted:
        assert brackets.group(22) == (34, [26, 31])


def test_braces_close_where_their_depth_returns_and_unclosed_ones_at_the_end():
    braces = Braces("{ a { b } } } { c")
    assert braces.closing == {0: 10, 4: 8, 14: 17}
    assert list(braces.children(0)) == [(4, 8)]


def test_line_comment_continues_over_a_backslash_newline():
    comment = "// comment \\\n still comment"
    text = "int a; " + comment + "\nint b; \\\n"
    assert strip_comments(text) == "int a; " + blanks(comment) + "\nint b; \\\n"


def test_unterminated_comment_runs_to_the_end():
    assert strip_comments("a /* b\nc") == "a " + blanks("/* b\nc")


DEAD_AND_LIVE = """\
#if 0
REGISTER(dead_if_0);
#else
REGISTER(live_else);
#endif
# if (false) /* never */
REGISTER(dead_false);
#elif !0
REGISTER(live_elif);
#endif
#if 1L
REGISTER(live_if_1);
#elif DEBUG
REGISTER(dead_after_true);
#else
REGISTER(dead_else);
#endif
#ifdef DEBUG
REGISTER(kept_ifdef);
#if 0
#if 1
REGISTER(dead_nested);
#endif
#endif
#endif
#if 0
REGISTER(dead_before_cond);
#elif FEATURE
REGISTER(kept_elif_cond);
#endif
#if 00
REGISTER(dead_unterminated);
"""


def test_dead_preprocessor_branches_are_blanked_with_their_directives():
    stripped = strip_comments(DEAD_AND_LIVE)
    assert len(stripped) == len(DEAD_AND_LIVE) and stripped.count("\n") == DEAD_AND_LIVE.count("\n")
    registered = {call.args[0] for call in find_calls(extract_cpp(DEAD_AND_LIVE), {"REGISTER"})}
    assert registered == {"live_else", "live_elif", "live_if_1", "kept_ifdef", "kept_elif_cond"}
    assert extract_cpp(DEAD_AND_LIVE).stripped == stripped
    kept_directives = [line.strip() for line in stripped.splitlines() if line.strip().startswith("#")]
    assert kept_directives == ["#ifdef DEBUG", "#endif", "#elif FEATURE", "#endif"]


def test_defines_in_dead_branches_are_not_read():
    facts = extract_cpp("#if false\n#define KEY Dead\n#else\n#define KEY Live\n#endif\n")
    assert [(define.name, define.body) for define in facts.defines] == [("KEY", "Live")]


def test_block_calls_carry_their_arguments():
    text = 'BLOCK(ns, m) {\n  m.add("op",\n        make<&f>(), /* note */ 3);\n  other();\n}\n'
    facts = extract_cpp(text)
    (block,) = find_calls(facts, {"BLOCK"})
    assert [(c.line, c.callee, c.literal, c.args) for c in calls_between(facts, *block_span(facts, block))] == [
        (2, "m.add", "op", ('"op"', "make<&f>()", "3")),
        (4, "other", "", ()),
    ]


# --- find_calls ---------------------------------------------------------------


def test_commented_out_calls_are_not_found():
    calls = calls_in(
        """
        // C10_REGISTER_GUARD_IMPL(PrivateUse1, Commented);
        /*
        C10_REGISTER_GUARD_IMPL(PrivateUse1, Blocked);
        */
        const char* s = "C10_REGISTER_GUARD_IMPL(PrivateUse1, Quoted)";
        C10_REGISTER_GUARD_IMPL(PrivateUse1, Real);
        """,
        "C10_REGISTER_GUARD_IMPL",
    )
    assert calls == [CppCall(6, "C10_REGISTER_GUARD_IMPL", ("PrivateUse1", "Real"))]


def test_whitespace_around_name_and_arguments_does_not_matter():
    calls = calls_in(
        """
        C10_REGISTER_GUARD_IMPL ( PrivateUse1 , Impl );
        C10_REGISTER_GUARD_IMPL
          (
            PrivateUse1,
            Other  Impl
          );
        """,
        "C10_REGISTER_GUARD_IMPL",
    )
    assert calls == [
        CppCall(1, "C10_REGISTER_GUARD_IMPL", ("PrivateUse1", "Impl")),
        CppCall(2, "C10_REGISTER_GUARD_IMPL", ("PrivateUse1", "Other Impl")),
    ]


def test_qualified_names_are_matched_on_their_last_component():
    calls = calls_in(
        """
        c10::register_privateuse1_backend("npu");
        ::c10 :: register_privateuse1_backend("tpu");
        register_privateuse1_backend("bare");
        """,
        "register_privateuse1_backend",
    )
    assert [(call.name, call.args) for call in calls] == [
        ("c10::register_privateuse1_backend", ('"npu"',)),
        ("::c10::register_privateuse1_backend", ('"tpu"',)),
        ("register_privateuse1_backend", ('"bare"',)),
    ]


def test_arguments_split_at_top_level_commas_only():
    (impl,) = calls_in('m.impl("add.Tensor", TORCH_FN(add_impl));', "impl")
    assert impl.args == ('"add.Tensor"', "TORCH_FN(add_impl)")
    (call,) = calls_in("""f(a[1, 2], {3, 4}, g(5, 6), "x, (y", ',', std::map<int, int>());""", "f")
    assert call.args == ("a[1, 2]", "{3, 4}", "g(5, 6)", '"x, (y"', "','", "std::map<int", "int>()")


def test_empty_argument_list():
    (call,) = calls_in("init( );", "init")
    assert call.args == ()


def test_nested_calls_are_each_reported():
    calls = calls_in("f(1, f(2, 3));", "f")
    assert [call.args for call in calls] == [("1", "f(2, 3)"), ("2", "3")]


def test_only_whole_identifiers_match():
    calls = calls_in(
        """
        my_register(1);
        register_v2(2);
        obj.register(3);
        register (4);
        """,
        "register",
    )
    assert [call.args for call in calls] == [("3",), ("4",)]


def test_calls_in_a_define_body_name_their_macro():
    calls = calls_in(
        """
        #define REGISTER_BACKEND(name) \\
          c10::register_privateuse1_backend(#name); \\
          static int registered = 0;
        REGISTER_BACKEND(npu)
        """,
        "register_privateuse1_backend",
        "REGISTER_BACKEND",
    )
    assert calls == [
        CppCall(2, "c10::register_privateuse1_backend", ("#name",), in_define="REGISTER_BACKEND"),
        CppCall(4, "REGISTER_BACKEND", ("npu",)),
    ]


def test_a_define_is_not_a_call_of_its_own_name():
    calls = calls_in("#define TWICE(x) TWICE_IMPL(x, x)\n", "TWICE", "TWICE_IMPL")
    assert calls == [CppCall(1, "TWICE_IMPL", ("x", "x"), in_define="TWICE")]


def test_unbalanced_parentheses_skip_only_that_call():
    calls = calls_in("f(1);\nf(2, g(3);\n", "f")
    assert calls == [CppCall(1, "f", ("1",))]


def test_a_call_closed_by_the_wrong_bracket_is_skipped():
    assert calls_in("void g() { f(1 }", "f") == []


def test_no_names_no_calls():
    assert calls_in("f(1);", "absent") == []


# --- find_constructions -------------------------------------------------------


@pytest.mark.parametrize(
    "code, args",
    [
        ("static Reg g(Key::A, new Impl());", ("Key::A", "new Impl()")),
        ("const ns::Reg instance{Key::A, &impl};", ("Key::A", "&impl")),
        ("auto g = ns::Reg{Key::A, new Impl};", ("Key::A", "new Impl")),
        ("static ns::Reg<Key::A> registered(&impl);", ("Key::A", "&impl")),
        ("const Reg<Key::A, 2> braced{&impl};", ("Key::A", "2", "&impl")),
        ("static auto r = Reg<Key::A>(&impl);", ("Key::A", "&impl")),
        ("static Reg MAKE_UNIQUE(g)(Key::A, new Impl());", ("Key::A", "new Impl()")),
        ("static ns::Reg<Impl> registered;", ("Impl",)),
    ],
)
def test_objects_constructed_with_arguments(code, args):
    (found,) = find_constructions(extract_cpp("namespace {\n" + code + "\n}\n"), {"Reg"})
    assert (found.line, found.name.rpartition("::")[2], found.args) == (2, "Reg", args)


@pytest.mark.parametrize(
    "code",
    [
        "Reg(Key::A, &impl);",  # a call: find_calls reports it
        "struct Reg { int a; };",
        "class Reg final : public Base { };",
        "Reg make(int a) { return make_reg(a); }",
        "Reg none();",
        "Reg empty{};",
        "Reg plain;",
        "void use(const Reg& r, Reg* p);",
        "Reg::Reg(Key k) {}",
        'const char* s = "Reg g(1);";',
        "// Reg g(1);",
        "MyReg g(1); RegTwo h(2);",
    ],
)
def test_what_is_not_a_construction(code):
    assert find_constructions(extract_cpp(code + "\n"), {"Reg"}) == []


def test_constructions_in_a_define_body_name_their_macro():
    facts = extract_cpp("#define REGISTER(T) static Reg g_##T(Key::A, new T());\nREGISTER(Impl)\n")
    (found,) = find_constructions(facts, {"Reg"})
    assert (found.line, found.args, found.in_define) == (1, ("Key::A", "new T()"), "REGISTER")


# --- resolve_alias ------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("TPU", "PrivateUse1"),
        ("c10::DeviceType::TPU", "c10::DeviceType::PrivateUse1"),
        ("NPU", "PrivateUse1"),
        ("CUDA", "CUDA"),
        ("c10::DeviceType::CUDA", "c10::DeviceType::CUDA"),
        ("QUALIFIED", "c10::DeviceType::PrivateUse1"),
    ],
)
def test_aliases_are_followed(value, expected):
    aliases = {"TPU": "PrivateUse1", "NPU": "TPU", "QUALIFIED": "c10::DeviceType::NPU"}
    assert resolve_alias(value, aliases.get) == expected


def test_alias_cycles_stop_like_the_preprocessor():
    assert resolve_alias("A", {"A": "B", "B": "A"}.get) == "A"
    assert resolve_alias("SELF", {"SELF": "SELF"}.get) == "SELF"


def test_alias_depth_is_bounded():
    chain = {f"A{index}": f"A{index + 1}" for index in range(20)}
    assert resolve_alias("A0", chain.get, max_depth=3) == "A3"


# --- expand_macros ------------------------------------------------------------

MACROS = """\
#define JOIN_IMPL(a, b) a##b
#define JOIN(a, b) JOIN_IMPL(a, b)
#define DEVICE Slot1
#define GRAD_KEY JOIN(Grad, DEVICE)
#define QUOTE(x) #x
#define TWICE(x) x x
#define BOMB TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(w))))))))))))))))))))
#define PING PONG
#define PONG PING
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("GRAD_KEY", "GradSlot1"),  # arguments are expanded before an inner macro pastes them
        ("ns::Kind::GRAD_KEY", "ns::Kind::GradSlot1"),
        ("JOIN_IMPL(Grad, DEVICE)", "GradDEVICE"),  # pasted operands are not expanded
        ("QUOTE(DEVICE)", '"DEVICE"'),
        ("PING", "PING"),  # a macro is not expanded inside its own expansion
        ("JOIN", "JOIN"),  # a function-like macro without arguments is a plain name
        ('"GRAD_KEY"', '"GRAD_KEY"'),
    ],
)
def test_macros_expand_as_the_preprocessor_expands_them(text, expected):
    defines = {define.name: define for define in extract_cpp(MACROS).defines}
    assert expand_macros(text, defines.get) == expected


def test_an_expansion_that_grows_without_bound_gives_up():
    defines = {define.name: define for define in extract_cpp(MACROS).defines}
    assert expand_macros("BOMB", defines.get) is None


# --- constants and type aliases -------------------------------------------------

CONSTANTS = (
    """\
#include <c10/core/DeviceType.h>
namespace dev {
inline constexpr ::c10::DeviceType kInline = ::c10::DeviceType::Slot1;
static constexpr auto kBraced{c10::DispatchKey::Slot1};
c10::DispatchKey const kEastConst(c10::DispatchKey::GradSlot1);
[[maybe_unused]] constinit Key kAliased = { Key::Slot2 };
struct Config {
 public:
  static const auto kMember = kInline;
};
extern const auto kMacro = JOIN(Grad, DEVICE);
"""
    + "// a long explanation\n" * 40
    + """const auto kAfterComments = Slot1;
constexpr auto kText = "slot";
auto kMutable = c10::DispatchKey::Slot1;
constexpr auto kCompared = kA == kB;
const auto* kPointer = &kOther;
constexpr auto kCall = make_key(1) + 1;
}
using Key = ::c10::DispatchKey;
typedef const c10::DeviceType Device;
"""
)


@pytest.mark.parametrize(
    ("name", "declared", "value"),
    [
        ("kInline", "::c10::DeviceType", "::c10::DeviceType::Slot1"),
        ("kBraced", "auto", "c10::DispatchKey::Slot1"),
        ("kEastConst", "c10::DispatchKey", "c10::DispatchKey::GradSlot1"),
        ("kAliased", "Key", "Key::Slot2"),
        ("kMember", "auto", "kInline"),
        ("kMacro", "auto", "JOIN(Grad, DEVICE)"),
        ("kAfterComments", "auto", "Slot1"),
    ],
)
def test_constants_initialised_with_a_name_in_every_spelling(name, declared, value):
    (constant,) = find_constants(strip_comments(CONSTANTS), name)
    assert (constant.type, constant.value) == (declared, value)


@pytest.mark.parametrize("name", ["kText", "kMutable", "kCompared", "kPointer", "kCall", "kAbsent"])
def test_what_is_not_a_constant_named_by_a_name(name):
    assert find_constants(strip_comments(CONSTANTS), name) == []


def test_a_text_that_writes_a_name_initialised_without_end_is_read_in_bounded_time():
    hostile = "const k = " * 200_000  # no statement ends: every place looks back its full window
    assert find_constants(hostile, "k") == []
    many = "constexpr auto k = x;\n" * 5_000
    assert len(find_constants(many, "k")) == 1_000  # the first places only


def test_type_aliases_with_using_and_typedef():
    assert find_type_aliases(CONSTANTS, "Key") == ["::c10::DispatchKey"]
    assert find_type_aliases(CONSTANTS, "Device") == ["c10::DeviceType"]
    assert find_type_aliases(CONSTANTS, "Config") == []


# --- expand_macro ---------------------------------------------------------------


def test_expand_substitutes_and_stringifies():
    define = CppDefine(1, "REG", ("name",), "c10::register_privateuse1_backend(#name); static int name##_id = 0;")
    assert expand_macro(define, ["npu"]) == 'c10::register_privateuse1_backend("npu"); static int npu_id = 0;'


def test_expand_respects_word_boundaries_and_literals():
    define = CppDefine(1, "M", ("x",), 'x + xx + "x" + x_1')
    assert expand_macro(define, ["7"]) == '7 + xx + "x" + x_1'


def test_expand_stringifies_quotes_and_backslashes():
    define = CppDefine(1, "S", ("x",), "# x")
    assert expand_macro(define, ['"a\\b"']) == '"\\"a\\\\b\\""'


def test_expand_pastes_tokens():
    define = CppDefine(1, "CAT", ("a", "b"), "a ## b ## _t")
    assert expand_macro(define, ["Device", "Guard"]) == "DeviceGuard_t"


def test_expand_variadic_arguments():
    define = CppDefine(1, "CALL", ("f", "..."), "f(__VA_ARGS__)")
    assert expand_macro(define, ["g", "1", "2"]) == "g(1, 2)"
    named = CppDefine(1, "CALL", ("f", "args..."), "f(args)")
    assert expand_macro(named, ["g", "1", "2"]) == "g(1, 2)"


def test_expand_drops_the_comma_before_empty_pasted_variadic_arguments():
    define = CppDefine(1, "LOG", ("fmt", "..."), "log(fmt, ##__VA_ARGS__)")
    assert expand_macro(define, ['"x"']) == 'log("x")'
    assert expand_macro(define, ['"x"', "1"]) == 'log("x",1)'


def test_expand_leaves_missing_arguments_empty_and_object_like_bodies_alone():
    assert expand_macro(CppDefine(1, "P", ("a", "b"), "(a, b)"), ["1"]) == "(1, )"
    assert expand_macro(CppDefine(1, "TPU", None, "PrivateUse1 #x"), ["y"]) == "PrivateUse1 #x"


# --- defines and includes -----------------------------------------------------


def test_defines():
    facts = extract_cpp(
        source(
            """
            #define TPU PrivateUse1
            #define REG(name) \\
              c10::register_privateuse1_backend(#name); \\
              static int x = 0;
            #define EMPTY
              #  define LOG(fmt, ...)   printf(fmt,   __VA_ARGS__) // trailing comment
            #define GNU(args...) f(args)
            #define NOARGS() 1
            #define BROKEN(a,
            #define
            """
        )
    )
    assert facts.defines == (
        CppDefine(1, "TPU", None, "PrivateUse1"),
        CppDefine(2, "REG", ("name",), "c10::register_privateuse1_backend(#name); static int x = 0;"),
        CppDefine(5, "EMPTY", None, ""),
        CppDefine(6, "LOG", ("fmt", "..."), "printf(fmt, __VA_ARGS__)"),
        CppDefine(7, "GNU", ("args...",), "f(args)"),
        CppDefine(8, "NOARGS", (), "1"),
    )


def test_object_like_define_body_may_start_with_a_parenthesis():
    (define,) = extract_cpp("#define ONE (1)\n").defines
    assert define == CppDefine(1, "ONE", None, "(1)")


def test_includes():
    facts = extract_cpp(
        source(
            """
            #include "c10/core/Foo.h"
            #  include <ATen/ATen.h>
            #include MACRO_HEADER
            // #include "commented.h"
            """
        )
    )
    assert facts.includes == (
        CppInclude(1, "c10/core/Foo.h", False),
        CppInclude(2, "ATen/ATen.h", True),
    )


# --- classes ------------------------------------------------------------------

GUARD = """
namespace c10_npu {
struct C10_NPU_API NPUGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType static_type = c10::DeviceType::PrivateUse1;

  NPUGuardImpl() = default;
  explicit NPUGuardImpl(c10::DeviceType t) {
    TORCH_CHECK(t == static_type, "wrong type");
  }
  c10::DeviceType type() const override { return static_type; }
  c10::Device getDevice() const override;
  bool hasPrimaryContext(DeviceIndex device_index) const override {
    return probe(device_index);
  }
  virtual ~NPUGuardImpl() = default;
  int retries_ = compute_default(3);
  std::function<void(int)> callback_;
  C10_DISABLE_COPY_AND_ASSIGN(NPUGuardImpl);
  bool operator==(const NPUGuardImpl& other) const;
  template <typename T>
  T cast(T value) const;

 private:
  struct Slot {
    void reset();
  };
  friend void swap(NPUGuardImpl& a, NPUGuardImpl& b);
  using Callback = void (*)(int);
};
}  // namespace c10_npu
"""


def test_class_with_export_macro_final_and_base():
    guard = class_named(GUARD, "NPUGuardImpl")
    assert guard.line == 2
    assert guard.bases == ("c10::impl::DeviceGuardImplInterface",)
    assert method_names(guard) == ("NPUGuardImpl", "type", "getDevice", "hasPrimaryContext", "~NPUGuardImpl", "cast")


def test_members_carry_the_line_of_their_name_and_the_braces_of_their_body():
    facts = extract_cpp(source(GUARD))
    (guard,) = [cls for cls in facts.classes if cls.name == "NPUGuardImpl"]
    members = [(m.line, m.name, m.body and body_statements(facts.stripped, m.body)) for m in guard.methods]
    assert members == [
        (5, "NPUGuardImpl", None),
        (6, "NPUGuardImpl", ['TORCH_CHECK(t == static_type, "wrong type")']),
        (9, "type", ["return static_type"]),
        (10, "getDevice", None),
        (11, "hasPrimaryContext", ["return probe(device_index)"]),
        (14, "~NPUGuardImpl", None),
        (20, "cast", None),
    ]


def test_overloads_are_each_a_member():
    cls = class_named("struct S {\n  void f(int a) { g(a); }\n  void f(float b);\n};\n", "S")
    assert [(m.line, m.name, m.body is not None) for m in cls.methods] == [(2, "f", True), (3, "f", False)]
    assert method_names(cls) == ("f",)


def test_member_functions_carry_how_they_are_declared():
    code = (
        "struct H : Base {\n"
        "  virtual const Gen& gen(DeviceIndex i) const = 0;\n"
        "  const Gen& gen(DeviceIndex i) { return make(i); }\n"
        "  bool built() const noexcept override { return true; }\n"
        "  H(int n) : n_(n) {}\n"
        "  auto count() const -> std::size_t final;\n"
        "  Device current() -> c10::Device;\n"
        "};\n"
    )
    cls = class_named(code, "H")
    flags = [(m.name, m.virtual, m.const, m.overrides) for m in cls.methods]
    assert flags == [
        ("gen", True, True, False),
        ("gen", False, False, False),
        ("built", False, True, True),
        ("H", False, False, False),
        ("count", False, True, True),
        ("current", False, False, False),
    ]


def test_nested_class_is_its_own_record():
    slot = class_named(GUARD, "Slot")
    assert (slot.line, slot.name, slot.bases, method_names(slot)) == (23, "Slot", (), ("reset",))


def test_bases_drop_access_and_virtual_but_keep_template_arguments():
    cls = class_named("class Foo : public A, protected virtual B<int,  X>, private ns::C {};", "Foo")
    assert cls.bases == ("A", "B<int, X>", "ns::C")


def test_template_class():
    cls = class_named(
        """
        template <typename T, class Alloc = std::allocator<T>>
        class Bar : public Base<T> {
         public:
          void push(T value);
        };
        """,
        "Bar",
    )
    assert (cls.line, cls.name, cls.bases, method_names(cls)) == (2, "Bar", ("Base<T>",), ("push",))


@pytest.mark.parametrize(
    "head",
    [
        'class __attribute__((visibility("default"))) Foo',
        "struct alignas(8) Foo",
        "class [[nodiscard]] TORCH_API Foo final",
        "struct DECLSPEC(dllexport) Foo",
    ],
)
def test_attributes_before_the_name_are_skipped(head):
    (cls,) = extract_cpp(head + " {\n  void run();\n};\n").classes
    assert (cls.name, method_names(cls)) == ("Foo", ("run",))


def test_object_like_macro_before_the_body_is_not_a_name():
    facts = extract_cpp("#define PACKED __attribute__((packed))\ntypedef struct PACKED {\n  int a;\n} Packed;\n")
    assert facts.classes == ()


def test_what_is_not_a_class_definition():
    facts = extract_cpp(
        source(
            """
            class Foo;
            friend class X;
            struct stat st;
            enum class E { A, B };
            enum struct F : int { C };
            void use(struct stat* s) { }
            struct Point make_point(int x) { }
            template <class T> void f(T t) { }
            const char* s = "class Fake {";
            #define DECLARE(name) class name {};
            """
        )
    )
    assert facts.classes == ()


def test_class_line_is_that_of_its_keyword():
    (cls,) = extract_cpp("\n\nclass\nFoo\n:\npublic Bar\n{\n};\n").classes
    assert cls == CppClass(3, "Foo", ("Bar",), ())


def test_unbalanced_class_body_still_yields_the_class():
    (cls,) = extract_cpp("struct Open {\n  void a();\n  void b() {\n").classes
    assert method_names(cls) == ("a", "b")


# --- out-of-class member definitions ----------------------------------------


def test_method_definitions():
    facts = extract_cpp(
        source(
            """
            c10::Device NPUGuardImpl::getDevice() const {
              return c10::Device(c10::DeviceType::PrivateUse1, Helper::index());
            }
            NPUGuardImpl::NPUGuardImpl(int retries)
                : c10::impl::Base(retries), retries_(retries) {}
            NPUGuardImpl::~NPUGuardImpl() = default;
            template <typename T>
            auto Holder<T>::get() const noexcept(true) -> T {
            }
            auto ns::Outer::Inner::make() -> std::pair<int, int> {
            }
            void NPUGuardImpl::declared_only(int);
            int x = Helper::compute(1);
            """
        )
    )
    assert [(d.line, d.cls, d.name) for d in facts.method_defs] == [
        (1, "NPUGuardImpl", "getDevice"),
        (4, "NPUGuardImpl", "NPUGuardImpl"),
        (6, "NPUGuardImpl", "~NPUGuardImpl"),
        (8, "Holder", "get"),
        (10, "Inner", "make"),
    ]
    bodies = [d.body and body_statements(facts.stripped, d.body) for d in facts.method_defs]
    assert bodies == [["return c10::Device(c10::DeviceType::PrivateUse1, Helper::index())"], None, None, [], []]


def test_body_statements_skip_literals_comments_and_preprocessor_lines():
    facts = extract_cpp(
        source(
            """
            void Impl::run(int x) const {
              py::gil_scoped_acquire guard;  // ; not a statement
            #ifdef WITH_LOG
              log("a; b", ';');
            #endif
              if (x) { step(); } else { other(); }
              return;
            }
            """
        )
    )
    (definition,) = facts.method_defs
    assert body_statements(facts.stripped, definition.body) == [
        "py::gil_scoped_acquire guard",
        "log(\"a; b\", ';')",
        "if (x) { step(); }",
        "else { other(); }",
        "return",
    ]


# --- robustness ---------------------------------------------------------------


def test_stripped_text_keeps_offsets():
    text = "a /* x */ b // y\n"
    assert extract_cpp(text).stripped == strip_comments(text)


def test_malformed_input_is_tolerated():
    for text in ["", "\0\0", "class", "struct X : {", "#define", '#include "', "f(((", "}}}{{{", "a::b(", 'R"(']:
        facts = extract_cpp(text)
        find_calls(facts, {"f", "b", "X"})
        find_constructions(facts, {"f", "b", "X"})


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(), st.binary().map(lambda data: data.decode("utf-8", errors="replace"))))
def test_arbitrary_text_never_raises(text):
    stripped = strip_comments(text)
    assert len(stripped) == len(text)
    assert [i for i, char in enumerate(stripped) if char == "\n"] == [i for i, char in enumerate(text) if char == "\n"]
    facts = extract_cpp(text)
    assert facts.stripped == stripped
    find_calls(facts, {"f", "a", "class"})


FRAGMENTS = [*"f(){}[],;:<>'\"/*\\\n x", "::", "#define ", "class ", "struct ", 'R"x(', ')x"', "//", "/*", "*/"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=60))
def test_code_like_fragments_never_raise(pieces):
    text = "".join(pieces)
    facts = extract_cpp(text)
    for call in find_calls(facts, {"f"}) + find_constructions(facts, {"f", "x"}):
        assert 1 <= call.line <= text.count("\n") + 1
    for cls in facts.classes:
        for method in cls.methods:
            if method.body is not None:
                body_statements(facts.stripped, method.body)
    for definition in facts.method_defs:
        if definition.body is not None:
            body_statements(facts.stripped, definition.body)


# --- function bodies ----------------------------------------------------------

FUNCTIONS = """\
namespace vendor {
static void register_on(torch::Library& lib, const c10::DispatchKey key, int /*unused*/) {
  if (key != c10::DispatchKey::CPU) {
    lib.impl("add.Tensor", torch::dispatch(key, add));
  }
  auto later = [&](int x) { return torch::dispatch(key, x); };
}
template <typename T>
auto Registrar<T>::apply(std::map<int, int> table, T&& value) const noexcept(true) -> void {
  call(value);
}
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("x", f); }
struct S { void method(int a[4], unsigned int) { use(a); } };
void declared_only(torch::Library& lib);
}
"""


@pytest.mark.parametrize(
    ("written", "name", "params"),
    [
        ("torch::dispatch(key, add)", "register_on", ("lib", "key", "")),  # inside a control block
        ("torch::dispatch(key, x)", "register_on", ("lib", "key", "")),  # inside a lambda
        ("call(value)", "apply", ("table", "value")),  # qualifiers, trailing return, template arguments
        ('m.impl("x"', "TORCH_LIBRARY_IMPL", ("", "", "")),  # a block macro: no named parameter
        ("use(a)", "method", ("a", "")),
    ],
)
def test_the_function_around_a_call(written, name, params):
    function = FunctionBodies(FUNCTIONS).around(FUNCTIONS.index(written))
    assert (function.name, function.params) == (name, params)
    assert written in function.body


def test_no_function_around_a_namespace_or_class_scope():
    bodies = FunctionBodies(FUNCTIONS)
    assert bodies.around(FUNCTIONS.index("static void")) is None
    assert bodies.around(FUNCTIONS.index("void method")) is None


def test_definitions_by_name_leave_declarations_out():
    bodies = FunctionBodies(FUNCTIONS)
    assert [(f.line, f.params) for f in bodies.defined("register_on")] == [(2, ("lib", "key", ""))]
    assert [f.line for f in bodies.defined("apply")] == [9]
    assert bodies.defined("declared_only") == []


def test_function_bodies_of_deeply_nested_or_unbalanced_text_end():
    text = "void f(int k) " + "{" * 5000 + "g(k);"
    assert FunctionBodies(text).around(len(text) - 3) is None  # deeper than any function is looked for
    assert FunctionBodies("void f(int k) { g(k); ").around(17).params == ("k",)


def test_calls_of_a_block_with_their_arguments_and_not_those_directives_write():
    text = textwrap.dedent("""\
        BLOCK(aten, Slot1, m) {
          m.impl("add.Tensor", torch::dispatch(Key::Grad, TORCH_FN(add)));
        #define ENTRY(op) m.impl(#op, op##_kernel);
        #if defined(WITH_SUB)
          m->impl(NAME("sub.Tensor"), &sub);
        #endif
        }
        after("x");
        """)
    facts = extract_cpp(text)
    (block,) = find_calls(facts, ["BLOCK"])
    found = [(c.line, c.callee, c.literal, c.args) for c in calls_between(facts, *block_span(facts, block))]
    assert found == [
        (2, "m.impl", "add.Tensor", ('"add.Tensor"', "torch::dispatch(Key::Grad, TORCH_FN(add))")),
        (2, "torch::dispatch", "", ("Key::Grad", "TORCH_FN(add)")),
        (2, "TORCH_FN", "", ("add",)),
        (5, "m->impl", "sub.Tensor", ('NAME("sub.Tensor")', "&sub")),  # the literal read through NAME(...)
    ]
    assert block_span(facts, find_calls(facts, ["after"])[0]) is None


def test_a_name_called_is_found_as_a_whole_identifier_before_spaces_and_line_continuations():
    text = "fill(a); refill(b); fill  \\\n  (c); fill\u00a0(d); fill = 1; fill\\x(e); fillx(f);"
    found = [(text[start : start + 4], text[paren]) for start, paren in occurrences(text, "fill")]
    assert found == [("fill", "(")] * 3
    assert [start for start, _paren in occurrences(text, "fill")] == [0, text.index("fill  "), text.index("fill\u00a0")]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("c10::Stream G::get(c10::Device d, int p) const noexcept override {", ("d", "p")),
        ("auto f(const std::map<K, V>& m) -> decltype(m.size()) {", ()),  # a trailing call: not read
        ("void run() {", ()),
        ("Impl::Impl(int x) : y_(x) {", ()),  # an initialiser list, whose names are no parameters
    ],
)
def test_parameters_before_a_body(text, names):
    assert parameters_before(text, len(text) - 1) == names


def test_dead_branches_of_a_text_with_crlf_line_endings():
    text = "int a;\r\n#if 0\r\nint dead;\r\n#else\r\nint live;\r\n#endif\r\n"
    stripped = strip_comments(text)
    assert "dead" not in stripped and "live" in stripped and len(stripped) == len(text)
