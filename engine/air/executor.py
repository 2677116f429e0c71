"""The worker processes of one check: the only place where air starts processes.

`run` creates one `Executor` per check and hands it to the stages that have work to share: the
literal scan and the read-ahead of the index, the parse of Python files, the evaluation of
clauses, the parse of `structural` candidates. Each `map` forks its workers when it starts, so
that they see everything the check has found so far, copy-on-write, and nothing is sent to them
but the position of the next item. The calling process works too: it runs the caller's own
work alongside, then takes items like the workers. Items are taken in the order given (put the
costliest first) and results come back in that order, whoever computed them.

A forked worker maps serially: it never starts processes of its own. Nor does the calling
process while its workers run: a map asked for meanwhile (by the work run alongside) runs here.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from multiprocessing.reduction import ForkingPickler
from typing import Any, Generic, TypeVar, overload

from air.interrupts import stop

FORKING = "fork" in multiprocessing.get_all_start_methods()
MAX_WORKERS = 4
PART_SECONDS = 0.02

Item = TypeVar("Item")
Result = TypeVar("Result")
Extra = TypeVar("Extra")
Watch = Callable[[int, int], None]


class Executor:
    """Maps functions over items across `workers` processes (this one included)."""

    def __init__(self, workers: int | None = None, watch: Watch | None = None) -> None:
        wanted = workers if workers is not None else min(os.cpu_count() or 1, MAX_WORKERS)
        self.workers = wanted if FORKING else 1
        self.watch = watch  # told (items done, items) as a map goes on, in this process only
        self.owner = os.getpid()

    def advanced(self, done: int, total: int) -> None:
        if self.watch is not None and os.getpid() == self.owner:
            self.watch(done, total)

    @property
    def parallel(self) -> bool:
        return self.workers > 1

    @overload
    def map(
        self,
        function: Callable[[Item], Result],
        items: Sequence[Item],
        alongside: None = None,
        min_items: int = 2,
        here_from_end: bool = False,
    ) -> tuple[list[Result], None]: ...

    @overload
    def map(
        self,
        function: Callable[[Item], Result],
        items: Sequence[Item],
        alongside: Callable[[], Extra],
        min_items: int = 2,
        here_from_end: bool = False,
    ) -> tuple[list[Result], Extra]: ...

    def map(
        self,
        function: Callable[[Item], Result],
        items: Sequence[Item],
        alongside: Callable[[], Extra] | None = None,
        min_items: int = 2,
        here_from_end: bool = False,
    ) -> tuple[list[Result], Extra | None]:
        """`function` of each of `items`, in their order, and what `alongside` returns. Below
        `min_items` items, or without workers, all of it runs here. With `here_from_end`, this
        process takes items from the end of the list while the workers take them from its start,
        so that work which shares facts (reading the same files, say) stays in one process: put
        first what the workers should begin with, last what this process should. An error
        raised by `function` in a worker is raised here; should anything stop the map (an
        interrupt, an error), the workers are ended, not waited for."""
        if not self.parallel or len(items) < min_items:
            extra = alongside() if alongside else None
            results = []
            for item in items:
                results.append(function(item))
                self.advanced(len(results), len(items))
            return results, extra
        return _Round(self, function, items).run(alongside, here_from_end)


class _Round(Generic[Item, Result]):
    """One `map` across forked workers, which take items through shared counters (of the items
    taken from the start and from the end of the list). A worker writes its results in parts,
    one every PART_SECONDS, to a file in memory made for it before it forks, and says on its pipe
    where each part lies: a large answer (the read-ahead of a tree, say) is read when this
    process is free, instead of passing through the pipe's small buffer while the worker waits
    for this process to take each piece; and this process reads the parts between its own
    items, so that when the last item is done only the last part is left to pass. A worker
    that has said all it has to say is not waited for: it ends while this process goes on
    (ending a process that shares a large memory takes milliseconds) and is reaped when the
    next worker starts."""

    def __init__(self, executor: Executor, function: Callable[[Item], Result], items: Sequence[Item]) -> None:
        self.executor, self.function, self.items = executor, function, items
        self.context = multiprocessing.get_context("fork")
        self.bounds = self.context.Array("i", [0, len(items)])  # the next item from the start, the last one left

    def run(self, alongside: Callable[[], Extra] | None, here_from_end: bool) -> tuple[list[Result], Extra | None]:
        workers: list[tuple[BaseProcess, Connection, int]] = []
        started = self.executor.workers
        try:
            for _ in range(min(started, len(self.items)) - 1):
                receiver, sender = self.context.Pipe(duplex=False)
                answer = _answer_file()
                worker: BaseProcess = self.context.Process(
                    target=self._work, args=(receiver, sender, answer), daemon=True
                )
                workers.append((worker, receiver, answer))
                worker.start()
                sender.close()
            self.executor.workers = 1  # every process is busy: a map asked for meanwhile runs here
            extra = alongside() if alongside else None
            results: dict[int, Result] = {}
            answering = [(receiver, answer) for _worker, receiver, answer in workers]
            for number in self._take(here_from_end):
                results[number] = self.function(self.items[number])
                answering = _gathered(answering, results, wait=False)
                self.executor.advanced(self.bounds[0] + len(self.items) - self.bounds[1], len(self.items))
            _gathered(answering, results, wait=True)
            self.executor.advanced(len(self.items), len(self.items))
        except BaseException:
            stop([worker for worker, _receiver, _answer_fd in workers])
            raise
        finally:
            self.executor.workers = started
            for _worker, receiver, answer in workers:
                receiver.close()
                os.close(answer)
        for number in range(len(self.items)):  # a worker that died without an answer left its items
            if number not in results:
                results[number] = self.function(self.items[number])
        return [results[number] for number in range(len(self.items))], extra

    def _take(self, from_end: bool = False) -> Iterator[int]:
        while True:
            with self.bounds.get_lock():
                start, end = self.bounds[0], self.bounds[1]
                if start >= end:
                    return
                number = end - 1 if from_end else start
                self.bounds[1 if from_end else 0] = number if from_end else start + 1
            yield number

    def _work(self, receiver: Connection, sender: Connection, answer: int) -> None:
        """In a worker: compute the items nobody has taken and write their results, or the error
        that stopped them, for the parent, which raises it: nothing is printed here. Should the
        parent be gone, saying so on the pipe fails (this process holds no reading end of it)."""
        receiver.close()
        self.executor.workers = 1
        written = 0
        try:
            part: dict[int, Result] = {}
            since = time.perf_counter()
            for number in self._take():
                part[number] = self.function(self.items[number])
                if time.perf_counter() - since >= PART_SECONDS:
                    written, part, since = _send(sender, answer, written, part), {}, time.perf_counter()
            if part:
                _send(sender, answer, written, part)
        except BaseException as error:
            _send(sender, answer, written, _portable(error))
        finally:
            sender.close()


def _answer_file() -> int:
    """A file descriptor for a worker's answer: an anonymous file in memory where the system
    has them, else an unnamed temporary file; either is gone once its last descriptor closes."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("air-answer", os.MFD_CLOEXEC)
    with tempfile.TemporaryFile() as file:
        return os.dup(file.fileno())


