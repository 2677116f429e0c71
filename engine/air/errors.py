"""Errors that end a run with a documented exit code and a one-line message."""

from __future__ import annotations

EXIT_OK = 0
EXIT_BELOW_THRESHOLD = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130


class AirError(Exception):
    """An error the user can act on. Its message is printed as one line."""

    exit_code = EXIT_USAGE


class InputError(AirError):
    """The thing to analyse cannot be found or read."""


class PackError(AirError):
    """A rule pack or framework definition is malformed."""

    def __init__(self, source: str, message: str, line: int | None = None, yaml_path: str = "") -> None:
        location = f"{source}:{line}" if line else source
        where = f" at {yaml_path}" if yaml_path else ""
        super().__init__(f"{location}{where}: {message}")
