"""Interrupts and termination: a signalled check ends at once, in one line and with its documented
exit code, and leaves no process and no temporary tree behind. Each check runs in a session of
its own, as a terminal runs a command, so that its process group can be signalled as Ctrl-C
signals it and searched afterwards for what was left running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import venv
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from air.errors import Terminated
from helpers.paths import FIXTURES
from helpers.trees import write_tree

ENDS_WITHIN = 20  # seconds from the signal to the exit; a check that is cut short ends in well under one
APPEARS_WITHIN = 120  # seconds for a check to reach the moment a test signals it
MODULES, FUNCTIONS = 500, 240  # of the generated backend: about 10 MB, which workers read and which takes seconds
FORKED = os.cpu_count() is not None and os.cpu_count() >= 2 and hasattr(os, "fork")
needs_workers = pytest.mark.skipif(not FORKED, reason="air shares its work with other processes only on 2+ CPUs")


# --- the trees ------------------------------------------------------------------------------------------------


def write_backend(root: Path, modules: int = MODULES, functions: int = FUNCTIONS) -> list[str]:
    """A generated backend, large enough that the evaluation of its clauses takes seconds; the
    paths of its files."""
    files = {
        "setup.py": 'from setuptools import setup\nsetup(name="torch_big", version="1.0")\n',
        "torch_big/__init__.py": "import torch\ntorch.utils.rename_privateuse1_backend('big')\n",
    }
    for number in range(modules):
        part = number % 30
        files[f"torch_big/sub{part}/__init__.py"] = ""
        files[f"torch_big/sub{part}/mod{number}.py"] = "import torch\n\n" + "".join(
            f"def f{i}(x):\n    return torch.add(x, {i})  # helper {i}\n\n" for i in range(functions)
        )
        files[f"csrc/k{part}/op{number}.cpp"] = (
            "TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n"
            + "".join(f'  m.impl("op{number}_{i}", TORCH_FN(op{number}_{i}));\n' for i in range(functions))
            + "}\n"
        )
        files[f"test/t{part}/test_{number}.py"] = "import torch\n\n" + "".join(
            f"def test_{i}():\n    assert torch.ones(1, device='big:1')\n\n" for i in range(functions // 2)
        )
    write_tree(root, files)
    return sorted(files)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(interpreter, site-packages) of a virtual environment where the generated backend is an
    installed distribution, `torch_big`; its site-packages is also checked as a tree."""
    root = tmp_path_factory.mktemp("signals")
    venv.create(root / "venv", with_pip=False)
    python = root / "venv" / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    paths = write_backend(site)
    info = site / "torch_big-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch_big\nVersion: 1.0\n")
    (info / "RECORD").write_text("".join(f"{path},,\n" for path in [*paths, f"{info.name}/METADATA"]))
    return python, site


@pytest.fixture(scope="module")
def backend(installed) -> Path:
    return installed[1]


@pytest.fixture()
def scratch(tmp_path) -> dict[str, str]:
    """The environment of a check whose temporary directories and cache are its own, to search."""
    (tmp_path / "tmp").mkdir()
    return {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "AIR_CACHE": str(tmp_path / "cache")}


def leftovers(environment: dict[str, str]) -> list[str]:
    """What a check left in its temporary directory and in its cache's clone staging."""
    clones = Path(environment["AIR_CACHE"]) / "clones"
    staging = [path.name for path in clones.glob(".fetch-*")] if clones.is_dir() else []
    return [path.name for path in Path(environment["TMPDIR"]).iterdir()] + staging


# --- the processes --------------------------------------------------------------------------------------------


