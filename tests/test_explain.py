"""`air explain ROW` and `air rules`: a pack's rows explained and listed, from the pack alone."""

from __future__ import annotations

import json

import pytest
from air.pack.load import load_pack
from helpers.cli import air
from helpers.packs import shipped_pack
from helpers.paths import REPO_ROOT


def test_explain_by_item_or_id_shows_what_why_how_fix_and_docs():
    by_item = air("explain", "10.3")
    assert by_item.returncode == 0, by_item.stderr
    assert by_item.stdout == air("explain", "autograd-grad-parity").stdout
    text = by_item.stdout
    assert text.startswith("10.3 Gradients match CUDA within tolerance (autograd-grad-parity)\n")
    for part in ("Why it matters:", "How it is detected:", "How it scores:", "How to fix it:", "Docs:"):
        assert f"\n{part}\n" in text
    assert "  gradcheck: tests that call torch.autograd.gradcheck" in text
    assert "  opinfo-sweep: PyTorch's OpInfo samples give the CPU's results" in text
    assert "  https://docs.pytorch.org/docs/stable/autograd.html" in text


def test_explain_as_json_and_markdown_carries_the_pack_data():
    data = json.loads(air("explain", "3.2", "--format", "json").stdout)
    row = next(row for row in shipped_pack().rows if row.item == "3.2")
    assert (data["id"], data["priority"], data["docs"]) == (row.id, row.priority, list(row.docs))
    assert {entry["evidence"] for entry in data["detection"]} == set(row.evidence)
    assert data["remediation"] == " ".join(row.remediation.split())
    markdown = air("explain", "3.2", "--format", "markdown").stdout
    assert markdown.startswith(f"# 3.2 {row.title} ({row.id})\n") and "\n## How to fix it\n" in markdown


def test_explain_of_an_unknown_row_is_a_one_line_error():
    done = air("explain", "99.9")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "air: error: 99.9: no row of pack pytorch-2.x has that id or item; `air rules` lists them"
    ]


@pytest.mark.parametrize(
    ("options", "wanted"),
    [
        (["--section", "10", "--priority", "1"], lambda row: row.section == "autograd" and row.priority == 1),
        (["--section", "autograd"], lambda row: row.section == "autograd"),
        (["--path", "fork"], lambda row: not row.paths or "fork" in row.paths),
    ],
)
def test_rules_filter_by_section_priority_and_path(options, wanted):
    listed = json.loads(air("rules", *options, "--format", "json").stdout)
    assert [entry["id"] for entry in listed] == [row.id for row in shipped_pack().rows if wanted(row)]
    assert listed


def test_rules_list_every_row_by_default_and_refuse_an_unknown_path():
    lines = air("rules").stdout.splitlines()
    assert len(lines) == len(shipped_pack().rows) and lines[0].split()[:2] == ["1.1.1", "P1"]
    refused = air("rules", "--path", "nowhere")
    assert refused.returncode == 2 and "the pack's paths: fork, privateuse1" in refused.stderr


@pytest.mark.parametrize(
    ("name", "page", "text"),
    [
        ("pytorch-2.x", "device-register-module.md", "torch.\\<name\\>"),
        ("jax-pjrt-0.x", "client-create.md", "PJRT_Client_Create"),
    ],
)
def test_the_committed_reference_of_each_shipped_pack_is_current(tmp_path, name, page, text):
    """docs/rules/NAME is `air docs NAME` output: regenerate it when the pack changes."""
    done = air("docs", name, "-o", str(tmp_path))
    assert done.returncode == 0, done.stderr
    committed = REPO_ROOT / "docs" / "rules" / name
    fresh = {path.name: path.read_text() for path in tmp_path.iterdir()}
    assert fresh == {path.name: path.read_text() for path in committed.iterdir()}, (
        f"stale: run `air docs {name} -o docs/rules/{name}`"
    )
    rows = load_pack(name).rows
    assert len(fresh) == len(rows) + 1
    assert all(f"]({row.id}.md)" in fresh["index.md"] for row in rows)
    assert text in fresh[page]
