"""The canary: every entry point of a backend would leave a marker file if it ever ran. Checking
it, from a directory or as an sdist, must leave none."""

from __future__ import annotations

import json
import os
import tarfile

from helpers.cli import air

ENTRY_POINTS = {
    "setup.py": "from setuptools import setup\nsetup(name='torch_canary', version='0.1')\n",
    "torch_canary/__init__.py": "import torch\ntorch.utils.rename_privateuse1_backend('canary')\n",
    "torch_canary/__main__.py": "",
    "tests/conftest.py": "",
    "conftest.py": "",
    "noxfile.py": "",
    "build.py": "",
}


def canary_tree(root, marker):
    for path, body in ENTRY_POINTS.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"open({str(marker)!r} + {path!r}.replace('/', '_'), 'w').write('ran')\n{body}")
    (root / "build.sh").write_text(f"#!/bin/sh\ntouch {marker}build.sh\n")
    (root / "build.sh").chmod(0o755)
    (root / "CMakeLists.txt").write_text(
        f'cmake_minimum_required(VERSION 3.18)\nexecute_process(COMMAND touch "{marker}cmake")\n'
    )
    (root / "Makefile").write_text(f"all:\n\ttouch {marker}make\n")
    return root


def ran(marker_dir):
    return sorted(name for name in os.listdir(marker_dir) if name.startswith("ran-"))


def test_checking_a_canary_runs_none_of_it(tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    marker = f"{markers}/ran-"
    root = canary_tree(tmp_path / "torch_canary_src", marker)
    result = air("check", "-q", "--no-cache", "--format", "json", "--output", "-", str(root))
    assert result.returncode == 0, result.stderr
    rows = {row["id"]: row["points"] for row in json.loads(result.stdout)["rows"]}
    assert rows["device-rename-pu1"] == 2  # the canary was read
    assert ran(markers) == []

    index = tmp_path / "simple" / "torch-canary"
    index.mkdir(parents=True)
    with tarfile.open(tmp_path / "torch_canary-0.1.tar.gz", "w:gz") as archive:
        archive.add(root, arcname="torch_canary-0.1")
    (index / "index.html").write_text('<a href="../../torch_canary-0.1.tar.gz">torch_canary-0.1.tar.gz</a>\n')
    result = air(
        "check",
        "-q",
        "--no-cache",
        "--sdist",
        "torch_canary",
        "--format",
        "json",
        "--output",
        "-",
        env={"PIP_INDEX_URL": f"file://{tmp_path}/simple"},
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["backend"]["source"]["kind"] == "sdist"
    assert ran(markers) == []
