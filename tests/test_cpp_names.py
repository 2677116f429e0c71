"""Names of C/C++ constants resolved through the tree's definitions, as the using file sees them."""

from __future__ import annotations

from pathlib import Path

import pytest
from air.evidence.base import Context, constraint_holds
from air.index import build_index
from air.index.cpp_names import CppVocabulary
from air.pack.framework import load_framework
from helpers.trees import write_tree


def context_of(root: Path, files: dict[str, str], vocabulary: CppVocabulary | None = None) -> Context:
    return Context(build_index(write_tree(root, files)), {}, cpp=vocabulary or load_framework("pytorch").cpp)


SPELLINGS = {
    "csrc/keys.h": """\
#pragma once
#include <c10/core/DispatchKey.h>
namespace vendor {
using Key = c10::DispatchKey;
typedef c10::DeviceType Device;
namespace dk = c10;

inline constexpr Device kInlineDevice = Device::Slot1;
static constexpr auto kBracedKey{dk::DispatchKey::Slot1};
const c10::DispatchKey kParenKey(Key::AutogradSlot1);
constexpr auto kEnumMember = at::kSlot1;
[[maybe_unused]] constexpr Key kAliasTyped = {kBracedKey};
#define VENDOR_DEVICE Slot1
#define VENDOR_GRAD_KEY C10_CONCATENATE(Autograd, VENDOR_DEVICE)
const auto kFromMacro = c10::DispatchKey::VENDOR_GRAD_KEY;
constexpr int kNotAKey = kBracedKey;
auto kMutable = c10::DispatchKey::Slot1;
}  // namespace vendor
""",
}


@pytest.mark.parametrize(
    ("value", "resolved"),
    [
        ("kInlineDevice", "Device::Slot1"),
        ("vendor::kBracedKey", "vendor::dk::DispatchKey::Slot1"),
        ("kParenKey", "Key::AutogradSlot1"),
        ("kEnumMember", "at::kSlot1"),
        ("kAliasTyped", "dk::DispatchKey::Slot1"),  # a constant of a type alias, initialised with another
        ("c10::DispatchKey::VENDOR_GRAD_KEY", "c10::DispatchKey::AutogradSlot1"),
        ("kFromMacro", "c10::DispatchKey::AutogradSlot1"),
        ("C10_CONCATENATE(Autograd, VENDOR_DEVICE)", "AutogradSlot1"),
        ("kNotAKey", "kNotAKey"),  # an int is not one of the constant types
        ("kMutable", "kMutable"),  # nor is a variable a constant
        ("Unknown", "Unknown"),
        ('"kBracedKey"', '"kBracedKey"'),
    ],
)
def test_every_spelling_of_a_constant_alias(tmp_path, value, resolved):
    context = context_of(tmp_path, {**SPELLINGS, "csrc/use.cpp": '#include "keys.h"\n'})
    assert context.resolve(value, "csrc/use.cpp") == resolved


def test_constant_types_are_data_of_the_framework(tmp_path):
    context = context_of(tmp_path, SPELLINGS, CppVocabulary(frozenset({"Backend"})))
    assert context.resolve("kInlineDevice", "csrc/keys.h") == "kInlineDevice"
    assert context.resolve("kBracedKey", "csrc/keys.h") == "dk::DispatchKey::Slot1"  # `auto` is always a constant
    assert context.resolve("VENDOR_GRAD_KEY", "csrc/keys.h") == "VENDOR_GRAD_KEY"  # no C10_CONCATENATE known


DIVERGING = {
    "a/device.h": "#pragma once\n#define DEVICE_KEY Slot1\nconstexpr auto kKey = c10::DispatchKey::Slot1;\n",
    "b/device.h": "#pragma once\n#define DEVICE_KEY XLA\nconstexpr auto kKey = c10::DispatchKey::XLA;\n",
    "a/ops.cpp": '#include "a/device.h"\nTORCH_LIBRARY_IMPL(aten, DEVICE_KEY, m) {}\n',
    "b/nested.h": '#include "device.h"\n',
    "b/ops.cpp": '#include "nested.h"\nTORCH_LIBRARY_IMPL(aten, DEVICE_KEY, m) {}\n',
    "c/ops.cpp": "TORCH_LIBRARY_IMPL(aten, DEVICE_KEY, m) {}\n",
    "c/own.cpp": '#include "a/device.h"\n#undef DEVICE_KEY\n#define DEVICE_KEY HPU\n',
}


