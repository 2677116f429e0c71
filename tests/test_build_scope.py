"""`air.index.build_scope`: the C/C++ sources no build of the tree compiles, decided only when the
build is read whole."""

from __future__ import annotations

import pytest
from air.index.build_scope import unbuilt_sources
from air.index.files import language_of, role_of
from air.index.model import SourceFile

KERNEL = "void kernel() {}\n"


def unbuilt(tree: dict[str, str]) -> list[str]:
    files = [SourceFile(path, role_of(path), language_of(path) or "text", text) for path, text in tree.items()]
    return unbuilt_sources(files)


def with_sources(build: dict[str, str], *sources: str) -> dict[str, str]:
    return {**build, **dict.fromkeys(sources, KERNEL)}


SOURCES = ("csrc/ops/a.cpp", "csrc/ops/b.cpp", "csrc/core/c.cpp", "csrc/dead/d.cpp")


def test_a_cmake_glob_through_a_subdirectory_and_its_variables():
    build = {
        "CMakeLists.txt": "project(x)\nadd_subdirectory(csrc)\n",
        "csrc/CMakeLists.txt": 'set(DIR ${CMAKE_CURRENT_SOURCE_DIR})\nif(ON)\n  file(GLOB OPS CONFIGURE_DEPENDS "${DIR}/ops/*.cpp")\n'
        "endif()\n# file(GLOB DEAD dead/*.cpp)\nlist(APPEND OPS core/c.cpp)\nadd_library(x SHARED ${OPS})\n",
    }
    assert unbuilt(with_sources(build, *SOURCES)) == ["csrc/dead/d.cpp"]


def test_glob_reads_one_directory_and_glob_recurse_every_one_below():
    sources = ("src/a.cpp", "src/deep/b.cpp", "src/deep/er/c.cpp", "lib/e.cpp", "lib/f.cpp", "lib/deep/g.cpp")
    build = {"CMakeLists.txt": "file(GLOB A src/*.cpp)\nfile(GLOB_RECURSE B src/deep/*.cpp)\nfile(GLOB C lib/*.cpp)\n"}
    assert unbuilt(with_sources(build, *sources)) == ["lib/deep/g.cpp"]


def test_an_included_cmake_file_and_the_build_directory():
    build = {
        "CMakeLists.txt": "include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/sources.cmake)\n"
        "add_library(x ${SRCS} ${CMAKE_BINARY_DIR}/gen/$ENV{ARCH}/ops.cpp)\n",
        "cmake/sources.cmake": "set(SRCS csrc/ops/a.cpp csrc/ops/b.cpp csrc/core/c.cpp)\n",
    }
    assert unbuilt(with_sources(build, *SOURCES)) == ["csrc/dead/d.cpp"]


def test_escaped_quotes_leave_the_arguments_that_follow_readable():
    build = {"CMakeLists.txt": 'add_definitions(-DNAME=\\"x\\")\nfile(GLOB S "csrc/ops/*.cpp" csrc/core/*.cpp)\n'}
    assert unbuilt(with_sources(build, *SOURCES)) == ["csrc/dead/d.cpp"]


def test_setup_py_globs_and_names():
    build = {"setup.py": 'import glob\nsources = glob.glob("csrc/**/o*/*.cpp", recursive=True) + ["csrc/core/c.cpp"]\n'}
    assert unbuilt(with_sources(build, *SOURCES)) == ["csrc/dead/d.cpp"]


def test_a_source_another_file_names_is_never_judged():
    build = {
        "CMakeLists.txt": "file(GLOB S csrc/ops/*.cpp csrc/core/*.cpp)\n",
        "csrc/core/c.cpp": '#include "../dead/d.cpp"\n',
    }
    assert unbuilt(with_sources(build, "csrc/ops/a.cpp", "csrc/dead/d.cpp")) == []


@pytest.mark.parametrize(
    "build",
    [
        {
            "CMakeLists.txt": "function(k name)\n  add_library(${name} ${name}.cpp)\nendfunction()\nfile(GLOB S csrc/ops/*.cpp)\n"
        },
        {"CMakeLists.txt": "file(GLOB S $ENV{ROOT}/csrc/*.cpp csrc/ops/*.cpp)\n"},
        {
            "CMakeLists.txt": "file(GLOB S csrc/ops/*.cpp)\n",
            "BUILD.bazel": 'cc_library(srcs = glob(["csrc/**/*.cpp"]))\n',
        },
        {"CMakeLists.txt": "file(GLOB S csrc/ops/*.cpp)\n", "Makefile": "SRCS := $(wildcard csrc/*/*.cpp)\n"},
        {"setup.py": 'import glob, os\nsources = glob.glob(os.path.join("csrc", "*", "*.cpp"))\n'},
        {"README.md": "Build with the vendor's tool.\n"},  # no build read at all
    ],
    ids=["function-parameter", "environment", "bazel", "makefile", "joined-path", "no-build"],
)
def test_nothing_is_decided_when_the_build_cannot_be_read_whole(build):
    assert unbuilt(with_sources(build, *SOURCES)) == []


def test_a_makefile_that_names_no_source_does_not_stop_the_reading():
    build = {"CMakeLists.txt": "file(GLOB S csrc/ops/*.cpp csrc/core/*.cpp)\n", "Makefile": "test:\n\tpytest\n"}
    assert unbuilt(with_sources(build, *SOURCES)) == ["csrc/dead/d.cpp"]


def test_a_reading_that_would_leave_out_most_sources_tells_nothing():
    build = {"CMakeLists.txt": "file(GLOB S csrc/ops/a.cpp)\n"}
    assert unbuilt(with_sources(build, "csrc/ops/a.cpp", "x/b.cpp", "y/c.cpp")) == []


def test_tests_are_never_judged():
    build = {"CMakeLists.txt": "file(GLOB S csrc/ops/*.cpp csrc/core/*.cpp)\n"}
    assert unbuilt(with_sources(build, *SOURCES[:3], "tests/cpp/test_x.cpp")) == []


def test_a_build_naming_more_sources_than_can_be_matched_tells_nothing():
    names = " ".join(f"csrc/ops/k{number}.cpp" for number in range(5000))
    build = {"CMakeLists.txt": f"add_library(x {names} csrc/core/c.cpp)\n"}
    assert unbuilt(with_sources(build, "csrc/ops/k1.cpp", "csrc/core/c.cpp", "csrc/dead/d.cpp")) == []
