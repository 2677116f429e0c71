"""The backend's name, version and targeted framework release: which build file of a tree with
several distributions describes the product, and which file pins its framework."""

from __future__ import annotations

from pathlib import Path

import pytest
from air import regex
from air.index import build_index
from air.index.distributions import distributions
from air.report.json_report import to_dict
from air.report.markdown import render_markdown
from air.run import check
from air.scoring.backend import declared_release
from helpers.packs import shipped_pack
from helpers.reports import REPORT_VALIDATOR
from helpers.trees import write_tree

COMPILER = "def graph_compiler(gm, example_inputs):\n    return gm\n"
BULK = "".join(f"def lowering_{i}(node):\n    return node\n\n\n" for i in range(30))


def setup_py(name: str, version: str, *requirements: str) -> str:
    return f"from setuptools import setup\nsetup(name={name!r}, version={version!r}, install_requires={list(requirements)!r})\n"


def monorepo(root: Path) -> Path:
    """A small sibling whose build file sorts first, and the product, which holds most code."""
    return write_tree(
        root,
        {
            "addon/setup.py": setup_py("addon", "9.0", "torch>=2.9"),
            "addon/addon/__init__.py": COMPILER,
            "python/setup.py": setup_py("torch-mono", "3.1"),
            "python/requirements.txt": "torch>=2.3,<2.5\n",
            "python/torch_mono/__init__.py": COMPILER + BULK,
        },
    )


def test_a_distribution_is_a_directory_of_build_files_that_name_a_project(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "torch-pair"\ndynamic = ["version"]\n',
            "setup.py": setup_py("torch-pair", "1.2"),
            "requirements.txt": "torch==2.6.0\n",
            "torch_pair/__init__.py": "x = 1\ny = 2\n",
            "tools/gen/setup.py": setup_py("pair-gen", "0.1"),
            "tools/gen/gen.py": "z = 3\n",
            "ci/requirements.txt": "pytest\n",
        },
    )
    index = build_index(root)
    top, tool = distributions(index.build, index.files)
    assert (top.directory, top.named_by) == ("", "pyproject.toml")
    assert top.build_files == ("pyproject.toml", "requirements.txt", "setup.py")
    assert (top.facts.project_name, top.facts.version) == ("torch-pair", "1.2")
    assert (tool.directory, tool.facts.project_name) == ("tools/gen", "pair-gen")
    assert (top.code_lines, tool.code_lines) == (4, 3)  # the tool's code is its own, not the top level's


def test_the_distribution_holding_most_code_names_the_backend_and_pins_its_framework(tmp_path, pack):
    backend = check(monorepo(tmp_path), pack).backend
    assert (backend.name, backend.version, backend.metadata_file) == ("torch-mono", "3.1", "python/setup.py")
    assert (backend.target_framework_version, backend.pin_file) == (">=2.3,<2.5", "python/requirements.txt")


def test_another_distributions_pin_is_not_the_products(tmp_path, pack):
    root = monorepo(tmp_path)
    (root / "python/requirements.txt").unlink()
    backend = check(root, pack).backend
    assert (backend.name, backend.target_framework_version, backend.pin_file) == ("torch-mono", None, None)


def test_a_pin_beside_an_ancestor_of_the_product_counts(tmp_path, pack):
    root = monorepo(tmp_path)
    (root / "python/requirements.txt").unlink()
    (root / "requirements.txt").write_text("torch==2.4.1\n")
    backend = check(root, pack).backend
    assert (backend.target_framework_version, backend.pin_file) == ("==2.4.1", "requirements.txt")


def test_a_given_framework_version_has_no_pin_file(tmp_path, pack):
    backend = check(monorepo(tmp_path), pack, framework_version="2.7").backend
    assert (backend.target_framework_version, backend.pin_file) == ("2.7", None)


def test_the_report_says_which_files_the_metadata_came_from(tmp_path, pack):
    report = check(monorepo(tmp_path), pack)
    markdown = render_markdown(report)
    assert "| Build metadata | `python/setup.py` |" in markdown
    assert "| PyTorch version targeted | \\>=2.3,\\<2.5 (in `python/requirements.txt`) |" in markdown
    data = to_dict(report)
    assert (data["backend"]["metadata_file"], data["backend"]["pin_file"]) == (
        "python/setup.py",
        "python/requirements.txt",
    )
    assert REPORT_VALIDATOR.validate(data) is None


def test_a_backend_without_build_metadata_says_so(tmp_path, pack):
    root = write_tree(tmp_path / "bare", {"bare/__init__.py": COMPILER})
    report = check(root, pack)
    assert report.backend.metadata_file is None
    assert "| Build metadata | — |" in render_markdown(report)


def declared(tmp_path, files: dict[str, str]) -> tuple[str, str] | None:
    return declared_release(build_index(write_tree(tmp_path, files)), shipped_pack().framework.release_declarations)


