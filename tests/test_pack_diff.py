"""`air pack diff OLD NEW`: rows added, removed, renamed and changed between two packs, the
version bump that requires, a changelog entry, both packs run on backends, and packs as
released, read from git history."""

from __future__ import annotations

import json
import shutil

import pytest
from air.pack.diff import diff_packs, read_pack
from air.pack.revisions import pack_at
from air.pack.shipped import resolve_pack
from helpers.cli import air
from helpers.git import git
from helpers.packs import TINY_HEADER, write_pack
from helpers.paths import FIXTURES

ROW = """\
  - id: {id}
    item: "{item}"
    title: {title}
    priority: {priority}
    evidence:
      call:
        python_call: {{name: {call}}}
    score:
      2: call
    remediation: Do it.
    docs: [https://example.org/doc]
"""


def pack(root, name, version, rows, redirects=""):
    header = TINY_HEADER.replace("1.0.0", version) + redirects
    body = "section: device-registration\nrows:\n" + "".join(ROW.format(**row) for row in rows)
    return write_pack(root, header, body, name)


def row(id, item, title="A row", priority=1, call="torch.utils.rename_privateuse1_backend"):
    return {"id": id, "item": item, "title": title, "priority": priority, "call": call}


@pytest.fixture
def packs(tmp_path):
    old = pack(tmp_path, "old", "1.0.0", [row("kept", "1.1.1"), row("dropped", "1.1.2"), row("old-name", "1.1.3")])
    new = pack(
        tmp_path,
        "new",
        "1.1.0",
        [row("kept", "1.1.1", title="A row, reworded"), row("new-name", "1.1.3"), row("added", "1.1.4")],
        "redirects: {old-name: new-name}\n",
    )
    return old, new


def test_each_kind_of_change_and_the_bump_it_needs(packs):
    changes = diff_packs(read_pack(packs[0]), read_pack(packs[1]))
    assert [(change.id, change.change, change.fields, change.bump) for change in changes.rows] == [
        ("kept", "changed", ("title",), "patch"),
        ("dropped", "removed", (), "major"),
        ("new-name", "renamed from old-name", (), "minor"),
        ("added", "added", (), "minor"),
    ]
    assert (changes.required, changes.declared, changes.under_bumped) == ("major", "minor", True)


def test_priority_and_detection_changes_are_major_and_minor(tmp_path):
    old = pack(tmp_path, "a", "1.0.0", [row("r", "1.1.1"), row("s", "1.1.2")])
    new = pack(tmp_path, "b", "1.1.0", [row("r", "1.1.1", priority=2), row("s", "1.1.2", call="torch.x")])
    changes = diff_packs(read_pack(old), read_pack(new))
    assert [(change.id, change.fields, change.bump) for change in changes.rows] == [
        ("r", ("priority",), "major"),
        ("s", ("evidence",), "minor"),
    ]


def test_the_command_fails_when_the_bump_is_too_small_and_writes_a_changelog(packs):
    done = air("pack", "diff", str(packs[0]), str(packs[1]))
    assert done.returncode == 1
    assert "Required bump: **major**; declared: **minor** (too small)." in done.stdout
    assert done.stderr.strip() == "air: tiny 1.1.0: the change needs a major bump, the version shows a minor one"
    data = json.loads(air("pack", "diff", str(packs[0]), str(packs[1]), "--format", "json").stdout)
    assert data["required_bump"] == "major" and len(data["rows"]) == 4
    entry = air("pack", "diff", str(packs[0]), str(packs[1]), "--changelog").stdout
    assert entry.startswith("## 1.1.0\n\n### Added\n\n- 1.1.4 `added`\n")
    assert "- 1.1.3 `new-name` (renamed from old-name)" in entry and "### Removed\n\n- 1.1.2 `dropped`" in entry
    major = packs[1] / "pack.yaml"
    major.write_text(major.read_text().replace("version: 1.1.0", "version: 2.0.0"))
    assert air("pack", "diff", str(packs[0]), str(packs[1])).returncode == 0


def test_against_a_backend_shows_the_rows_whose_points_change(tmp_path):
    found = "torch.utils.rename_privateuse1_backend"
    old = pack(tmp_path, "a", "1.0.0", [row("r", "1.1.1", call=found)])
    new = pack(tmp_path, "b", "1.1.0", [row("r", "1.1.1", call="torch.nothing_calls_this")])
    done = air("pack", "diff", str(old), str(new), "--against", str(FIXTURES / "pu1_full"))
    assert done.returncode == 0, done.stderr
    assert "## Checked: " in done.stdout and "- 1.1.1 `r`: 2 → 0" in done.stdout
    assert "Readiness 100.0 % → 0.0 % (-100.0 pp)." in done.stdout


