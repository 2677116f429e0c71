from textwrap import dedent

import pytest
from air.index.build import (
    extract_pyproject,
    extract_requirements,
    extract_setup_cfg,
    extract_setup_py,
    merge_build_facts,
)
from air.index.model import BuildFacts, EntryPoint, Requirement
from hypothesis import given, settings
from hypothesis import strategies as st

EXTRACTORS = [extract_setup_py, extract_pyproject, extract_setup_cfg, extract_requirements]


# --- setup.py ---------------------------------------------------------------


def test_setup_py_reads_literals_and_module_level_names():
    facts = extract_setup_py(
        dedent(
            """\
            from setuptools import setup

            VERSION = "2.1.0"
            requirements = ["torch>=2.1,<2.5", "numpy"]
            requirements += ["pyyaml; python_version>'3'"]
            entry_points = {
                "torch.backends": [
                    "foo = torch_foo:_autoload",
                ],
            }

            setup(
                name="torch_foo",
                version=VERSION,
                install_requires=requirements + ["Typing_Extensions == 4.0"],
                entry_points=entry_points,
            )
            """
        )
    )
    assert facts == BuildFacts(
        project_name="torch_foo",
        version="2.1.0",
        entry_points=(EntryPoint("torch.backends", "foo", "torch_foo:_autoload", 8),),
        requirements=(
            Requirement("torch", ">=2.1,<2.5", 4),
            Requirement("numpy", "", 4),
            Requirement("pyyaml", "", 5),
            Requirement("typing-extensions", "==4.0", 15),
        ),
    )


def test_setup_py_reads_keyword_dicts_and_ini_entry_points():
    facts = extract_setup_py(
        dedent(
            '''\
            import setuptools

            options = dict(name="torch-foo", install_requires=["torch == 2.4.0"])

            setuptools.setup(
                version=get_version(),
                entry_points="""
            [console_scripts]
            foo = torch_foo.cli:main [cli]
            """,
                **options,
            )
            '''
        )
    )
    assert facts.project_name == "torch-foo"
    assert facts.version is None
    assert facts.entry_points == (EntryPoint("console_scripts", "foo", "torch_foo.cli:main", 9),)
    assert facts.requirements == (Requirement("torch", "==2.4.0", 3),)


def test_setup_py_with_side_effects_is_only_parsed(tmp_path):
    marker = tmp_path / "executed"
    facts = extract_setup_py(
        dedent(
            f"""\
            from setuptools import setup
            open({str(marker)!r}, "w").write("ran")
            setup(name="side_effects", entry_points={{"torch.backends": "foo = pkg:load"}})
            """
        )
    )
    assert not marker.exists()
    assert facts.project_name == "side_effects"
    assert facts.entry_points == (EntryPoint("torch.backends", "foo", "pkg:load", 3),)


def test_setup_py_without_a_setup_call_is_empty():
    assert extract_setup_py("print('hello')\n") == BuildFacts()


def test_setup_py_syntax_error_is_reported():
    facts = extract_setup_py("setup(name='x'\n")
    assert facts.error is not None and facts.error.startswith("line 1:")


@pytest.mark.parametrize(
    ("seed", "operator", "version", "version_file"),
    [
        ("v0 = unknown()", "+", "v99", None),  # nothing known: each link evaluated once, not 2**99 times
        ("v0 = 'x'", "+", "v99", None),  # a string doubled 99 times: too large to mean anything
        ("v0 = Path(__file__).parent", "/", "(v99 / 'VERSION').read_text()", "VERSION"),  # setup.py's folder
    ],
)
def test_setup_py_values_built_from_each_other_are_worked_out_once(seed, operator, version, version_file):
    chain = "".join(f"v{i} = v{i - 1} {operator} v{i - 1}\n" for i in range(1, 100))
    facts = extract_setup_py(f"from pathlib import Path\n{seed}\n{chain}setup(name='pkg', version={version})\n")
    assert (facts.project_name, facts.version, facts.version_file) == ("pkg", None, version_file)


# --- pyproject.toml ---------------------------------------------------------