def test_the_strongest_declaration_of_the_release_wins_over_weaker_ones(tmp_path):
    found = declared(
        tmp_path,
        {
            "README.md": "pip install torch==2.6.0\n",
            "patches/version.patch": "+os.environ['PYTORCH_BUILD_VERSION'] = '2.4.0'\n",
        },
    )
    assert found == ("2.4.0", "patches/version.patch")


def test_declarations_of_different_releases_leave_the_target_unknown(tmp_path):
    files = {"README.md": "For 2.4: pip install torch==2.4.1\n", "docs/old.md": "pip3 install torch==2.2.0\n"}
    assert declared(tmp_path, files) is None
    files["docs/old.md"] = "pip3 install torch==2.4.0+cpu\n"  # the same minor release
    assert declared(tmp_path / "again", files) == ("2.4.1", "README.md")


def test_a_commented_out_declaration_declares_nothing(tmp_path):
    files = {
        ".github/workflows/ci.yml": "steps:\n  - run: |\n      # pip install torch==2.3.0\n      pip install torch==2.6.0\n",
        "scripts/setup.sh": "#export PYTORCH_BUILD_VERSION=2.1.0\n",
    }
    assert declared(tmp_path, files) == ("2.6.0", ".github/workflows/ci.yml")


def test_a_clone_of_another_repository_at_a_tag_declares_nothing(tmp_path):
    files = {"build.sh": "git clone -b v1.2.0 https://github.com/vendor/runtime.git && echo pytorch\n"}
    assert declared(tmp_path, files) is None


def test_a_file_the_declaration_cannot_read_in_time_declares_nothing(tmp_path, monkeypatch):
    def timed_out(self, text):
        raise regex.PatternTimeout(self.pattern)

    files = {"build.sh": "export PYTORCH_BUILD_VERSION=2.4.0\n", "docs/install.md": "pip install torch==2.4.1\n"}
    monkeypatch.setattr(regex.GuardedPattern, "finditer", timed_out)
    assert declared(tmp_path, files) is None


@pytest.mark.parametrize(
    ("script", "release"),
    [
        ('TAG=v2.7.1\nPYTORCH_BUILD_VERSION="${TAG:1}"\n', "2.7.1"),
        ("export REF='v2.5.0'\ngit clone -b $REF https://github.com/pytorch/pytorch\n", "2.5.0"),
        ("env:\n  TORCH: 2.6.1\nsteps:\n  - run: pip install torch==${TORCH}\n", "2.6.1"),
    ],
)
def test_a_release_named_through_a_shell_variable_the_file_sets(tmp_path, script, release):
    assert declared(tmp_path, {"ci/build.sh": script}) == (release, "ci/build.sh")


def test_a_variable_the_file_does_not_set_to_a_release_declares_nothing(tmp_path):
    unset = "git clone -b ${BRANCH} https://github.com/pytorch/pytorch\n"
    assert declared(tmp_path, {"build.sh": unset}) is None
    not_a_release = "BRANCH=main\ngit clone -b ${BRANCH} https://github.com/pytorch/pytorch\n"
    assert declared(tmp_path / "again", {"build.sh": not_a_release}) is None


VERSION_READS = {
    "open, joined to the directory": (
        "import os\nfrom setuptools import setup\n"
        "here = os.path.dirname(os.path.abspath(__file__))\n"
        "__version__ = open(os.path.join(here, 'version.txt')).read().strip()\n"
        "setup(name='torch-vf', version=__version__)\n",
        "version.txt",
    ),
    "a path beside __file__": (
        "from pathlib import Path\nfrom setuptools import setup\n"
        "setup(name='torch-vf', version=(Path(__file__).resolve().parent / 'VERSION').read_text().strip())\n",
        "VERSION",
    ),
    "a relative file, one line read": (
        "import setuptools\nVERSION = open('meta/version.txt').readline().rstrip()\n"
        "setuptools.setup(name='torch-vf', version=VERSION)\n",
        "meta/version.txt",
    ),
}


@pytest.mark.parametrize("spelling", sorted(VERSION_READS))
def test_a_version_the_build_reads_from_a_file_of_the_tree_is_that_file_s_first_line(tmp_path, spelling):
    setup, version_file = VERSION_READS[spelling]
    root = write_tree(
        tmp_path,
        {
            "py/setup.py": setup,
            f"py/{version_file}": "2.4.1\n# released 2026\n",
            "py/torch_vf/__init__.py": COMPILER,
        },
    )
    index = build_index(root)
    (product,) = distributions(index.build, index.files)
    assert (product.facts.project_name, product.facts.version) == ("torch-vf", "2.4.1")


def test_a_version_file_outside_the_tree_or_absent_gives_no_version(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup(name='torch-vf', version=open('/etc/hostname').read())\n",
            "sub/setup.py": "from setuptools import setup\nsetup(name='vf-sub', version=open('../../VERSION').read())\n",
            "torch_vf/__init__.py": COMPILER,
        },
    )
    versions = {facts.project_name: facts.version for _source, facts in build_index(root).build}
    assert versions == {"torch-vf": None, "vf-sub": None}
