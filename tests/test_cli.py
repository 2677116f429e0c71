"""The command line as a user drives it: outputs, exit codes, determinism, errors in one line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from air.cli import check_command, source_ref
from air.pack.schemas import validator
from air.resources import data_dir
from air.results import Source
from helpers.cli import air
from helpers.git import git
from helpers.paths import FIXTURES, SHIPPED_PACK
from jsonschema import Draft202012Validator

FULL = FIXTURES / "pu1_full"


def test_default_outputs_summary_and_progress(tmp_path):
    shutil.copytree(FULL, tmp_path / "torch_full")  # a directory that is no checkout: no ref in the names
    result = air("check", str(tmp_path / "torch_full"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "air-report").iterdir()) == ["torch_full.json", "torch_full.md"]
    assert "torch_full: readiness " in result.stdout.splitlines()[1]
    assert "integration path: PrivateUse1" in result.stderr


def test_json_report_validates_and_recomputes(tmp_path, pack):
    out = tmp_path / "r.json"
    assert air("check", "--format", "json", "--output", str(out), str(FULL)).returncode == 0
    report = json.loads(out.read_text())
    Draft202012Validator.check_schema(validator("report").schema)
    assert not list(validator("report").iter_errors(report))
    assert len(report["rows"]) == len(pack.rows) and report["date"] == "2026-01-01"
    section_ids = {s["id"] for s in report["sections"]}
    assert all(row["section"] in section_ids for row in report["rows"])
    kept = []
    for section in report["sections"]:
        rows = [r for r in report["rows"] if r["section"] == section["id"] and r["outcome"] != "not_applicable"]
        max_pts = sum(2 / r["priority"] for r in rows)
        earned = sum((r["points"] or 0) / r["priority"] for r in rows)
        assert section["max_pts"] == pytest.approx(max_pts) and section["earned"] == pytest.approx(earned)
        if max_pts:
            kept.append((earned / max_pts * 100, section["tier"]))
    readiness = sum(p / t for p, t in kept) / sum(1 / t for _p, t in kept)
    assert report["readiness"] == pytest.approx(readiness)


def test_reports_are_byte_identical_across_runs(tmp_path):
    for run in ("a", "b"):
        result = air(
            "check",
            "-q",
            "--format",
            "json",
            "--output",
            str(tmp_path / f"{run}.json"),
            "--format",
            "markdown",
            "--output",
            str(tmp_path / f"{run}.md"),
            str(FULL),
        )
        assert result.returncode == 0, result.stderr
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.md").read_bytes() == (tmp_path / "b.md").read_bytes()


def test_markdown_follows_the_report_layout(tmp_path):
    out = tmp_path / "r.md"
    air("check", "-q", "--format", "markdown", "--output", str(out), str(FULL))
    text = out.read_text()
    headings = [
        "## Executive summary",
        "## Section scores",
        "## Upstream candidates",
        "## Source discovery and path signals",
        "## Checklist",
        "## Registration quick reference",
        "## Sources",
    ]
    positions = [text.index(h) for h in headings]
    assert positions == sorted(positions)
    assert "`csrc/FullGuard.cpp:15`" in text
    assert "| 1.1.1 | The PrivateUse1 slot is given the backend's name | PU1 | P1 | 2 |" in text
    assert "| 1.1.3 | New value in the c10 DeviceType enum | Fork | P1 | N/A |" in text


def test_standard_output_report(tmp_path):
    result = air("check", "-q", "--format", "json", "--output", "-", str(FULL))
    assert json.loads(result.stdout)["backend"]["name"] == "torch_full"


def test_fail_under(tmp_path):
    assert air("check", "-q", "--fail-under", "99", str(FULL), cwd=tmp_path).returncode == 1
    assert air("check", "-q", "--fail-under", "1", str(FULL), cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["check", "/no/such/backend"],
            "/no/such/backend: not a directory, not a git URL, and no known backend of that name (known: npu,",
        ),
        (["check", "--pack", "no-such-pack", str(FULL)], "no such pack"),
        (["check", "--format", "json", str(FULL), "--output", "a", "--output", "b"], "one --output per --format"),
        (["check", "--format", "pdf", str(FULL)], "pdf"),
    ],
)
def test_usage_and_input_errors_exit_2_in_one_line(tmp_path, args, fragment):
    result = air(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr


def test_broken_pack_exits_2_naming_file_and_line(tmp_path):
    pack = tmp_path / "bad"
    (pack / "rows").mkdir(parents=True)
    (pack / "pack.yaml").write_text('id: bad\nversion: 1.0.0\nframework: pytorch\nrequires_air: ">=0.1"\n')
    (pack / "rows" / "01.yaml").write_text("section: device-registration\nrows:\n  - id: x\n    itme: '1'\n")
    result = air("check", "--pack", str(pack), str(FULL), cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "01.yaml:4" in lines[0] and "unknown key 'itme'" in lines[0]


def test_pack_commands(pack):
    listed = air("pack", "list")
    assert listed.returncode == 0
    assert f"{SHIPPED_PACK}\t{pack.version}\t{len(pack.rows)} rows\tPyTorch" in listed.stdout.splitlines()
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["jax-pjrt-0.x", "pytorch-2.x"]
    assert f"valid, {len(pack.rows)} rows" in air("pack", "validate", SHIPPED_PACK).stdout


def test_unwritable_output_is_an_input_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = air("check", "-q", "--format", "json", "--output", str(blocker / "r.json"), str(FULL))
    assert result.returncode == 2 and "cannot write report" in result.stderr


@pytest.mark.parametrize(
    ("raised", "code", "message"),
    [
        (RuntimeError("boom"), 3, "air: internal error: RuntimeError: boom"),
        (KeyboardInterrupt(), 130, "air: interrupted"),
    ],
)
def test_internal_errors_and_interrupts(monkeypatch, capsys, raised, code, message):
    import air.cli

    def explode(*args, **kwargs):
        raise raised

    monkeypatch.setattr(air.cli, "check_tree", explode)
    monkeypatch.setattr(sys, "argv", ["air", "check", "-q", str(FULL)])
    with pytest.raises(SystemExit) as exit_info:
        air.cli.main()
    assert exit_info.value.code == code
    err = capsys.readouterr().err.strip()  # click ends the ^C line first
    assert err.startswith(message) and "\n" not in err and "Traceback" not in err


def test_a_file_is_not_a_backend(tmp_path):
    target = tmp_path / "setup.py"
    target.write_text("")
    result = air("check", str(target))
    assert result.returncode == 2 and "not a directory" in result.stderr


def test_torch_version_makes_rows_of_other_releases_not_applicable(tmp_path):
    result = air("check", "-q", "--no-cache", "--torch-version", "2.4", "--format", "json", "--output", "-", str(FULL))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    rows = {row["id"]: row for row in data["rows"]}
    assert rows["autoload-entry-point"]["outcome"] == "not_applicable"
    assert "this backend targets PyTorch 2.4" in rows["autoload-entry-point"]["reason"]
    assert data["backend"]["target_framework_version"] == "2.4"
    bad = air("check", "--torch-version", "latest", str(FULL))
    assert bad.returncode == 2 and "not a release number" in bad.stderr
    outside = air("check", "--no-cache", "--torch-version", "1.13", str(FULL))
    assert outside.returncode == 2
    assert outside.stderr.strip().splitlines() == [
        "air: error: release 1.13 is outside the ones pack pytorch-2.x supports (>=2.1,<3)"
    ]


def test_the_framework_version_option_takes_the_names_the_shipped_frameworks_give_it():
    frameworks = sorted(Path(data_dir("frameworks")).glob("*/framework.yaml"))
    aliases = {yaml.safe_load(path.read_text())["cli_alias"] for path in frameworks}
    assert aliases == {"--torch-version", "--jax-version"}
    option = next(param for param in check_command.params if param.name == "framework_version")
    assert option.opts[0] == "--framework-version" and set(option.opts[1:]) == aliases


def test_an_interrupted_write_keeps_the_old_report(tmp_path, monkeypatch):
    import air.report.output

    target = tmp_path / "report.md"
    target.write_text("the old report\n")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(air.report.output.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        air.report.output.write_atomic(target, "a new report\n")
    assert target.read_text() == "the old report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]  # no temporary file left


def test_an_interrupt_while_the_cli_loads_exits_130_in_one_line():
    interrupting_import = (
        "import builtins\n"
        "real = builtins.__import__\n"
        "def load(name, *args, **kwargs):\n"
        "    if name == 'air.cli':\n"
        "        raise KeyboardInterrupt\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = load\n"
        "from air.__main__ import run\n"
        "run()\n"
    )
    result = subprocess.run([sys.executable, "-c", interrupting_import], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (130, "air: interrupted\n")


def test_an_interrupt_during_a_check_exits_130_and_writes_nothing(tmp_path):
    import signal

    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "air",
            "check",
            "--no-cache",
            "--format",
            "json",
            "--output",
            str(tmp_path / "r.json"),
            str(FULL),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = process.stderr.readline()  # the check has begun: it has indexed the tree
    process.send_signal(signal.SIGINT)
    _out, rest = process.communicate(timeout=60)
    err = first + rest
    if process.returncode == 0:
        pytest.skip("the check finished before the interrupt arrived")
    assert process.returncode == 130 and "air: interrupted" in err and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()


def test_reports_of_two_refs_of_one_checkout_keep_their_own_files(tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(FULL, checkout)
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "add", ".")
    git(checkout, "commit", "-q", "-m", "one")
    git(checkout, "tag", "v1.0")
    assert air("check", "-q", str(checkout), cwd=tmp_path).returncode == 0
    (checkout / "torch_full" / "later.py").write_text("x = 1\n")
    git(checkout, "add", ".")
    git(checkout, "commit", "-q", "-m", "two")
    assert air("check", "-q", str(checkout), cwd=tmp_path).returncode == 0
    (checkout / "torch_full" / "later.py").write_text("x = 2\n")
    assert air("check", "-q", "--format", "json", str(checkout), cwd=tmp_path).returncode == 0
    head = git(checkout, "rev-parse", "HEAD")[:12]
    assert sorted(p.name for p in (tmp_path / "air-report").iterdir()) == sorted(
        [
            "torch_full@v1.0.json",
            "torch_full@v1.0.md",
            f"torch_full@{head}.json",
            f"torch_full@{head}.md",
            f"torch_full@{head}-dirty.json",
        ]
    )
    first = json.loads((tmp_path / "air-report" / "torch_full@v1.0.json").read_text())
    assert first["backend"]["source"]["describe"] == "v1.0"


@pytest.mark.parametrize(
    ("source", "ref"),
    [
        (Source("git", "https://example.org/r.git", "0123456789abcdef0123", branch="v2"), "0123456789ab"),
        (Source("local", "/r", "0123456789abcdef0123", describe="v2.1-3-g0123456", dirty=False), "0123456789ab"),
        (Source("local", "/r", "0123456789abcdef0123", describe="0123456-dirty", dirty=True), "0123456789ab-dirty"),
        (Source("local", "/r", "0123456789abcdef0123", describe="r2.4", dirty=False), "r2.4"),
        (Source("local", "/r"), None),
    ],
)
def test_the_ref_a_default_report_name_carries(source, ref):
    assert source_ref(source) == ref
