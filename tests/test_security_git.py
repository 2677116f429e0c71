"""A hostile checkout, a hostile `.git` and a hostile git configuration never make air run anything,
read another repository, or hang; and air's own reading of HEAD, refs and the index is right."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from air.source import git_index as gitindex
from air.source.git_directory import find_repository
from air.source.locate import locate
from air.source.provenance import local_source
from air.source.tree import list_paths
from helpers.git import git
from helpers.trees import write_tree

AIR = Path(sys.executable).parent / "air"
CHECK_TIMEOUT = 60  # a tree of two files is checked in about a second; a blocked git waits minutes


def repository(root: Path, files: dict[str, str] | None = None) -> Path:
    """A checkout on `main` with one commit tagged v1.0."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    write_tree(root, files or {"a.py": "import torch\n"})
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "one")
    git(root, "tag", "v1.0")
    return root


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD")


def air_check(tree: Path | str, tmp_path: Path, env: dict[str, str] | None = None) -> dict:
    """The JSON report of `air check` on `tree`, run through the real command line."""
    output = tmp_path / "report.json"
    result = subprocess.run(
        [str(AIR), "check", "--no-cache", "-q", "--format", "json", "--output", str(output), str(tree)],
        capture_output=True,
        text=True,
        timeout=CHECK_TIMEOUT,
        env={**os.environ, "AIR_CACHE": str(tmp_path / "cache"), **(env or {})},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(output.read_text())


def append_config(root: Path, text: str) -> None:
    with open(root / ".git" / "config", "a") as config:
        config.write(text)


def filtered_checkout(root: Path, config: str) -> Path:
    """A checkout whose every path is marked for filter `x`, defined by `config`, with a.py modified."""
    repository(root, {"a.py": "import torch\n", ".gitattributes": "* filter=x\n"})
    append_config(root, config)
    (root / "a.py").write_text("import torch  # changed\n")
    return root


# -- filters, includes, fsmonitor: nothing of the checkout's configuration runs ------------------------------------


@pytest.mark.parametrize("kind", ["clean", "process", "include"])
def test_a_filter_of_the_checkout_never_runs(tmp_path, kind):
    marker = tmp_path / "ran"
    driver = f'[filter "x"]\n\t{"process" if kind == "process" else "clean"} = touch {marker}\n'
    if kind == "include":
        (tmp_path / "evil.config").write_text(driver)
        driver = f"[include]\n\tpath = {tmp_path / 'evil.config'}\n"
    root = filtered_checkout(tmp_path / "repo", driver)
    source = air_check(root, tmp_path)["backend"]["source"]
    assert not marker.exists()
    assert (source["commit"], source["branch"], source["dirty"], source["describe"]) == (
        head(root),
        "main",
        True,
        "v1.0-dirty",
    )


def test_fsmonitor_hooks_and_pager_of_the_checkout_never_run(tmp_path):
    marker = tmp_path / "ran"
    root = repository(tmp_path / "repo")
    (tmp_path / "hooks").mkdir()
    for hook in ("post-checkout", "reference-transaction", "post-index-change"):
        (tmp_path / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (tmp_path / "hooks" / hook).chmod(0o755)
    append_config(
        root,
        f'[core]\n\tfsmonitor = "touch {marker}"\n\thooksPath = {tmp_path}/hooks\n'
        f"\tpager = touch {marker}\n[pager]\n\tdescribe = touch {marker}\n",
    )
    (root / "a.py").write_text("import torch  # changed\n")
    report = air_check(root, tmp_path)
    assert not marker.exists()
    assert report["backend"]["source"]["dirty"] is True and report["index"]["files"] == 1


def test_a_fixture_of_a_pack_runs_nothing_either(tmp_path, pack):
    from air.packtest import check_fixture

    marker = tmp_path / "ran"
    root = filtered_checkout(tmp_path / "fixture", f'[filter "x"]\n\tclean = touch {marker}\n')
    (root / "expected.yaml").write_text("rows:\n  device-rename-pu1: 0\n")
    check_fixture(pack, root)
    assert not marker.exists()


# -- repository discovery is air's: a .git file, commondir and core.worktree never lead elsewhere ------------------


@pytest.mark.parametrize("spelling", ["absolute", "relative"])
def test_a_git_file_pointing_at_another_repository_is_not_followed(tmp_path, spelling):
    marker = tmp_path / "ran"
    other = filtered_checkout(tmp_path / "other", f'[filter "x"]\n\tclean = touch {marker}\n')
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_text("import torch  # not the other's\n")
    (tree / "b.py").write_text("import torch\n")
    (tree / ".gitattributes").write_text("* filter=x\n")
    target = other / ".git" if spelling == "absolute" else Path("../other/.git")
    (tree / ".git").write_text(f"gitdir: {target}\n")
    report = air_check(tree, tmp_path)
    assert not marker.exists()
    source = report["backend"]["source"]
    assert (source["commit"], source["branch"], source["dirty"], source["describe"]) == (None, None, None, None)
    assert find_repository(tree) is None
    assert {".gitattributes", "a.py", "b.py"} <= set(list_paths(tree))


def test_a_worktree_entry_that_does_not_name_the_tree_is_not_followed(tmp_path):
    other = repository(tmp_path / "other")
    git(other, "worktree", "add", "-q", str(tmp_path / "real"))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {other}/.git/worktrees/real\n")
    assert local_source(tree).commit is None and find_repository(tree) is None


def test_a_commondir_leading_out_of_the_tree_is_not_followed(tmp_path):
    other = repository(tmp_path / "other")
    tree = repository(tmp_path / "tree")
    (tree / ".git" / "commondir").write_text(f"{other}/.git\n")
    assert find_repository(tree) is None and local_source(tree).commit is None


def test_a_symlinked_git_directory_is_not_followed(tmp_path):
    other = repository(tmp_path / "other")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").symlink_to(other / ".git")
    assert find_repository(tree) is None and local_source(tree).commit is None


def test_a_linked_worktree_and_a_submodule_are_checkouts(tmp_path):
    main = repository(tmp_path / "main")
    git(main, "worktree", "add", "-q", "-b", "side", str(tmp_path / "linked"))
    linked = local_source(tmp_path / "linked")
    assert (linked.commit, linked.branch, linked.dirty, linked.describe) == (head(main), "side", False, "v1.0")
    (tmp_path / "linked" / "a.py").write_text("changed\n")
    assert local_source(tmp_path / "linked").dirty is True
    sub = repository(tmp_path / "sub", {"s.py": "import torch\n"})
    git(main, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "vendor/sub")
    module = local_source(main / "vendor" / "sub")
    assert (module.commit, module.dirty, module.describe) == (head(sub), False, "v1.0")
    assert list_paths(main / "vendor" / "sub") == ["s.py"]


def test_core_worktree_outside_the_tree_is_refused(tmp_path):
    marker = tmp_path / "ran"
    root = filtered_checkout(tmp_path / "repo", f'[filter "x"]\n\tclean = touch {marker}\n')
    append_config(root, f"[core]\n\tworktree = {tmp_path}\n")
    (tmp_path / "a.py").write_text("outside\n")
    (tmp_path / ".gitattributes").write_text("* filter=x\n")
    report = air_check(root, tmp_path)
    assert not marker.exists()
    assert report["backend"]["source"]["commit"] is None and find_repository(root) is None
    assert "a.py" in list_paths(root) and ".gitattributes" in list_paths(root)


def test_inherited_git_variables_never_redirect_git(tmp_path):
    marker = tmp_path / "ran"
    other = filtered_checkout(tmp_path / "other", f'[filter "x"]\n\tclean = touch {marker}\n')
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_text("import torch\n")
    redirect = {"GIT_DIR": str(other / ".git"), "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='touch {marker}'"}
    report = air_check(tree, tmp_path, env=redirect)
    assert not marker.exists() and report["backend"]["source"]["commit"] is None
    source = air_check(other, tmp_path, env={**redirect, "GIT_DIR": str(tmp_path / "nowhere")})["backend"]["source"]
    assert not marker.exists() and source["describe"] == "v1.0-dirty"


# -- nothing in a checkout can block air ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "member",
    [".git/HEAD", ".git/index", ".git/config", ".git/packed-refs", ".git/info/exclude", ".gitignore", "excludes"],
)
def test_a_fifo_in_a_checkout_never_blocks(tmp_path, member):
    root = repository(tmp_path / "repo")
    (root / ".git" / "info").mkdir(exist_ok=True)
    fifo = root / member
    if member == "excludes":
        fifo = tmp_path / "excludes"
        append_config(root, f"[core]\n\texcludesFile = {fifo}\n")
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    report = air_check(root, tmp_path)
    assert report["index"]["files"] == 1


# -- URL clones: neither the user's configuration nor the fetched tree runs anything --------------------------------


@pytest.fixture()
def lfs_remote(tmp_path):
    """A bare repository whose data.bin is marked for the `lfs` filter, built without any filter defined."""
    clean = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", env=clean)
    (work / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs -text\n")
    (work / "data.bin").write_text("raw content\n")
    (work / "a.py").write_text("import torch\n")
    git(work, "add", ".", env=clean)
    git(work, "commit", "-q", "-m", "one", env=clean)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(remote)], check=True, capture_output=True, env=clean)
    return remote


