"""Regular expressions from packs: compiled once, guarded against catastrophic backtracking."""

from __future__ import annotations

import re
from functools import lru_cache

try:
    import re._parser as sre_parse  # Python 3.11+
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse  # type: ignore[no-redef]

MIN_LITERAL = 3


class UnsafePattern(ValueError):
    """A pattern whose matching time can grow exponentially with the input."""


@lru_cache(maxsize=1024)
def compile_guarded(pattern: str) -> re.Pattern[str]:
    """Compile `pattern`, refusing nested unbounded repeats such as `(a+)+` or `(a*)*`."""
    parsed = sre_parse.parse(pattern)
    if _has_nested_repeat(parsed, inside_repeat=False):
        raise UnsafePattern(f"pattern {pattern!r} nests unbounded repeats and can backtrack catastrophically")
    return re.compile(pattern, re.MULTILINE)


def _has_nested_repeat(parsed, inside_repeat: bool) -> bool:
    for op, value in parsed:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = value
            unbounded = high == sre_parse.MAXREPEAT
            if unbounded and inside_repeat:
                return True
            if _has_nested_repeat(sub, inside_repeat or unbounded):
                return True
        elif name == "SUBPATTERN":
            if _has_nested_repeat(value[-1], inside_repeat):
                return True
        elif name == "BRANCH":
            if any(_has_nested_repeat(branch, inside_repeat) for branch in value[1]):
                return True
    return False


def required_literals(pattern: str) -> list[str]:
    """A literal every match must contain (the longest run at the top level), if one exists."""
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & re.IGNORECASE:
        return []
    runs, current = [], []
    for op, value in parsed:
        if str(op) == "LITERAL":
            current.append(chr(value))
            continue
        runs.append("".join(current))
        current = []
    runs.append("".join(current))
    best = max(runs, key=len)
    return [best] if len(best) >= MIN_LITERAL else []
