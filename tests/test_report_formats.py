"""The reports for CI and code scanning: SARIF 2.1.0 (checked against the official schema,
tests/data/sarif-schema-2.1.0.json, as OASIS publishes it), JUnit XML and the shields.io badge;
several of them written by one check."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from xml.etree import ElementTree

import pytest
from air.report.badge import render_badge
from air.report.junit import render_junit
from air.report.sarif import render_sarif
from air.results import Finding
from helpers.cli import air
from helpers.packs import shipped_pack
from helpers.paths import FIXTURES, REPO_ROOT
from helpers.reports import sample_report, sample_row
from jsonschema import Draft4Validator

SARIF_VALIDATOR = Draft4Validator(json.loads((REPO_ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text()))
FULL = FIXTURES / "pu1_full"


def test_sarif_has_one_result_per_row_below_full_marks_at_its_first_finding_in_the_tree():
    report = sample_report()
    probe = Finding("pack/probes/m.py", 4, "a probe", "refuted", "probe p")
    rows = (*report.rows, sample_row("1.5", 2, "scored", 1, evidence=(probe, Finding("a/b.cpp", 9, "x", "source"))))
    log = json.loads(render_sarif(replace(report, rows=rows)))
    SARIF_VALIDATOR.validate(log)
    [run] = log["runs"]
    located = {
        result["ruleId"]: result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        + f":{result['locations'][0]['physicalLocation']['region']['startLine']}"
        for result in run["results"]
    }
    # 1.2.9 found nothing and the sample names no manifest: it has no location, and is counted
    assert located == {"row-1-1-1": "csrc/register.cpp:12", "row-1-5": "a/b.cpp:9"}
    assert run["properties"]["rowsWithoutLocation"] == 1
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert rules["row-1-1-1"]["help"]["text"] == "Implement row 1.1.1."
    assert [result["level"] for result in run["results"]] == ["warning", "warning"]


def test_a_gap_with_no_finding_is_anchored_to_the_manifest_and_ids_and_docs_are_the_rows():
    report = sample_report()
    backend = replace(report.backend, metadata_file="setup.py")
    log = json.loads(render_sarif(replace(report, backend=backend)))
    SARIF_VALIDATOR.validate(log)
    [run] = log["runs"]
    missing = next(result for result in run["results"] if result["ruleId"] == "row-1-2-9")
    assert missing["level"] == "error"  # priority 1, no points
    assert missing["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "setup.py"},
        "region": {"startLine": 1},
    }
    assert "anchored to the manifest" in missing["message"]["text"]
    assert run["tool"]["driver"]["rules"][missing["ruleIndex"]]["id"] == "row-1-2-9"
    assert run["properties"]["rowsWithoutLocation"] == 0


def test_junit_has_a_suite_per_section_and_a_case_per_row():
    report = sample_report()
    suites = ElementTree.fromstring(render_junit(report))
    cases = {case.get("name"): case for case in suites.iter("testcase")}
    assert len(cases) == len(report.rows)
    assert (suites.get("tests"), suites.get("failures"), suites.get("skipped")) == ("7", "2", "2")
    assert list(cases["1.2.10 Row 1.2.10 [row-1-2-10]"]) == []  # full marks: passed
    failure = cases["1.2.9 Row 1.2.9 [row-1-2-9]"].find("failure")
    assert failure is not None and failure.get("message") == "0 of 2 points: No registration found."
    assert failure.text == "Remediation: Register the key."
    skipped = cases["4.1 Row 4.1 [row-4-1]"].find("skipped")
    assert skipped is not None and skipped.get("message") == "N/A: Fork path only."
    unknown = cases["1.3 Row 1.3 [row-1-3]"].find("skipped")
    assert unknown is not None and unknown.get("message") == "unknown: Decided only at run time."
    assert [suite.get("name") for suite in suites] == ["1 Device | Management", "4 Autoload", "12 Compiler"]


@pytest.mark.parametrize(("readiness", "colour"), [(48.6, "orange"), (50.0, "yellow"), (91.0, "brightgreen")])
def test_the_badge_is_a_shields_endpoint(readiness, colour):
    badge = json.loads(render_badge(replace(sample_report(), readiness=readiness)))
    assert badge == {"schemaVersion": 1, "label": "Flux readiness", "message": f"{readiness:.1f}%", "color": colour}


def test_one_check_writes_several_formats_that_point_into_the_tree(tmp_path):
    outputs = {"sarif": "r.sarif", "junit": "r.xml", "badge": "b.json", "markdown": "r.md"}
    arguments = [part for fmt, name in outputs.items() for part in ("--format", fmt, "--output", name)]
    tree = tmp_path / "torch_full"  # outside any checkout: URIs are relative to the tree
    shutil.copytree(FULL, tree)
    done = air("check", "-q", *arguments, str(tree), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    log = json.loads((tmp_path / "r.sarif").read_text())
    SARIF_VALIDATOR.validate(log)
    for result in log["runs"][0]["results"]:
        place = result["locations"][0]["physicalLocation"]
        lines = (tree / place["artifactLocation"]["uri"]).read_text().splitlines()
        assert 1 <= place["region"]["startLine"] <= len(lines)
    assert ElementTree.parse(tmp_path / "r.xml").getroot().get("tests") == str(len(shipped_pack().rows))
    assert json.loads((tmp_path / "b.json").read_text())["label"] == "PyTorch readiness"
