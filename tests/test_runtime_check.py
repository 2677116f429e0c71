"""`air check --runtime`: the shipped pack's probes run against a real installation of the
framework (the test environment's, on its built-in `cpu` device, which needs no build), and
the rows they decide score by what happened. A plain check runs nothing."""

from __future__ import annotations

import json
import sys

import pytest
from air.pack.probes import Measure
from air.report.json_report import from_dict
from air.results import Finding, ProbeResult, RowResult
from air.scoring.probes import with_measures, with_probes
from helpers.cli import air
from helpers.packs import TINY_HEADER, TINY_ROWS, shipped_pack, write_pack
from helpers.paths import REPO_ROOT
from helpers.reports import REPORT_VALIDATOR

TOY = REPO_ROOT / "examples" / "torch_toy"
PROBES = REPO_ROOT / "rulepacks" / "pytorch-2.x" / "probes"
SWEPT = "[ab]*"  # the operators swept: those whose names start with a or b


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """The toy backend checked with its probes on the CPU, and checked statically."""
    work = tmp_path_factory.mktemp("runtime")
    done = air(
        "check",
        "--runtime",
        "--device",
        "cpu",
        "--ops",
        SWEPT,
        "--format",
        "json",
        "--output",
        "probed.json",
        "--format",
        "markdown",
        "--output",
        "probed.md",
        str(TOY),
        cwd=work,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    static = air("check", "--no-cache", "--format", "json", "--output", "static.json", str(TOY), cwd=work)
    assert static.returncode == 0, static.stderr
    return work, json.loads((work / "probed.json").read_text()), json.loads((work / "static.json").read_text())


def row(report: dict, row_id: str) -> dict:
    return next(row for row in report["rows"] if row["id"] == row_id)


def definition_line(module: str, function: str) -> int:
    return (PROBES / module).read_text().splitlines().index(f"def {function}(ctx):") + 1


def test_the_report_names_the_probed_environment(probed):
    _work, report, _static = probed
    runtime = report["runtime"]
    assert runtime["python"] == sys.executable and runtime["device"] == "cpu"
    assert runtime["environment"]["torch"].startswith("2.13.0")
    assert runtime["environment"]["python"] == ".".join(map(str, sys.version_info[:3]))
    assert [probe["id"] for probe in runtime["probes"]] == [probe.id for probe in shipped_pack().probes.probes]
    REPORT_VALIDATOR.validate(report)


def test_a_probe_title_names_the_probed_device(probed):
    _work, report, _static = probed
    titles = {probe["id"]: probe["title"] for probe in report["runtime"]["probes"]}
    assert titles["is-available"] == "torch.cpu.is_available() is True"
    assert not any("<name>" in title for title in titles.values())


def test_a_passing_probe_proves_a_runtime_row(probed):
    _work, report, static = probed
    assert row(static, "autograd-accumulate")["points"] == 0  # the toy's source shows no kernels it could run on
    accumulated = row(report, "autograd-accumulate")
    assert (accumulated["points"], accumulated["runtime"]) == (2, "verified")
    proof = accumulated["evidence"][0]
    assert (proof["path"], proof["line"], proof["trust"]) == (
        "pytorch-2.x/probes/autograd.py",
        definition_line("autograd.py", "accumulate"),
        "verified",
    )
    assert "x.grad == 4" in proof["snippet"]


def test_a_failing_probe_refutes_what_the_source_claims(probed):
    _work, report, static = probed
    assert row(static, "mem-allocated-api")["points"] == 2  # the toy's module defines memory_allocated
    refuted = row(report, "mem-allocated-api")
    assert (refuted["points"], refuted["runtime"]) == (0, "refuted")
    assert refuted["reason"].startswith("registered but fails at runtime: probe memory-allocated: AssertionError")
    assert refuted["evidence"][0]["trust"] == "refuted"


def test_a_skipped_probe_gives_nothing(probed):
    _work, report, static = probed
    skipped = row(report, "device-multi-index")
    assert skipped["runtime"] == "skipped"
    assert (skipped["outcome"], skipped["points"]) == (
        row(static, "device-multi-index")["outcome"],
        row(static, "device-multi-index")["points"],
    )
    assert "probe multi-index skipped (torch.cpu.device_count() == 1: needs two devices)" in skipped["reason"]


def test_the_operator_sweep_measures_each_op_and_dtype_the_opinfo_declares(probed):
    _work, report, _static = probed
    sweep = next(probe for probe in report["runtime"]["probes"] if probe["id"] == "opinfo-sweep")
    names = {name for name, _dtype, _outcome, _detail in sweep["matrix"]}
    assert {"abs", "add", "addmm", "bmm"} <= names and all(name[0] in "ab" for name in names)
    assert ["add", "float32", "pass", ""] in sweep["matrix"]
    outcomes = {outcome for _name, _dtype, outcome, _detail in sweep["matrix"]}
    assert outcomes == {"pass", "skipped"}  # the CPU against itself, random outputs aside
    assert ["bernoulli", "float32", "skipped", "the OpInfo skips its comparison with the CPU"] in sweep["matrix"]
    assert sweep["outcome"] == "verified" and row(report, "test-opinfo")["points"] == 2
    assert sweep["detail"].startswith(f"{len(sweep['matrix'])} entries: ")


def test_the_markdown_report_lists_every_probe(probed):
    work, report, _static = probed
    markdown = (work / "probed.md").read_text()
    assert "## Runtime probes" in markdown
    assert all(f"| `{probe['id']}` |" in markdown for probe in report["runtime"]["probes"])
    assert "### `opinfo-sweep`: " in markdown and "| `float32` | " in markdown


def test_the_runtime_report_reads_back(probed):
    _work, report, _static = probed
    assert from_dict(report).runtime.device == "cpu"


def test_probes_leave_nothing_in_the_working_directory(probed):
    work, _report, _static = probed
    assert sorted(path.name for path in work.iterdir()) == ["probed.json", "probed.md", "static.json"]


def test_a_plain_check_runs_no_probe(probed):
    _work, _report, static = probed
    assert static["runtime"] is None
    assert all(row["runtime"] is None for row in static["rows"])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--device", "cpu"], "--device, --import and --ops apply only with --runtime"),
        (
            ["--runtime", "--device", "cpu", "--python", "/no/such/python"],
            "--python /no/such/python: no such interpreter",
        ),
        (["--runtime", "--device", "cpu", "--import", "no_such_backend_module"], "ModuleNotFoundError"),
        (["--runtime", "--device", "no_such_device"], "failed: RuntimeError"),
    ],
)
def test_runtime_errors_are_one_line_with_exit_code_2(tmp_path, arguments, message):
    done = air("check", *arguments, str(TOY), cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr.strip().splitlines()[-1]


def test_runtime_with_a_pack_without_probes_is_an_error(tmp_path):
    pack = write_pack(tmp_path, TINY_HEADER, TINY_ROWS)
    done = air("check", "--runtime", "--device", "cpu", "--pack", str(pack), str(TOY), cwd=tmp_path)
    assert done.returncode == 2
    assert "--runtime: pack tiny has no probes" in done.stderr


ROW = RowResult(
    "r", "1.1", "s", "t", 1, (), "scored", 1, "static reason", (Finding("a.py", 3, "x", "source"),), "fix", ()
)


def probe_result(outcome, rows=("r",)) -> ProbeResult:
    return ProbeResult("p", "it works", rows, outcome, "detail", "pack/probes/m.py", 7)


@pytest.mark.parametrize(
    ("outcome", "points", "reason"),
    [
        ("verified", 2, "verified at runtime: probe p: it works"),
        ("refuted", 0, "registered but fails at runtime: probe p: detail"),
        ("error", 0, "registered but hangs or crashes at runtime: probe p: detail"),
        ("skipped", 1, "static reason; probe p skipped (detail)"),
    ],
)
def test_a_row_scores_by_its_probes(outcome, points, reason):
    [merged] = with_probes([ROW], [probe_result(outcome)])
    assert (merged.points, merged.reason, merged.runtime) == (points, reason, outcome)
    proofs = [finding for finding in merged.evidence if finding.path == "pack/probes/m.py"]
    assert proofs == (
        []
        if outcome == "skipped"
        else [
            Finding(
                "pack/probes/m.py", 7, "it works: detail", "verified" if outcome == "verified" else "refuted", "probe p"
            )
        ]
    )


def test_a_row_the_source_did_not_claim_just_fails_and_one_that_does_not_apply_stays_n_a():
    unclaimed = RowResult("r", "1.1", "s", "t", 1, (), "unknown", None, "", (), "fix", ())
    [failed] = with_probes([unclaimed], [probe_result("refuted")])
    assert (failed.outcome, failed.points, failed.reason) == ("scored", 0, "fails at runtime: probe p: detail")
    off = RowResult("r", "1.1", "s", "t", 1, ("fork",), "not_applicable", None, "off route", (), "fix", ())
    assert with_probes([off], [probe_result("verified")]) == (off,)


def test_one_failing_probe_of_a_row_outweighs_one_that_passes():
    [merged] = with_probes(
        [ROW], [probe_result("verified"), ProbeResult("q", "other", ("r",), "refuted", "broke", "m.py", 2)]
    )
    assert (merged.points, merged.runtime) == (0, "refuted")


def sweep_result(*entries) -> ProbeResult:
    return ProbeResult("sweep", "ops work", (), "refuted", "", "pack/probes/ops.py", 3, tuple(entries))


PART = {"sweep": (Measure(("r",), names=("add", "nn.functional.*"), variants=("float32",)),)}


@pytest.mark.parametrize(
    ("static_points", "entries", "points", "reason"),
    [
        (
            2,
            [("add", "float32", "pass", ""), ("nn.functional.gelu", "float32", "pass", "")],
            2,
            "measured by probe sweep: 2 of 2 pass",
        ),
        (
            2,
            [("add", "float32", "mismatch", "largest difference 0.01"), ("nn.functional.gelu", "float32", "pass", "")],
            1,
            "registered but fails at runtime: measured by probe sweep: 1 of 2 pass; not passing: add (float32): mismatch",
        ),
        (
            1,
            [("add", "float32", "pass", "")],
            1,
            "measured by probe sweep: 1 of 1 pass; capped at 1 by the static evidence (static reason)",
        ),
        (
            0,
            [("add", "float32", "error", "RuntimeError")],
            0,
            "measured by probe sweep: 0 of 1 pass; not passing: add (float32): error",
        ),
    ],
)
def test_a_row_a_matrix_measures_scores_by_its_part_capped_by_the_static_evidence(
    static_points, entries, points, reason
):
    row = RowResult("r", "1.1", "s", "t", 1, (), "scored", static_points, "static reason", (), "fix", ())
    noise = [("add", "float16", "mismatch", "x"), ("mul", "float32", "error", "x"), ("add", "float32", "not run", "")]
    [merged] = with_measures([row], [sweep_result(*entries, *noise)], PART)
    assert (merged.points, merged.reason) == (points, reason)
    assert merged.evidence[0] == Finding(
        "pack/probes/ops.py",
        3,
        f"ops work: {sum(e[2] == 'pass' for e in entries)} of {len(entries)} pass",
        "verified" if all(entry[2] == "pass" for entry in entries) else "refuted",
        "probe sweep",
    )


def test_a_row_whose_part_was_not_measured_keeps_its_static_outcome():
    row = RowResult("r", "1.1", "s", "t", 1, (), "unknown", None, "static reason", (), "fix", ())
    [merged] = with_measures(
        [row], [sweep_result(("add", "float32", "skipped", "random"), ("abs", "float32", "pass", ""))], PART
    )
    assert (merged.outcome, merged.points, merged.runtime) == ("unknown", None, "skipped")
    assert merged.reason == "static reason; probe sweep measured nothing of it (none of its part was measured)"


def test_a_part_can_count_other_outcomes_as_passing():
    """A gradient that is off still shows that backward finished."""
    finishing = {"sweep": (Measure(("r",), variants=("float32 backward",), passing=("pass", "mismatch")),)}
    entries = [
        ("add", "float32 backward", "mismatch", "largest difference 0.01"),
        ("mul", "float32 backward", "unsupported", "NotImplementedError"),
        ("mul", "float32", "error", "ignored: another variant"),
    ]
    row = RowResult("r", "1.1", "s", "t", 1, (), "unknown", None, "", (), "fix", ())
    [merged] = with_measures([row], [sweep_result(*entries)], finishing)
    assert (merged.points, merged.runtime) == (1, "refuted")
    assert merged.reason == "measured by probe sweep: 1 of 2 pass; not passing: mul (float32 backward): unsupported"


@pytest.mark.parametrize(
    ("probe", "matrix", "points", "runtime"),
    [("verified", "pass", 2, "verified"), ("verified", "mismatch", 0, "refuted"), ("refuted", "pass", 0, "refuted")],
)
def test_a_row_its_probes_and_a_matrix_decide_takes_the_lower_score_with_both_reasons(probe, matrix, points, runtime):
    [probed] = with_probes([ROW], [probe_result(probe)])
    [merged] = with_measures([probed], [sweep_result(("add", "float32", matrix, ""))], PART)
    assert (merged.points, merged.runtime) == (points, runtime)
    assert merged.reason.startswith(probed.reason + "; measured by probe sweep: ")
    assert "capped" not in merged.reason and merged.reason.count("registered but") == (probe == "refuted")


def test_a_matrix_that_measured_nothing_leaves_what_the_probes_decided():
    [probed] = with_probes([ROW], [probe_result("verified")])
    [merged] = with_measures([probed], [sweep_result(("add", "float32", "not run", ""))], PART)
    assert (merged.points, merged.runtime) == (2, "verified")
    assert merged.reason == probed.reason + "; probe sweep measured nothing of it (none of its part was measured)"
