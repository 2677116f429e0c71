"""Progress on standard error: lines always, a bar on a terminal for long work, fed by the
check's executor as its maps go on."""

from __future__ import annotations

import io

import pytest
from air.executor import Executor
from air.progress import Progress


def test_a_terminal_gets_a_bar_that_lines_erase_first():
    stream = io.StringIO()
    progress = Progress(stream, bar=True)
    progress.advance(10, 100)
    assert stream.getvalue() == "\rair: [###...........................] 10/100"
    progress("indexed 100 files")
    assert stream.getvalue().endswith("\r\x1b[2Kair: indexed 100 files\n")
    progress.advance(5, 10)  # short work: no bar
    progress.finish()
    assert stream.getvalue().endswith("air: indexed 100 files\n")


def test_off_a_terminal_there_are_only_lines():
    stream = io.StringIO()
    progress = Progress(stream, bar=False)
    progress.advance(100, 100)
    progress("evaluated 225 rows")
    progress.finish()
    assert stream.getvalue() == "air: evaluated 225 rows\n"


@pytest.mark.parametrize("workers", [1, 2])
def test_the_executor_reports_how_far_its_maps_are(workers):
    seen: list[tuple[int, int]] = []
    executor = Executor(workers, watch=lambda done, total: seen.append((done, total)))
    results, _ = executor.map(lambda number: number * 2, list(range(200)))
    assert results == [number * 2 for number in range(200)]
    assert seen and all(total == 200 and 0 < done <= 200 for done, total in seen)
    assert [done for done, _total in seen] == sorted(done for done, _total in seen)
    assert seen[-1] == (200, 200)
