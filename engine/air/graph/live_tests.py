"""Which findings in a backend's tests come from tests that run on its device.

A finding in a test file earns credit only when it lies in a test that exercises the backend:
- the file is a test (it defines test functions or C/C++ test cases, or runs its checks as a
  script, one test in all: under a `__main__` guard, or at module level when it is named as a
  test by `test_names` or no file imports it) and not a helper module
  (a pack's `helpers` globs: `conftest.py`, `*_utils.py`, ...; a file named as a test by
  `test_names`, such as `test_utils.py`, is no helper), nor in a directory the suite keeps out of
  its runs (`quarantined`: `fix_needed/`, `disabled/`, ...);
- the file names the backend (its package, a device name it registers, its dispatch key), or a
  test module it imports does, or it uses machinery that runs its tests on every device type
  (`device_generic`), so its tests can run on the device rather than on the host alone;
- it is not in a block under `if False:` (or `while False:`), which never runs, nor in a
  parameter set whose marks skip it or expect it to fail (`pytest.param(..., marks=xfail)`);
- it is not in a branch for another device type: the block of an `if` or `elif` whose condition
  names one of `device_types` as a plain name or a string (`if cuda:`, `elif device == "cpu":`),
  and neither the backend nor a negation, which runs the reference, not the backend;
- it is not in a test whose every check expects an error (`error_checks`, and none of
  `result_checks`: `with pytest.raises(...)` and no `assert`), which shows what fails, nor in a
  block or call that expects one (`with pytest.raises(...):` and its body, `assertRaises(E, f)`);
- no enclosing function or class is skipped: by a decorator that skips unconditionally (one of
  `unconditional_skips` given no condition, or any skip given a literal `True`), by a skip that
  names the backend's device (`device_skip`), by a filter that keeps the test to another device
  type (`device_only`), by a skip statement at the top level of its body or of the module (a
  skip call, a `raise` of one, or one assigned to a name in `skip_marks`), by a skip list (a
  data file matching `skip_lists` that names the test, the test in its class, or the test
  file), or, in C/C++, by a test name the pack marks as disabled (`disabled_cpp_tests`).

A file whose every test is skipped holds nothing that runs: what its helpers, fixtures and
module code do counts for no test.

A skip whose condition is decided when the tests run (`skipIf(not available, ...)`) leaves the
test counted: statically it may run. A skip or filter the test file defines itself is read by its
body, not by its name: `def onlyOnCPU(fn): return skipIf(<setting>, ...)(fn)` may run the test,
and so does one that skips in a branch (`if available: return fn`), while one whose body skips
unconditionally keeps it off. Everything that names a framework's
test machinery is pack data (`test_inventory.live`, see `air.scoring.test_inventory.LiveSyntax`).
Files are read lexically, once each, and only those holding a finding.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import NamedTuple

from air.graph.test_syntax import (
    CPP_TEST,
    SKIP_WORDS,
    TestSyntax,
    lines_from,
    lines_naming,
    numbered_lines,
    python_test_count,
)
from air.index import CodeIndex
from air.index.cpp.lexing import skip_group
from air.index.files import matches_glob
from air.index.model import SourceFile
from air.index.python_lexical import code_at_most
from air.regex import GuardedPattern, alternatives, compile_guarded, required_literals, searching

CONTINUATION_LINES = 4  # a decorator's or a skip's arguments are read this far
_DECORATOR_NAME = re.compile(r"(?P<name>[A-Za-z_][\w.]*)[ \t]*(?P<call>\()?")  # a mark or skip, maybe called
_DECORATOR = re.compile(r"@[ \t]*" + _DECORATOR_NAME.pattern)
_CALLED = re.compile(r"(?<![\w.])(?P<name>[A-Za-z_][\w.]*)[ \t]*\(")  # from a name's start only: linear
_HEADERS = re.compile(r"(?P<indent>[ \t\f]*)(?:async[ \t]+)?(?:def|class)[ \t]+(?P<name>[A-Za-z_]\w*)")
_HEAD_WORDS = (re.compile(r"def[ \t]+[A-Za-z_]"), re.compile(r"class[ \t]+[A-Za-z_]"))  # literals first: fast
_TEST_NAME = re.compile(r"def[ \t]+(test\w*)")
_TEST_FUNCTION = re.compile(r"[ \t]*(?:async[ \t]+)?def[ \t]+test")
_PARAM = re.compile(r"(?<![\w])param[ \t]*\(")  # a parameter set, `pytest.param(...)`
_MARKS = re.compile(r"\bmarks[ \t]*=")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_DEF_HEADER = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?def[ \t]+(?P<name>[A-Za-z_]\w*)[ \t]*\(", re.M)
# `skip(...)`, `raise SkipTest(...)`, `<mark> = skip(...)`: a statement that may be a skip
_SKIP_STATEMENT = re.compile(
    r"(?:raise[ \t]+|(?P<target>[A-Za-z_]\w*)[ \t]*=[ \t]*\[?[ \t]*)?(?P<name>[A-Za-z_][\w.]*)[ \t]*(?:(?P<call>\()|$)"
)
# how a call's arguments begin: none, a reason string, a keyword, a literal true, or a condition
_FIRST_ARGUMENT = re.compile(
    r"\s*(?:(?P<none>\))|(?P<string>[rRuUfFbB]{0,2}[\"'])|(?P<keyword>[A-Za-z_]\w*[ \t]*=(?!=))"
    r"|(?P<true>(?:True|1)\b))?"
)


@dataclass
class _SkipList:
    tests: dict[str, set[str]] = field(default_factory=dict)  # test name -> classes ("" for any)
    files: set[str] = field(default_factory=set)


class LiveTests:
    """Answers, for a line of a test file, whether a test that runs on the device holds it."""

    def __init__(self, index: CodeIndex, syntax: TestSyntax, backend_names: Callable[[], tuple[str, ...]]) -> None:
        """`backend_names` gives the names by which tests name the backend; it is asked once,
        when first needed."""
        if syntax.live is None:
            raise ValueError("the pack's test_inventory has no `live` section")
        self.index = index
        self.syntax = syntax
        self.live = syntax.live
        self._backend_names = backend_names
        self._names: frozenset[str] | None = None
        self._finding_names = False
        generic = "|".join(map(re.escape, self.live.device_generic))
        self._generic = compile_guarded(rf"\b(?:{generic})\b") if generic else None
        self._runnable: dict[str, bool] = {}
        self._dead: dict[str, list[tuple[int, int]]] = {}  # per file that may run: its skipped line ranges
        self._erring: dict[str, list[tuple[int, int]]] = {}  # and its line ranges that expect an error
        self._named_verdicts: dict[str, bool | None] = {}  # per skip's last name: see _named_verdict

    def _resolved(self) -> bool:
        """Whether the backend's names are known: they are found on first use. While they are
        being found (through the path's signals), a signal that reads tests finds none that run."""
        if self._names is None and not self._finding_names:
            self._finding_names = True
            try:
                self._names = frozenset(name.lower() for name in self._backend_names())
            finally:
                self._finding_names = False
        return self._names is not None

    @property
    def names(self) -> frozenset[str]:
        """The backend's names, lower-cased."""
        return self._names if self._resolved() and self._names is not None else frozenset()  # None: being found

    @cached_property
    def _naming(self) -> GuardedPattern | None:
        """Any of the backend's names as a word of code; asked for only once they are known."""
        pattern = naming_pattern(tuple(sorted(self.names)))
        return compile_guarded(f"(?i){pattern.pattern}") if pattern else None

    def find_names(self) -> None:
        """Find the backend's names now, as the first clause reading tests would."""
        self._resolved()

    def may_run(self, path: str) -> bool:
        """Whether the file is a test module whose tests may run on the device (read once)."""
        if not self._resolved():
            return False
        if path not in self._runnable:
            source = self.index.by_path.get(path)
            with searching(path):
                self._runnable[path] = source is not None and self._runnable_file(source)
        return self._runnable[path]

    def runs(self, path: str, line: int, expecting_errors: bool = False) -> bool:
        """Whether line `line` of the test file `path` runs on the device; with
        `expecting_errors`, also where a test or block expects an error (what it runs fails,
        as a row about that error wants)."""
        if not self.may_run(path):
            return False
        if path not in self._dead:
            source = self.index.by_path[path]
            with searching(path):
                if source.language == "cpp":
                    self._dead[path], self._erring[path] = self._cpp_dead(source), []
                else:
                    self._dead[path], self._erring[path] = self._python_dead(source)
        ranges = self._dead[path] if expecting_errors else self._dead[path] + self._erring[path]
        return not any(start <= line <= end for start, end in ranges)

    def _runnable_file(self, source: SourceFile) -> bool:
        if source.language not in ("python", "cpp") or self._helper(source.path):
            return False
        if matches_glob(source.path, self.live.quarantined):
            return False
        if source.path.rpartition("/")[2] in self._skip_list.files:
            return False
        code = self.index.code_text(source)
        if source.language == "python" and not (
            python_test_count(code) or self.live.is_script(source.path, code, self.index.imported_names)
        ):
            return False
        if not self._names_backend(source):
            return False
        return source.language == "python" or CPP_TEST.search(code) is not None

    def _helper(self, path: str) -> bool:
        return matches_glob(path, self.live.helpers) and not matches_glob(path, self.live.test_names)

    def _names_backend(self, source: SourceFile) -> bool:
        """Whether the file names the backend, or a test module it imports does (a helper that
        moves tensors to the device, say)."""
        code = self.index.code_text(source)
        if self._generic is not None and self._generic.search(code):
            return True
        naming = self._naming
        if naming is None:
            return False
        if naming.search(code):
            return True
        return source.language == "python" and any(
            naming.search(self.index.code_text(helper)) for helper in self._imported_tests(source)
        )

    def _imported_tests(self, source: SourceFile) -> list[SourceFile]:
        """The test-role modules a Python file imports: a sibling file first, else the module
        of that name in the tree."""
        directory = source.path.rpartition("/")[0]
        found = []
        for imported in self.index.python_lexical(source).imports:
            for module in (f"{imported.module}.{imported.name}" if imported.name else None, imported.module):
                if not module:
                    continue
                sibling = "/".join(filter(None, (directory, module.replace(".", "/") + ".py")))
                path = sibling if sibling in self.index.by_path else self.index.modules.get(module)
                helper = self.index.by_path.get(path) if path else None
                if helper is not None and helper.role == "tests" and helper is not source:
                    found.append(helper)
                    break
        return found

    def _cpp_dead(self, source: SourceFile) -> list[tuple[int, int]]:
        """Disabled test cases, each from its macro to the next one."""
        code = self.index.code_text(source)
        cases = [(code.count("\n", 0, match.start()) + 1, match) for match in CPP_TEST.finditer(code)]
        ends = [line - 1 for line, _match in cases[1:]] + [code.count("\n") + 1]
        disabled = self.live.disabled_cpp_tests
        return [
            (line, end)
            for (line, match), end in zip(cases, ends)
            if matches_glob(match["suite"], disabled) or matches_glob(match["name"], disabled)
        ]

    def _python_dead(self, source: SourceFile) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        lexical = self.index.python_lexical(source)
        code, text = lexical.code, lexical.without_comments  # the same lines, at the same offsets
        skips = [number for number, start in self._skip_lines(code) if self._skips(code, text, start)]
        listed = self._listed_tests(code)
        unused = _named_only_in_def(code)
        never = _never_run(code) + self._skipped_params(code, text) + self._foreign_branches(code, text)
        expects_errors = self.live.error_checks is not None and self.live.error_checks.search(code) is not None
        if not skips and not listed and not unused and not expects_errors:
            return never, []  # most files: no outline needed
        outline = _Outline(code)
        dead = never + _uncalled(outline, unused)
        erring: list[tuple[int, int]] = []
        if expects_errors:
            erring = self._expecting_errors_only(outline) + _expected_failures(
                code, outline.lines, self.live.error_checks
            )
        for number in skips:
            line = outline.lines[number - 1]
            indentation = len(line) - len(line.lstrip())
            if line.lstrip().startswith("@"):
                dead.append(outline.decorated(number, indentation))
                continue
            owner = outline.enclosing(number, indentation)
            if owner is None and indentation == 0:
                return [(1, len(outline.lines))], erring  # the module skips itself
            if owner is not None and outline.body_indentation(owner) == indentation:
                dead.append((outline.first_decorator(owner), outline.end(owner)))
        dead += self._listed(outline, listed)
        if _every_test_dead(outline, dead):
            return [(1, len(outline.lines))], erring  # what its helpers and module code build, no test runs
        return dead, erring

    def _foreign_branches(self, code: str, text: str) -> list[tuple[int, int]]:
        """The lines of the blocks that run only for another device type (see the module's
        docstring): `text` keeps the strings a condition compares with, `code` the blocks."""
        foreign = self._foreign_device
        if foreign is None or foreign.search(text) is None:
            return []
        branches = []
        for branch in _CONDITION_LINE.finditer(text):
            condition = branch["condition"]
            if _NEGATION.search(condition) or foreign.search(condition) is None:
                continue
            if self._naming is not None and self._naming.search(condition) is not None:
                continue
            line = text.count("\n", 0, branch.start()) + 1
            after = code_at_most(len(branch["indent"])).search(code, branch.end())
            last = code.count("\n") + 1 if after is None else line + code.count("\n", branch.end(), after.start())
            branches.append((line + 1, last))
        return branches

    @cached_property
    def _foreign_device(self) -> GuardedPattern | None:
        """A device type other than the backend's, as a plain name or a string of a condition."""
        others = sorted(
            name for name in self.live.device_types if name not in self.names and name not in self.live.own_device_types
        )
        if not others:
            return None
        names = alternatives(others)
        return compile_guarded(rf"(?<![\w.])(?:{names})(?![\w(])|[\"'](?:{names})(?::\d+)?[\"']")

    def _skipped_params(self, code: str, text: str) -> list[tuple[int, int]]:
        """The lines of the parameter sets (`pytest.param(..., marks=pytest.mark.xfail)`) whose
        marks skip them or expect them to fail whatever the run."""
        if "marks" not in code:
            return []
        skipped = []
        for param in _PARAM.finditer(code):
            end = skip_group(code, param.end() - 1) or len(code)
            marks = _MARKS.search(code, param.end(), end)
            if marks is None:
                continue
            for mark in _DECORATOR_NAME.finditer(code, marks.end(), end):
                line_start = code.rfind("\n", 0, mark.start()) + 1
                if self.syntax.is_skip(mark["name"]) and self._keeps_off_device(
                    mark["name"], mark["call"] is not None, text, line_start
                ):
                    skipped.append((code.count("\n", 0, param.start()) + 1, code.count("\n", 0, end) + 1))
                    break
        return skipped

    def _expecting_errors_only(self, outline: _Outline) -> list[tuple[int, int]]:
        """The lines of the test functions whose every check expects an error: they show what
        fails on the device, not what works."""
        error_checks, result_checks = self.live.error_checks, self.live.result_checks
        assert error_checks is not None  # asked only when the file holds such a check
        dead = []
        for header in outline.headers:
            if not header.name.startswith("test"):
                continue
            end = outline.end(header)
            body = "\n".join(outline.lines[header.line : end])
            if error_checks.search(body) is not None and (result_checks is None or result_checks.search(body) is None):
                dead.append((outline.first_decorator(header), end))
        return dead

    def _skips(self, code: str, text: str, start: int) -> bool:
        """Whether the line at `start` is a decorator or a statement that keeps a test off the device."""
        stripped = lines_from(code, start, 1).lstrip()
        decorator = _DECORATOR.match(stripped)
        if decorator:
            return self._keeps_off_device(decorator["name"], decorator["call"] is not None, text, start)
        return self._skip_statement(stripped, text, start)

    def _skip_lines(self, code: str) -> list[tuple[int, int]]:
        """Lines that may skip (their numbers and starts): those naming a skip word, or the
        literal of a device filter."""
        return lines_naming(code, self._skip_words)

    @cached_property
    def _skip_words(self) -> tuple[str, ...]:
        return tuple(word.lower() for word in SKIP_WORDS + required_literals(self.live.device_only.pattern))

    def _listed_tests(self, code: str) -> set[str]:
        """The names of the tests `code` defines that a skip list names."""
        if not self._skip_list.tests:
            return set()
        return set(_TEST_NAME.findall(code)) & self._skip_list.tests.keys()

    def _skip_statement(self, stripped: str, text: str, start: int) -> bool:
        match = _SKIP_STATEMENT.match(stripped)
        if match is None or match["target"] is not None and match["target"] not in self.live.skip_marks:
            return False
        return self.syntax.is_skip(match["name"]) and self._keeps_off_device(
            match["name"], match["call"] is not None, text, start
        )

    def _keeps_off_device(self, name: str, called: bool, text: str, start: int) -> bool:
        """Whether the skip or filter `name` (its arguments read from the line at `start` on) keeps
        the test off the backend's device whatever the run."""
        last = name.rsplit(".", 1)[-1]
        own = _own_definition(text, last)
        if own is not None:  # the file's own skip or filter: its body says what it does
            parameters = set(_IDENTIFIER.findall(own[own.find("(") : own.find(")")]))
            return any(
                self._unconditional(call, parameters) and not _branched(own, call.start())
                for call in _CALLED.finditer(own)
            )
        if last not in self._named_verdicts:
            self._named_verdicts[last] = self._named_verdict(last)
        verdict = self._named_verdicts[last]
        if verdict is not None:
            return verdict
        if not called:
            return matches_glob(last, self.live.unconditional_skips)
        return self._skips_whatever_run(last, _first_argument(text, start, last))

    def _unconditional(self, call: re.Match[str], parameters: set[str]) -> bool:
        """Whether `call`, in the body of a skip the file defines, skips whatever the run:
        one of `unconditional_skips` given no condition (or, first, one of the definition's
        `parameters`: the reason its callers give), or any skip given a literal `True`."""
        last = call["name"].rsplit(".", 1)[-1]
        if not self.syntax.is_skip(last):
            return False
        first = _first_argument(call.string, call.start(), last)
        forwarded = _IDENTIFIER.match(first.string, first.end())
        return self._skips_whatever_run(last, first, forwarded is not None and forwarded.group() in parameters)

    def _skips_whatever_run(self, last: str, first: re.Match[str], reason_given: bool = False) -> bool:
        """Whether a skip named `last`, its arguments beginning as `first` says, skips whatever
        the run: given a literal `True`, or one of `unconditional_skips` given no condition (no
        argument, a string, a keyword, or what `reason_given` says is the reason)."""
        if first["true"]:
            return True
        given_no_condition = first.lastgroup in ("none", "string", "keyword") or reason_given
        return matches_glob(last, self.live.unconditional_skips) and given_no_condition

    def _named_verdict(self, last: str) -> bool | None:
        """Whether a skip or filter whose name ends in `last` keeps the test off the device by
        its name alone (a device filter, a skip naming a device, or no skip at all); None for a
        skip that its arguments decide."""
        only = self.live.device_only.search(last)
        if only and only["device"].lower() in self.live.device_types:
            return only["device"].lower() not in self.names
        if not self.syntax.is_skip(last):
            return False
        on_device = self.live.device_skip.search(last)
        if on_device and on_device["device"].lower() in self.names:
            return True
        return None

    def _listed(self, outline: _Outline, listed: set[str]) -> list[tuple[int, int]]:
        """The tests of `listed` (named by a skip list) that it names in their class, if it names one."""
        dead: list[tuple[int, int]] = []
        for header in outline.headers:
            classes = self._skip_list.tests.get(header.name) if header.name in listed else None
            if classes is None:
                continue
            owner = outline.enclosing(header.line, header.indentation)
            if "" in classes or owner is not None and any(self._same_class(c, owner.name) for c in classes):
                dead.append((outline.first_decorator(header), outline.end(header)))
        return dead

    def _same_class(self, listed: str, written: str) -> bool:
        """A listed class is the written one, or the written one instantiated for the device
        (`TestFoo` + `NPU`)."""
        return listed == written or listed.startswith(written) and listed[len(written) :].lower() in self.names

    @cached_property
    def _skip_list(self) -> _SkipList:
        found = _SkipList()
        for source in self.index.files:
            if source.language not in self.live.skip_list_languages:
                continue
            if not matches_glob(source.path, self.live.skip_lists):
                continue
            with searching(source.path):
                entries = [m.groupdict() for way in self.live.skip_list_entries for m in way.finditer(source.text)]
            for entry in entries:
                if entry.get("file"):
                    found.files.add(entry["file"].rpartition("/")[2])
                for test in self._tests_named(entry.get("test") or ""):
                    found.tests.setdefault(test, set()).add(entry.get("cls") or "")
        return found

    def _tests_named(self, listed: str) -> list[str]:
        """The written tests a listed name stands for: itself, and the test it is instantiated
        from for the device (`test_x_npu` is `test_x` run on `npu`)."""
        if not listed:
            return []
        stem, _, suffix = listed.rpartition("_")
        return [listed, stem] if stem and suffix.lower() in self.names else [listed]


def _first_argument(text: str, start: int, name: str) -> re.Match[str]:
    """How the call of `name` on the line at `start` begins its arguments."""
    text = lines_from(text, start, CONTINUATION_LINES)
    opening = text.find("(", text.find(name))
    match = _FIRST_ARGUMENT.match(text, opening + 1)
    assert match is not None  # the pattern matches the empty string
    return match


class _Header(NamedTuple):
    line: int
    indentation: int
    name: str
    body: int  # where the line after it starts (past the end for the last line)


_CONDITION_LINE = compile_guarded(r"^(?P<indent>[ \t]*)(?:el)?if\b(?P<condition>[^\n]*):[ \t]*$")
_NEGATION = re.compile(r"\bnot\b|!=")


class _Outline:
    """The functions and classes of a Python file (strings and comments blanked), read on
    demand: a body ends before the next line of code indented no deeper than its header (as
    `air.index.python_lexical` reads them)."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.lines = code.split("\n")
        self.headers: list[_Header] = []
        heads = sorted(match.start() for word in _HEAD_WORDS for match in word.finditer(code))
        for number, start in numbered_lines(code, heads):
            match = _HEADERS.match(code, start)
            if match is None:  # a head word after other text on its line: no definition starts there
                continue
            indent = match["indent"].rpartition("\f")[2]  # a form feed sets the column back to 0, as in Python
            body = code.find("\n", match.end()) + 1 or len(code) + 1
            self.headers.append(_Header(number, len(indent), match["name"], body))
        self._header_lines = [header.line for header in self.headers]
        self._ends: dict[int, int] = {}

    def end(self, header: _Header) -> int:
        """The last line of `header`'s body."""
        if header.line not in self._ends:
            after = code_at_most(header.indentation).search(self.code, header.body)
            last = len(self.lines) if after is None else header.line + self.code.count("\n", header.body, after.start())
            self._ends[header.line] = last
        return self._ends[header.line]

    def enclosing(self, number: int, indentation: int) -> _Header | None:
        """The innermost function or class whose body holds line `number`, indented so."""
        for header in reversed(self.headers[: bisect_left(self._header_lines, number)]):
            if header.indentation < indentation and self.end(header) >= number:
                return header
            if header.indentation == 0:
                return None
        return None

    def body_indentation(self, header: _Header) -> int | None:
        for line in self.lines[header.line :]:
            if line.strip():
                return len(line) - len(line.lstrip())
        return None

    def first_decorator(self, header: _Header) -> int:
        """The line of the first decorator of `header`, or its own line."""
        first = header.line
        for number in range(header.line - 1, 0, -1):
            line = self.lines[number - 1]
            stripped = line.lstrip()
            if not stripped or len(line) - len(stripped) > header.indentation:
                continue  # a blank line, or a decorator's arguments
            if len(line) - len(stripped) < header.indentation or not stripped.startswith("@"):
                break
            first = number
        return first

    def decorated(self, number: int, indentation: int) -> tuple[int, int]:
        """The lines of the function or class that the decorator on line `number` decorates."""
        index = bisect_right(self._header_lines, number)
        for header in self.headers[index:]:
            if header.indentation == indentation:
                return self.first_decorator(header), self.end(header)
        return number, number


def _named_only_in_def(code: str) -> set[str]:
    """The test file's top-level functions, tests aside, that its code names nowhere but in
    their `def` (`case1` where `__main__` runs only `case2()`)."""
    return {name for name in _top_level_functions(code) if _named_once(code, name)}


_CONSTANT_FALSE = compile_guarded(r"^(?P<indent>[ \t]*)(?:if|while)[ \t]+(?:False|0)[ \t]*:[ \t]*$")


@lru_cache(maxsize=1024)
def _own_definition(text: str, name: str) -> str | None:
    """The function `name` that `text` defines (a decorator of the file's own), or None when it
    defines none."""
    if f"def {name}" not in text and f"def\t{name}" not in text:  # most skips are not the file's own
        return None
    start = _defined_functions(text).get(name)
    if start is None:
        return None
    header = _DEF_HEADER.match(text, start)
    assert header is not None  # found by the same pattern
    body = text.find("\n", header.end()) + 1 or len(text)
    after = code_at_most(len(header["indent"])).search(text, body)
    return text[start : after.start() if after else len(text)]


def _branched(definition: str, position: int) -> bool:
    """Whether what `definition` does at `position` depends on a branch: a branching statement
    comes before it in the body (`if available: return fn`), or its line is a conditional
    expression (`skip(...)(fn) if missing else fn`). Such a skip is decided when the tests run."""
    line_start = definition.rfind("\n", 0, position) + 1
    line_end = definition.find("\n", position)
    body = definition.find("\n") + 1
    return (
        _BRANCHING.search(definition, body, line_start) is not None
        or _CONDITIONAL_EXPRESSION.search(definition, line_start, len(definition) if line_end < 0 else line_end)
        is not None
    )


_BRANCHING = re.compile(r"^[ \t]*(?:if|elif|else|try|except|for|while|match|case)\b", re.M)
_CONDITIONAL_EXPRESSION = re.compile(r"\bif\b[^\n]*\belse\b")


@lru_cache(maxsize=8)
def _defined_functions(text: str) -> dict[str, int]:
    """Where `text` defines each function name (its first definition's line start)."""
    found: dict[str, int] = {}
    for match in _DEF_HEADER.finditer(text):
        found.setdefault(match["name"], match.start())
    return found


def _never_run(code: str) -> list[tuple[int, int]]:
    """The lines of the blocks under `if False:` or `while False:` (or `0`), which never run."""
    blocks = []
    for match in _CONSTANT_FALSE.finditer(code):
        line = code.count("\n", 0, match.start()) + 1
        body = code.find("\n", match.end()) + 1 or len(code)
        after = code_at_most(len(match["indent"])).search(code, body)
        blocks.append((line, code.count("\n", 0, after.start()) if after else code.count("\n") + 1))
    return blocks


def _expected_failures(code: str, lines: list[str], error_checks: GuardedPattern | None) -> list[tuple[int, int]]:
    """The lines of the blocks and calls that expect an error (`with pytest.raises(...):` and its
    body, `assertRaises(E, f, x)`): what they run is expected to fail."""
    if error_checks is None:
        return []
    blocks: list[tuple[int, int]] = []
    number, counted = 1, 0
    for match in error_checks.finditer(code):
        start = match.start()
        number += code.count("\n", counted, start)
        counted = start
        if blocks and blocks[-1][0] == number:
            continue
        line = lines[number - 1]
        stripped = line.lstrip()
        last = _statement_end(lines, number)
        if not stripped.startswith("with") or not lines[last - 1].rstrip().endswith(":"):
            blocks.append((number, last))  # a call, or a `with` whose body follows on its line
            continue
        body = _line_start(code, counted, last - number + 1)
        after = code_at_most(len(line) - len(stripped)).search(code, body)
        blocks.append((number, number + code.count("\n", counted, after.start()) - 1 if after else len(lines)))
    return blocks


def _line_start(code: str, position: int, ahead: int) -> int:
    """Where the line `ahead` lines after the one holding `position` starts (the text's end past it)."""
    for _ in range(ahead):
        position = code.find("\n", position) + 1
        if not position:
            return len(code)
    return position


def _statement_end(lines: list[str], number: int) -> int:
    """The last line of the statement that starts on line `number`: where its brackets close."""
    depth = 0
    for last in range(number, len(lines) + 1):
        line = lines[last - 1]
        depth += sum(map(line.count, "([{")) - sum(map(line.count, ")]}"))
        if depth <= 0:
            return last
    return len(lines)


def _every_test_dead(outline: _Outline, dead: list[tuple[int, int]]) -> bool:
    """Whether the file defines tests and every one of them lies in `dead`."""
    tests = [header.line for header in outline.headers if _TEST_FUNCTION.match(outline.lines[header.line - 1])]
    return bool(tests) and all(any(start <= line <= end for start, end in dead) for line in tests)


def _uncalled(outline: _Outline, unused: set[str]) -> list[tuple[int, int]]:
    """The lines of the functions `unused` names that are not decorated (a fixture, a
    registration): they never run."""
    return [
        (header.line, outline.end(header))
        for header in outline.headers
        if header.indentation == 0 and header.name in unused and outline.first_decorator(header) == header.line
    ]


def _named_once(code: str, name: str) -> bool:
    """Whether `code` writes `name` as a word once only: not in a longer name, nor as an
    attribute (`obj.name`); a second word ends the search."""
    words = 0
    start = code.find(name)
    while start >= 0:
        before, end = code[start - 1 : start] if start else "", start + len(name)
        after = code[end : end + 1]
        if not (before.isalnum() or before in ("_", ".") or after.isalnum() or after == "_"):
            words += 1
            if words > 1:
                return False
        start = code.find(name, start + 1)
    return True


def _top_level_functions(code: str) -> list[str]:
    """The names of the functions defined at a module's top level, tests aside (found by a
    plain search for the line's start, which costs a fraction of a regex's)."""
    padded = "\n" + code
    names = []
    for head in ("\ndef ", "\nasync def "):
        start = padded.find(head)
        while start >= 0:
            match = _IDENTIFIER.match(padded, start + len(head))
            if match is not None and not match.group().startswith("test"):
                names.append(match.group())
            start = padded.find(head, start + 1)
    return names


def naming_pattern(names: tuple[str, ...]) -> re.Pattern[str] | None:
    """A search for any of `names` as a word of code (`torch_npu`, `.npu()`, `"npu:0"`), in any case."""
    if not names:
        return None
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z])(?:{alternatives})(?![a-z])", re.IGNORECASE)
