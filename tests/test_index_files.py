"""The file index: which files are read, their roles, and what is skipped and why."""

from __future__ import annotations

import subprocess

import pytest
from air.executor import Executor
from air.index import IndexOptions, build_index
from air.index.files import DEFAULT_EXCLUDES, language_of, role_of
from air.index.vendored import Vendoring
from helpers.trees import write_tree


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("torch_foo/device.py", "product"),
        ("test/test_ops.py", "tests"),
        ("torch_foo/tests/helpers.py", "tests"),
        ("testing/_internal/common.py", "tests"),
        ("torch_foo/test_utils.py", "tests"),
        ("csrc/guard_test.cpp", "tests"),
        ("pkg/ops_test.py", "tests"),
        ("conftest.py", "tests"),
        ("README.md", "docs"),
        ("docs/api/guide.py", "docs"),
        ("notes.rst", "docs"),
        ("csrc/latest.cpp", "product"),
        ("python/compile_utest/conv.py", "tests"),  # a directory named with a test's word
        ("unit-tests/copy.py", "tests"),
        ("demo_scripts/vgg.py", "tests"),  # a directory named with an exercise's word
        ("tools/example-models/bert.py", "tests"),
        ("torch_foo/sampler/random.py", "product"),
        ("contest/entry.py", "product"),
        ("latest_tools/run.py", "product"),
        ("backend/test.py", "tests"),  # a file named with a test's word, first or last
        ("backend/torch_tests.py", "tests"),
        ("csrc/guard_unittest.cc", "tests"),
        ("csrc/test_copy.cpp", "tests"),
        ("backend/attest.py", "product"),
        ("backend/testing.md", "docs"),
        (".github/workflows/run-tests.yaml", "product"),
        ("requirements.txt", "product"),
        ("requirements-gpu.txt", "product"),
        ("requirements/base.txt", "product"),
        ("requirements-dev.txt", "tests"),  # the requirements of those who develop and test it
        ("dev_requirements.txt", "tests"),
        ("test-requirements.txt", "tests"),
        ("requirements/tests.txt", "tests"),
        ("ci/requirements.testing.txt", "tests"),
    ],
)
def test_roles(path, role):
    assert role_of(path) == role


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("requirements.txt", "requirements"),
        ("dev-requirements.txt", "requirements"),
        ("requirements/docs.txt", "requirements"),
        ("python/requirements_npu.txt", "requirements"),
        ("notes.txt", "text"),
    ],
)
def test_requirements_files(path, language):
    assert language_of(path) == language


@pytest.mark.parametrize(
    "path",
    [
        "ops.inc",
        "ops.def",
        "kernels.ipp",
        "impl.tpp",
        "impl.txx",
        "impl.tcc",
        "api.hpp",
        "api.hh",
        "api.hxx",
        "api.h++",
        "ops.cxx",
        "ops.c++",
        "ops.cp",
        "k.cu",
        "k.cuh",
        "k.hip",
        "k.mu",
        "k.muh",
        "bridge.mm",
        "ops.cc",
        "mod.ixx",
        "mod.cppm",
        "OPS.CPP",
        "Ops.H",
        "gen/ops.cpp.inc",
    ],
)
def test_every_cpp_spelling_is_cpp(path):
    assert language_of(path) == "cpp"


def test_walk_skips_with_counted_reasons(tmp_path):
    write_tree(
        tmp_path,
        {
            "ok.py": "x = 1\n",
            "bin.cpp": b"\x00\x01\x02 binary",
            "latin.py": b"caf\xe9 = 1\n",
            "big.h": "x" * 200,
            "third_party/kineto/a.cpp": "int a;\n",
            "build/gen.cpp": "int b;\n",
            "image.png": b"\x89PNG",
        },
    )
    (tmp_path / "outside.py").symlink_to("/etc/hostname")
    index = build_index(tmp_path, IndexOptions(max_file_bytes=100))
    assert [f.path for f in index.files] == ["ok.py"]
    reasons = {s.path: s.reason for s in index.skipped}
    assert reasons == {
        "bin.cpp": "binary",
        "latin.py": "not UTF-8",
        "big.h": "too large",
        "outside.py": "symlink leaving the tree",
    }


def test_vendored_files_are_read_on_request(tmp_path):
    write_tree(tmp_path, {"third_party/kineto/a.cpp": "int a;\n"})
    assert build_index(tmp_path, IndexOptions()).files == []
    assert build_index(tmp_path, IndexOptions(include_vendored=True)).files[0].path == "third_party/kineto/a.cpp"


