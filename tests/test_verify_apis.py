"""`air pack verify-apis`: the framework APIs a pack names, looked up in an installation (the
test environment's torch): imported for Python names, read from its headers for C++ ones."""

from __future__ import annotations

import json
import os
import shutil
import sys
import zipfile

import pytest
from air.runtime.wheel_apis import wheel_answer
from helpers.cli import air
from helpers.packs import TINY_HEADER, write_pack

ROWS = """\
section: device-registration
rows:
  - id: python-names
    item: "1.1.1"
    title: Python names
    priority: 1
    evidence:
      present: {python_call: {name: torch.utils.rename_privateuse1_backend}}
      absent: {python_call: {name: torch.utils.no_such_function_here}}
      spelled: {python_call: {name: [torch.utils.no_such_old_spelling, torch.utils.generate_methods_for_privateuse1_backend]}}
      globbed: {python_call: {name: "torch.testing._internal.common_device_type.dtypesIf*"}}
    score: {2: present}
    remediation: Do it.
    docs: [https://example.org/doc]
  - id: cpp-names
    item: "1.1.2"
    title: C++ names
    priority: 1
    evidence:
      macro: {cpp_macro: {name: TORCH_LIBRARY_IMPL, capture: [NS, KEY]}}
      no_macro: {cpp_macro: {name: NO_SUCH_MACRO_ANYWHERE}}
      guard: {cpp_class: {derives_from: DeviceGuardImplInterface, overrides: [deviceCount, noSuchVirtualMethodHere]}}
    score: {2: macro}
    remediation: Do it.
    docs: [https://example.org/doc]
  - id: old-release
    item: "1.1.3"
    title: Only before 2.0
    priority: 1
    framework_versions: "<2.0"
    evidence:
      gone: {python_call: {name: torch.utils.never_was_here}}
    score: {2: gone}
    remediation: Do it.
    docs: [https://example.org/doc]
  - id: old-but-present
    item: "1.1.4"
    title: Declared before 2.0, still there
    priority: 1
    framework_versions: "<2.0"
    evidence:
      still: {python_call: {name: torch.utils.rename_privateuse1_backend}}
    score: {2: still}
    remediation: Do it.
    docs: [https://example.org/doc]
"""


def test_each_name_is_found_missing_absent_as_declared_or_replaced_by_another(tmp_path):
    pack = write_pack(tmp_path, TINY_HEADER, ROWS)
    done = air("pack", "verify-apis", str(pack), "--torch-env", sys.executable, "--format", "json", timeout=600)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["version"].startswith("2.13.0")
    verdicts = {finding["name"]: (finding["verdict"], finding["rows"]) for finding in data["findings"]}
    assert verdicts == {
        "torch.utils.no_such_function_here": ("missing", ["python-names"]),
        "torch.utils.no_such_old_spelling": ("alternative", ["python-names"]),
        "NO_SUCH_MACRO_ANYWHERE": ("missing", ["cpp-names"]),
        "noSuchVirtualMethodHere": ("missing", ["cpp-names"]),
        "torch.utils.never_was_here": ("expected", ["old-release"]),
    }
    assert data["present_outside_range"] == ["old-but-present"]
    assert data["checked"] == 11


def test_the_markdown_report_and_a_bad_interpreter(tmp_path):
    pack = write_pack(tmp_path, TINY_HEADER, ROWS)
    markdown = air("pack", "verify-apis", str(pack), "--torch-env", sys.executable, timeout=600).stdout
    assert "11 APIs checked: 3 missing, 1 absent as their rows' ranges say, 1 absent where another" in markdown
    assert "- `NO_SUCH_MACRO_ANYWHERE` (cpp name): cpp-names" in markdown
    assert "## Present outside the declared range\n\n- old-but-present: <2.0" in markdown
    refused = air("pack", "verify-apis", str(pack), "--torch-env", str(tmp_path / "no-python"))
    assert refused.returncode == 2 and "no such interpreter" in refused.stderr
    silent = air("pack", "verify-apis", str(pack), "--torch-env", shutil.which("true") or "/bin/true")
    assert silent.returncode == 2 and "the API check gave no answer: is it a Python interpreter?" in silent.stderr


