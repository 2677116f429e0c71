"""Evidence links: permalinks at the recorded commit on GitHub, GitLab and Gitee (from a git URL,
or a local checkout's origin), relative links into a local tree, none otherwise."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from air.report.links import NO_LINKS, evidence_links
from air.report.markdown import render_markdown
from air.results import Finding, Source
from air.source.git_directory import read_config
from helpers.cli import air
from helpers.git import git
from helpers.paths import FIXTURES
from helpers.reports import sample_report

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("https://github.com/acme/torch_acme.git", f"https://github.com/acme/torch_acme/blob/{COMMIT}/"),
        ("https://github.com/acme/torch_acme", f"https://github.com/acme/torch_acme/blob/{COMMIT}/"),
        ("git@github.com:acme/torch_acme.git", f"https://github.com/acme/torch_acme/blob/{COMMIT}/"),
        ("ssh://git@gitlab.com/group/sub/repo.git", f"https://gitlab.com/group/sub/repo/-/blob/{COMMIT}/"),
        ("https://gitee.com/ascend/pytorch.git", f"https://gitee.com/ascend/pytorch/blob/{COMMIT}/"),
    ],
)
def test_a_known_host_gives_permalinks_at_the_commit(url, base):
    links = evidence_links(Source("git", url, COMMIT))
    assert links.url("csrc/Guard.cpp", 15) == f"{base}csrc/Guard.cpp#L15"
    local = evidence_links(Source("local", "/src/acme", COMMIT, remote=url, subdir="backend"))
    assert local.url("a b.cpp", 2) == f"{base}backend/a%20b.cpp#L2"


@pytest.mark.parametrize(
    "source",
    [
        Source("git", "https://example.org/acme.git", COMMIT),  # a host air does not know
        Source("git", "https://github.com/acme/torch_acme.git", None),  # no commit
        Source("git", "https://github.com/acme/torch_acme.git", "main"),  # not a commit
        Source("local", "/src/acme", COMMIT, remote="javascript:alert(1)//github.com/a/b"),
        Source("dist", "torch_acme 1.0"),
    ],
)
def test_other_code_is_cited_without_a_link(source):
    assert evidence_links(source) == NO_LINKS


def test_a_local_tree_links_relative_to_the_report(tmp_path):
    tree, reports = tmp_path / "backend", tmp_path / "out" / "reports"
    tree.mkdir()
    reports.mkdir(parents=True)
    links = evidence_links(Source("local", str(tree)), tree, reports)
    assert links.url("csrc/Guard.cpp", 15) == "../../backend/csrc/Guard.cpp"


def test_markdown_links_tree_findings_but_not_a_probes(tmp_path):
    report = sample_report()
    probe = Finding("pack/probes/m.py", 3, "works", "verified", "probe p")
    rows = (replace(report.rows[0], evidence=(*report.rows[0].evidence, probe)), *report.rows[1:])
    links = evidence_links(Source("git", "https://github.com/acme/flux.git", COMMIT))
    markdown = render_markdown(replace(report, rows=rows), links)
    assert f"[`csrc/register.cpp:12`](https://github.com/acme/flux/blob/{COMMIT}/csrc/register.cpp#L12)" in markdown
    assert "`pack/probes/m.py:3` `works` (verified)" in markdown


def test_git_config_subsections_are_read():
    config = read_config(b'[core]\n\tfilemode = false\n[remote "origin"]\n\turl = git@github.com:a/b.git\n')
    assert config == {"core.filemode": "false", "remote.origin.url": "git@github.com:a/b.git"}


def test_a_checked_checkout_links_to_its_origin_at_its_commit(tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(FIXTURES / "pu1_full", checkout / "backend")
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "one")
    git(checkout, "remote", "add", "origin", "https://github.com/acme/torch_full.git")
    commit = git(checkout, "rev-parse", "HEAD")
    done = air("check", "-q", "--format", "markdown", "--output", "r.md", str(checkout / "backend"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    markdown = Path(tmp_path / "r.md").read_text()
    assert f"(https://github.com/acme/torch_full/blob/{commit}/backend/csrc/FullGuard.cpp#L15)" in markdown