VENDORING = Vendoring(
    directories=("third_party", "3rdparty", "vendor"),
    upstream=("googletest", "kineto", "pybind11"),
    own_prefilter=("LIBRARY_IMPL", "REGISTER_GUARD_IMPL", "privateuseone"),
    own_pattern=r"\b\w*LIBRARY_IMPL\s*\(\s*\w+\s*,\s*PrivateUse1\b|\bC10_REGISTER_GUARD_IMPL\s*\(\s*(?:[\w:]*::)?kXPU\b"
    r"|[\"']privateuseone[\"']",
)


@pytest.mark.parametrize(
    ("files", "read", "skipped"),
    [
        # a kernel library of the backend, registered through a macro of its own, beside an upstream copy
        (
            {
                "3rdparty/tpu-kernels/ops.cu": "TPU_LIBRARY_IMPL(aten, PrivateUse1, m) {}\n",
                "3rdparty/googletest/gtest.cc": "TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {}\n",
            },
            ["3rdparty/tpu-kernels/ops.cu"],
            {"3rdparty/googletest": "vendored copy of googletest, an upstream project"},
        ),
        # a guard for an in-tree type; an upstream fork for the device (kineto_tpu) is still a copy
        (
            {
                "vendor/runtime/guard.cpp": "C10_REGISTER_GUARD_IMPL(c10::DeviceType::kXPU, G);\n",
                "vendor/kineto_tpu/k.cpp": "C10_REGISTER_GUARD_IMPL(kXPU, G);\n",
            },
            ["vendor/runtime/guard.cpp"],
            {"vendor/kineto_tpu": "vendored copy of kineto, an upstream project"},
        ),
        # Python registering on the lowercase key string; the nested upstream copy stays out
        (
            {
                "third_party/tpu_py/ops.py": "import torch\ntorch.library.impl('aten::add.Tensor', 'privateuseone')\n",
                "third_party/tpu_py/third_party/pybind11/p.h": "TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {}\n",
            },
            ["third_party/tpu_py/ops.py"],
            {"third_party/tpu_py/third_party/pybind11": "vendored copy of pybind11, an upstream project"},
        ),
        # a registration only in a comment, or for another key, does not make a directory the backend's own
        (
            {
                "third_party/a/x.cc": "// TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)\nTORCH_LIBRARY_IMPL(aten, CUDA, m) {}\n"
            },
            [],
            {
                "third_party/a": "vendored; nothing in it registers for a device key, and the product imports none "
                "of it as a module of its own"
            },
        ),
    ],
)
def test_vendored_directories_are_read_when_they_are_the_backends_own(tmp_path, files, read, skipped):
    write_tree(tmp_path, files)
    index = build_index(tmp_path, IndexOptions(vendoring=VENDORING))
    assert [source.path for source in index.files] == read
    assert dict(index.skipped_directories) == skipped
    assert [directory for directory, _why in index.vendored_read] == sorted({path.rsplit("/", 1)[0] for path in read})


@pytest.mark.parametrize("spelling", ["from torch_tpu import tpu_plugin\n", "import torch_tpu.tpu_plugin.ops as ops\n"])
def test_a_vendored_package_the_product_imports_as_its_own_is_read(tmp_path, spelling):
    write_tree(
        tmp_path,
        {
            "torch_tpu/__init__.py": spelling,
            "third_party/plugin/tpu_plugin/__init__.py": "def f():\n    pass\n",
            "third_party/other/other_pkg/__init__.py": "x = 1\n",
        },
    )
    index = build_index(tmp_path, IndexOptions(vendoring=VENDORING))
    assert "third_party/plugin/tpu_plugin/__init__.py" in index.by_path
    assert "third_party/other/other_pkg/__init__.py" not in index.by_path
    assert index.vendored_read == (
        (
            "third_party/plugin",
            "the product imports it as a module of its own "
            f"(torch_tpu/__init__.py:1: {'from torch_tpu import tpu_plugin' if 'from' in spelling else 'torch_tpu.tpu_plugin'})",
        ),
    )


def test_excluded_directories_are_listed_with_their_reason(tmp_path):
    write_tree(
        tmp_path,
        {
            "build/lib/x.py": "a = 1\n",
            "src/node_modules/m/i.js": "",
            "gen/out/a.cpp": "int a;\n",
            "src/ok.py": "b = 2\n",
        },
    )
    index = build_index(tmp_path, IndexOptions(excludes=DEFAULT_EXCLUDES + ("gen/**",)))
    assert dict(index.skipped_directories) == {
        "build": "build output",
        "gen": "excluded by gen/**",
        "src/node_modules": "installed JavaScript packages",
    }


