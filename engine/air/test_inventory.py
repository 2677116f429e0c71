"""The backend's own test suite, read without running it: how many tests, which shared
test machinery they use, which tests are skipped and why, and what CI runs.

What counts as a skip, a marker of shared machinery or a CI file is pack data (the pack's
`test_inventory` section), and so is how to tell the tests that run on the device (its `live`
part, read by `air.live_tests`). Tests are counted and skips read line by line from comment-free
source, so a commented-out decorator is never a skip.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cached_property
from typing import Any

from air.index import CodeIndex
from air.index.model import SourceFile
from air.regex import GuardedPattern, PatternTimeout, compile_guarded
from air.report.model import CiWorkflow, SkippedTest, TestInventory

MAX_LISTED_SKIPS = 200
MAX_REASON = 160
CONTINUATION_LINES = 4

_PYTHON_TEST = re.compile(r"def[ \t]+test\w*[ \t]*\(")
CPP_TEST = compile_guarded(
    r"^[ \t]*(?:TEST|TEST_F|TEST_P|TYPED_TEST)[ \t]*\([ \t]*(?P<suite>\w+)[ \t]*,[ \t]*(?P<name>\w+)"
)
_DECORATOR = re.compile(r"(?m)^[ \t]*@[ \t]*(?P<name>[A-Za-z_][\w.]*)")
_SKIP_CALL = re.compile(r"(?P<name>(?<![\w.])[A-Za-z_][\w.]*)[ \t]*\(")
_REASON_KEYWORD = re.compile(r"""\b(?:reason|msg)\s*=\s*[rRuUfF]{0,2}(?P<quote>["'])(?P<text>.*?)(?<!\\)(?P=quote)""")
SKIP_WORDS = ("skip", "fail")  # a line without one of them, in any ASCII case, is not a skip
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_STRING = re.compile(r"""[rRuUfF]{0,2}(?<!\\)(?P<quote>["'])(?P<text>.*?)(?<!\\)(?P=quote)""")


@dataclass(frozen=True)
class LiveSyntax:
    """How to tell tests that run on the device from the rest (a pack's `test_inventory.live`;
    see `air.live_tests`)."""

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

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> LiveSyntax:
        return cls(
            unconditional_skips=tuple(data["unconditional_skips"]),
            skip_marks=tuple(data["skip_marks"]),
            device_skip=compile_guarded(data["device_skip"]),
            device_only=compile_guarded(data["device_only"]),
            device_types=tuple(name.lower() for name in data["device_types"]),
            device_generic=tuple(data["device_generic"]),
            helpers=tuple(data["helpers"]),
            test_names=tuple(data["test_names"]),
            quarantined=tuple(data.get("quarantined", ())),
            skip_lists=tuple(data["skip_lists"]),
            skip_list_languages=tuple(data["skip_list_languages"]),
            skip_list_entries=tuple(compile_guarded(pattern) for pattern in data["skip_list_entries"]),
            disabled_cpp_tests=tuple(data["disabled_cpp_tests"]),
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
        last = name.rsplit(".", 1)[-1]
        return any(fnmatchcase(last, pattern) for pattern in self.skip_names)


def test_inventory(index: CodeIndex, syntax: TestSyntax) -> TestInventory:
    python_tests = cpp_tests = files = 0
    markers: Counter[str] = Counter()
    skips: list[SkippedTest] = []
    for source in index.files:
        if source.role != "tests" or source.language not in ("python", "cpp"):
            continue
        code = index.code_text(source)
        if source.language == "cpp":
            found = sum(1 for _match in CPP_TEST.finditer(code))
            cpp_tests += found
            files += found > 0
            continue
        found = python_test_count(code)
        python_tests += found
        files += found > 0
        markers.update(match.group(1) for match in syntax.marker_pattern.finditer(code))
        skips.extend(_skips(source, code, syntax))
    reasons = Counter(skip.reason or "(no reason given)" for skip in skips)
    return TestInventory(
        test_files=files,
        python_tests=python_tests,
        cpp_tests=cpp_tests,
        markers=tuple((marker, markers[marker]) for marker in syntax.markers if markers[marker]),
        skip_total=len(skips),
        skip_reasons=tuple(sorted(reasons.items(), key=lambda item: (-item[1], item[0]))),
        skips=tuple(skips[:MAX_LISTED_SKIPS]),
        ci=tuple(_workflows(index, syntax)),
    )


def python_test_count(code: str) -> int:
    """How many test functions (`def test...`) comment-free Python code defines."""
    return sum(1 for match in _PYTHON_TEST.finditer(code) if at_line_start(code, match.start()))


def line_numbers(code: str, positions) -> list[int]:
    """The distinct 1-based lines of increasing `positions`, counted in one pass."""
    numbers: list[int] = []
    line, last = 1, 0
    for position in positions:
        line += code.count("\n", last, position)
        last = position
        if not numbers or numbers[-1] != line:
            numbers.append(line)
    return numbers


def positions(text: str, words: tuple[str, ...]) -> list[int]:
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


def _skips(source: SourceFile, code: str, syntax: TestSyntax) -> list[SkippedTest]:
    numbers = line_numbers(code, positions(code.translate(_ASCII_LOWER), SKIP_WORDS))
    if not numbers:
        return []
    lines = code.splitlines()
    found = []
    for number in numbers:
        line = lines[number - 1]
        decorator = _DECORATOR.match(line)
        names = [decorator["name"]] if decorator else [m["name"] for m in _SKIP_CALL.finditer(line)]
        name = next((n for n in names if syntax.is_skip(n)), None)
        if name is None:
            continue
        text = " ".join(lines[number - 1 : number - 1 + CONTINUATION_LINES])
        found.append(SkippedTest(source.path, number, name, _reason(text[text.find(name) + len(name) :])))
    return found


def _reason(arguments: str) -> str:
    """`reason=`/`msg=` if given, else the last string literal of the call's first lines."""
    keyword = _REASON_KEYWORD.search(arguments)
    if keyword:
        return _shorten(keyword["text"])
    depth, end = 0, len(arguments)
    for position, char in enumerate(arguments):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and position > 0:
            end = position
            break
    strings = _STRING.findall(arguments[:end])
    return _shorten(strings[-1][1]) if strings else ""


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


def _workflows(index: CodeIndex, syntax: TestSyntax):
    for source in index.files:
        if not any(fnmatchcase(source.path, pattern) for pattern in syntax.ci_files):
            continue
        code = index.code_text(source)
        signals = tuple(label for label, pattern in syntax.ci_signals if _shows(pattern, code))
        yield CiWorkflow(source.path, signals)


def _shows(signal: GuardedPattern, text: str) -> bool:
    """Whether a CI file shows a pack's signal; a search past its time budget counts as no."""
    try:
        return signal.search(text) is not None
    except PatternTimeout:
        return False