def test_pyproject_project_table():
    facts = extract_pyproject(
        dedent(
            """\
            [project]
            name = "torch-foo"
            version = "0.3.0"
            dependencies = [
                "torch>=2.1",
                "numpy",
            ]

            [project.scripts]
            foo-cli = "torch_foo.cli:main"

            [project.entry-points."torch.backends"]
            foo = "torch_foo:_autoload"
            """
        )
    )
    assert facts == BuildFacts(
        project_name="torch-foo",
        version="0.3.0",
        entry_points=(
            EntryPoint("console_scripts", "foo-cli", "torch_foo.cli:main", 10),
            EntryPoint("torch.backends", "foo", "torch_foo:_autoload", 13),
        ),
        requirements=(Requirement("torch", ">=2.1", 5), Requirement("numpy", "", 6)),
    )


def test_pyproject_poetry_table():
    facts = extract_pyproject(
        dedent(
            """\
            [tool.poetry]
            name = "torch-foo"
            version = "0.1.0"

            [tool.poetry.dependencies]
            python = "^3.10"
            torch = "^2.1"
            numpy = { version = ">=1.24", optional = true }

            [tool.poetry.plugins."torch.backends"]
            foo = "torch_foo:_autoload"
            """
        )
    )
    assert facts.project_name == "torch-foo" and facts.version == "0.1.0"
    assert facts.requirements == (Requirement("torch", "^2.1", 7), Requirement("numpy", ">=1.24", 8))
    assert facts.entry_points == (EntryPoint("torch.backends", "foo", "torch_foo:_autoload", 11),)


def test_pyproject_with_wrong_value_types_is_tolerated():
    facts = extract_pyproject('project = { name = 3, dependencies = "torch", entry-points = 1, scripts = [] }\n')
    assert facts == BuildFacts()


# --- setup.cfg --------------------------------------------------------------


def test_setup_cfg():
    facts = extract_setup_cfg(
        dedent(
            """\
            [metadata]
            name = torch_foo
            version = attr: torch_foo.__version__

            [options]
            install_requires =
                torch>=2.1
                numpy  # any version

            [options.entry_points]
            torch.backends =
                foo = torch_foo:_autoload
            """
        )
    )
    assert facts == BuildFacts(
        project_name="torch_foo",
        entry_points=(EntryPoint("torch.backends", "foo", "torch_foo:_autoload", 12),),
        requirements=(Requirement("torch", ">=2.1", 7), Requirement("numpy", "", 8)),
    )


# --- declared packages --------------------------------------------------------


@pytest.mark.parametrize(
    ("extract", "text", "packages"),
    [
        (
            extract_setup_py,
            "from setuptools import setup\nsetup(name='a', packages=['x', 'x.y'], py_modules=['m'])\n",
            ("x", "x.y", "m"),
        ),
        (
            extract_setup_py,
            "import setuptools as st\nPKGS = ['z']\n"
            "st.setup(name='a', packages=st.find_packages(include=['x*']) + PKGS)\n",
            ("x*", "z"),
        ),
        (
            extract_setup_py,
            "from setuptools import setup, find_packages\nsetup(name='a', packages=find_packages())\n",
            None,
        ),
        (extract_setup_py, "from setuptools import setup\nsetup(name='a', packages='x')\n", None),
        (
            extract_pyproject,
            "[project]\nname = 'a'\n[tool.setuptools]\npackages = ['x']\npy-modules = ['m']\n",
            ("x", "m"),
        ),
        (extract_pyproject, "[project]\nname = 'a'\n[tool.setuptools.packages.find]\ninclude = ['x*']\n", ("x*",)),
        (
            extract_pyproject,
            "[tool.poetry]\nname = 'a'\npackages = [{include = 'x'}, {include = 'y', from = 'src'}]\n",
            ("x", "y"),
        ),
        (extract_pyproject, "[project]\nname = 'a'\n[tool.hatch.build.targets.wheel]\npackages = ['src/x']\n", ("x",)),
        (extract_pyproject, "[project]\nname = 'a'\n", None),
        (
            extract_setup_cfg,
            "[metadata]\nname = a\n[options]\npackages = x, x.y\npy_modules =\n    m\n",
            ("x", "x.y", "m"),
        ),
        (
            extract_setup_cfg,
            "[metadata]\nname = a\n[options]\npackages = find:\n[options.packages.find]\ninclude = x*\n",
            ("x*",),
        ),
        (extract_setup_cfg, "[metadata]\nname = a\n[options]\npackages = find:\n", None),
    ],
)
def test_declared_packages(extract, text, packages):
    assert extract(text).packages == packages


