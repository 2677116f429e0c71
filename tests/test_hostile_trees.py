"""Hostile trees, generated here: every one is checked to the end, with a report and a count of
what was skipped and why. Time and peak memory are printed after the run, not asserted tightly."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import pytest
from air.run import check
from helpers.git import git
from helpers.measurements import HOSTILE_TREES

PEAK_LIMIT_MB = 1500  # a generous bound: a tree must not make memory grow without limit


def checked(root: Path, pack):
    started = time.perf_counter()
    report = check(root, pack)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    HOSTILE_TREES.append(
        f"{root.name}: {time.perf_counter() - started:.2f} s, peak RSS {peak:.0f} MB, "
        f"{report.index.files} files, skipped {dict(report.index.skipped)}"
    )
    assert len(report.rows) == len(pack.rows)
    assert peak < PEAK_LIMIT_MB
    return report


def skipped(report) -> dict[str, int]:
    return dict(report.index.skipped)


def test_symlink_loops_and_links_leaving_the_tree(tmp_path, pack):
    root = tmp_path / "links"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").symlink_to(root / "pkg" / "b.py")
    (root / "pkg" / "b.py").symlink_to(root / "pkg" / "a.py")
    (root / "pkg" / "loop").symlink_to(root)
    (root / "pkg" / "passwd.py").symlink_to("/etc/passwd")
    (root / "pkg" / "real.py").write_text("import torch\n")
    (root / "pkg" / "alias.py").symlink_to(root / "pkg" / "real.py")
    report = checked(root, pack)
    assert skipped(report)["symlink leaving the tree"] == 1
    assert skipped(report)["unreadable"] == 2  # the two links that point at each other


def test_sparse_binary_encodings_long_lines_and_empty_files(tmp_path, pack):
    root = tmp_path / "contents"
    root.mkdir()
    with open(root / "huge.cpp", "wb") as huge:
        huge.truncate(4 * 1024**3)  # 4 GB, sparse: never read
    (root / "blob.cpp").write_bytes(b"\x7fELF\0\0\0" + os.urandom(4096))
    (root / "latin1.py").write_bytes("# caf\xe9\nx = 1\n".encode("latin-1"))
    (root / "mixed.h").write_bytes("// ok ✓\n".encode() + b"\xff\xfe broken\n")
    (root / "minified.py").write_text("x=1;" * (10 * 1024**2 // 4))  # 10 MB on one line
    (root / "long_line.cpp").write_text("f(" * 200_000 + ")" * 200_000 + ";\n")  # 800 kB, one line
    (root / "empty.py").write_text("")
    (root / "empty.cpp").write_text("")
    report = checked(root, pack)
    assert skipped(report) == {"binary": 1, "not UTF-8": 2, "too large": 2}
    assert dict(report.index.skipped_files) == {
        "blob.cpp": "binary",
        "huge.cpp": "too large",
        "latin1.py": "not UTF-8",
        "minified.py": "too large",
        "mixed.h": "not UTF-8",
    }
    assert report.index.files == 3


@pytest.mark.slow
def test_fifty_thousand_small_files(tmp_path, pack):
    root = tmp_path / "many"
    for number in range(50_000):
        folder = root / f"m{number // 1000}"
        if number % 1000 == 0:
            folder.mkdir(parents=True)
        (folder / f"f{number}.py").write_text(f"value_{number} = {number}\n")
    assert checked(root, pack).index.files == 50_000


def test_directories_nested_five_hundred_deep(tmp_path, pack):
    root = tmp_path / "deep"
    deepest = root.joinpath(*["d"] * 500)
    deepest.mkdir(parents=True)
    (deepest / "bottom.py").write_text("import torch\ntorch.utils.rename_privateuse1_backend('deep')\n")
    report = checked(root, pack)
    assert report.index.files == 1
    assert next(r for r in report.rows if r.id == "device-rename-pu1").points == 2


def test_unreadable_files_are_counted(tmp_path, pack, monkeypatch):
    import air.source.tree as tree

    root = tmp_path / "unreadable"
    root.mkdir()
    (root / "secret.py").write_text("x = 1\n")
    (root / "fine.py").write_text("y = 2\n")
    real_open = os.open

    def refusing(path, *args, **kwargs):
        if Path(path).name == "secret.py":
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(tree.os, "open", refusing)
    report = checked(root, pack)
    assert skipped(report) == {"unreadable": 1} and report.index.files == 1


def test_awkward_names(tmp_path, pack):
    root = tmp_path / "names"
    root.mkdir()
    for name in ("with space.py", "new\nline.py", "ünïcødé.py", "-dash.py", "日本.cpp"):
        (root / name).write_text("import torch\n")
    assert checked(root, pack).index.files == 5


def test_git_file_instead_of_directory(tmp_path, pack):
    root = tmp_path / "gitfile"
    root.mkdir()
    (root / ".git").write_text("gitdir: /nowhere/at/all\n")
    (root / "a.py").write_text("import torch\n")
    report = checked(root, pack)
    assert report.index.files == 1 and report.backend.source.commit is None


@pytest.mark.parametrize("lost", ["blob", "commit"])
def test_git_checkout_with_missing_objects(tmp_path, pack, lost):
    root = tmp_path / f"missing-{lost}"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.py").write_text("import torch\n")
    git(root, "add", "a.py")
    git(root, "commit", "-q", "-m", "one")
    victim = git(root, "rev-parse", "HEAD:a.py" if lost == "blob" else "HEAD")
    (root / ".git" / "objects" / victim[:2] / victim[2:]).unlink()
    report = checked(root, pack)
    assert report.index.files == 1