def processes() -> dict[int, tuple[int, int, str]]:
    """Every process: pid -> (parent pid, process group, state)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue  # it ended meanwhile
            state, parent, group = stat[stat.rindex(")") + 2 :].split()[:3]
            found[int(entry)] = (int(parent), int(group), state)
    return found


def children(pid: int) -> list[int]:
    """The processes `pid` forked (not those it ran, such as git: they run another program)."""
    return [
        child
        for child, (parent, _group, _state) in processes().items()
        if parent == pid and command_line(child) == command_line(pid)
    ]


def command_line(pid: int) -> bytes | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None


def in_group(group: int) -> list[int]:
    """The living processes of a process group (a zombie has ended: only its exit status is left)."""
    return [pid for pid, (_parent, member_of, state) in processes().items() if member_of == group and state != "Z"]


def wait_for(condition: Callable[[], object], what: str, process: subprocess.Popen) -> object:
    deadline = time.monotonic() + APPEARS_WITHIN
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        if process.poll() is not None:
            pytest.fail(f"the check ended (exit code {process.returncode}) before {what}")
        time.sleep(0.01)
    pytest.fail(f"no {what} within {APPEARS_WITHIN} s")


def busy_workers(process: subprocess.Popen) -> list[int]:
    """The check's worker processes, once the same ones have been at work for a while (a program
    the check runs is briefly a fork of it too)."""
    seen: dict[tuple[int, ...], float] = {}

    def settled() -> list[int] | None:
        found = tuple(sorted(children(process.pid)))
        if not found:
            seen.clear()
            return None
        since = seen.setdefault(found, time.monotonic())
        return list(found) if time.monotonic() - since > 0.1 else None

    return wait_for(settled, "busy workers", process)


@pytest.fixture()
def run_air() -> Iterator[Callable[..., subprocess.Popen]]:
    """Start `air` in a session of its own; whatever a test leaves running is killed afterwards."""
    started: list[subprocess.Popen] = []

    def start(*args: str, env: dict[str, str]) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "-m", "air", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()


def signalled(process: subprocess.Popen, number: int, whole_group: bool = False, times: int = 1) -> tuple[int, str]:
    """Send `number` to the check (or to its whole process group, as Ctrl-C in a terminal does);
    its exit code and standard error."""
    for _ in range(times):
        if whole_group:
            os.killpg(process.pid, number)
        else:
            process.send_signal(number)
    try:
        _out, err = process.communicate(timeout=ENDS_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {ENDS_WITHIN} s after the signal; processes of the check: {in_group(process.pid)}")
    return process.returncode, err


def assert_ended_cleanly(
    process: subprocess.Popen, ended: tuple[int, str], code: int, line: str, environment: dict[str, str]
) -> None:
    returncode, err = ended
    assert returncode == code, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert [text for text in err.splitlines() if text.strip()] == [line], err
    deadline = time.monotonic() + 5  # the check reaps its children before it exits: this is only slack
    while in_group(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert in_group(process.pid) == [], "processes of the check outlived it"
    assert leftovers(environment) == []


# --- the checks -----------------------------------------------------------------------------------------------

ENDINGS = {
    "interrupt": (signal.SIGINT, 130, "air: interrupted"),
    "termination": (signal.SIGTERM, 143, "air: terminated"),
}


@needs_workers
@pytest.mark.parametrize("ending", sorted(ENDINGS))
@pytest.mark.parametrize("whole_group", [False, True], ids=["process", "group"])
def test_a_signal_ends_a_check_while_its_workers_are_busy(backend, scratch, run_air, ending, whole_group):
    number, code, line = ENDINGS[ending]
    process = run_air("check", "-q", "--no-cache", "--format", "json", "--output", "-", str(backend), env=scratch)
    busy_workers(process)
    ended = signalled(process, number, whole_group)
    assert_ended_cleanly(process, ended, code, line, scratch)


@needs_workers
def test_a_second_interrupt_does_not_cut_the_ending_short(backend, scratch, run_air):
    process = run_air("check", "-q", "--no-cache", "--format", "json", "--output", "-", str(backend), env=scratch)
    busy_workers(process)
    ended = signalled(process, signal.SIGINT, times=2)
    assert_ended_cleanly(process, ended, 130, "air: interrupted", scratch)


@needs_workers
@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_a_signalled_check_of_an_installed_distribution_removes_its_copy(installed, scratch, run_air, ending):
    python, _site = installed
    number, code, line = ENDINGS[ending]
    process = run_air(
        "check",
        "-q",
        "--no-cache",
        "--dist",
        "big",
        "--python",
        str(python),
        "--format",
        "json",
        "--output",
        "-",
        env=scratch,
    )
    busy_workers(process)
    assert [path.name[: len("air-dist-")] for path in Path(scratch["TMPDIR"]).iterdir()] == ["air-dist-"]
    ended = signalled(process, number)
    assert_ended_cleanly(process, ended, code, line, scratch)


@pytest.fixture()
def stalling_git(tmp_path) -> dict[str, str]:
    """A `git` first on PATH that fetches as git does, then stalls (as a slow network would)
    until it is killed."""
    real = subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout.strip()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(
        f'#!/bin/sh\ncase " $* " in\n  *" fetch "*) "{real}" "$@"; exec sleep 600 ;;\nesac\nexec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


@pytest.fixture()
def bare(tmp_path) -> Path:
    work = tmp_path / "work"
    write_backend(work, modules=3, functions=3)
    commit = ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]
    for command in (["init", "-q"], ["add", "-A"], commit):
        subprocess.run(["git", "-C", str(work), *command], check=True, capture_output=True)
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(work), str(tmp_path / "bare.git")], check=True, capture_output=True
    )
    return tmp_path / "bare.git"


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_a_signalled_fetch_leaves_no_staging_clone(bare, stalling_git, scratch, run_air, ending):
    environment = {**scratch, **stalling_git}
    number, code, line = ENDINGS[ending]
    process = run_air(
        "check", "-q", "--no-cache", "--format", "json", "--output", "-", f"file://{bare}", env=environment
    )
    clones = Path(environment["AIR_CACHE"]) / "clones"
    stalled = b"sleep\x00600\x00"
    wait_for(lambda: stalled in map(command_line, in_group(process.pid)), "stalled fetch", process)
    assert list(clones.glob(".fetch-*/.git/FETCH_HEAD"))
    ended = signalled(process, number)
    assert_ended_cleanly(process, ended, code, line, environment)
    assert list(clones.iterdir()) == []


# --- errors in a worker ---------------------------------------------------------------------------------------


class HoldsALock(Exception):
    """An error that cannot cross a pipe: pickling it fails."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lock = threading.Lock()