@pytest.mark.parametrize("key", ["smudge", "process"])
def test_a_global_lfs_filter_never_runs_during_a_fetch(lfs_remote, tmp_path, monkeypatch, key):
    marker = tmp_path / "ran"
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        f"[filter \"lfs\"]\n\t{key} = sh -c 'touch {marker}; cat'\n\trequired = true\n[core]\n\thooksPath = {home}\n"
    )
    (home / "post-checkout").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (home / "post-checkout").chmod(0o755)
    user = {"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "AIR_CACHE": str(tmp_path / "cache")}
    for name, value in user.items():
        monkeypatch.setenv(name, value)
    located = locate(f"file://{lfs_remote}")
    assert not marker.exists()
    assert (located.root / "data.bin").read_text() == "raw content\n" and len(located.source.commit) == 40
    report = air_check(f"file://{lfs_remote}@main", tmp_path, env=user)
    assert not marker.exists() and report["backend"]["source"]["kind"] == "git"


# -- HEAD and refs, read without git -------------------------------------------------------------------------------


def test_detached_head(tmp_path):
    root = repository(tmp_path / "repo")
    git(root, "checkout", "-q", "--detach")
    source = local_source(root)
    assert (source.commit, source.branch, source.dirty) == (head(root), None, False)


def test_packed_refs_only(tmp_path):
    root = repository(tmp_path / "repo")
    git(root, "pack-refs", "--all", "--prune")
    assert not (root / ".git" / "refs" / "heads" / "main").exists()
    source = local_source(root)
    assert (source.commit, source.branch, source.describe) == (head(root), "main", "v1.0")


@pytest.mark.parametrize("branch", ["feature/x-1.2", "release/v2/rc"])
def test_branch_names(tmp_path, branch):
    root = repository(tmp_path / "repo")
    git(root, "checkout", "-q", "-b", branch)
    assert (local_source(root).branch, local_source(root).commit) == (branch, head(root))


def test_an_unborn_branch(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "fresh")
    source = local_source(root)
    assert (source.commit, source.branch, source.describe) == (None, "fresh", None)


@pytest.mark.parametrize("content", ["ref: refs/heads/../../../../etc/passwd\n", "ref: /etc/passwd\n", "nonsense\n"])
def test_a_hostile_head_names_no_commit(tmp_path, content):
    root = repository(tmp_path / "repo")
    (root / ".git" / "HEAD").write_text(content)
    assert local_source(root).commit is None


def test_refs_behind_a_symbolic_link_are_not_read(tmp_path):
    other = repository(tmp_path / "other")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".git" / "refs" / "heads").rmdir()
    (root / ".git" / "refs" / "heads").symlink_to(other / ".git" / "refs" / "heads")
    assert local_source(root).commit is None


