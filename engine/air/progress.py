"""Progress on standard error: a line per stage of a check and, on a terminal, a bar that
follows the long parts (reading the tree, evaluating its clauses) while they run.

The bar is redrawn in place (carriage return) at most every REDRAW_SECONDS, only for work of
MIN_ITEMS items or more, and erased before the next line is written, so that a log sees the
lines alone. Off a terminal there is no bar.
"""

from __future__ import annotations

import time
from typing import TextIO

from air.printable import printable

MIN_ITEMS = 50
REDRAW_SECONDS = 0.1
BAR_WIDTH = 30


class Progress:
    def __init__(self, stream: TextIO, bar: bool) -> None:
        self.stream, self.bar = stream, bar
        self.drawn = False
        self.last = 0.0

    def __call__(self, message: str) -> None:
        """Write a line (the bar erased first)."""
        self._erase()
        self.stream.write(printable(f"air: {message}") + "\n")
        self.stream.flush()

    def advance(self, done: int, total: int) -> None:
        """Show that `done` of `total` items are done."""
        now = time.monotonic()
        if not self.bar or total < MIN_ITEMS or (now - self.last < REDRAW_SECONDS and done < total):
            return
        self.last = now
        filled = BAR_WIDTH * done // total
        self.stream.write(f"\rair: [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}")
        self.stream.flush()
        self.drawn = True

    def finish(self) -> None:
        self._erase()

    def _erase(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[2K")
            self.drawn = False