def test_a_name_behind_a_module_that_cannot_import_is_not_checked(tmp_path):
    """A dependency of the module broken in that installation says nothing about the API."""
    rows = ROWS.replace(
        "      present: {python_call: {name: torch.utils.rename_privateuse1_backend}}",
        "      present: {python_call: {name: torch.testing._internal.common_device_type.instantiate_device_type_tests}}",
    )
    pack = write_pack(tmp_path, TINY_HEADER, rows)
    broken = tmp_path / "site"
    broken.mkdir()
    (broken / "expecttest.py").write_text("raise ImportError('expecttest is broken here')\n")
    done = air(
        "pack",
        "verify-apis",
        str(pack),
        "--torch-env",
        sys.executable,
        "--format",
        "json",
        env={"PYTHONPATH": os.pathsep.join(filter(None, (str(broken), os.environ.get("PYTHONPATH"))))},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    unchecked = {f["name"]: f["why"] for f in json.loads(done.stdout)["findings"] if f["verdict"] == "unchecked"}
    module = "torch.testing._internal.common_device_type"
    assert set(unchecked) == {f"{module}.instantiate_device_type_tests", f"{module}.dtypesIf*"}
    assert all("ImportError: expecttest is broken here" in why for why in unchecked.values())


def write_wheel(path, files: dict[str, str], compression: int = zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


FAKE_TORCH = {
    "torch/__init__.py": "import sys\nfrom . import utils\n",
    "torch/utils/__init__.py": "from .backend_registration import *\n\ndef generate_methods_for_privateuse1_backend():\n    pass\n",
    "torch/utils/backend_registration.py": "__all__ = ['rename_privateuse1_backend']\n\ndef rename_privateuse1_backend(name):\n    pass\n",
    "torch/testing/_internal/common_device_type.py": "def dtypesIfCUDA(*types):\n    pass\n",
    "torch/include/torch/library.h": "#define TORCH_LIBRARY_IMPL(ns, k, m) static int m\n",
    "torch/include/c10/core/impl/DeviceGuardImplInterface.h": (
        "struct DeviceGuardImplInterface {\n  virtual DeviceIndex deviceCount() const noexcept = 0;\n};\n"
    ),
    "torch-9.1.0.dist-info/METADATA": "Name: torch\nVersion: 9.1.0\n",
}


def test_a_wheel_of_any_platform_is_read_never_installed(tmp_path):
    pack = write_pack(tmp_path, TINY_HEADER, ROWS)
    wheel = write_wheel(tmp_path / "torch-9.1.0-cp311-cp311-macosx_14_0_arm64.whl", FAKE_TORCH)
    done = air("pack", "verify-apis", str(pack), "--wheel", str(wheel), "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["version"] == "9.1.0"
    verdicts = {finding["name"]: finding["verdict"] for finding in data["findings"]}
    assert verdicts == {
        "torch.utils.no_such_function_here": "missing",
        "torch.utils.no_such_old_spelling": "alternative",
        "NO_SUCH_MACRO_ANYWHERE": "missing",
        "noSuchVirtualMethodHere": "missing",
        "torch.utils.never_was_here": "expected",
    }
    assert data["present_outside_range"] == ["old-but-present"]


def test_verify_apis_takes_one_installation_or_one_wheel(tmp_path):
    pack = write_pack(tmp_path, TINY_HEADER, ROWS)
    (tmp_path / "broken.whl").write_bytes(b"not a zip")
    both = air("pack", "verify-apis", str(pack), "--torch-env", sys.executable, "--wheel", str(tmp_path / "broken.whl"))
    neither = air("pack", "verify-apis", str(pack))
    assert (
        both.returncode == neither.returncode == 2
        and "give one of --framework-env PYTHON or --wheel WHEEL" in both.stderr
    )
    truncated = tmp_path / "truncated.whl"
    truncated.write_bytes(write_wheel(tmp_path / "whole.whl", FAKE_TORCH).read_bytes()[:-200])
    cut = air("pack", "verify-apis", str(pack), "--wheel", str(truncated))
    assert cut.returncode == 2 and "not a readable wheel" in cut.stderr and "Traceback" not in cut.stderr
    corrupt = bytearray(write_wheel(tmp_path / "deflated.whl", FAKE_TORCH, zipfile.ZIP_DEFLATED).read_bytes())
    corrupt[60:90] = b"\xff" * 30  # inside the first member's compressed data
    (tmp_path / "corrupt.whl").write_bytes(bytes(corrupt))
    bad_data = air("pack", "verify-apis", str(pack), "--wheel", str(tmp_path / "corrupt.whl"))
    assert bad_data.returncode == 2 and "not a readable wheel" in bad_data.stderr and "Traceback" not in bad_data.stderr
    broken = air("pack", "verify-apis", str(pack), "--wheel", str(tmp_path / "broken.whl"))
    assert broken.returncode == 2
    assert (
        broken.stderr.strip()
        .splitlines()[-1]
        .startswith(f"air: error: {tmp_path / 'broken.whl'}: not a readable wheel")
    )


MODULES = {
    "pkg/__init__.py": (
        "import sys\nfrom .core import *\nif True:\n    from .extra import later as renamed\n\n"
        "def register(name, module):\n    sys.modules[name] = module  # when called, not on import\n"
    ),
    "pkg/core.py": "class Plain:\n    def method(self): ...\n\nclass Derived(Base):\n    own = 1\n\nvalue = make()\n",
    "pkg/extra.py": "def later(): ...\n",
    "pkg/_compiled.pyi": "def native(x: int) -> int: ...\n",
    "pkg/sub/__init__.py": (
        "from ..core import *\nimport sys\nsys.modules['pkg.sub.alias'] = object()\n"
        "for name in ('one', 'two'):\n    sys.modules[f'pkg.sub.made_{name}'] = object()\n"
    ),
}


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("pkg.Plain", True),  # bound by a module `*`-imported
        ("pkg.Plain.method", True),
        ("pkg.Plain.nothing", False),  # a class with no bases binds only its body
        ("pkg.Derived.own", True),
        ("pkg.Derived.inherited", "pkg.Derived.inherited: not in the class body; it may come from a base"),
        ("pkg.value.attribute", "pkg.value.attribute: an attribute of a value the sources build at run time"),
        ("pkg.renamed", True),  # imported under another name, inside `if`
        ("pkg._compiled.native", True),  # a compiled module's stub
        ("pkg.sub.Plain", True),  # `from ..core import *`
        ("pkg.sub.alias", "pkg.sub.alias: pkg.sub enters modules in sys.modules as it runs"),
        ("pkg.sub.made_one.thing", "pkg.sub.made_one.thing: pkg.sub enters modules in sys.modules as it runs"),
        ("pkg.sub.other", False),  # entered in sys.modules neither by name nor by an f-string's prefix
        ("pkg.__setattr__", True),  # what every module has
        ("pkg.Pl*", True),
        ("pkg.Zz*", False),
        ("pkg.missing", False),
        ("other.thing", False),
    ],
)
def test_a_python_name_resolves_in_a_wheels_sources(tmp_path, name, answer):
    wheel = write_wheel(tmp_path / "pkg-1.0-py3-none-any.whl", MODULES)
    found = wheel_answer(wheel, {"package": "pkg", "headers": "include", "python": [name], "cpp": {}})["python"][name]
    assert found == answer if not isinstance(answer, str) else found.startswith(answer)
