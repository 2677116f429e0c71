"""Tree snapshots: a settled, unchanged tree is answered without being read; any change to a file
it read, a file added, or a file changed too recently to be told apart, means reading it again."""

from __future__ import annotations

import os
import shutil

import air.index
import pytest
from air.report.json_report import render_json
from air.run import check_tree
from air.source import snapshot
from helpers.git import git
from helpers.paths import FIXTURES


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setenv("AIR_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "pu1_full"
    shutil.copytree(FIXTURES / "pu1_full", root)
    return root


@pytest.fixture
def settled(monkeypatch):
    """Files count as settled as soon as they were written before the reading began."""
    monkeypatch.setattr(snapshot, "SETTLE_NS", 0)


def checked(root, pack, messages=None):
    return check_tree(root, str(pack.directory), progress=(messages if messages is not None else []).append)


def snapshots(root):
    return sorted((root.parent / "cache" / snapshot.ENTRY_DIR).glob("*/*.json"))


def unread(monkeypatch):
    def refuse(*args):
        raise AssertionError("the tree was read")

    monkeypatch.setattr(air.index, "read_files", refuse)


def test_a_settled_unchanged_tree_is_answered_without_reading_it(tree, pack, settled, monkeypatch):
    first = checked(tree, pack)
    assert len(snapshots(tree)) == 1
    unread(monkeypatch)
    messages = []
    again = checked(tree, pack, messages)
    assert any("from the cache" in message for message in messages)
    assert render_json(again) == render_json(first)


def test_a_file_rewritten_with_its_size_and_times_kept_is_read_again(tree, pack, settled):
    setup = tree / "setup.py"
    assert checked(tree, pack).backend.version == "0.3.0"
    before = setup.stat()
    setup.write_text(setup.read_text().replace('"0.3.0"', '"0.4.0"'))
    os.utime(setup, ns=(before.st_atime_ns, before.st_mtime_ns))  # what `cp -p` or a careless tool leaves
    assert setup.stat().st_size == before.st_size
    assert checked(tree, pack).backend.version == "0.4.0"


def test_a_file_added_is_read(tree, pack, settled):
    first = checked(tree, pack)
    (tree / "extra_notes.py").write_text("import torch\ntorch.utils.rename_privateuse1_backend('other')\n")
    second = checked(tree, pack)
    assert second.index.files == first.index.files + 1


def test_a_directory_swapped_for_a_link_is_read_again(tree, pack, settled, tmp_path):
    git(tree, "init", "-q")
    git(tree, "add", ".")
    git(tree, "commit", "-q", "-m", "fixture")
    first = checked(tree, pack)
    package = tree / "torch_full"
    moved = tmp_path / "elsewhere"
    package.rename(moved)  # its files keep their status
    package.symlink_to(moved, target_is_directory=True)  # and git still lists them
    second = checked(tree, pack)
    assert second.index.files < first.index.files  # what lies behind the link is not the tree's


def test_a_reading_that_saw_a_file_changed_just_before_it_is_not_kept(tree, pack, monkeypatch):
    (tree / "setup.py").write_text((tree / "setup.py").read_text())
    checked(tree, pack)
    assert snapshots(tree) == []
    monkeypatch.setattr(snapshot, "SETTLE_NS", 0)
    checked(tree, pack)
    assert len(snapshots(tree)) == 1


def test_a_snapshot_copied_from_another_cache_is_not_trusted(tree, pack, settled, tmp_path, monkeypatch):
    checked(tree, pack)
    [copied] = snapshots(tree)
    other = tmp_path / "other-cache"
    monkeypatch.setenv("AIR_CACHE", str(other))
    checked(tree, pack)
    [own] = sorted((other / snapshot.ENTRY_DIR).glob("*/*.json"))
    assert own.name == copied.name
    shutil.copyfile(copied, own)
    reads = []
    read_files = air.index.read_files
    monkeypatch.setattr(air.index, "read_files", lambda *args: reads.append(args) or read_files(*args))
    checked(tree, pack)
    assert len(reads) == 1
