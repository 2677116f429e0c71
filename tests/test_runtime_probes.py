"""The probe run: probes run in another interpreter, and whatever one of them does (fail, skip,
hang, end the interpreter, print) ends as a result for it while the suite goes on.

The session and the probes here are plain Python written for the test: the run itself knows
nothing of any framework."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest
from air.pack.probes import Probe
from air.runtime.supervisor import ProbeRequest, ProbesUnavailable, run_probes

SESSION = """
import sys

def start(options):
    if options.get("fail"):
        raise RuntimeError("no device here")
    return {"device": options["device"]}, {"python": sys.version.split()[0], "device": options["device"]}
"""

PROBES = """
import ctypes
import os
import time
import unittest

def passes(ctx):
    return f"ran on {ctx['device']}"

def fails(ctx):
    x = 1
    assert x == 2, "one is not two"

def raises(ctx):
    raise NotImplementedError("no kernel for add")

def skips(ctx):
    raise unittest.SkipTest("needs two devices")

def hangs(ctx):
    time.sleep(600)

def aborts(ctx):
    os.abort()

def segfaults(ctx):
    ctypes.string_at(0)

def exits(ctx):
    os._exit(3)

def noisy(ctx):
    os.write(2, b"noise of an earlier probe\\n")
    return "noisy"

def speaks_then_aborts(ctx):
    os.write(2, b"last words\\n")
    os.abort()

def prints(ctx):
    print('{"event": "result", "id": "prints", "outcome": "verified"}')
    os.write(1, b"written straight to descriptor 1\\n")
    return "printed"

def measures(ctx):
    matrix = [["add", "float32", "pass", ""], ["mul", "float32", "mismatch", "largest difference 0.1"], ["bad"], "worse"]
    return {"detail": "1 of 2 pass", "matrix": matrix, "passed": False}

def writes(ctx):
    with open("left-behind.txt", "w") as handle:
        handle.write("x")
    import tempfile
    tempfile.mkstemp()
    return os.getcwd()
"""


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "session.py").write_text(SESSION)
    (tmp_path / "probes.py").write_text(textwrap.dedent(PROBES))
    return tmp_path


def probe(directory: Path, function: str, timeout: float = 30.0) -> Probe:
    return Probe(
        function,
        function.replace("_", " "),
        ("some-row",),
        directory / "probes.py",
        function,
        1,
        timeout,
        "pack/probes.py",
    )


def run(directory: Path, functions, budget: float = 120.0, **options):
    request = ProbeRequest(sys.executable, directory / "session.py", {"device": "toy", **options}, budget)
    said: list[str] = []
    environment, results = run_probes(
        request, [probe(directory, f) if isinstance(f, str) else f for f in functions], said.append
    )
    return environment, {result.id: result for result in results}, said


def test_passing_failing_and_skipped_probes(suite):
    environment, results, said = run(suite, ["passes", "fails", "raises", "skips"])
    assert environment == {"python": sys.version.split()[0], "device": "toy"}
    assert (results["passes"].outcome, results["passes"].detail) == ("verified", "ran on toy")
    assert results["fails"].outcome == "refuted"
    assert results["fails"].detail == "AssertionError: one is not two"
    assert (
        results["fails"].line
        == (suite / "probes.py").read_text().splitlines().index('    assert x == 2, "one is not two"') + 1
    )
    assert (results["raises"].outcome, results["raises"].detail) == (
        "refuted",
        "NotImplementedError: no kernel for add",
    )
    assert (results["skips"].outcome, results["skips"].detail) == ("skipped", "needs two devices")
    assert results["passes"].line == 1  # a passing probe is cited at its definition
    assert said == ["probe passes: verified", "probe fails: refuted", "probe raises: refuted", "probe skips: skipped"]


@pytest.mark.parametrize(
    ("function", "death"),
    [("aborts", "signal SIGABRT"), ("segfaults", "signal SIGSEGV"), ("exits", "exit code 3")],
)
def test_a_probe_that_ends_the_interpreter_is_an_error_and_the_suite_goes_on(suite, function, death):
    _environment, results, _said = run(suite, ["passes", function, "fails"])
    assert results["passes"].outcome == "verified"
    assert results[function].outcome == "error"
    assert results[function].detail.startswith(f"ended the interpreter: {death}")
    assert results["fails"].outcome == "refuted"  # run by a new worker


def test_a_dying_probe_is_described_by_what_it_wrote_not_by_what_an_earlier_one_did(suite):
    _environment, results, _said = run(suite, ["noisy", "aborts", "noisy", "speaks_then_aborts"])
    assert results["aborts"].detail == "ended the interpreter: signal SIGABRT"
    assert results["speaks_then_aborts"].detail == "ended the interpreter: signal SIGABRT; last words"


def test_a_probe_that_hangs_is_stopped_at_its_timeout_and_the_suite_goes_on(suite):
    probes = [probe(suite, "hangs", timeout=1.5), probe(suite, "passes")]
    _environment, results, _said = run(suite, probes)
    assert (results["hangs"].outcome, results["hangs"].detail) == ("error", "did not finish within 1.5 s")
    assert results["passes"].outcome == "verified"


def test_probes_left_when_the_budget_runs_out_are_skipped(suite):
    probes = [probe(suite, "hangs", timeout=60), probe(suite, "passes")]
    _environment, results, _said = run(suite, probes, budget=2)
    assert results["hangs"].outcome == "skipped"
    assert results["passes"].outcome == "skipped"
    assert "budget" in results["passes"].detail


def test_what_a_probe_prints_is_not_taken_for_an_event(suite):
    _environment, results, _said = run(suite, ["prints", "fails"])
    assert (results["prints"].outcome, results["prints"].detail) == ("verified", "printed")
    assert results["fails"].outcome == "refuted"


def test_a_probe_that_measures_many_things_sends_its_matrix(suite):
    _environment, results, _said = run(suite, ["measures"])
    measured = results["measures"]
    assert (measured.outcome, measured.detail) == ("refuted", "1 of 2 pass")
    assert measured.matrix == (("add", "float32", "pass", ""), ("mul", "float32", "mismatch", "largest difference 0.1"))


def test_nothing_a_probe_writes_is_left_behind(suite, tmp_path_factory, monkeypatch):
    here = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(here)
    _environment, results, _said = run(suite, ["writes"])
    scratch = Path(results["writes"].detail)
    assert scratch != here and not scratch.exists()
    assert list(here.iterdir()) == []


def test_a_session_that_cannot_start_runs_nothing(suite):
    with pytest.raises(ProbesUnavailable, match="failed: RuntimeError: no device here"):
        run(suite, ["passes"], fail="yes")


def test_an_interpreter_that_cannot_run_is_an_input_error(suite):
    request = ProbeRequest(os.devnull, suite / "session.py", {"device": "toy"})
    with pytest.raises(Exception, match="cannot run it"):
        run_probes(request, [probe(suite, "passes")], lambda message: None)