def test_a_pack_as_released_is_read_from_git_history(tmp_path):
    repository = tmp_path / "air"
    shipped = repository / "rulepacks" / "tiny"
    pack(repository / "rulepacks", "tiny", "1.0.0", [row("r", "1.1.1")])
    git(repository, "init", "-q", "-b", "main")
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "1.0.0")
    shutil.rmtree(shipped / "rows")
    pack(tmp_path / "next", "tiny", "1.1.0", [row("r", "1.1.1"), row("s", "1.1.2")])
    shutil.copytree(tmp_path / "next" / "tiny", shipped, dirs_exist_ok=True)
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "1.1.0")
    for spec in (f"{shipped}@1.0.0", f"{shipped}@HEAD~1"):
        with pack_at(spec, repository) as released:
            assert read_pack(released).version == "1.0.0" and set(read_pack(released).rows) == {"r"}
    with pytest.raises(Exception, match="no such version of tiny"):
        with pack_at(f"{shipped}@3.0.0", repository):
            pass


def test_a_pack_named_with_its_version_must_have_it(tmp_path):
    version = read_pack(resolve_pack("pytorch-2.x")).version
    done = air(
        "check",
        "-q",
        "--pack",
        f"pytorch-2.x@{version}",
        "--format",
        "json",
        "--output",
        "r.json",
        str(FIXTURES / "pu1_full"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["pack"]["version"] == version
    refused = air("check", "-q", "--pack", "pytorch-2.x@0.0.1", str(FIXTURES / "pu1_full"), cwd=tmp_path)
    assert refused.returncode == 2
    assert f"pack pytorch-2.x here is version {version}, not 0.0.1" in refused.stderr


def test_the_shipped_packs_changelog_has_an_entry_for_its_version():
    text = (resolve_pack("pytorch-2.x") / "CHANGELOG.md").read_text()
    version = read_pack(resolve_pack("pytorch-2.x")).version
    assert f"\n## {version}\n" in text


def test_one_pack_across_two_releases_lists_the_rows_each_leaves_out():
    shown = air("pack", "diff", "pytorch-2.x", "--torch", "2.4", "2.13", "--format", "json")
    assert shown.returncode == 0, shown.stderr
    diff = json.loads(shown.stdout)
    assert diff["only_old"] == [] and diff["catalogs"] == ["2.4.1", "2.13.0"]
    assert {row["id"] for row in diff["only_new"]} >= {"autoload-entry-point", "accelerator-is-available"}
    assert {row["id"] for row in diff["only_new"]} >= {"hook-new-generator", "hook-is-built", "hook-is-pinned-ptr"}
    assert all(row["releases"] in (">=2.5", ">=2.6", ">=2.7") for row in diff["only_new"])
    # the named-tensor overloads left PyTorch in 2.13; the int4 CPU packing arrived after 2.4
    assert {"align_as", "cat.names"} <= set(diff["ops_removed"]) and "_convert_weight_to_int4pack_for_cpu" in diff[
        "ops_added"
    ]
    assert not set(diff["ops_added"]) & set(diff["ops_removed"])
    assert set(diff["core_added"]) >= {"elu", "full_like"}
    shown = air("pack", "diff", "pytorch-2.x", "--releases", "2.13", "2.4").stdout
    assert shown.count("N/A on 2.4 (12)") == 1 and "Operator catalogs: PyTorch 2.13.0 → 2.4.1." in shown
    same = air("pack", "diff", "pytorch-2.x", "--torch", "2.13.0", "2.13.1").stdout
    assert "Both releases are checked against one operator catalog, of PyTorch 2.13.0." in same


def test_a_release_outside_the_packs_range_and_a_missing_pack_are_refused():
    outside = air("pack", "diff", "pytorch-2.x", "--torch", "2.0", "2.13")
    assert outside.returncode == 2 and "pytorch-2.x supports PyTorch >=2.1,<3; 2.0 is outside it" in outside.stderr
    assert air("pack", "diff", "jax-pjrt-0.x", "--jax", "0.4.20", "0.10.2").returncode == 0
    assert air("pack", "diff", "pytorch-2.x").returncode == 2
    assert air("pack", "diff", "pytorch-2.x", "pytorch-2.x", "--torch", "2.5", "2.6").returncode == 2
