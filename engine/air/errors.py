"""Errors that end a run with a documented exit code and a one-line message."""

from __future__ import annotations

EXIT_BELOW_THRESHOLD = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # SIGINT (Ctrl-C): 128 + 2, as a shell reports it
EXIT_TERMINATED = 143  # SIGTERM: 128 + 15


class AirError(Exception):
    """An error the user can act on. Its message is printed as one line."""

    exit_code = EXIT_USAGE


class Terminated(KeyboardInterrupt):
    """SIGTERM: ends a run as an interrupt does, through the same clean-up, with its own exit code."""


class InputError(AirError):
    """The thing to analyse cannot be found or read."""


class PackError(AirError):
    """A rule pack or framework definition is malformed."""

    def __init__(self, source: str, message: str, line: int | None = None, yaml_path: str = "") -> None:
        location = f"{source}:{line}" if line else source
        where = f" at {yaml_path}" if yaml_path else ""
        super().__init__(f"{location}{where}: {message}")


def interruption(cause: BaseException | None) -> tuple[str, int]:
    """The message and the exit code of a run ended by `cause`: a termination, else an interrupt."""
    if isinstance(cause, Terminated):
        return "terminated", EXIT_TERMINATED
    return "interrupted", EXIT_INTERRUPTED


def interrupt_behind(error: BaseException) -> KeyboardInterrupt | None:
    """The interrupt `error` stands for: one Python turned into another error (as it does with
    one raised while a class is created), or one being handled when `error` was raised."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None