def test_git_checkout_uses_git_file_list(tmp_path):
    write_tree(tmp_path, {"tracked.py": "a = 1\n", "ignored.py": "b = 2\n", ".gitignore": "ignored.py\n"})
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "tracked.py", ".gitignore"], check=True)
    paths = [f.path for f in build_index(tmp_path).files]
    assert "tracked.py" in paths and "ignored.py" not in paths


def test_missing_blob_in_git_list_is_skipped(tmp_path):
    write_tree(tmp_path, {"gone.py": "a = 1\n", "here.py": "b = 1\n"})
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    (tmp_path / "gone.py").unlink()
    index = build_index(tmp_path)
    assert [f.path for f in index.files] == ["here.py"]
    assert [(s.path, s.reason) for s in index.skipped] == [("gone.py", "unreadable")]


def test_select_prefilters_literally_and_by_role(tmp_path):
    write_tree(
        tmp_path, {"a.py": "import torch.utils\n", "tests/test_a.py": "torch.utils.x()\n", "docs/a.md": "torch.utils"}
    )
    index = build_index(tmp_path)
    assert [f.path for f in index.select(["utils"])] == ["a.py", "tests/test_a.py"]
    assert [f.path for f in index.select([("utils", "x(")])] == ["tests/test_a.py"]
    assert [f.path for f in index.select(["utils"], roles=["product"])] == ["a.py"]
    assert "docs/a.md" in [f.path for f in index.select(["utils"], include_docs=True)]


def test_the_literal_scan_finds_the_same_files_in_workers_and_here(tmp_path, monkeypatch):
    files = {f"pkg/m{n}.py": "import torch\n" + ("npu_format\n" if n % 3 else "") + ("x" * n) for n in range(40)}
    write_tree(
        tmp_path, {**files, "tests/test_x.py": "torch.npu.synchronize()\n", "a.cpp": "TORCH_LIBRARY_IMPL(aten, X, m)"}
    )
    literals = ["torch", "npu_format", "synchronize", "TORCH_LIBRARY_IMPL", "absent"]

    def scanned(workers: int) -> dict[str, list[str]]:
        index = build_index(tmp_path, executor=Executor(workers))
        index.scan_literals(literals)
        return {literal: sorted(f.path for f in index.select([literal])) for literal in literals}

    monkeypatch.setattr("air.index.PARALLEL_SCAN_BYTES", 0)
    here = scanned(workers=1)
    assert scanned(workers=2) == here
    assert len(here["npu_format"]) == 26 and here["absent"] == [] and here["synchronize"] == ["tests/test_x.py"]


def test_a_selection_that_reads_documentation_finds_a_scanned_literal_there_too(tmp_path):
    write_tree(
        tmp_path,
        {
            "README.md": "Set `TORCH_DEVICE_BACKEND_AUTOLOAD=0` to turn it off.\n",
            "docs/guide.rst": "torch.utils.rename_privateuse1_backend is called on import\n",
            "pkg/__init__.py": "import torch\ntorch.utils.rename_privateuse1_backend('x')\n",
        },
    )
    index = build_index(tmp_path)
    index.scan_literals(["rename_privateuse1_backend", "AUTOLOAD"])
    assert [f.path for f in index.select(["rename_privateuse1_backend"])] == ["pkg/__init__.py"]
    assert sorted(f.path for f in index.select(["rename_privateuse1_backend"], include_docs=True)) == [
        "docs/guide.rst",
        "pkg/__init__.py",
    ]
    assert [f.path for f in index.select(["AUTOLOAD"], include_docs=True)] == ["README.md"]
    assert list(index.select(["AUTOLOAD"])) == []


def test_code_read_ahead_by_workers_is_the_code_read_here(tmp_path, monkeypatch):
    files = {
        "pkg/a.py": "x = 'a # not a comment'  # a comment\ns = '''\n# inside\n'''\n\"\"\"A docstring: torch\"\"\"\n",
        "pkg/b.py": "def f():\n    return 1\n",
        "tests/test_c.py": "# only a comment\nimport torch\n",
        "csrc/k.cpp": "int x; // note\n/* block\n */ int y;\n",
        "csrc/k.h": "#define X 1\n",
        "docs/d.py": "# docs are not read\n",
    }
    write_tree(tmp_path, files)
    here = build_index(tmp_path)
    expected = {
        s.path: (here.code_text(s), here.python_lexical(s).code if s.language == "python" else None) for s in here.files
    }
    monkeypatch.setattr("air.index.PARALLEL_SCAN_BYTES", 0)
    ahead = build_index(tmp_path, executor=Executor(2))
    assert ahead.read_ahead(lambda: "pack") == "pack"
    read = {
        s.path: (ahead.code_text(s), ahead.python_lexical(s).code if s.language == "python" else None)
        for s in ahead.files
    }
    assert read == expected
    assert [ahead.cpp_facts(s) for s in ahead.files if s.path.startswith("csrc/")] == [
        here.cpp_facts(s) for s in here.files if s.path.startswith("csrc/")
    ]
    assert expected["pkg/a.py"][0].startswith("x = 'a # not a comment'" + " " * 13 + "\n")


