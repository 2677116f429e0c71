"""Nothing outside the tree is read, no tree shape crashes air, and a pack's paths stay inside it.

Every tree here is built to be hostile: directory links leaving it, files swapped for links
between the check and the open, names that are not UTF-8, directories nested deeper than a path
can name, unreadable directories, and packs whose keys point elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from air.index.files import IndexOptions, read_files
from air.source import tree
from air.source.distribution import Distribution, materialised
from helpers.cli import air
from helpers.git import git
from helpers.paths import FIXTURES, SHIPPED_PACK_DIR

SECRET = "the secret outside the tree"


def outside(tmp_path: Path) -> Path:
    """A directory beside the tree holding a file the tree must never reveal."""
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "passwd.py").write_text(f"# {SECRET}\n")
    return secret


def texts(listing) -> str:
    return "".join(source.text for source in listing.files)


def reasons(listing) -> dict[str, str]:
    return {skipped.path: skipped.reason for skipped in listing.skipped}


# --- containment ------------------------------------------------------------------------------


def test_a_listed_directory_turned_into_a_link_leaving_the_tree_is_not_followed(tmp_path):
    secret = outside(tmp_path)
    root = tmp_path / "tree"
    (root / "leak").mkdir(parents=True)
    (root / "leak" / "passwd.py").write_text("x = 1\n")
    for folder in ("pkg", "alias"):
        (root / folder).mkdir()
        (root / folder / "inside.py").write_text("y = 2\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "one")
    shutil.rmtree(root / "leak")
    (root / "leak").symlink_to(secret)  # git still lists leak/passwd.py
    shutil.rmtree(root / "alias")
    (root / "alias").symlink_to(root / "pkg")  # and alias/inside.py, which stays inside: it is read
    listing = read_files(root, IndexOptions())
    assert SECRET not in texts(listing)
    assert reasons(listing) == {"leak/passwd.py": "symlink leaving the tree"}
    assert [source.path for source in listing.files] == ["alias/inside.py", "pkg/inside.py"]


def test_a_file_swapped_for_a_link_after_its_check_is_not_followed(tmp_path, monkeypatch):
    secret = outside(tmp_path)
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    swap_after_check(monkeypatch, root / "a.py", lambda path: path.symlink_to(secret / "passwd.py"))
    listing = read_files(root, IndexOptions())
    assert SECRET not in texts(listing)
    assert reasons(listing) == {"a.py": "unreadable"}


def test_a_file_swapped_for_a_fifo_after_its_check_is_skipped_without_blocking(tmp_path, monkeypatch):
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    swap_after_check(monkeypatch, root / "a.py", os.mkfifo)
    with no_longer_than(20):
        listing = read_files(root, IndexOptions())
    assert reasons(listing) == {"a.py": "not a regular file"}


def swap_after_check(monkeypatch, victim: Path, replace) -> None:
    """The file passes its check, then is replaced (by `replace(path)`) before it is opened."""
    real_lstat = os.lstat

    def lstat_then_swap(path, *args, **kwargs):
        info = real_lstat(path, *args, **kwargs)
        if os.fspath(path).endswith(f"/{victim.name}") and stat.S_ISREG(info.st_mode):
            victim.unlink()
            replace(victim)
        return info

    monkeypatch.setattr(tree.os, "lstat", lstat_then_swap)


class _Blocked(Exception):
    """Raised by the alarm: not an OSError, so that nothing on the way mistakes it for a skip."""


@contextmanager
def no_longer_than(seconds: int) -> Iterator[None]:
    """Fails what it holds when it still runs (blocked on a FIFO, say) after `seconds`."""

    def ring(signum, frame):
        raise _Blocked(f"still blocked after {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_distribution_is_copied_without_leaving_its_site_packages(tmp_path):
    secret = outside(tmp_path)
    site = tmp_path / "site-packages"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("import torch\n")
    (site / "linked").symlink_to(secret)
    os.mkfifo(site / "pkg" / "fifo.py")
    dist = Distribution("pkg", "1.0", site, ("pkg/__init__.py", "linked/passwd.py", "pkg/fifo.py"))
    with no_longer_than(20), materialised(dist) as (root, _source):
        copied = sorted(path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file())
    assert copied == ["pkg/__init__.py"]


# --- tree shapes that must not crash ------------------------------------------------------------


@pytest.mark.parametrize("listed_by", ["walk", "git"])
def test_file_names_that_are_not_utf8_are_counted_skips(tmp_path, listed_by):
    root = tmp_path / "names"
    root.mkdir()
    (root / "ok.py").write_text("import torch\ntorch.utils.rename_privateuse1_backend('x')\n")
    with open(os.path.join(os.fsencode(root), b"bad\xff.py"), "wb") as bad:
        bad.write(b"import torch\ntorch.utils.rename_privateuse1_backend('y')\n")
    with open(os.path.join(os.fsencode(root), b"bin\xfe.cpp"), "wb") as binary:
        binary.write(b"\0\0\0")
    if listed_by == "git":
        git(root, "init", "-q")
        git(root, "add", ".")
    for cache in ("--no-cache", None, None):  # afresh, then stored in the cache, then read from it
        out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
        result = air(
            "check",
            "-q",
            *filter(None, [cache]),
            "--format",
            "json",
            "--output",
            str(out_json),
            "--format",
            "markdown",
            "--output",
            str(out_md),
            str(root),
        )
        assert result.returncode == 0, result.stderr
        index = json.loads(out_json.read_bytes().decode("utf-8"))["index"]
        assert index["skipped"] == [{"reason": "file name not UTF-8", "count": 2}]
        assert index["skipped_files"] == [
            {"path": "bad\\xff.py", "reason": "file name not UTF-8"},
            {"path": "bin\\xfe.cpp", "reason": "file name not UTF-8"},
        ]
        assert index["files"] == 1
        assert "file name not UTF-8: 2" in out_md.read_bytes().decode("utf-8")


def nest(root: Path, name: str, levels: int, bottom: dict[str, str]) -> None:
    """`levels` directories `name` one inside the other under `root`, with the files of `bottom`
    in the deepest; made through descriptors, so that no path names more than one level."""
    descriptor = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _level in range(levels):
            os.mkdir(name, dir_fd=descriptor)
            deeper = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = deeper
        for file_name, text in bottom.items():
            written = os.open(file_name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=descriptor)
            os.write(written, text.encode())
            os.close(written)
    finally:
        os.close(descriptor)


def test_a_thousand_nested_directories(tmp_path, pack):
    from air.run import check

    root = tmp_path / "deep"
    root.mkdir()
    try:
        nest(root, "d", 1000, {"bottom.py": "import torch\ntorch.utils.rename_privateuse1_backend('deep')\n"})
        report = check(root, pack)
    finally:  # shutil.rmtree, which cleans temporary directories up, recurses once per level
        subprocess.run(["rm", "-rf", "--", str(root)], check=True)
    assert report.index.files == 1 and report.index.skipped == ()
    assert next(row for row in report.rows if row.id == "device-rename-pu1").points == 2


def test_a_path_longer_than_the_system_can_name_is_a_counted_skip(tmp_path, pack):
    from air.run import check

    root = tmp_path / "long"
    root.mkdir()
    (root / "top.py").write_text("x = 1\n")
    nest(root, "d" * 200, 30, {"bottom.py": "y = 2\n"})  # 30 x 201 characters: beyond PATH_MAX (4096)
    report = check(root, pack)
    assert report.index.files == 1
    assert dict(report.index.skipped) == {"path too long": 1}


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["a" * 300], "too long to be a path"),
        (["--subdir", "a" * 300, str(FIXTURES / "pu1_full")], "too long to be a path"),
        (["--pack", "a" * 300, str(FIXTURES / "pu1_full")], "no such pack"),
    ],
)
def test_names_too_long_to_be_paths_are_one_line_errors(tmp_path, args, fragment):
    result = air("check", "-q", *args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and fragment in result.stderr


def test_an_unreadable_directory_is_counted(tmp_path, monkeypatch):
    root = tmp_path / "tree"
    (root / "locked").mkdir(parents=True)
    (root / "locked" / "hidden.py").write_text("x = 1\n")
    (root / "fine.py").write_text("y = 2\n")
    real_scandir = os.scandir

    def refusing(path="."):
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    listing = read_files(root, IndexOptions())
    assert [source.path for source in listing.files] == ["fine.py"]
    assert reasons(listing) == {"locked": "unreadable directory"}


# --- pack paths ---------------------------------------------------------------------------------


def copied_pack(tmp_path: Path, edit) -> Path:
    """The shipped pack copied (without its fixtures) with `edit(directory)` applied."""
    directory = tmp_path / "pack"
    shutil.copytree(SHIPPED_PACK_DIR, directory, ignore=shutil.ignore_patterns("fixtures"))
    (directory / "fixtures").mkdir()
    edit(directory)
    return directory


def set_key(directory: Path, old: str, new: str) -> None:
    header = directory / "pack.yaml"
    text = header.read_text(encoding="utf-8")
    assert old in text
    header.write_text(text.replace(old, new, 1), encoding="utf-8")


def link_rows_outside(directory: Path) -> None:
    elsewhere = directory.parent / "elsewhere"
    elsewhere.mkdir()
    shutil.move(directory / "rows" / "01-device-registration.yaml", elsewhere / "01.yaml")
    (directory / "rows" / "01-device-registration.yaml").symlink_to(elsewhere / "01.yaml")


def link_catalog_outside(directory: Path) -> None:
    shutil.move(directory / "data" / "aten-ops-2.7.json", directory.parent / "aten-ops.json")
    (directory / "data" / "aten-ops-2.7.json").symlink_to(directory.parent / "aten-ops.json")


def extend_outside(directory: Path) -> None:
    shutil.copytree(directory, directory.parent / "far" / "away" / "base")
    set_key(directory, "requires_air:", "extends: ../far/away/base\nrequires_air:")


BROKEN_KEYS = {
    "rows absolute": (lambda d: set_key(d, 'rows: ["rows/*.yaml"]', f'rows: ["{d}/rows/*.yaml"]'), "rows"),
    "rows climbing out": (lambda d: set_key(d, 'rows: ["rows/*.yaml"]', 'rows: ["../pack/rows/*.yaml"]'), "rows"),
    "rows linked out": (link_rows_outside, "rows"),
    "catalog absolute": (
        lambda d: set_key(d, "catalog: data/aten-ops-{release}.json", f"catalog: {d}/data/aten-ops-{{release}}.json"),
        "operators.catalog",
    ),
    "catalog climbing out": (
        lambda d: set_key(d, "catalog: data/aten-ops-{release}.json", "catalog: ../pack/data/aten-ops-{release}.json"),
        "operators.catalog",
    ),
    "catalog linked out": (link_catalog_outside, "operators.catalog"),
    "fixtures absolute": (lambda d: set_key(d, "requires_air:", f"fixtures: {d}/fixtures\nrequires_air:"), "fixtures"),
    "fixtures climbing out": (
        lambda d: set_key(d, "requires_air:", "fixtures: ../pack/fixtures\nrequires_air:"),
        "fixtures",
    ),
    "fixtures linked out": (lambda d: (d / "fixtures").rmdir() or (d / "fixtures").symlink_to(d.parent), "fixtures"),
    "extends absolute": (
        lambda d: set_key(d, "requires_air:", f"extends: {SHIPPED_PACK_DIR}\nrequires_air:"),
        "extends",
    ),
    "extends climbing far out": (extend_outside, "extends"),
    "framework climbing out": (
        lambda d: set_key(d, "framework: pytorch", "framework: ../frameworks/pytorch"),
        "framework",
    ),
}


@pytest.mark.parametrize("broken", sorted(BROKEN_KEYS))
@pytest.mark.parametrize("command", ["validate", "check"])
def test_pack_paths_leaving_the_pack_are_pack_errors(tmp_path, broken, command):
    edit, key = BROKEN_KEYS[broken]
    directory = copied_pack(tmp_path, edit)
    if command == "validate":
        result = air("pack", "validate", str(directory), cwd=tmp_path)
    else:
        result = air(
            "check",
            "-q",
            "--no-cache",
            "--pack",
            str(directory),
            "--format",
            "json",
            "--output",
            str(tmp_path / "r.json"),
            str(FIXTURES / "pu1_full"),
            cwd=tmp_path,
        )
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("air: error: "), result.stderr
    assert f" at {key}" in lines[0] or f"{key}:" in lines[0] or f"`{key}`" in lines[0], lines[0]


def test_extending_a_shipped_pack_or_a_sibling_stays_fine(tmp_path):
    child = copied_pack(tmp_path, lambda d: set_key(d, "requires_air:", "extends: pytorch-2.x\nrequires_air:"))
    assert air("pack", "validate", str(child)).returncode == 0
    sibling = tmp_path / "sibling"
    shutil.copytree(child, sibling)
    set_key(sibling, "extends: pytorch-2.x", "extends: ../pack")
    result = air("pack", "validate", str(sibling))
    assert result.returncode == 0, result.stderr


def test_a_framework_named_by_a_path_is_refused_before_its_backends_are_read(tmp_path):
    from air.resources import data_dir

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "backends.yaml").write_text(
        "backends:\n  - {name: planted, aliases: [], vendor: Nobody, url: 'file:///nowhere/planted.git'}\n"
    )
    climbing = os.path.relpath(elsewhere, data_dir("frameworks"))
    directory = copied_pack(tmp_path, lambda d: set_key(d, "framework: pytorch", f"framework: {climbing}"))
    result = air("check", "-q", "--no-cache", "--pack", str(directory), "planted", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and " at framework" in lines[0] and "planted.git" not in lines[0], result.stderr


def test_the_pack_fingerprint_reads_no_file_through_a_link_leaving_the_pack(tmp_path):
    from air.pack.shipped import pack_fingerprint

    secret = outside(tmp_path) / "passwd.py"
    directory = copied_pack(tmp_path, lambda d: (d / "data" / "linked.json").symlink_to(secret))
    before = pack_fingerprint(directory)
    secret.write_text("changed\n")
    assert pack_fingerprint(directory) == before


def test_a_target_whose_own_name_is_not_utf8_is_checked(tmp_path):
    tree = Path(os.fsdecode(bytes(tmp_path) + b"/backend\xff"))
    shutil.copytree(FIXTURES / "pu1_full" / "csrc", tree / "csrc")
    result = air("check", "--no-cache", "-q", "--format", "json", "--output", "-", str(tree))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["backend"]["name"] == "backend\\xff"
    assert report["backend"]["source"]["location"].endswith("/backend\\xff")
