"""The GitHub Action (action.yml) and its script, run here as the action runs it, and the fleet
workflow example: both use air's own command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from helpers.cli import air
from helpers.paths import FIXTURES, REPO_ROOT

SCRIPT = REPO_ROOT / "action" / "check.sh"
AIR = Path(sys.executable).parent / "air"


def run_action(tmp_path: Path, **settings: str) -> tuple[subprocess.CompletedProcess, Path]:
    outputs = tmp_path / "outputs"
    environment = {
        **os.environ,
        "AIR_COMMAND": str(AIR),
        "AIR_PATH": str(FIXTURES / "pu1_full"),
        "AIR_REPORTS": str(tmp_path / "reports"),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        **settings,
    }
    done = subprocess.run([str(SCRIPT)], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300)
    return done, outputs


def test_the_action_runs_its_script_with_its_inputs():
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
    steps = action["runs"]["steps"]
    check = next(step for step in steps if step.get("id") == "check")
    assert check["run"] == '"${{ github.action_path }}/action/check.sh"'
    assert set(check["env"]) == {"AIR_PATH", "AIR_PACK", "AIR_FAIL_UNDER", "AIR_REPORTS"}
    used = json.dumps(steps)
    assert all(f"inputs.{name}" in used for name in action["inputs"])
    assert os.access(SCRIPT, os.X_OK)


def test_the_script_writes_every_report_and_the_outputs(tmp_path):
    done, outputs = run_action(tmp_path)
    assert done.returncode == 0, done.stderr
    reports = tmp_path / "reports"
    assert sorted(path.name for path in reports.iterdir()) == sorted(
        f"air.{suffix}" for suffix in ("md", "json", "html", "sarif", "junit.xml", "badge.json")
    )
    readiness = json.loads((reports / "air.json").read_text())["readiness"]
    facts = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert facts == {"readiness": f"{round(readiness, 1)}", "sarif": f"{reports}/air.sarif", "exit-code": "0"}
    assert "torch_full: readiness" in (tmp_path / "summary.md").read_text()


def test_the_script_fails_below_the_bound_after_writing_the_reports(tmp_path):
    done, outputs = run_action(tmp_path, AIR_FAIL_UNDER="99")
    assert done.returncode == 1
    assert "is below --fail-under 99 %" in done.stderr
    assert (tmp_path / "reports" / "air.sarif").is_file() and "exit-code=1" in outputs.read_text()


def test_the_fleet_example_uses_commands_air_has():
    workflow = yaml.safe_load((REPO_ROOT / "examples" / "ci" / "fleet.yml").read_text())
    commands = [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]
    assert any("air check --framework-version" in command for command in commands)
    assert any("air compare reports/*.json" in command for command in commands)
    assert "--framework-version" in air("check", "--help").stdout
    assert air("compare", "--help").returncode == 0
