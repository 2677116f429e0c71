"""Build switches a default build leaves off: CMake options declared OFF that nothing turns on,
whose `#if` code the C/C++ reader leaves out as the preprocessor would."""

from __future__ import annotations

import pytest
from air.index import build_index
from air.index.cpp import extract_cpp, strip_comments
from air.run import check
from helpers.packs import shipped_pack
from helpers.trees import write_tree

GATED = "#if FAST\nint fast_kernel();\n#else\nint slow_kernel();\n#endif\n"


@pytest.mark.parametrize(
    ("cmake", "extra", "off"),
    [
        ('option(FAST "Fast kernels" OFF)\n', {}, {"FAST": "CMakeLists.txt:1"}),
        ('project(x)\noption(FAST\n       "Fast kernels")\n', {}, {"FAST": "CMakeLists.txt:2"}),
        ('option(FAST "Fast kernels" ON)\n', {}, {}),
        ('option(FAST "Fast kernels" OFF)\nset(FAST ON CACHE BOOL "" FORCE)\n', {}, {}),
        ('option(FAST "Fast kernels" OFF)\n', {"build.sh": "cmake -S . -B out -DFAST=ON\n"}, {}),
        ('option(FAST "Fast kernels" OFF)\n', {"setup.py": 'import os\nos.getenv("FAST", "1")\n'}, {}),
        ('option(FAST "Fast kernels" OFF)\n', {"csrc/config.h": "#define FAST 1\n"}, {}),
        ('option(UNUSED "Nothing tests it" OFF)\n', {}, {}),
    ],
)
def test_an_option_is_off_when_declared_off_and_nothing_turns_it_on(tmp_path, cmake, extra, off):
    root = write_tree(tmp_path, {"CMakeLists.txt": cmake, "csrc/kernels.cpp": GATED, **extra})
    assert dict(build_index(root).build_switches) == off


def test_code_under_a_switch_that_is_off_is_read_as_the_default_build_compiles_it():
    facts = extract_cpp(GATED, off={"FAST"})
    assert "fast_kernel" not in facts.stripped and "slow_kernel" in facts.stripped
    negated = "#if !FAST\nint slow_kernel();\n#elif OTHER\nint other();\n#endif\n"
    assert "slow_kernel" in strip_comments(negated, off={"FAST"}) and "other" not in strip_comments(
        negated, off={"FAST"}
    )
    untouched = "#ifdef FAST\nint defined_as_zero_still_counts();\n#endif\n"  # FAST=0 is defined
    assert "defined_as_zero_still_counts" in extract_cpp(untouched, off={"FAST"}).stripped
    assert "fast_kernel" in extract_cpp(GATED).stripped


def test_the_report_names_the_switches_it_read_as_off(tmp_path):
    root = write_tree(
        tmp_path,
        {"CMakeLists.txt": 'option(FAST "Fast kernels" OFF)\n', "csrc/kernels.cpp": GATED, "pkg/__init__.py": ""},
    )
    assert check(root, shipped_pack()).index.switches_off == ("FAST (CMakeLists.txt:1)",)