# --- requirements files -----------------------------------------------------


def test_requirements_skip_comments_options_and_urls():
    facts = extract_requirements(
        dedent(
            """\
            # runtime
            -r base.txt
            --index-url https://example.invalid/simple
            -e .

            torch==2.4.0  # pinned
            numpy; python_version > "3"
            PyYAML[libyaml] >= 6.0 --hash=sha256:0123
            https://example.invalid/pkg.whl
            torch_foo-1.0-py3-none-any.whl
            """
        )
    )
    assert facts.requirements == (
        Requirement("torch", "==2.4.0", 6),
        Requirement("numpy", "", 7),
        Requirement("pyyaml", ">=6.0", 8),
    )


def test_leading_byte_order_mark_is_ignored():
    assert extract_setup_cfg("\ufeff[metadata]\nname = torch_foo\n").project_name == "torch_foo"
    assert extract_pyproject('\ufeff[project]\nname = "torch-foo"\n').project_name == "torch-foo"
    assert extract_requirements("\ufefftorch\n").requirements == (Requirement("torch", "", 1),)


# --- merging and failures ---------------------------------------------------


def test_merge_keeps_first_name_and_version_and_joins_errors():
    merged = merge_build_facts(
        [
            BuildFacts(error="bad toml"),
            BuildFacts(project_name="a", requirements=(Requirement("torch", "", 1),)),
            BuildFacts(project_name="b", version="1.0", requirements=(Requirement("numpy", "", 2),), error="bad cfg"),
        ]
    )
    assert merged == BuildFacts(
        project_name="a",
        version="1.0",
        requirements=(Requirement("torch", "", 1), Requirement("numpy", "", 2)),
        error="bad toml; bad cfg",
    )


@pytest.mark.parametrize(
    "extract, text",
    [
        (extract_setup_py, "setup(\0)"),
        (extract_setup_py, "x = " + "(" * 300 + ")" * 300),
        (extract_pyproject, "[project\nname = "),
        (extract_setup_cfg, "no section header\n"),
        (extract_setup_cfg, "[options]\n[options]\nx\n"),
    ],
)
def test_malformed_input_is_an_error_not_an_exception(extract, text):
    facts = extract(text)
    assert facts.error and "\n" not in facts.error


@pytest.mark.parametrize("extract", EXTRACTORS)
@settings(max_examples=200, deadline=None)
@given(text=st.text())
def test_arbitrary_text_never_raises(extract, text):
    assert isinstance(extract(text), BuildFacts)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "X = ['torch>=2']\n",
                "X += Y\n",
                "Y = X + X\n",
                "E = {'g': X, **E}\n",
                "E = dict(g='a = b:c')\n",
                "setup(name=X, version=1.0, install_requires=X, entry_points=E, **E)\n",
                "setup(entry_points='[g]\\nx = y')\n",
            ]
        )
    )
)
def test_setup_py_like_text_never_raises(lines):
    assert isinstance(extract_setup_py("".join(lines)), BuildFacts)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "[project]\n",
                "[project.scripts]\n",
                '[project.entry-points."g"]\n',
                "[tool.poetry.dependencies]\n",
                "[tool.poetry.scripts]\n",
                'name = "x"\n',
                "version = 3\n",
                'dependencies = ["torch", 1, {}]\n',
                "x = { callable = 1 }\n",
                'y = "a:b"\n',
                "z = [1]\n",
            ]
        )
    )
)
def test_pyproject_like_text_never_raises(lines):
    assert isinstance(extract_pyproject("".join(lines)), BuildFacts)
