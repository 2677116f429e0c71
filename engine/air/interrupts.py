"""How a run ends on SIGINT (Ctrl-C) and SIGTERM: at once, through its clean-up, in one line.

`install` makes both signals raise in the main thread, `KeyboardInterrupt` and its subclass
`Terminated`, so that the same `finally` blocks stop worker processes and remove temporary
trees; the command line then prints one line and exits 130 or 143. Only the first signal
raises: one that arrives while the run is already ending is ignored, so that a second Ctrl-C
cannot cut the clean-up short, unless the ending has lasted `PATIENCE` seconds (it stalled):
then the process leaves at once, with the same line and exit code. A signal that arrives where
Python cannot let an exception propagate (a finaliser, a hook run at each fork) is not lost:
the signal is sent again, to the main thread (waking it from a blocking call), to be raised
where it can.

Processes forked from then on (the worker pool, the evaluating child) leave the ending to the
process that forked them: they ignore SIGINT, which a terminal sends to every process of the
command, and SIGTERM ends them without running any Python, so none prints a traceback. The
parent ends them with `stop`, which never waits on a process that may be blocked.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from types import FrameType
from typing import TYPE_CHECKING

from air.errors import Terminated, interruption

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

STOP_GRACE = 2.0  # seconds a process has to end at SIGTERM before it is killed
PATIENCE = 5.0  # seconds after the first signal from which another one ends the process at once
RESEND_DELAY = 0.001  # seconds between looks at whether a lost signal can be sent again
_ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_owner: int | None = None  # the process that installed the handler; its forks inherit the handler
_ending_since: float | None = None  # when the first signal was raised


def install() -> None:
    """Make SIGINT and SIGTERM end this process's run as described above."""
    global _owner
    _owner = os.getpid()
    for number in _ENDING_SIGNALS:
        signal.signal(number, _end)
    os.register_at_fork(after_in_child=_leave_to_parent)
    sys.unraisablehook = partial(_recover, sys.unraisablehook)


def settle() -> None:
    """Ignore SIGINT and SIGTERM from now on: the run is ending."""
    for number in _ENDING_SIGNALS:
        signal.signal(number, signal.SIG_IGN)


def stop(processes: Iterable[BaseProcess]) -> None:
    """End `processes` now, whatever they are doing, and reap them: SIGTERM, then SIGKILL for
    any still running `STOP_GRACE` seconds later."""
    started = [process for process in processes if process.pid is not None]
    for process in started:
        process.terminate()
    deadline = time.monotonic() + STOP_GRACE
    for process in started:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.exitcode is None:
            process.kill()
            process.join()


def _end(number: int, _frame: object) -> None:
    global _ending_since
    ending = Terminated() if number == signal.SIGTERM else KeyboardInterrupt()
    if os.getpid() != _owner:  # a forked process, in the moment before `_leave_to_parent` runs
        if number == signal.SIGTERM:
            os._exit(interruption(ending)[1])
        return
    if _ending_since is None:
        _ending_since = time.monotonic()
        raise ending
    if time.monotonic() - _ending_since >= PATIENCE:
        message, code = interruption(ending)
        os.write(2, f"air: {message}\n".encode())
        os._exit(code)


def _recover(report: Callable[[sys.UnraisableHookArgs], object], unraisable: sys.UnraisableHookArgs) -> None:
    """Send again a signal whose exception was raised where it could only be reported; report
    anything else as before."""
    global _ending_since
    if not isinstance(unraisable.exc_value, KeyboardInterrupt) or os.getpid() != _owner:
        report(unraisable)
        return
    _ending_since = None
    number = signal.SIGTERM if isinstance(unraisable.exc_value, Terminated) else signal.SIGINT
    threading.Thread(target=_resend, args=(number,), daemon=True).start()


def _resend(number: int) -> None:
    """Send `number` to the main thread once it has left `_recover`: raised there, the
    exception would be lost for good."""
    main = threading.main_thread().ident
    assert main is not None  # the main thread is running
    while _inside_recover(sys._current_frames().get(main)):
        time.sleep(RESEND_DELAY)
    signal.pthread_kill(main, number)


def _inside_recover(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code is _recover.__code__:
            return True
        frame = frame.f_back
    return False


def _leave_to_parent() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
