"""The backend's own test suite, read without running it: how many tests, which shared
test machinery they use, which tests are skipped and why, and what CI runs.

What counts as a skip, a marker of shared machinery or a CI file is pack data (the pack's
`test_inventory` section), and so is how to tell the tests that run on the device (its `live`
part, read by `air.graph.live_tests`). Tests are counted and skips read line by line from comment-free
source, so a commented-out decorator is never a skip.
"""

from __future__ import annotations

import re
from collections import Counter

from air.graph.test_syntax import CPP_TEST, SKIP_WORDS, TestSyntax, lines_naming, python_test_count
from air.index import CodeIndex
from air.index.files import matches_glob
from air.index.model import SourceFile
from air.regex import GuardedPattern, PatternTimeout
from air.results import CiWorkflow, SkippedTest, TestInventory

MAX_LISTED_SKIPS = 200
MAX_REASON = 160
CONTINUATION_LINES = 4

_DECORATOR = re.compile(r"(?m)^[ \t]*@[ \t]*(?P<name>[A-Za-z_][\w.]*)")
_SKIP_CALL = re.compile(r"(?P<name>(?<![\w.])[A-Za-z_][\w.]*)[ \t]*\(")
_REASON_KEYWORD = re.compile(r"""\b(?:reason|msg)\s*=\s*[rRuUfF]{0,2}(?P<quote>["'])(?P<text>.*?)(?<!\\)(?P=quote)""")
_STRING = re.compile(r"""[rRuUfF]{0,2}(?<!\\)(?P<quote>["'])(?P<text>.*?)(?<!\\)(?P=quote)""")


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
        found = python_test_count(code) or int(
            syntax.live is not None and syntax.live.is_script(source.path, code, index.imported_names)
        )
        python_tests += found
        files += found > 0
        names = index.python_lexical(source).code  # strings blanked: `r"dtypes?"` names no machinery
        markers.update(match.group(1) for match in syntax.marker_pattern.finditer(names))
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


def _skips(source: SourceFile, code: str, syntax: TestSyntax) -> list[SkippedTest]:
    numbers = [number for number, _start in lines_naming(code, SKIP_WORDS)]
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
        if not matches_glob(source.path, syntax.ci_files):
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
