"""Targets as users give them: local directories and git URLs, with refusals and clean failures."""

from __future__ import annotations

import subprocess

import pytest
from air.errors import InputError
from air.source.locate import _split_ref, locate
from helpers.git import git


@pytest.fixture()
def bare(tmp_path, monkeypatch):
    """A bare repository with two tagged commits, the newer on `main`, and an AIR_CACHE."""
    monkeypatch.setenv("AIR_CACHE", str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "setup.py").write_text('from setuptools import setup\nsetup(name="torch_url")\n')
    (work / "marker.txt").write_text("first\n")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "one")
    git(work, "tag", "v1")
    (work / "marker.txt").write_text("second\n")
    git(work, "commit", "-q", "-am", "two")
    hook = work / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {tmp_path}/hook-ran\n")
    hook.chmod(0o755)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(remote)], check=True, capture_output=True)
    (remote / "hooks" / "post-checkout").write_text(hook.read_text())
    (remote / "hooks" / "post-checkout").chmod(0o755)
    return remote


def test_local_directory(tmp_path):
    located = locate(str(tmp_path))
    assert located.root == tmp_path and located.source.kind == "local"


def test_file_url_at_a_tag_and_the_default_branch(bare, tmp_path):
    tagged = locate(f"file://{bare}@v1")
    assert (tagged.root / "marker.txt").read_text() == "first\n"
    assert (tagged.source.kind, tagged.source.location, tagged.source.branch) == ("git", f"file://{bare}", "v1")
    assert len(tagged.source.commit) == 40
    latest = locate(f"file://{bare}")
    assert (latest.root / "marker.txt").read_text() == "second\n"
    assert not (tmp_path / "hook-ran").exists()


def test_ref_option_and_a_bare_path(bare):
    located = locate(str(bare), ref="v1")
    assert (located.root / "marker.txt").read_text() == "first\n"


@pytest.mark.parametrize("head", ["see the refs folder\n", "ref: heads/main\n", ""])
def test_a_source_tree_that_only_looks_like_a_git_directory_is_analysed_where_it_is(tmp_path, head):
    (tmp_path / "objects").mkdir()
    (tmp_path / "refs").mkdir()
    (tmp_path / "HEAD").write_text(head)
    located = locate(str(tmp_path))
    assert located.root == tmp_path and located.source.kind == "local"


def test_second_run_reuses_the_fetched_copy(bare):
    first = locate(f"file://{bare}@v1")
    messages = []
    again = locate(f"file://{bare}@v1", progress=messages.append)
    assert again.root == first.root and any("fetched before" in m for m in messages)


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        ("ext::sh -c touch% /tmp/pwned", "refusing the 'ext::' transport"),
        ("fd::17", "refusing the 'fd::' transport"),
        ("--upload-pack=touch /tmp/pwned", "refusing a target that starts with '-'"),
        ("no-such-name", r"not a directory, not a git URL, and no known backend of that name \(known: none\)"),
    ],
)
def test_refusals(target, fragment):
    with pytest.raises(InputError, match=fragment):
        locate(target)


def test_unreachable_repository_fails_in_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("AIR_CACHE", str(tmp_path / "cache"))
    with pytest.raises(InputError) as error:
        locate(f"file://{tmp_path}/missing.git")
    assert "\n" not in str(error.value) and "missing.git" in str(error.value)
    clones = tmp_path / "cache" / "clones"
    assert not clones.exists() or not any(clones.iterdir())


def test_unknown_ref_fails_in_one_line(bare):
    with pytest.raises(InputError) as error:
        locate(f"file://{bare}@no-such-tag")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("target", "split"),
    [
        ("https://github.com/org/repo@v2.1", ("https://github.com/org/repo", "v2.1")),
        ("https://github.com/org/repo", ("https://github.com/org/repo", None)),
        ("ssh://git@host/org/repo.git@main", ("ssh://git@host/org/repo.git", "main")),
        ("ssh://git@host/org/repo.git", ("ssh://git@host/org/repo.git", None)),
        ("git@github.com:org/repo.git", ("git@github.com:org/repo.git", None)),
        ("git@github.com:org/repo.git@feature/x", ("git@github.com:org/repo.git", "feature/x")),
    ],
)
def test_ref_splitting(target, split):
    assert _split_ref(target) == split


def test_check_of_a_git_url_records_url_and_commit(bare, tmp_path):
    import json
    import os
    import sys

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "air",
            "check",
            "-q",
            "--format",
            "json",
            "--output",
            "-",
            f"file://{bare}",
            "--ref",
            "v1",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "AIR_CACHE": str(tmp_path / "cache")},
    )
    assert result.returncode == 0, result.stderr
    source = json.loads(result.stdout)["backend"]["source"]
    assert (source["kind"], source["location"], source["branch"]) == ("git", f"file://{bare}", "v1")
    assert len(source["commit"]) == 40
    assert json.loads(result.stdout)["backend"]["name"] == "torch_url"


def test_known_backends_are_read_only_for_a_bare_name(tmp_path):
    def unread():
        raise AssertionError("backends.yaml was read for a directory")

    assert locate(str(tmp_path), known=unread).root == tmp_path


def test_known_backend_by_alias(bare):
    from air.source.locate import KnownBackend

    known = (KnownBackend("demo", ("torch_demo",), "Demo Inc.", f"file://{bare}", ref="v1"),)
    messages = []
    located = locate("TORCH_DEMO", known=lambda: known, progress=messages.append)
    assert (located.root / "marker.txt").read_text() == "first\n"
    assert located.source.location == f"file://{bare}" and located.source.branch == "v1"
    assert messages[0] == f"TORCH_DEMO: the Demo Inc. backend, file://{bare}"


def test_subdir_keeps_the_repository_provenance(tmp_path):
    (tmp_path / "repo" / "extra" / "backend").mkdir(parents=True)
    located = locate(str(tmp_path / "repo"), subdir="extra/backend")
    assert located.root == (tmp_path / "repo" / "extra" / "backend").resolve()
    assert located.source.subdir == "extra/backend"
    assert located.source.location == str((tmp_path / "repo").resolve())
    with pytest.raises(InputError, match="leaves the checked-out tree"):
        locate(str(tmp_path / "repo"), subdir="../..")
    with pytest.raises(InputError, match="no such directory"):
        locate(str(tmp_path / "repo"), subdir="missing")


def test_shipped_known_backends_load():
    from air.pack.framework import known_backends
    from air.pack.shipped import framework_dir

    names = {b.name for b in known_backends(framework_dir("pytorch"))}
    assert {"npu", "mlu", "musa", "spyre", "dipu", "xpu"} <= names


def test_an_interrupted_fetch_leaves_no_temporary_clone(bare, tmp_path, monkeypatch):
    import air.source.locate as module

    real = module.run_git

    def interrupted(directory, *args, **kwargs):
        if "fetch" in args:
            raise KeyboardInterrupt
        return real(directory, *args, **kwargs)

    monkeypatch.setattr(module, "run_git", interrupted)
    with pytest.raises(KeyboardInterrupt):
        locate(f"file://{bare}@v1")
    clones = tmp_path / "cache" / "clones"
    assert not clones.exists() or list(clones.iterdir()) == []


def test_a_cache_that_is_not_a_directory_fails_a_fetch_in_one_line(bare, tmp_path, monkeypatch):
    blocker = tmp_path / "cache-file"
    blocker.write_text("")
    monkeypatch.setenv("AIR_CACHE", str(blocker))
    with pytest.raises(InputError, match="cannot keep fetched repositories there"):
        locate(f"file://{bare}")
