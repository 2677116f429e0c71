"""`air check --runtime` against a real PrivateUse1 backend: the toy device of
tests/runtime_backend, built here with torch.utils.cpp_extension (and kept between runs, keyed
by its source and the torch release). It works in part, lacks features and is broken on
purpose, so that every runtime outcome shows: verified, refuted (a sum and a gradient off by
1e-2), error (a function that aborts the process, one that never returns) and skipped."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import air
from helpers.paths import REPO_ROOT

BACKEND = REPO_ROOT / "tests" / "runtime_backend"
SOURCE = BACKEND / "toy_device" / "backend.cpp"
SHIPPED_PROBES = REPO_ROOT / "rulepacks" / "pytorch-2.x" / "probes"
PROBE_TIMEOUT = 10  # seconds: the probes that hang are stopped sooner than the shipped pack would
BUILD = """
import sys
from torch.utils.cpp_extension import load
load(name="toy_device_C", sources=[sys.argv[1]], build_directory=sys.argv[2], verbose=False)
"""


def torch_release() -> str:
    done = subprocess.run(
        [sys.executable, "-c", "import importlib.metadata as m; print(m.version('torch'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def extension() -> Path:
    """The built toy device: built once per source and torch release, then kept."""
    key = hashlib.sha256(SOURCE.read_bytes() + torch_release().encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "air-tests" / f"toy-device-{key}"
    built = cache / "toy_device_C.so"
    if not built.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([sys.executable, "-c", BUILD, str(SOURCE), str(cache)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
    return built


@pytest.fixture(scope="module")
def checked(extension, tmp_path_factory):
    """The toy backend checked with the shipped probes, each (the sweep aside) stopped after
    PROBE_TIMEOUT seconds: a pack that extends the shipped one with its probes so bounded."""
    work = tmp_path_factory.mktemp("toy")
    pack = work / "bounded"
    shutil.copytree(SHIPPED_PROBES, pack / "probes")
    listing = pack / "probes" / "probes.yaml"
    listing.write_text(re.sub(r"(- \{id: .*timeout: )\d+", rf"\g<1>{PROBE_TIMEOUT}", listing.read_text()))
    (pack / "pack.yaml").write_text(
        "id: bounded\nversion: 1.0.0\nframework: pytorch\nrequires_air: '>=0.1'\nextends: pytorch-2.x\n"
        "probes: probes/probes.yaml\n"
    )
    environment = {"TOY_DEVICE_EXTENSION": str(extension), "PYTHONPATH": str(BACKEND)}
    arguments = [
        "--pack",
        str(pack),
        "--import",
        "toy_device",
        "--ops",
        "add,mul,abs,sigmoid",
        "--format",
        "json",
        "--output",
        "toy.json",
    ]
    done = air("check", "--runtime", *arguments, str(BACKEND), cwd=work, env=environment, timeout=900)
    assert done.returncode == 0, done.stderr
    report = json.loads((work / "toy.json").read_text())
    return report, {probe["id"]: probe for probe in report["runtime"]["probes"]}


def row(report: dict, row_id: str) -> dict:
    return next(row for row in report["rows"] if row["id"] == row_id)


def test_the_device_probed_is_the_one_the_source_registers(checked):
    report, _probes = checked
    assert report["runtime"]["device"] == "toy"
    assert report["runtime"]["environment"]["backend"].startswith("toy_device ")


def test_what_works_is_verified(checked):
    report, probes = checked
    for probe_id, row_id in [("device-string", "device-string"), ("accumulate", "autograd-accumulate")]:
        assert probes[probe_id]["outcome"] == "verified"
        assert (row(report, row_id)["points"], row(report, row_id)["runtime"]) == (2, "verified")


def test_a_wrong_result_is_refuted_at_the_line_that_checks_it(checked):
    report, probes = checked
    wrong = probes["float32-ops"]
    assert wrong["outcome"] == "refuted"
    assert wrong["detail"].startswith("AssertionError: add in torch.float32: Tensor-likes are not close!")
    source = (SHIPPED_PROBES / "numerics.py").read_text().splitlines()
    assert "raise AssertionError" in source[wrong["line"] - 1]
    assert row(report, "numerics-fp32-atol")["points"] == 0


def test_the_operator_sweep_finds_the_wrong_sum_and_the_product_that_falls_back(checked):
    report, probes = checked
    sweep = probes["opinfo-sweep"]
    outcomes = {dtype: outcome for name, dtype, outcome, _detail in sweep["matrix"] if name == "add"}
    assert outcomes["float32"] == outcomes["float64"] == "mismatch"
    assert sweep["outcome"] == "refuted" and row(report, "test-opinfo")["points"] == 0
    assert ["mul", "float32", "fallback", "no kernel of its own for aten::mul.out"] in sweep["matrix"]
    binary = row(report, "operators-binary")  # measured by add and mul, the operators swept
    assert (binary["points"], binary["runtime"]) == (0, "refuted")
    assert (
        "measured by probe opinfo-sweep: 0 of 2 pass; not passing: add (float32): mismatch, mul (float32): fallback"
        in binary["reason"]
    )


def test_a_fallback_reached_through_a_composite_kernel_is_a_fallback(checked):
    """abs has a kernel for every device, which calls abs.out: the toy has none, so the
    fallback ran it."""
    _report, probes = checked
    assert ["abs", "float32", "fallback", "no kernel of its own for aten::abs.out"] in probes["opinfo-sweep"]["matrix"]


def test_the_gradient_sweep_finds_the_wrong_gradient_of_a_right_forward(checked):
    report, probes = checked
    gradients = {
        name: entry for name, variant, *entry in probes["opinfo-sweep"]["matrix"] if variant == "float32 backward"
    }
    assert gradients == {
        "add": ["pass", ""],
        "mul": ["pass", ""],
        "abs": ["pass", ""],
        "sigmoid": ["mismatch", "largest difference 0.01"],
    }
    parity = row(report, "autograd-grad-parity")  # the grad-parity probe passed: its ops are right
    assert (parity["points"], parity["runtime"]) == (1, "refuted")
    assert parity["reason"].endswith(
        "; measured by probe opinfo-sweep: 3 of 4 pass; not passing: sigmoid (float32 backward): mismatch"
    )
    finishing = row(report, "autograd-backward-runs")  # a wrong gradient is still a backward that finished
    assert (finishing["points"], finishing["runtime"]) == (2, "verified")


def test_a_function_that_aborts_is_an_error_and_the_suite_goes_on(checked):
    report, probes = checked
    assert probes["synchronize"]["outcome"] == "error"
    assert probes["synchronize"]["detail"].startswith("ended the interpreter: signal SIGABRT")
    synchronized = row(report, "frontend-synchronize")
    assert (synchronized["points"], synchronized["runtime"]) == (0, "error")
    assert synchronized["reason"].startswith("registered but hangs or crashes at runtime: probe synchronize")
    assert probes["tensor-to"]["outcome"] == "verified"  # the next probe, in a new worker


def test_a_function_that_never_returns_is_an_error_at_the_probe_timeout(checked):
    _report, probes = checked
    assert (probes["manual-seed"]["outcome"], probes["manual-seed"]["detail"]) == (
        "error",
        f"did not finish within {PROBE_TIMEOUT} s",
    )


def test_what_is_missing_is_refuted_and_what_cannot_run_here_is_skipped(checked):
    report, probes = checked
    assert probes["stream-class"]["outcome"] == "refuted"
    assert probes["stream-class"]["detail"] == "AssertionError: torch.toy.Stream does not exist"
    assert probes["multi-index"]["outcome"] == "skipped"
    multi = row(report, "device-multi-index")
    assert (multi["runtime"], multi["points"]) == ("skipped", 0)  # what the source showed: a stub count
    assert multi["reason"].endswith("; probe multi-index skipped (torch.toy.device_count() == 1: needs two devices)")
