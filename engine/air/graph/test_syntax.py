"""How a framework's test suites are written: what marks a skip or shared test machinery, what a
CI file shows, and how to tell the tests that run on the device (a pack's `test_inventory`).
Read by the live-test facts (`air.graph.live_tests`) and the test inventory
(`air.scoring.test_inventory`)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, AnyStr

from air.index.files import matches_glob
from air.regex import GuardedPattern, compile_guarded

_PYTHON_TEST = re.compile(r"def[ \t]+test\w*[ \t]*\(")
_MAIN_GUARD = re.compile(r"^if[ \t]+__name__[ \t]*==", re.MULTILINE)
_MODULE_LEVEL_ACTION = re.compile(
    r"^(?:(?:assert|for|while|with|try)\b|(?!(?:def|class|import|from|if|elif|else|return|lambda|print)\b)"
    r"[A-Za-z_][\w.]*[ \t]*\()",
    re.MULTILINE,
)
CPP_TEST = compile_guarded(
    r"^[ \t]*(?:TEST|TEST_F|TEST_P|TYPED_TEST)[ \t]*\([ \t]*(?P<suite>\w+)[ \t]*,[ \t]*(?P<name>\w+)"
)
SKIP_WORDS = ("skip", "fail")  # a line without one of them, in any ASCII case, is not a skip
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@dataclass(frozen=True)
class LiveSyntax:
    """How to tell tests that run on the device from the rest (a pack's `test_inventory.live`;
    see `air.graph.live_tests`)."""

    unconditional_skips: tuple[str, ...]  # globs over a skip's last name component
    skip_marks: tuple[str, ...]  # names that, assigned a skip, skip the module or class
    device_skip: GuardedPattern  # a skip's name that names a device: group `device`
    device_only: GuardedPattern  # a filter's name that keeps the test to one device type: group `device`
    device_types: tuple[str, ...]
    device_generic: tuple[str, ...]  # names whose use makes a file's tests run on every device type
    helpers: tuple[str, ...]  # path globs of test utility modules
    test_names: tuple[str, ...]  # path globs of files named as tests, which are never helpers
    quarantined: tuple[str, ...]  # path globs of directories of tests the suite keeps out of its runs
    skip_lists: tuple[str, ...]  # path globs of files that list skipped tests
    skip_list_languages: tuple[str, ...]  # the languages (data formats) such a file is written in
    skip_list_entries: tuple[GuardedPattern, ...]  # ways to list a test: group `test` or `file`, optionally `cls`
    disabled_cpp_tests: tuple[str, ...]  # globs over C/C++ suite or test names
    error_checks: GuardedPattern | None = None  # a check that expects an error (`pytest.raises(`)
    own_device_types: tuple[str, ...] = ()  # of device_types, those that stand for any backend under test
    result_checks: GuardedPattern | None = None  # a check of a result (`assert`, `assertEqual(`)

    def is_script(self, path: str, code: str, imported: Collection[str]) -> bool:
        """Whether a Python file of the tests without test functions is a test script, one test
        in all: it has a `__main__` guard, or it does something when run (a call, an assertion,
        a loop, a `try` or a `with` at its top level, which a module of definitions does not) and
        is named as a test or is a module no file imports (one that others import is their
        helper, whatever it runs on import). `code` is its comment-free text; `imported` the
        names the tree's Python files import."""
        if _MAIN_GUARD.search(code) is not None:
            return True
        if _MODULE_LEVEL_ACTION.search(code) is None:
            return False
        module = path.rpartition("/")[2].removesuffix(".py")
        return matches_glob(path, self.test_names) or module not in imported

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> LiveSyntax:
        return cls(
            unconditional_skips=tuple(data["unconditional_skips"]),
            skip_marks=tuple(data["skip_marks"]),
            device_skip=compile_guarded(data["device_skip"]),
            device_only=compile_guarded(data["device_only"]),
            device_types=tuple(name.lower() for name in data["device_types"]),
            own_device_types=tuple(name.lower() for name in data.get("own_device_types", ())),
            device_generic=tuple(data["device_generic"]),
            helpers=tuple(data["helpers"]),
            test_names=tuple(data["test_names"]),
            quarantined=tuple(data.get("quarantined", ())),
            skip_lists=tuple(data["skip_lists"]),
            skip_list_languages=tuple(data["skip_list_languages"]),
            skip_list_entries=tuple(compile_guarded(pattern) for pattern in data["skip_list_entries"]),
            disabled_cpp_tests=tuple(data["disabled_cpp_tests"]),
            error_checks=compile_guarded(data["error_checks"]) if "error_checks" in data else None,
            result_checks=compile_guarded(data["result_checks"]) if "result_checks" in data else None,
        )


