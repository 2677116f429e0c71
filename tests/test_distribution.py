"""Installed distributions: found through metadata in another interpreter, never imported, and
honest about compiled code."""

from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path

import pytest
from helpers.cli import air

CANARY = "open({marker!r}, 'w').write('imported')\nimport torch\ntorch.utils.rename_privateuse1_backend('fake')\n"


def bare_environment(root: Path) -> tuple[Path, str]:
    """The interpreter of a new venv under `root`, without pip, and its site-packages."""
    venv.create(root / "venv", with_pip=False)
    python = root / "venv" / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return python, site


@pytest.fixture(scope="module")
def interpreter(tmp_path_factory):
    """A venv with an installed, mostly compiled distribution `torch_fake` whose import would
    leave a marker file."""
    root = tmp_path_factory.mktemp("dist")
    python, site = bare_environment(root)
    package = os.path.join(site, "torch_fake")
    info = os.path.join(site, "torch_fake-1.2.3.dist-info")
    os.makedirs(package)
    os.makedirs(info)
    marker = str(root / "imported")
    files = {
        "torch_fake/__init__.py": CANARY.format(marker=marker),
        "torch_fake/_C.cpython-311-x86_64-linux-gnu.so": "\0" * 200_000,
        "torch_fake-1.2.3.dist-info/METADATA": "Metadata-Version: 2.1\nName: torch_fake\nVersion: 1.2.3\n",
    }
    for relative, text in files.items():
        with open(os.path.join(site, relative), "w") as handle:
            handle.write(text)
    record = "".join(f"{relative},,\n" for relative in files) + "torch_fake-1.2.3.dist-info/RECORD,,\n"
    with open(os.path.join(info, "RECORD"), "w") as handle:
        handle.write(record)
    with open(os.path.join(site, "zz_startup.pth"), "w") as handle:  # site runs it at every start-up
        handle.write(f"import os; open({str(root / 'started')!r}, 'w').close()\n")
    return python, root / "imported"


def test_binary_distribution_is_checked_honestly_and_never_imported(interpreter):
    python, marker = interpreter
    result = air(
        "check", "-q", "--no-cache", "--dist", "fake", "--python", str(python), "--format", "json", "--output", "-"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["backend"]["source"]["kind"] == "binary dist"
    assert (report["backend"]["name"], report["backend"]["version"]) == ("torch_fake", "1.2.3")
    rows = {row["id"]: row for row in report["rows"]}
    assert rows["device-rename-pu1"]["points"] == 2  # the Python part still counts
    for row in ("guard-register-pu1", "hook-is-available"):  # a Python spelling too, but none found
        assert rows[row]["outcome"] == "unknown"
        assert rows[row]["reason"].startswith("binary distribution: source not available")
    assert not marker.exists()


def test_the_other_interpreter_runs_no_startup_code_of_its_environment(interpreter, tmp_path):
    python, marker = interpreter
    result = air(
        "check",
        "-q",
        "--no-cache",
        "--dist",
        "fake",
        "--python",
        str(python),
        "--format",
        "json",
        "--output",
        str(tmp_path / "report.json"),
    )
    assert result.returncode == 0, result.stderr
    assert not (marker.parent / "started").exists()  # the environment's .pth file never ran


def test_python_without_dist_is_a_usage_error(interpreter):
    python, _marker = interpreter
    result = air("check", ".", "--python", str(python))
    assert result.returncode == 2
    assert "--python applies only with --dist" in result.stderr


def test_missing_distribution_is_one_line(interpreter):
    python, _marker = interpreter
    result = air("check", "--dist", "nothing-here", "--python", str(python))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert (
        "no installed distribution named nothing-here, torch_nothing-here, torch-nothing-here, "
        "pytorch_nothing-here, pytorch-nothing-here"
    ) in result.stderr


def test_target_and_dist_are_exclusive():
    assert air("check", ".", "--dist", "x").returncode == 2
    assert air("check").returncode == 2


def test_a_bare_name_resolves_to_an_installed_distribution():
    result = air("check", "-q", "--no-cache", "click", "--format", "json", "--output", "-")
    assert result.returncode == 0, result.stderr
    backend = json.loads(result.stdout)["backend"]
    assert (backend["source"]["kind"], backend["name"]) == ("dist", "click")


def test_an_unknown_bare_name_says_what_was_tried():
    result = air("check", "no_such_backend_anywhere")
    assert result.returncode == 2
    assert (
        "not a directory, not an installed distribution (no_such_backend_anywhere, "
        "torch_no_such_backend_anywhere, torch-no_such_backend_anywhere, pytorch_no_such_backend_anywhere, "
        "pytorch-no_such_backend_anywhere), not a git URL, "
        "and no known backend of that name"
    ) in result.stderr


@pytest.mark.parametrize("named", ["Name: {outside}\n", "Name: ../../escaped\n", ""])
def test_a_distribution_named_like_a_path_or_not_named_is_refused(tmp_path, named):
    """The tree is named after the distribution: a name that is a path would put it, and the
    files copied into it, anywhere."""
    python, site = bare_environment(tmp_path)
    outside = tmp_path / "elsewhere"
    info = os.path.join(site, "torch_named-1.0.dist-info")
    os.makedirs(os.path.join(site, "torch_named"))
    os.makedirs(info)
    with open(os.path.join(site, "torch_named", "sitecustomize.py"), "w") as handle:
        handle.write("print('ran')\n")
    with open(os.path.join(info, "METADATA"), "w") as handle:
        handle.write("Metadata-Version: 2.1\n" + named.format(outside=outside) + "Version: 1.0\n")
    with open(os.path.join(info, "RECORD"), "w") as handle:
        handle.write("torch_named/sitecustomize.py,,\ntorch_named-1.0.dist-info/METADATA,,\n")
    report = str(tmp_path / "r.md")
    result = air(
        "check", "--no-cache", "--dist", "named", "--python", str(python), "--format", "markdown", "--output", report
    )
    assert result.returncode == 2, result.stderr
    assert "names no valid distribution" in result.stderr and result.stderr.strip().count("\n") == 0
    assert not outside.exists()
