"""Provenance of a local checkout, read with git that a hostile checkout cannot make run anything."""

from __future__ import annotations

from air.source.provenance import local_source
from helpers.git import git


def repository(root):
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("x = 1\n")
    git(root, "add", "a.py")
    git(root, "commit", "-q", "-m", "one")
    git(root, "tag", "v1.0")
    return root


def test_plain_directory(tmp_path):
    source = local_source(tmp_path)
    assert (source.kind, source.commit, source.branch, source.dirty) == ("local", None, None, None)


def test_clean_and_dirty_checkout(tmp_path):
    root = repository(tmp_path / "repo")
    source = local_source(root)
    head = git(root, "rev-parse", "HEAD")
    assert (source.commit, source.branch, source.dirty, source.describe) == (head, "main", False, "v1.0")
    (root / "a.py").write_text("x = 2\n")
    dirty = local_source(root)
    assert (dirty.dirty, dirty.describe) == (True, "v1.0-dirty")


def test_a_hostile_config_runs_nothing(tmp_path):
    root = repository(tmp_path / "repo")
    marker = tmp_path / "ran"
    with open(root / ".git" / "config", "a") as config:
        config.write(f'[core]\n\tfsmonitor = "touch {marker}"\n\thooksPath = {tmp_path}/hooks\n')
    (tmp_path / "hooks").mkdir()
    (root / "a.py").write_text("x = 3\n")
    assert local_source(root).dirty is True
    assert not marker.exists()


def test_backend_version_from_the_tag(tmp_path, pack):
    from air.run import check

    root = repository(tmp_path / "repo")
    (root / "b.py").write_text("y = 1\n")
    git(root, "add", "b.py")
    git(root, "commit", "-q", "-m", "two")
    assert check(root, pack).backend.version == "v1.0"