# -- whether tracked files changed, computed from the index -------------------------------------------------------


def aged(root: Path) -> Path:
    """Files dated a day back, so that no index entry is racily clean."""
    for path in root.rglob("*"):
        if ".git" not in path.parts:
            os.utime(path, (path.stat().st_mtime - 86400,) * 2, follow_symlinks=False)
    git(root, "update-index", "--refresh")
    return root


def dirty(root: Path) -> bool | None:
    return local_source(root).dirty


def test_clean_and_modified_trees(tmp_path):
    root = aged(repository(tmp_path / "repo", {"a.py": "x = 1\n", "pkg/b.py": "y = 2\n"}))
    assert dirty(root) is False
    (root / "pkg" / "b.py").write_text("y = 3\n")
    assert dirty(root) is True
    (root / "pkg" / "b.py").write_text("y = 2\n")
    assert dirty(root) is False
    (root / "a.py").unlink()
    assert dirty(root) is True


@pytest.mark.parametrize("version", ["2", "4"])
def test_every_index_version(tmp_path, version):
    files = {f"dir{i % 3}/sub/file{i}.py": f"v = {i}\n" for i in range(12)}
    root = aged(repository(tmp_path / "repo", files))
    git(root, "update-index", "--index-version", version)
    assert (root / ".git" / "index").read_bytes()[4:8] == struct.pack(">I", int(version))
    assert dirty(root) is False
    (root / "dir2" / "sub" / "file11.py").write_text("v = 0\n")
    assert dirty(root) is True


