"""`python -m air` and the `air` command. SIGINT and SIGTERM are taken over first (see
`air.interrupts`) and the CLI is imported inside `run`, so that a signal while it loads ends
like one during a check: one line and exit code 130 (interrupted) or 143 (terminated)."""

import os
import sys
from typing import NoReturn

from air import interrupts
from air.errors import interruption


def run() -> None:
    interrupts.install()
    try:
        from air.cli import main

        main()
    except SystemExit as exit:
        _leave(exit.code)
    except KeyboardInterrupt as interrupt:  # before the command line could report it
        message, code = interruption(interrupt)
        sys.stderr.write(f"air: {message}\n")
        _leave(code)
    _leave(0)


def _leave(code: object) -> NoReturn:
    """End the process with `code` as `SystemExit` would, without the interpreter's teardown:
    freeing a large check's objects one by one takes longer than some checks (torch_npu, cold,
    best of five: 2.56 s with this exit, 2.81 s through `sys.exit`). By now reports are written and closed, temporary trees removed and
    worker processes ended; only the standard streams are left to flush, which a late signal
    does not interrupt."""
    interrupts.settle()
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        sys.stderr.write(f"{code}\n")
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said
            pass
    os._exit(status)


if __name__ == "__main__":
    run()
