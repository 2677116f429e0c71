"""The probe run: a pack's probes in the probed interpreter, never in air's own process.

A worker (`worker.py`, run there as a script) starts the framework's probe session, then runs
the probes one by one and reports each as it ends. This process watches it: a probe that runs
past its timeout has its worker killed, one that ends the interpreter (an abort, a segfault)
is seen when the events stop; either is an `error` for that probe, and a new worker takes the
probes left. Once the suite's budget is spent, the probes left are skipped. The worker runs
in a temporary directory, also its TMPDIR, removed afterwards: nothing a probe writes is left.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from air.errors import InputError
from air.pack.probes import Probe
from air.results import ProbeOutcome, ProbeResult
from air.runtime import DEFAULT_BUDGET

WORKER = Path(__file__).with_name("worker.py")
EVENTS_VARIABLE = "AIR_PROBE_EVENTS"  # as `worker.py` reads it
STDERR_MARK = "\x1eair probe "  # as `worker.py` writes it before each probe
SESSION_TIMEOUT = 300.0  # seconds to start the session: importing a framework and a backend can be slow
REPORTED: dict[object, ProbeOutcome] = {"verified": "verified", "refuted": "refuted", "skipped": "skipped"}
ENDED = "ended"  # not an event a worker sends: its events ended
STDERR_TAIL = 2000  # bytes of the worker's standard error kept to say why it died


class ProbesUnavailable(InputError):
    """The probe session could not start: no probe ran."""


@dataclass(frozen=True)
class ProbeRequest:
    python: str  # the interpreter to probe
    session: Path  # the framework's probe session module
    options: dict[str, str | None]  # for the session's `start`
    budget: float = DEFAULT_BUDGET  # seconds for the whole suite


def run_probes(
    request: ProbeRequest, probes: Sequence[Probe], say: Callable[[str], None]
) -> tuple[dict[str, str], list[ProbeResult]]:
    """The probed environment's facts and each probe's result, in the order given."""
    deadline = time.monotonic() + request.budget
    results: dict[str, ProbeResult] = {}
    environment: dict[str, str] | None = None
    pending = list(probes)
    with tempfile.TemporaryDirectory(prefix="air-probes-") as scratch:
        while pending:
            if time.monotonic() >= deadline:
                for probe in pending:
                    results[probe.id] = _result(probe, "skipped", f"the runtime budget of {request.budget:g} s ran out")
                break
            worker = _Worker(request, pending, Path(scratch))
            try:
                environment = worker.run(deadline, results, say) or environment
            except ProbesUnavailable as unavailable:
                if environment is None:
                    raise
                for probe in pending:  # the session started before: it fails now, after a probe's end
                    results[probe.id] = _result(probe, "error", f"the probe session did not start again: {unavailable}")
            finally:
                worker.stop()
            left = [probe for probe in pending if probe.id not in results]
            if len(left) == len(pending):  # the worker ended between probes: the next one is why
                results[left[0].id] = _result(left[0], "error", "the interpreter ended before it could run")
                left = left[1:]
            pending = left
    return environment or {}, [results[probe.id] for probe in probes]


class _Worker:
    """One worker process and the events it sends."""

    def __init__(self, request: ProbeRequest, probes: list[Probe], scratch: Path) -> None:
        self.request, self.probes = request, probes
        self.by_id = {probe.id: probe for probe in probes}
        self.stderr = tempfile.TemporaryFile(dir=scratch)
        reading, writing = os.pipe()
        environment = {**os.environ, EVENTS_VARIABLE: str(writing), "TMPDIR": str(scratch)}
        environment.pop("PYTHONSTARTUP", None)
        try:
            self.process = subprocess.Popen(
                [request.python, str(WORKER)],
                stdin=subprocess.PIPE,
                stdout=self.stderr,
                stderr=self.stderr,
                pass_fds=(writing,),
                cwd=scratch,
                env=environment,
                start_new_session=True,  # its own process group: a hung probe's children end with it
            )
        except OSError as error:
            os.close(reading)
            self.stderr.close()
            raise InputError(f"--python {request.python}: cannot run it: {error.strerror or error}") from None
        finally:
            os.close(writing)
        self.events = reading
        self.buffer = b""
        payload = {
            "session": str(request.session),
            "options": request.options,
            "probes": [{"id": p.id, "path": str(p.module), "function": p.function} for p in probes],
        }
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(payload).encode())
            self.process.stdin.close()
        except BrokenPipeError:
            pass  # it died at once; the events say nothing, and `run` tells why

    def run(
        self, deadline: float, results: dict[str, ProbeResult], say: Callable[[str], None]
    ) -> dict[str, str] | None:
        """Take the worker's events until it has run every probe, or one of them hangs or ends it.
        Returns the environment the session reported."""
        environment = None
        running: Probe | None = None
        until = min(deadline, time.monotonic() + SESSION_TIMEOUT)
        while True:
            event = self._next_event(until)
            if event is None or event.get("event") == ENDED:  # out of time, or the worker is gone
                timed_out = event is None
                if running is None and environment is None:
                    why = "did not start in time" if timed_out else f"ended: {self._death()}"
                    raise ProbesUnavailable(f"runtime: the probe session in {self.request.python} {why}")
                if running is None:
                    return environment
                if timed_out and time.monotonic() >= deadline:
                    results[running.id] = _result(running, "skipped", "the runtime budget ran out while it ran")
                elif timed_out:
                    results[running.id] = _result(running, "error", f"did not finish within {running.timeout:g} s")
                else:
                    results[running.id] = _result(running, "error", f"ended the interpreter: {self._death()}")
                say(f"probe {running.id}: {results[running.id].outcome} ({results[running.id].detail})")
                return environment
            kind = event.get("event")
            if kind == "unavailable":
                raise ProbesUnavailable(
                    f"runtime: the probe session in {self.request.python} failed: {event['reason']}"
                )
            if kind == "ready":
                environment = dict(event["environment"])
                until = deadline
            elif kind == "start" and event.get("id") in self.by_id:
                running = self.by_id[event["id"]]
                until = min(deadline, time.monotonic() + running.timeout)
            elif kind == "result" and running is not None and event.get("id") == running.id:
                outcome = REPORTED.get(event.get("outcome"), "error")
                line = event.get("line") if isinstance(event.get("line"), int) else running.line
                results[running.id] = _result(running, outcome, str(event.get("detail", "")), line, _matrix(event))
                say(f"probe {running.id}: {outcome}")
                running, until = None, deadline
                if len(results.keys() & self.by_id.keys()) == len(self.probes):
                    return environment

    def _next_event(self, until: float) -> dict | None:
        """The next event, `{"event": ENDED}` once the worker's events end, or None when `until`
        passes first."""
        while b"\n" not in self.buffer:
            left = until - time.monotonic()
            if left <= 0 or not select.select([self.events], [], [], left)[0]:
                return None
            chunk = os.read(self.events, 65536)
            if not chunk:
                return {"event": ENDED}
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            event = json.loads(line)
        except ValueError:
            return {}
        return event if isinstance(event, dict) else {}

    def _death(self) -> str:
        """How the worker ended, with the last line the probe that ended it wrote to standard
        error (nothing a probe before it wrote)."""
        code = self.process.wait()
        how = (
            f"signal {signal.Signals(-code).name}"
            if code < 0 and -code in signal.valid_signals()
            else f"exit code {code}"
        )
        self.stderr.seek(max(0, os.fstat(self.stderr.fileno()).st_size - STDERR_TAIL))
        lines = self.stderr.read().decode("utf-8", "replace").split("\n")  # not splitlines: \x1e ends a line there
        started = max((number for number, line in enumerate(lines) if line.startswith(STDERR_MARK)), default=-1)
        said = [line.strip() for line in lines[started + 1 :] if line.strip()]
        return f"{how}; {said[-1]}" if said else how

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()
        os.close(self.events)
        self.stderr.close()


def _result(
    probe: Probe, outcome: ProbeOutcome, detail: str, line: int | None = None, matrix: tuple = ()
) -> ProbeResult:
    return ProbeResult(probe.id, probe.title, probe.rows, outcome, detail, probe.shown, line or probe.line, matrix)


def _matrix(event: dict) -> tuple[tuple[str, str, str, str], ...]:
    """The matrix a sweep sent: entries of four strings, anything else left out."""
    entries = event.get("matrix")
    if not isinstance(entries, list):
        return ()
    return tuple(
        (entry[0], entry[1], entry[2], entry[3])
        for entry in entries
        if isinstance(entry, list) and len(entry) == 4 and all(isinstance(cell, str) for cell in entry)
    )