def test_defines_and_modules(tmp_path):
    write_tree(
        tmp_path,
        {
            "csrc/key.h": "#define TPU PrivateUse1\n#define WRAP(x) f(x)\n",
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "",
            "pkg/sub/mod.py": "",
        },
    )
    index = build_index(tmp_path)
    assert sorted((name, define.body) for name, [(_, define)] in index.defines.items()) == [
        ("TPU", "PrivateUse1"),
        ("WRAP", "f(x)"),
    ]
    assert index.modules["pkg.sub.mod"] == "pkg/sub/mod.py"
    assert index.modules["pkg"] == "pkg/__init__.py"


def test_comment_stripped_code_text(tmp_path):
    write_tree(
        tmp_path, {"a.cpp": "int a; // C10_REGISTER_GUARD_IMPL(PrivateUse1, X);\n", "b.py": "x = 1  # torch.utils\n"}
    )
    index = build_index(tmp_path)
    cpp, py = index.files
    assert "C10_REGISTER" not in index.code_text(cpp)
    assert "torch.utils" not in index.code_text(py)
    assert len(index.code_text(cpp)) == len(cpp.text)


def test_top_level_build_metadata_comes_first(tmp_path):
    write_tree(
        tmp_path,
        {
            "examples/ext/setup.py": 'from setuptools import setup\nsetup(name="an_example", version="9")\n',
            "setup.py": 'from setuptools import setup\nsetup(name="the_backend", version="1.2")\n',
        },
    )
    assert [facts.project_name for _source, facts in build_index(tmp_path).build] == ["the_backend", "an_example"]


def test_absent_submodules_are_listed(tmp_path):
    from air.evaluation import absent_submodules

    (tmp_path / ".gitmodules").write_text(
        '[submodule "kernels"]\n\tpath = kernels\n[submodule "present"]\n\tpath = present\n'
        '[submodule "empty"]\n\tpath = empty\n[submodule "out"]\n\tpath = ../outside\n'
    )
    (tmp_path / "present").mkdir()
    (tmp_path / "present" / "a.cpp").write_text("int a;\n")
    (tmp_path / "empty").mkdir()
    assert absent_submodules(build_index(tmp_path)) == ("empty", "kernels")


def test_a_vendored_directory_whose_search_runs_out_of_time_is_skipped_and_says_so(tmp_path, monkeypatch):
    from air.regex import PatternTimeout

    class Slow:
        def search(self, text):
            raise PatternTimeout("p")

    monkeypatch.setattr("air.index.vendored.compile_guarded", lambda pattern: Slow())
    write_tree(tmp_path, {"third_party/lib/a.cc": "TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {}\n"})
    index = build_index(tmp_path, IndexOptions(vendoring=VENDORING))
    assert index.files == []
    assert index.skipped_directories == (
        ("third_party/lib", "vendored; not read: pattern timed out on third_party/lib/a.cc"),
    )


def test_hash_comments_of_configuration_and_scripts_are_blanked(tmp_path):
    write_tree(
        tmp_path,
        {
            "ci.yml": "on: [push]\n# on: {schedule: [{cron: '0 4 * * 1'}]}\nurl: https://x.org/a#frag  # note\n",
            "run.sh": "echo $#  # arguments\n  # pip install --pre torch\n",
        },
    )
    index = build_index(tmp_path)
    code = {source.path: index.code_text(source) for source in index.files}
    assert code["ci.yml"].splitlines() == ["on: [push]", " " * 39, "url: https://x.org/a#frag" + " " * 8]
    assert code["run.sh"].splitlines() == ["echo $#" + " " * 13, " " * 27]


def test_modules_of_a_namespace_package_are_known_by_their_full_names(tmp_path):
    files = {
        "python/acme/torch_dev/__init__.py": "",
        "python/acme/torch_dev/ops.py": "",
        "my-tools/pkg/__init__.py": "",
    }
    index = build_index(write_tree(tmp_path, files))
    assert index.modules["torch_dev.ops"] == "python/acme/torch_dev/ops.py"  # as its own packages name it
    assert index.modules["acme.torch_dev.ops"] == "python/acme/torch_dev/ops.py"  # acme/ is a namespace package
    assert index.modules["python.acme.torch_dev"] == "python/acme/torch_dev/__init__.py"
    assert not any(name.startswith("my-tools") for name in index.modules)  # no identifier, no module
