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
    """Literals one of which every match contains: the longest literal run of the pattern, or
    one run per branch of an alternation (`\\.backward\\(|gradcheck` -> [".backward(", "gradcheck"]).
    Empty when no such set of literals of at least MIN_LITERAL characters exists."""
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & re.IGNORECASE:
        return []
    return _required(list(parsed)) or []


def _required(items: list) -> list[str] | None:
    """The best set of alternatives that a match of the sequence `items` must contain."""
    candidates: list[list[str]] = []
    run: list[str] = []
    for op, value in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(value))
            continue
        candidates.append(["".join(run)])
        run = []
        inner = None
        if name == "SUBPATTERN" and not (value[1] & re.IGNORECASE):
            inner = _required(list(value[-1]))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and value[0] >= 1:
            inner = _required(list(value[-1]))
        elif name == "BRANCH":
            branches = [_required(list(branch)) for branch in value[1]]
            if all(branches):
                inner = sorted({literal for branch in branches for literal in branch})
        if inner:
            candidates.append(inner)
    candidates.append(["".join(run)])
    usable = [c for c in candidates if c and min(map(len, c)) >= MIN_LITERAL]
    return max(usable, key=lambda c: (min(map(len, c)), -len(c))) if usable else None