@dataclass(frozen=True)
class TestSyntax:
    """How a framework's test suites mark skips and shared machinery (a pack's `test_inventory`)."""

    skip_names: tuple[str, ...]  # globs over the last component of a decorator or call
    markers: tuple[str, ...]
    ci_files: tuple[str, ...]
    ci_signals: tuple[tuple[str, GuardedPattern], ...]
    live: LiveSyntax | None = None

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> TestSyntax:
        return cls(
            skip_names=tuple(data["skip_names"]),
            markers=tuple(data["markers"]),
            ci_files=tuple(data["ci_files"]),
            ci_signals=tuple((label, compile_guarded(pattern)) for label, pattern in data["ci_signals"].items()),
            live=LiveSyntax.from_data(data["live"]) if "live" in data else None,
        )

    @cached_property
    def marker_pattern(self) -> GuardedPattern:
        return compile_guarded(r"\b(" + "|".join(map(re.escape, self.markers)) + r")\b" if self.markers else r"(?!)")

    def is_skip(self, name: str) -> bool:
        return matches_glob(name.rsplit(".", 1)[-1], self.skip_names)


def python_test_count(code: str) -> int:
    """How many test functions (`def test...`) comment-free Python code defines."""
    return sum(1 for match in _PYTHON_TEST.finditer(code) if at_line_start(code, match.start()))


def numbered_lines(code: str, positions: Iterable[int]) -> list[tuple[int, int]]:
    """The distinct lines holding increasing `positions`: each its 1-based number and where it
    starts, counted in one pass."""
    found: list[tuple[int, int]] = []
    line, last = 1, 0
    for position in positions:
        line += code.count("\n", last, position)
        last = position
        if not found or found[-1][0] != line:
            found.append((line, code.rfind("\n", 0, position) + 1))
    return found


def lines_from(text: str, start: int, count: int) -> str:
    """The `count` lines of `text` from `start` (where a line starts) on, as many as there are,
    without the last one's line break."""
    end = start
    for _ in range(count):
        end = text.find("\n", end) + 1
        if not end:
            return text[start:]
    return text[start : end - 1]


def lines_naming(code: str, words: tuple[str, ...]) -> list[tuple[int, int]]:
    """The lines of `code` holding one of `words` (lower-case) with its ASCII letters in any
    case: each line's number and where it starts."""
    if all(word.isascii() and "?" not in word for word in words):
        # one byte a character: ASCII letters lower-cased, any other character a `?` (fast to make)
        folded = code.encode("ascii", "replace").lower()
        return numbered_lines(code, positions(folded, tuple(word.encode("ascii") for word in words)))
    return numbered_lines(code, positions(code.translate(_ASCII_LOWER), words))


def positions(text: AnyStr, words: tuple[AnyStr, ...]) -> list[int]:
    """Where any of `words` occurs in `text`, ascending."""
    found = []
    for word in words:
        position = text.find(word)
        while position >= 0:
            found.append(position)
            position = text.find(word, position + 1)
    return sorted(found)


def at_line_start(code: str, position: int) -> bool:
    """Whether only indentation, or `async`, precedes `position` on its line."""
    before = code[code.rfind("\n", 0, position) + 1 : position].strip()
    return before in ("", "async")