@pytest.mark.parametrize(
    ("path", "key", "kind"),
    [
        ("a/ops.cpp", "Slot1", "its include"),
        ("b/ops.cpp", "XLA", "an include of an include"),
        ("c/own.cpp", "HPU", "its own definition first"),
        ("c/ops.cpp", None, "no definition it sees: unresolved"),
    ],
)
def test_a_name_defined_differently_is_read_through_the_includes(tmp_path, path, key, kind):
    context = context_of(tmp_path, DIVERGING)
    assert context.resolve("DEVICE_KEY", path) == (key or "DEVICE_KEY"), kind


def test_constants_diverging_between_headers(tmp_path):
    context = context_of(tmp_path, DIVERGING)
    assert context.resolve("kKey", "a/ops.cpp") == "c10::DispatchKey::Slot1"
    assert context.resolve("kKey", "b/ops.cpp") == "c10::DispatchKey::XLA"


def test_a_unique_definition_needs_no_include(tmp_path):
    context = context_of(tmp_path, {"include/dev.hpp": "#define MY_DEVICE Slot1\n", "gen/ops.cpp.inc": ""})
    assert context.resolve("MY_DEVICE", "gen/ops.cpp.inc") == "Slot1"


def test_captures_of_other_languages_and_quoted_values_are_left_alone(tmp_path):
    context = context_of(tmp_path, {"csrc/k.h": "#define Slot Slot1\n", "pkg/k.py": "Slot = 1\n"})
    assert context.resolve("Slot", "pkg/k.py") == "Slot"
    assert context.resolve("'Slot'", "csrc/k.h") == "'Slot'"
    assert context.resolve("Slot", "csrc/k.h") == "Slot1"


def test_constraints_see_the_resolved_value(tmp_path):
    context = context_of(tmp_path, SPELLINGS)
    context.symbols = {"grad": ("AutogradSlot1",)}
    assert constraint_holds("kFromMacro", {"symbol": "grad"}, context, "csrc/keys.h")
    assert constraint_holds("kFromMacro", {"matches": "::AutogradSlot1$"}, context, "csrc/keys.h")
    assert constraint_holds("kFromMacro", {"matches": "^kFrom"}, context, "csrc/keys.h")  # as written, too
    assert not constraint_holds("kBracedKey", {"symbol": "grad"}, context, "csrc/keys.h")


def test_cycles_and_self_references_end(tmp_path):
    context = context_of(tmp_path, {"k.h": "#define A B\n#define B A\nconstexpr auto kSelf = kSelf;\n"})
    assert context.resolve("A", "k.h") == "A"
    assert context.resolve("kSelf", "k.h") == "kSelf"


CONDITIONAL = """\
#pragma once
#ifdef VENDOR_FORK_BUILD
constexpr c10::DeviceType kDevice = c10::DeviceType::XLA;
#else
constexpr c10::DeviceType kDevice = c10::DeviceType::Slot1;
#endif
"""


@pytest.mark.parametrize(
    ("elsewhere", "resolved"),
    [
        ({}, "c10::DeviceType::Slot1"),  # no file may define the macro: a build takes the #else
        ({"CMakeLists.txt": 'option(VENDOR_FORK_BUILD "fork" OFF)\n'}, "c10::DeviceType::XLA"),
        ({"csrc/config.h": "#define VENDOR_FORK_BUILD 1\n"}, "c10::DeviceType::XLA"),
    ],
)
def test_a_constant_defined_in_the_branches_of_an_ifdef(tmp_path, elsewhere, resolved):
    context = context_of(tmp_path, {"csrc/device.h": CONDITIONAL, **elsewhere})
    assert context.resolve("kDevice", "csrc/device.h") == resolved


def test_a_tests_definition_counts_outside_the_tests_only_where_included(tmp_path):
    files = {
        "tests/kernel_test.cpp": "#define DEV torch::kCUDA\n",
        "tests/include_test.cpp": '#include "shorthands.h"\n',
        "tests/shorthands.h": "#define SHORT Slot1\n",
        "csrc/ops.cpp": '#include "../tests/shorthands.h"\n',
    }
    context = context_of(tmp_path, files)
    assert context.resolve("DEV", "csrc/ops.cpp") == "DEV"  # the product does not include it
    assert context.resolve("DEV", "tests/include_test.cpp") == "torch::kCUDA"
    assert context.resolve("SHORT", "csrc/ops.cpp") == "Slot1"
