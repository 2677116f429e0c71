"""The probe worker. air runs this file as a script in the probed interpreter (`--python`); it is
never imported, and it uses the standard library alone, since that interpreter need not have air.

It reads one request, JSON on standard input: the framework's session module, the options for
it, and the probes to run. It starts the session (`start(options)` returns the context every
probe is given and the facts of the probed environment), then runs each probe in turn. It
writes one JSON line per event on the descriptor it was given in AIR_PROBE_EVENTS (standard
output by then goes to standard error, so that what probes print cannot be taken for an event):

    {"event": "ready", "environment": {...}}         the session started
    {"event": "unavailable", "reason": "..."}        it could not; nothing was run
    {"event": "start", "id": "..."}                  a probe began
    {"event": "result", "id": "...", "outcome": "verified" | "refuted" | "skipped",
     "detail": "...", "line": N | null}              it ended

A probe passes by returning (what it returns, as text, is its detail), is skipped by raising
`unittest.SkipTest`, and fails by raising anything else; `line` is then the line of the probe's
file where it failed. A probe that measures many things returns a mapping instead: its
`detail`, a `matrix` of [name, variant, outcome, detail] entries (sent along as "matrix"), and
whether it `passed`. A probe that never ends, or ends the interpreter, sends no result: air
sees that, and starts another worker for the probes left.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import traceback
import unittest
from types import ModuleType
from typing import Any

EVENTS_VARIABLE = "AIR_PROBE_EVENTS"
STDERR_MARK = "\x1eair probe "  # a line of standard error that starts a probe's output
MAX_DETAIL = 500


def main() -> None:
    events = os.fdopen(int(os.environ[EVENTS_VARIABLE]), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    request = json.loads(sys.stdin.read())

    def say(event: str, **fields: Any) -> None:
        events.write(json.dumps({"event": event, **fields}) + "\n")

    try:
        session = _module(request["session"], "air_probe_session")
        context, environment = session.start(request["options"])
    except BaseException as error:  # whatever stops the session, including an exit it calls
        say("unavailable", reason=_described(error))
        return
    say("ready", environment={str(key): str(value) for key, value in environment.items()})
    modules: dict[str, ModuleType] = {}
    for probe in request["probes"]:
        say("start", id=probe["id"])
        sys.stderr.write(f"{STDERR_MARK}{probe['id']}\n")  # what follows on standard error is this probe's
        sys.stderr.flush()
        path = probe["path"]
        line, matrix = None, None
        try:
            if path not in modules:
                modules[path] = _module(path, f"air_probe_{len(modules)}")
            detail = getattr(modules[path], probe["function"])(context)
            outcome = "verified"
            if isinstance(detail, dict):
                outcome = "verified" if detail.get("passed", True) else "refuted"
                detail, matrix = detail.get("detail", ""), _matrix(detail.get("matrix"))
        except unittest.SkipTest as skip:
            outcome, detail = "skipped", str(skip)
        except Exception as error:
            outcome, detail, line = "refuted", _described(error), _line_in(error, path)
        say("result", id=probe["id"], outcome=outcome, detail=_short(str(detail or "")), line=line, matrix=matrix)


def _matrix(entries: Any) -> list[list[str]] | None:
    if not isinstance(entries, list):
        return None
    return [
        [_short(str(cell)) for cell in entry[:4]]
        for entry in entries
        if isinstance(entry, (list, tuple)) and len(entry) >= 4
    ]


def _module(path: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # where dataclasses, pickle and the like look it up
    spec.loader.exec_module(module)
    return module


def _described(error: BaseException) -> str:
    message = str(error).strip().splitlines()
    return _short(f"{type(error).__name__}: {message[0]}" if message else type(error).__name__)


def _line_in(error: BaseException, path: str) -> int | None:
    """The line of `path` the error was raised through, the deepest such."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == path]
    return frames[-1].lineno if frames else None


def _short(text: str) -> str:
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 3] + "..."


if __name__ == "__main__":
    main()