def _gathered(
    answering: list[tuple[Connection, int]], results: dict[int, Any], wait: bool
) -> list[tuple[Connection, int]]:
    """Add to `results` the parts the workers have written (with `wait`, every part, until each
    worker has finished or died: the items of one that died without answering are computed
    here). The workers still answering are returned. An error a worker met is raised."""
    still = []
    for receiver, answer in answering:
        finished = False
        while not finished and (wait or receiver.poll()):
            try:
                where = receiver.recv()
            except EOFError:
                finished = True
                continue
            found = ForkingPickler.loads(os.pread(answer, where[1], where[0]))
            if isinstance(found, BaseException):
                raise found
            results.update(found)
        if not finished:
            still.append((receiver, answer))
    return still


def _send(sender: Connection, answer: int, offset: int, found: object) -> int:
    """Write `found` to the answer file at `offset`, say where it lies, and return where the
    next part goes."""
    data = memoryview(ForkingPickler.dumps(found))
    try:
        written = 0
        while written < len(data):
            written += os.pwrite(answer, data[written:], offset + written)
        sender.send((offset, len(data)))
    except OSError:  # the parent has gone (or the answer could not be written): nobody is told
        pass
    return offset + len(data)


def _portable(error: BaseException) -> BaseException:
    """`error`, if it can be rebuilt on the other side of the pipe; else an error naming it."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")
    return error
