"""What air writes and keeps cannot be turned against its user: reports land only on regular
files or streams, tree-derived text never reaches a terminal or a report as control
characters, YAML aliases cannot expand into gigabytes, and the cache trusts only itself."""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest
from air import cache
from air.errors import InputError, PackError
from air.printable import printable
from air.report.json_report import render_json
from air.report.output import write_atomic
from air.run import check_tree
from air.source.locate import locate
from air.yamldoc import parse_yaml
from helpers.cache import cache_entries
from helpers.cli import air as run_air
from helpers.paths import FIXTURES, REPO_ROOT

FULL = FIXTURES / "pu1_full"
TOY = REPO_ROOT / "examples" / "torch_toy"
EVIL_NAME = "evil\x1b]0;pwned\x07.py"
TIMEOUT = 120  # generous: the cases this bounds used to hang forever


def air(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_air(*args, cwd=cwd, env=env, timeout=TIMEOUT)


# --- outputs ---------------------------------------------------------------------------


def null_device(tmp_path: Path) -> Path:
    """A character device that discards what is written: a private node where permitted."""
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        if os.geteuid() == 0:
            pytest.skip("cannot create a device node, and writing the real /dev/null as root is not a test")
        return Path("/dev/null")
    return node


def test_a_character_device_output_is_written_not_replaced(tmp_path):
    device = null_device(tmp_path)
    write_atomic(device, "report\n")
    assert stat.S_ISCHR(os.lstat(device).st_mode)


class FifoReader(threading.Thread):
    """Reads a FIFO until its writer closes it; the read end is open before any writer comes."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.received = bytearray()

    def run(self) -> None:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            chunk = os.read(self.fd, 65536) if ready else b""
            if ready and not chunk and self.received:
                break  # the writer closed the FIFO after writing
            self.received += chunk
        os.close(self.fd)


def test_a_fifo_output_is_written_to_its_reader(tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    reader.start()
    text = "| row | evidence |\n" * 20_000  # larger than a pipe's buffer: the writer must block, not fail
    write_atomic(fifo, text)
    reader.join(TIMEOUT)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert reader.received.decode() == text


def test_a_fifo_without_a_reader_fails_in_one_line(tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    result = air("check", "-q", "--no-cache", "--format", "json", "--output", str(fifo), str(FULL))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "no reader" in result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_directory_output_is_refused(tmp_path):
    directory = tmp_path / "reports"
    directory.mkdir()
    result = air("check", "-q", "--no-cache", "--format", "json", "--output", str(directory), str(FULL))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert directory.is_dir() and not list(directory.iterdir())


def test_a_socket_output_is_refused_and_kept(tmp_path):
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(InputError, match="not a regular file"):
            write_atomic(path, "report\n")
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_a_symbolic_link_to_a_file_is_refused_and_kept(tmp_path):
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    link = tmp_path / "report.md"
    link.symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"):
        write_atomic(link, "report\n")
    assert link.is_symlink() and target.read_text() == "keep me\n"


def test_a_link_to_standard_output_writes_there(tmp_path):
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")  # what /dev/stdout is, without touching /dev
    result = air("check", "-q", "--no-cache", "--format", "json", "--output", str(link), str(FULL))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["backend"]["name"] == "torch_full"  # and no summary line after it
    assert link.is_symlink()


def test_a_default_output_directory_that_is_a_link_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "air-report").symlink_to(elsewhere)
    result = air("check", "-q", "--no-cache", str(FULL), cwd=work)
    assert result.returncode == 2 and "symbolic link" in result.stderr
    assert not list(elsewhere.iterdir())


def test_reports_get_the_mode_the_umask_allows(tmp_path):
    previous = os.umask(0o022)
    try:
        written = write_atomic(tmp_path / "r.md", "report\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(written.stat().st_mode) == 0o644


# --- control characters ------------------------------------------------------------------


def test_printable_escapes_every_control_character_visibly():
    assert printable("a\x1b]0;x\x07b\r\n\t\x7f\x9b") == r"a\x1b]0;x\x07b\x0d\x0a\x09\x7f\x9b"
    assert printable("ok: café ✅ π") == "ok: café ✅ π"
    assert printable("bad\udcffbyte") == r"bad\xffbyte"


def evil_tree(tmp_path: Path) -> Path:
    root = tmp_path / "evil"
    shutil.copytree(TOY, root)
    (root / "torch_toy" / "__init__.py").rename(root / "torch_toy" / EVIL_NAME)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('name = "torch-toy"', r'name = "toy\u001b]0;owned\u0007"'))
    return root


def test_control_characters_from_the_tree_never_reach_a_report_or_the_terminal(tmp_path):
    root = evil_tree(tmp_path)
    markdown, report = tmp_path / "r.md", tmp_path / "r.json"
    result = air(
        "check",
        "--no-cache",
        "--format",
        "markdown",
        "--output",
        str(markdown),
        "--format",
        "json",
        "--output",
        str(report),
        str(root),
    )
    assert result.returncode == 0, result.stderr
    for text in (markdown.read_text(), report.read_text(), result.stdout, result.stderr):
        assert "\x1b" not in text and "\x07" not in text
    assert r"`torch_toy/evil\x1b]0;pwned\x07.py:9`" in markdown.read_text()  # visible, in a code span
    assert r"toy\\x1b\]0;owned\\x07" in markdown.read_text()  # in text, Markdown's escapes show it verbatim
    assert r"toy\x1b]0;owned\x07: readiness" in result.stdout
    assert json.loads(report.read_text())["backend"]["name"] == "toy\x1b]0;owned\x07"


def test_control_characters_in_an_error_message_are_escaped(tmp_path):
    result = air("check", "--no-cache", str(tmp_path / "no\x1b]0;x\x07such"))
    assert result.returncode == 2
    assert "\x1b" not in result.stderr and r"no\x1b]0;x\x07such" in result.stderr


# --- YAML --------------------------------------------------------------------------------


def test_aliases_expanding_a_large_scalar_are_refused_by_size():
    text = 'big: &big "' + "x" * 1_000_000 + '"\nmany: [' + ", ".join(["*big"] * 5000) + "]\n"
    started = time.perf_counter()
    with pytest.raises(PackError, match="MiB of text"):
        parse_yaml(text, "bomb.yaml")
    assert time.perf_counter() - started < 30


@pytest.mark.parametrize("command", [("pack", "validate"), ("check", "--no-cache", "-q", str(FULL), "--pack")])
def test_a_pack_file_that_is_a_fifo_or_too_large_is_refused_without_waiting(tmp_path, command):
    fifo_pack, large_pack = tmp_path / "fifo", tmp_path / "large"
    fifo_pack.mkdir()
    os.mkfifo(fifo_pack / "pack.yaml")
    large_pack.mkdir()
    (large_pack / "pack.yaml").write_text("id: large\n" + "# padding\n" * 500_000)
    for directory, problem in ((fifo_pack, "no such pack"), (large_pack, "larger than 4 MiB")):
        result = air(*command, str(directory))
        assert result.returncode == 2, result.stderr
        assert problem in result.stderr and result.stderr.count("\n") == 1


def test_ordinary_documents_with_aliases_still_load():
    document = parse_yaml("base: &b {a: 1}\nx: *b\ny: [*b, *b]\n", "fine.yaml")
    assert document.data == {"base": {"a": 1}, "x": {"a": 1}, "y": [{"a": 1}, {"a": 1}]}


# --- the cache ---------------------------------------------------------------------------


def private_cache(tmp_path: Path, name: str = "cache") -> Path:
    directory = tmp_path / name
    directory.mkdir(mode=0o700)
    return directory


def checked_with_cache(directory: Path, tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    """`air check` of the full fixture, to JSON in `tmp_path`, with `directory` as the result cache."""
    return air(
        "check",
        *options,
        "--format",
        "json",
        "--output",
        str(tmp_path / "r.json"),
        str(FULL),
        env={"AIR_CACHE": str(directory)},
    )


def test_a_cache_directory_writable_by_others_is_refused(tmp_path):
    directory = private_cache(tmp_path)
    directory.chmod(0o777)
    result = checked_with_cache(directory, tmp_path, "-q")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert str(directory) in result.stderr and "chmod go-w" in result.stderr and "--no-cache" in result.stderr
    assert checked_with_cache(directory, tmp_path, "-q", "--no-cache").returncode == 0


def test_a_results_directory_writable_by_others_is_refused(tmp_path, monkeypatch):
    directory = private_cache(tmp_path)
    (directory / cache.ENTRY_DIR).mkdir(mode=0o777)
    (directory / cache.ENTRY_DIR).chmod(0o777)
    monkeypatch.setenv("AIR_CACHE", str(directory))
    with pytest.raises(InputError, match="writable by group or others"):
        check_tree(FULL, "pytorch-2.x")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_a_cache_directory_of_another_user_is_refused(tmp_path, monkeypatch):
    directory = private_cache(tmp_path)
    os.chown(directory, 4242, 4242)
    monkeypatch.setenv("AIR_CACHE", str(directory))
    with pytest.raises(InputError, match="owned by another user"):
        check_tree(FULL, "pytorch-2.x")


def test_a_clones_directory_writable_by_others_is_refused(tmp_path, monkeypatch):
    directory = private_cache(tmp_path)
    (directory / "clones").mkdir()
    (directory / "clones").chmod(0o777)
    monkeypatch.setenv("AIR_CACHE", str(directory))
    with pytest.raises(InputError, match="chmod go-w"):
        locate(f"file://{tmp_path}/no-such-repository.git")


def test_the_cache_air_creates_is_user_only(tmp_path, monkeypatch):
    directory = tmp_path / "fresh" / "cache"
    monkeypatch.setenv("AIR_CACHE", str(directory))
    check_tree(FULL, "pytorch-2.x")
    for created in (directory, directory / cache.ENTRY_DIR, cache_entries(directory)[0].parent):
        assert stat.S_IMODE(created.stat().st_mode) & 0o077 == 0, created
    key = directory / "key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_size == 32
    assert stat.S_IMODE(cache_entries(directory)[0].stat().st_mode) & 0o077 == 0


def test_an_entry_written_without_the_key_is_rebuilt(tmp_path, monkeypatch):
    """An entry from another cache (another key) verifies nowhere else: a forged report is not served."""
    elsewhere, own = private_cache(tmp_path, "elsewhere"), private_cache(tmp_path, "own")
    monkeypatch.setenv("AIR_CACHE", str(elsewhere))
    honest = check_tree(FULL, "pytorch-2.x")
    [entry] = cache_entries(elsewhere)
    forged = honest.__class__(**{**honest.__dict__, "readiness": 99.9})
    assert cache.store(entry.stem, forged) is None
    monkeypatch.setenv("AIR_CACHE", str(own))
    check_tree(FULL, "pytorch-2.x")  # creates this cache's key and its entry
    [own_entry] = cache_entries(own)
    shutil.copyfile(entry, own_entry)
    messages: list[str] = []
    report = check_tree(FULL, "pytorch-2.x", progress=messages.append)
    assert not any("from the cache" in m for m in messages)
    assert render_json(report) == render_json(honest)
    messages.clear()
    assert render_json(check_tree(FULL, "pytorch-2.x", progress=messages.append)) == render_json(honest)
    assert any("from the cache" in m for m in messages)  # the rebuilt entry verifies


def test_a_fifo_at_an_entry_path_is_never_opened(tmp_path):
    directory = private_cache(tmp_path)
    assert checked_with_cache(directory, tmp_path, "-q").returncode == 0
    [entry] = cache_entries(directory)
    entry.unlink()
    os.mkfifo(entry)
    result = checked_with_cache(directory, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "from the cache" not in result.stderr
    assert entry.is_file() and not entry.is_symlink()


def test_a_link_at_an_entry_path_is_not_followed(tmp_path, monkeypatch):
    directory = private_cache(tmp_path)
    monkeypatch.setenv("AIR_CACHE", str(directory))
    check_tree(FULL, "pytorch-2.x")
    [entry] = cache_entries(directory)
    planted = tmp_path / "planted.json"
    shutil.copyfile(entry, planted)
    entry.unlink()
    entry.symlink_to(planted)
    messages: list[str] = []
    check_tree(FULL, "pytorch-2.x", progress=messages.append)
    assert not any("from the cache" in m for m in messages)
    assert not entry.is_symlink()


@pytest.mark.parametrize("spoil", ["mode", "fifo", "link"])
def test_a_key_file_that_is_not_user_only_is_refused(tmp_path, spoil):
    directory = private_cache(tmp_path)
    key = directory / "key"
    if spoil == "mode":
        key.write_bytes(os.urandom(32))
        key.chmod(0o644)
    elif spoil == "fifo":
        os.mkfifo(key, 0o600)
    else:
        (tmp_path / "elsewhere").write_bytes(os.urandom(32))
        (tmp_path / "elsewhere").chmod(0o600)
        key.symlink_to(tmp_path / "elsewhere")
    result = checked_with_cache(directory, tmp_path, "-q")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert str(key) in result.stderr and "--no-cache" in result.stderr
