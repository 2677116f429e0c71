"""How often Python's cyclic garbage collector runs while a check works."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Allocations between collections of the youngest generation (Python's default is 700); the
# older generations' factors are Python's own.
ALLOCATIONS_PER_COLLECTION = 100_000


@contextmanager
def rare_collections() -> Iterator[None]:
    """While held, the cyclic collector runs about a hundred times less often. A check builds a
    few hundred thousand objects that live until it ends (the index, the facts of each file)
    and makes little cyclic garbage; at Python's default pace, each collection of the older
    generations walks all of them, for about a tenth of the check's time."""
    before = gc.get_threshold()
    gc.set_threshold(ALLOCATIONS_PER_COLLECTION, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