class NeedsTwoArguments(Exception):
    """An error that crosses a pipe but cannot be rebuilt on the other side."""

    def __init__(self, first: str, second: str) -> None:
        super().__init__(f"{first} {second}")


@needs_workers
@pytest.mark.parametrize(
    "error",
    [HoldsALock("the child failed"), NeedsTwoArguments("the child", "failed")],
    ids=["unpicklable", "not-rebuildable"],
)
def test_an_error_in_a_worker_reaches_the_parent_in_one_line(pack, monkeypatch, capfd, error):
    import air.evidence.text as text_kind
    from air.run import check

    parent = os.getpid()
    real = text_kind.evaluate

    def failing_in_the_child(clause, context):
        if os.getpid() != parent:
            raise error
        return real(clause, context)

    monkeypatch.setattr(text_kind, "evaluate", failing_in_the_child)
    with pytest.raises(Exception) as raised:  # whichever the child's error becomes
        check(FIXTURES / "pu1_full", pack)
    assert "the child failed" in str(raised.value) and "\n" not in str(raised.value)
    assert "Traceback" not in capfd.readouterr().err


def wrapped(ending: KeyboardInterrupt) -> RuntimeError:
    """`ending` as Python hands it on when it arrives while a class is created."""
    try:
        raise RuntimeError("Error calling __set_name__") from ending
    except RuntimeError as error:
        return error


@pytest.mark.parametrize(
    ("raised", "code", "line"),
    [
        (Terminated(), 143, "air: terminated"),
        (wrapped(Terminated()), 143, "air: terminated"),
        (wrapped(KeyboardInterrupt()), 130, "air: interrupted"),
    ],
    ids=["terminated", "terminated-in-another-error", "interrupted-in-another-error"],
)
def test_the_command_line_ends_in_one_line_with_the_code_of_the_signal(monkeypatch, capsys, raised, code, line):
    import air.cli

    def ended(*args, **kwargs):
        raise raised

    monkeypatch.setattr(air.cli, "check_tree", ended)
    monkeypatch.setattr(sys, "argv", ["air", "check", "-q", str(FIXTURES / "pu1_full")])
    with pytest.raises(SystemExit) as exit_info:
        air.cli.main()
    assert exit_info.value.code == code
    assert capsys.readouterr().err.strip() == line


def test_only_the_first_signal_raises_until_the_ending_stalls():
    """A second Ctrl-C does not cut the clean-up short; but when the first signal was lost (here
    caught and dropped, as a finaliser drops it) the next one, once the ending has lasted long
    enough, still ends the process."""
    script = (
        "import os, signal, time\n"
        "from air import interrupts\n"
        "interrupts.install()\n"
        "interrupts.PATIENCE = 3600\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(60)\n"
        "except KeyboardInterrupt:\n"
        "    print('raised', flush=True)\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "print('ignored', flush=True)\n"
        "interrupts.PATIENCE = 0\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "time.sleep(60)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=ENDS_WITHIN)
    assert (result.returncode, result.stdout, result.stderr) == (143, "raised\nignored\n", "air: terminated\n")


def test_a_signal_lost_where_it_cannot_be_raised_is_raised_again():
    """Python drops an exception raised in a finaliser or in a hook it runs at each fork (and air
    forks): an interrupt that arrives there is raised again where it can propagate."""
    script = (
        "import os, signal, time\n"
        "from air import interrupts\n"
        "interrupts.install()\n"
        "class Finaliser:\n"
        "    def __del__(self):\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "try:\n"
        "    Finaliser()\n"
        "    time.sleep(60)\n"
        "except KeyboardInterrupt as ending:\n"
        "    print(type(ending).__name__, flush=True)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=ENDS_WITHIN)
    assert (result.returncode, result.stdout, result.stderr) == (0, "Terminated\n", "")
