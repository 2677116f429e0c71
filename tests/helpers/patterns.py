"""The patterns the shipped pack makes air compile, found once per test session."""

from __future__ import annotations

import re
from functools import cache

import pytest
from air.pack.load import load_pack
from air.regex import GuardedPattern, compile_guarded
from air.run import check


@cache
def shipped_patterns() -> dict[str, tuple[GuardedPattern, str]]:
    """Every pattern the shipped pack makes air compile, with how air searches it: those its
    clauses, framework and test inventory hold, and those built from them (definition and
    assignment hints), recorded while the pack loads and its fixtures are checked, which
    evaluates every clause. A `text` clause's pattern, and a `file` clause's `follows`, are
    searched for every match; the others (file contents, captured values, hints, CI signals) for
    the first."""
    recorded: dict[str, GuardedPattern] = {}
    build = GuardedPattern.__init__

    def record(self, pattern, parsed, native=True):
        build(self, pattern, parsed, native)
        recorded.setdefault(pattern, self)

    compile_guarded.cache_clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(GuardedPattern, "__init__", record)
        pack = load_pack("pytorch-2.x")
        for fixture in sorted(path for path in pack.fixtures.iterdir() if path.is_dir()):
            check(fixture, pack)
    compile_guarded.cache_clear()
    clauses = [c for row in pack.rows for c in row.evidence.values()] + list(pack.framework.signals.values())
    clauses += [detector.clause for detector in pack.upstream]
    every_match = {c.spec.get("pattern") or re.escape(c.spec["literal"]) for c in clauses if c.kind == "text"}
    every_match |= {c.spec["follows"] for c in clauses if c.kind == "file" and "follows" in c.spec}
    return {
        pattern: (compiled, "finditer" if pattern in every_match else "search")
        for pattern, compiled in recorded.items()
    }
