"""Release numbers and ranges such as ">=2.1,<3" (numeric components only; suffixes ignored)."""

from __future__ import annotations

import operator
import re

OPERATORS = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
    "~=": operator.ge,  # and the release before its last component, in `satisfies`
}
CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|~=|>|<)\s*((?>[0-9]+(?:\.[0-9]+)*))(?:[.*A-Za-z0-9+-]*)\s*$")


def parse_release(text: str) -> tuple[int, ...]:
    match = re.match(r"\s*v?([0-9]+(?:\.[0-9]+)*)", text)
    if not match:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(part) for part in match.group(1).split("."))


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def satisfies(version: str, spec: str) -> bool:
    """Whether `version` lies in the comma-separated range `spec` ("" admits everything)."""
    release = parse_release(version)
    for clause in filter(None, (part.strip() for part in spec.split(","))):
        match = CLAUSE.match(clause)
        if not match:
            raise ValueError(f"not a version range: {spec!r}")
        symbol, bound = match.group(1), parse_release(match.group(2))
        left, right = _padded(release, bound)
        if symbol == "==" and "*" in clause:
            left, right = left[: len(bound)], bound
        if not OPERATORS[symbol](left, right):
            return False
        if symbol == "~=" and len(bound) > 1 and release[: len(bound) - 1] != bound[:-1]:
            return False  # ~=2.4.1 is >=2.4.1 and ==2.4.*; ~=2.4 is >=2.4 and ==2.*
    return True


def is_release(text: str) -> bool:
    return re.fullmatch(r"[0-9]+(?:\.[0-9]+)*", text.strip()) is not None


def is_range(spec: str) -> bool:
    return all(CLAUSE.match(part) for part in spec.split(",") if part.strip())


def ranges_overlap(first: str, second: str) -> bool:
    """Whether some release lies in both ranges. Releases at, just above and just below every
    bound of either range are tried, which covers every way two ranges can meet."""
    bounds = [
        parse_release(m.group(2)) for spec in (first, second) for part in spec.split(",") if (m := CLAUSE.match(part))
    ]
    candidates: set[tuple[int, ...]] = {(0,), (10_000,)}
    for bound in bounds:
        candidates.add(bound)
        candidates.add(bound + (1,))
        lower = list(bound)
        while lower and lower[-1] == 0:
            lower.pop()
        if lower:
            lower[-1] -= 1
            candidates.add(tuple(lower) + (10_000,))
    return any(
        satisfies(version, first) and satisfies(version, second)
        for version in (".".join(map(str, candidate)) for candidate in candidates)
    )


def admits(spec: str, target: str) -> bool:
    """Whether a row's range `spec` admits the backend's `target`: a release ("2.4") or a
    range from its pins (">=2.1,<2.6")."""
    return ranges_overlap(spec, target) if is_range(target) else satisfies(target, spec)