@pytest.mark.parametrize("version", [3, 4])
def test_skip_worktree_and_assume_unchanged_entries_count_as_clean(tmp_path, version):
    root = aged(repository(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 1\n", "c.py": "z = 1\n"}))
    git(root, "update-index", "--skip-worktree", "a.py")
    git(root, "update-index", "--assume-unchanged", "b.py")
    git(root, "update-index", "--index-version", str(version))
    assert (root / ".git" / "index").read_bytes()[4:8] == struct.pack(">I", version)
    (root / "a.py").write_text("x = 2\n")
    (root / "b.py").unlink()
    assert dirty(root) is False
    (root / "c.py").write_text("z = 2\n")
    assert dirty(root) is True


def test_an_intent_to_add_entry_is_a_change(tmp_path):
    root = aged(repository(tmp_path / "repo"))
    (root / "new.py").write_text("z = 1\n")
    git(root, "add", "-N", "new.py")
    assert dirty(root) is True


def test_an_entry_as_new_as_the_index_is_hashed(tmp_path):
    root = aged(repository(tmp_path / "repo", {"a.py": "x = 1\n"}))
    recorded = (root / "a.py").stat().st_mtime_ns
    (root / "a.py").write_text("x = 2\n")
    os.utime(root / "a.py", ns=(recorded, recorded))
    os.utime(root / ".git" / "index", ns=(recorded, recorded))
    assert dirty(root) is True


def test_mode_and_symbolic_links(tmp_path):
    root = repository(tmp_path / "repo", {"a.sh": "echo\n", "target.py": "x = 1\n"})
    (root / "link.py").symlink_to("target.py")
    git(root, "add", "link.py")
    git(root, "commit", "-q", "-m", "link")
    aged(root)
    assert dirty(root) is False
    (root / "a.sh").chmod(0o755)
    assert dirty(root) is True
    (root / "a.sh").chmod(0o644)
    (root / "link.py").unlink()
    (root / "link.py").symlink_to("a.sh")
    assert dirty(root) is True


def test_a_symlinked_directory_is_not_followed_out_of_the_tree(tmp_path):
    root = aged(repository(tmp_path / "repo", {"pkg/a.py": "x = 1\n"}))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.py").write_text("x = 1\n")
    (root / "pkg" / "a.py").unlink()
    (root / "pkg").rmdir()
    (root / "pkg").symlink_to(outside)
    assert dirty(root) is True


def test_only_the_analysed_folder_counts(tmp_path):
    root = aged(repository(tmp_path / "repo", {"inside/a.py": "x = 1\n", "elsewhere/b.py": "y = 1\n"}))
    (root / "elsewhere" / "b.py").write_text("y = 2\n")
    assert dirty(root / "inside") is False and dirty(root) is True


def test_a_sha256_repository(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main", "--object-format=sha256")
    (root / "a.py").write_text("x = 1\n")
    git(root, "add", "a.py")
    git(root, "commit", "-q", "-m", "one")
    aged(root)
    source = local_source(root)
    assert (source.commit, source.dirty) == (head(root), False) and len(source.commit) == 64
    (root / "a.py").write_text("x = 2\n")
    assert dirty(root) is True


def test_a_clean_tree_hashes_nothing(tmp_path, monkeypatch):
    root = aged(repository(tmp_path / "repo", {f"d{i % 40}/f{i}.py": f"v = {i}\n" for i in range(3000)}))
    hashed = []
    monkeypatch.setattr(gitindex, "_blob_id", lambda *args: hashed.append(args) or b"")
    assert dirty(root) is False and hashed == []


@pytest.mark.parametrize("damage", ["version 5", "truncated", "missing", "empty"])
def test_an_unreadable_index_means_unknown(tmp_path, damage):
    root = aged(repository(tmp_path / "repo"))
    index = root / ".git" / "index"
    data = index.read_bytes()
    if damage == "missing":
        index.unlink()
    else:
        index.write_bytes(
            {"version 5": data[:4] + struct.pack(">I", 5) + data[8:], "truncated": data[:60], "empty": b""}[damage]
        )
    assert dirty(root) is None


def raw_index(*paths: bytes) -> bytes:
    """A version 2 index listing `paths` as empty regular files."""
    entries = b""
    for path in paths:
        entry = struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0)
        entry += hashlib.sha1(b"blob 0\0").digest() + struct.pack(">H", len(path)) + path
        entries += entry + b"\0" * (8 - len(entry) % 8)
    body = b"DIRC" + struct.pack(">II", 2, len(paths)) + entries
    return body + hashlib.sha1(body).digest()


@pytest.mark.parametrize("path", [b"../outside.py", b"/etc/hostname", b"a/../../outside.py", b".git/config"])
def test_an_index_naming_paths_outside_the_tree_is_not_trusted(tmp_path, path):
    root = repository(tmp_path / "repo")
    (tmp_path / "outside.py").write_text("")
    (root / ".git" / "index").write_bytes(raw_index(path))
    assert dirty(root) is None


@pytest.mark.parametrize("crafted", [b"link/../../secret.py", b"/etc/hostname", b"a//b.py", b"./kernels.py"])
def test_git_listing_keeps_only_paths_inside_the_tree(tmp_path, crafted):
    """git lists whatever its index holds: a path that climbs out through a link, or is not
    written as a path of the tree, is reported, never read or copied under that name."""
    root = repository(tmp_path / "repo", {"kernels.py": "x = 1\n", "deep/er/ops.py": "y = 2\n"})
    (root / "link").symlink_to("deep/er")
    (root / ".git" / "index").write_bytes(raw_index(*sorted([b"kernels.py", b"deep/er/ops.py", crafted])))
    unreadable: list[tuple[str, str]] = []
    assert list_paths(root, unreadable) == ["deep/er/ops.py", "kernels.py", "link"]  # the link is untracked
    assert unreadable == [
        (
            crafted.decode(),
            "listed by git, but not a path inside the tree (absolute, or with an empty, . or .. component)",
        )
    ]


@pytest.mark.parametrize("entry", ["", "."])
def test_a_git_the_tree_ships_never_runs_whatever_path_holds(tmp_path, entry):
    """git runs in the tree: a relative or empty PATH entry must not make it the tree's own."""
    root = repository(tmp_path / "repo", {"pkg/__init__.py": "import torch\n"})
    marker = tmp_path / "ran"
    fake = root / "git"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{entry}{os.pathsep}{os.environ['PATH']}"}
    air_check(root, tmp_path, env)
    assert not marker.exists()


def _git_file_loop(root: Path) -> None:
    (root / ".git").rename(root / "real.git")
    (root / "loop").symlink_to("loop")
    (root / ".git").write_text("gitdir: loop\n")


def _git_file_null(root: Path) -> None:
    (root / ".git").rename(root / "real.git")
    (root / ".git").write_bytes(b"gitdir: real\0.git\n")


def _commondir_loop(root: Path) -> None:
    (root / ".git" / "loop").symlink_to("loop")
    (root / ".git" / "commondir").write_text("loop\n")


def _worktree_loop(root: Path) -> None:
    (root / ".git" / "loop").symlink_to("loop")
    append_config(root, "[core]\n\tworktree = loop\n")


def _submodule_loop(root: Path) -> None:
    (root / "third_party").mkdir()
    (root / "third_party" / "ops").symlink_to("ops")
    (root / ".gitmodules").write_text('[submodule "ops"]\n\tpath = third_party/ops\n\turl = ../ops\n')


def _index_null_path(root: Path) -> None:
    (root / ".git" / "index").write_bytes(raw_index(b"pkg/__init__.py", b"pkg/a\0b.py"))


def _index_deep_path(root: Path) -> None:
    (root / ".git" / "index").write_bytes(raw_index(b"pkg/__init__.py", b"d/" * 1500 + b"x.py"))


@pytest.mark.parametrize(
    "damage",
    [
        _git_file_loop,
        _git_file_null,
        _commondir_loop,
        _worktree_loop,
        _submodule_loop,
        _index_null_path,
        _index_deep_path,
    ],
)
def test_links_that_loop_and_names_no_path_can_have_are_checked_through(tmp_path, damage):
    """A link loop or a NUL byte where the tree names a path, or an index path nested too deep to
    follow by recursion, never ends the check with an internal error."""
    root = repository(tmp_path / "repo", {"pkg/__init__.py": "import torch\n"})
    damage(root)
    report = air_check(root, tmp_path)
    assert report["backend"]["name"]


def test_a_huge_file_that_changed_size_is_not_hashed(tmp_path):
    """git takes a size that changed as a change; hashing a sparse file of terabytes would take hours."""
    root = repository(tmp_path / "repo", {"pkg/__init__.py": "import torch\n", "weights.bin": "w"})
    with open(root / "weights.bin", "r+b") as handle:
        handle.truncate(1 << 40)  # sparse: a terabyte of nothing
    repository_found = find_repository(root)
    assert repository_found is not None
    assert gitindex.worktree_differs(repository_found) is True
