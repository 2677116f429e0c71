"""No input hangs air through a regular expression.

Every pattern air runs, its own and the shipped pack's, searches 2 MB of adversarial text in
linear time (each first on an eighth of it, which clears all but the slowest); the backtracking
guard refuses ambiguous repeats in any pack; and a search that still runs long ends at its time
budget, which leaves the rows that need it unknown."""

from __future__ import annotations

import importlib
import inspect
import json
import math
import multiprocessing
import os
import pkgutil
import re
import re._compiler as sre_compile
import string
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import air
import pytest
from air.errors import PackError
from air.pack.load import load_pack
from air.regex import (
    BUDGET_VARIABLE,
    TIMED_OUT,
    GuardedPattern,
    PatternTimeout,
    UnsafePattern,
    compile_guarded,
    search_budget,
    sre_parse,
)
from air.regex.backtracking import backtracking_risk
from helpers.paths import FIXTURES
from helpers.patterns import shipped_patterns

SIZE = 2 * 1024 * 1024  # the largest file air reads
BOUND = 4.0  # CPU seconds one pattern may take on one input: the flaws fixed here took minutes
SCREEN = 8  # first searched on SIZE / SCREEN; under BOUND / SCREEN**2 there, a time that grows
# at most quadratically stays under BOUND at full size, and a worse one shows on the smaller text
NON_ASCII = "é"  # one such character sends a text from PCRE2 to `re`
REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")


# --- What to search ------------------------------------------------------------------------


def engine_patterns() -> dict[str, tuple[re.Pattern | GuardedPattern, str]]:
    """The compiled patterns air's modules hold, found by introspection (in dicts and tuples
    too), with how air searches them: for every match, unless the module only ever matches
    the pattern at a position it has found (`match`, `fullmatch`)."""
    found = {}
    for info in pkgutil.walk_packages(air.__path__, "air."):
        if info.name == "air.__main__":
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            for item in _members(value):
                if isinstance(item, (re.Pattern, GuardedPattern)):
                    found[f"{info.name}.{name}"] = item, "match" if _matched_in_place(module, name) else "finditer"
    return found


def _members(value: object) -> list:
    if isinstance(value, dict):
        return list(value.values())
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _matched_in_place(module, name: str) -> bool:
    uses = set(re.findall(rf"\b{re.escape(name)}\.(\w+)\(", inspect.getsource(module)))
    return bool(uses) and uses <= {"match", "fullmatch"}


def filled(unit: str, size: int) -> str:
    """`unit` over and over, then a character no pattern goes on with: a match that needs the
    text to end otherwise fails only there, after each attempt has scanned the rest."""
    return unit * ((size - 1) // len(unit)) + "\0"


GENERIC = {
    "blank lines": "\n",
    "whitespace-only lines": " \t  \n",
    "one line of a::": "a::",
    "one line of identifier characters": "ab_1",
}


def adversarial(pattern: str, flags: int, size: int) -> dict[str, str]:
    """Texts of `size` characters that make a pattern work hard: the generic ones, its longest
    literal over and over, and the text a match would begin with, up to and into its last
    unbounded repeat, over and over on one line or on every line (each attempt then scans what
    the next scans again)."""
    parsed = sre_parse.parse(pattern, flags)
    runs = sorted(set(_literal_runs(list(parsed))), key=len, reverse=True)
    pumps = _pumps(list(parsed), parsed.state.flags)
    units = dict(GENERIC)
    if runs:
        units["its longest literal, repeated"] = runs[0]
    if pumps:
        units["a beginning of a match, repeated"] = pumps[-1]
        units["a beginning of a match on every line"] = pumps[-1] + "\n"
    return {name: filled(unit, size) for name, unit in units.items()}


def _literal_runs(items: list) -> list[str]:
    runs, current = [], ""
    for op, value in items:
        if str(op) == "LITERAL":
            current += chr(value)
            continue
        runs += [current] if current else []
        current = ""
        runs += [chr(code) for kind, code in (value if str(op) == "IN" else []) if str(kind) == "LITERAL"]
        runs += [run for child in _children(op, value) for run in _literal_runs(child)]
    return runs + ([current] if current else [])


def _children(op, value) -> list[list]:
    name = str(op)
    if name in REPEATS:
        return [list(value[2])]
    if name == "SUBPATTERN":
        return [list(value[-1])]
    if name == "BRANCH":
        return [list(branch) for branch in value[1]]
    if name in ("ASSERT", "ASSERT_NOT"):
        return [list(value[1])]
    return [list(value)] if name == "ATOMIC_GROUP" else []


_SAMPLES = "a_(: .0\t" + string.ascii_letters + string.punctuation  # for a class, its first match here


def _pumps(items: list, flags: int) -> list[str]:
    """For each unbounded (or long) repeat, a short text matching the pattern up to and
    including one turn of it, taking the first alternative of each alternation."""
    found: list[str] = []
    _sample(items, flags, "", found)
    return [text for text in found if text]


def _sample(items: list, flags: int, text: str, found: list[str]) -> str | None:
    for op, value in items:
        name = str(op)
        if name == "LITERAL":
            text += chr(value)
        elif name in ("NOT_LITERAL", "ANY", "IN"):
            single = sre_compile.compile(sre_parse.SubPattern(sre_parse.State(), [(op, value)]), flags)
            char = next((c for c in _SAMPLES if single.fullmatch(c)), None)
            if char is None:
                return None
            text += char
        elif name in REPEATS:
            once = _sample(list(value[2]), flags, text, found)
            if once is None:
                return None
            if value[1] > 100:
                found.append(once)
            text += once[len(text) :] * value[0]
        elif name in ("SUBPATTERN", "BRANCH", "ATOMIC_GROUP"):
            text = _sample(_children(op, value)[0], flags, text, found)
            if text is None:
                return None
        elif name not in ("AT", "ASSERT", "ASSERT_NOT"):
            return None
    return text


# --- Searching them, in worker processes that a hang cannot stop ----------------------------

PATTERNS: dict[str, tuple[re.Pattern | GuardedPattern, str]] = {}  # filled before the workers fork


def input_times(key: str, size: int, only: frozenset[str] | None = None) -> dict[str, float]:
    """The CPU time `PATTERNS[key]` takes on each of its inputs of `size` characters (or those
    named in `only`), searched as air searches it; a GuardedPattern both on ASCII text (PCRE2)
    and on text that is not (`re`). A search past its budget ends the sweep at infinity."""
    pattern, how = PATTERNS[key]
    flags = pattern.flags if isinstance(pattern, re.Pattern) else re.MULTILINE
    binary = isinstance(pattern.pattern, bytes)  # a pattern over bytes searches bytes
    source = pattern.pattern.decode("latin-1") if binary else pattern.pattern
    times: dict[str, float] = {}
    for name, text in adversarial(source, flags & ~re.ASCII if binary else flags, size).items():
        variants = {name: text}
        if isinstance(pattern, GuardedPattern):
            variants[f"{name}, not ASCII"] = text + NON_ASCII
        for variant, searched in variants.items():
            if only is not None and variant not in only:
                continue
            started = time.process_time()  # the worker's CPU time: other tests running beside it do not count
            try:
                _search(pattern, how, searched.encode("utf-8") if binary else searched)
            except PatternTimeout:
                return {**times, variant: float("inf")}
            times[variant] = time.process_time() - started
    return times


def _search(pattern: re.Pattern | GuardedPattern, how: str, text: str | bytes) -> None:
    if how == "finditer":
        for _match in pattern.finditer(text):
            pass
    else:
        getattr(pattern, how)(text)


@contextmanager
def _budget(seconds: str) -> Iterator[None]:
    """The search budget, for this process and the workers it forks meanwhile."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(BUDGET_VARIABLE, seconds)
        search_budget.cache_clear()  # read once per process: a budget read before would stay
        try:
            yield
        finally:
            search_budget.cache_clear()


def slow_patterns(patterns: dict[str, tuple[re.Pattern | GuardedPattern, str]]) -> list[str]:
    """Each pattern that takes over BOUND seconds on one of its inputs, searched in two worker
    processes: first on smaller inputs, then at full size on those the smaller did not clear."""
    PATTERNS.clear()
    PATTERNS.update(patterns)
    # The searches' wall-clock budget would stop a search that tests running beside this one
    # slow down; the bound checked here is CPU time, and a stuck search still fails at 60 s.
    with _budget("60"), multiprocessing.get_context("fork").Pool(2) as pool:
        unclear = _over(pool, dict.fromkeys(patterns), SIZE // SCREEN, BOUND / SCREEN**2)
        slow = {key: times for key, times in unclear.items() if math.inf in times.values()}
        again = {key: frozenset(times) for key, times in unclear.items() if key not in slow}
        slow |= _over(pool, again, SIZE, BOUND)
    return [
        f"{key!r} took {elapsed:.1f} s on {variant}"
        for key, times in slow.items()
        for variant, elapsed in times.items()
        if elapsed > BOUND
    ]


def _over(pool, searches: dict[str, frozenset[str] | None], size: int, bound: float) -> dict[str, dict[str, float]]:
    """For each pattern, its inputs of `size` characters (those named, or all) searched over
    `bound` seconds. Once a worker is stuck on a pattern, those not searched yet are not waited
    for."""
    over, stuck = {}, False
    pending = {key: pool.apply_async(input_times, (key, size, only)) for key, only in searches.items()}
    for key, result in pending.items():
        try:
            times = result.get(timeout=0 if stuck else 60)
        except multiprocessing.TimeoutError:
            times, stuck = {"(its inputs, or was never reached)": math.inf}, True
        if any(elapsed > bound for elapsed in times.values()):
            over[key] = {variant: elapsed for variant, elapsed in times.items() if elapsed > bound}
    return over


def test_the_sweep_finds_a_quadratic_search_past_its_screen(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "SIZE", 64 * 1024)
    monkeypatch.setattr(sys.modules[__name__], "BOUND", 0.05)
    quadratic, linear = re.compile(r"a*b"), re.compile(r"\bfoo\s*\(")  # `a*b` rescans each run of a's
    slow = slow_patterns({"quadratic": (quadratic, "finditer"), "linear": (linear, "finditer")})
    assert slow and all(found.startswith("'quadratic' took") for found in slow), slow


@pytest.mark.slow
def test_every_shipped_pattern_searches_adversarial_text_in_linear_time():
    patterns = shipped_patterns()
    assert len(patterns) > 150
    assert slow_patterns(patterns) == []


@pytest.mark.slow
def test_every_shipped_pattern_passes_the_guard_it_skips_when_loaded():
    risky = {pattern: backtracking_risk(sre_parse.parse(pattern, re.MULTILINE)) for pattern in shipped_patterns()}
    assert {pattern: risk for pattern, risk in risky.items() if risk is not None} == {}


@pytest.mark.slow
def test_every_engine_pattern_searches_adversarial_text_in_linear_time():
    patterns = engine_patterns()
    assert len(patterns) > 40
    assert slow_patterns(patterns) == []


# --- The guard -----------------------------------------------------------------------------

AMBIGUOUS = [
    r"(a|aa)+$",
    r"(a|a?)+$",
    r"(a{1,1000})+$",
    r"\w*\w*\w*\w*!x",
    r"^(?:a|ab|b)+$",  # `ab` is one turn or two
    r"^(?:x?y?)+$",  # each turn may take either letter, or none
    r"\s*[ \t]*\n?\s*$",
    r"\breport\w*Memory\w*Profiler\w*\s*\(",  # as the shipped pack once had it
]


@pytest.mark.parametrize("pattern", AMBIGUOUS)
def test_the_guard_refuses_ambiguous_repeats(pattern):
    with pytest.raises(UnsafePattern) as refused:
        compile_guarded(pattern)
    assert repr(pattern) in str(refused.value) and "backtrack" in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?:,[ \t]?\w)+;",  # a delimiter fixes where each turn starts
        r"(?:\n|[ \t][^\n]*\n){0,300}?[ \t]+def",  # each turn ends at a line break
        r"\w*\s*\(",
        r"[^\n]*:[ \t]*\n",
        r"\bautocast\s*\((?:(?!\bautocast\s*\()[\s\S]){0,3000}?\.backward\s*\(",
    ],
)
def test_the_guard_accepts_repeats_that_split_text_one_way(pattern):
    compile_guarded(pattern)


def test_a_pack_with_an_ambiguous_pattern_fails_to_load_in_one_line(tmp_path):
    directory = tiny_pack(tmp_path, r"(a|aa)+$")
    with pytest.raises(PackError) as refused:
        load_pack(str(directory))
    assert "can backtrack catastrophically" in str(refused.value) and "\n" not in str(refused.value)
    result = air_check(tmp_path, directory, {})
    assert result.returncode == 2
    assert result.stderr.startswith("air: error: ") and result.stderr.count("\n") == 1


# --- The time budget -----------------------------------------------------------------------

SLOW = r"[a-z_]\w*=>"  # no nesting, no ambiguity: but every position scans the rest of a long name
SLOW_TEXT = "a" * 300_000 + NON_ASCII


@pytest.fixture()
def short_budget(monkeypatch):
    """A short budget, and SLOW as a pattern of a pack air does not ship: it runs on `re`."""
    monkeypatch.setenv("AIR_REGEX_BUDGET", "0.5")
    monkeypatch.setattr("air.regex._LEARNED.distrusted", {SLOW})
    search_budget.cache_clear()
    compile_guarded.cache_clear()
    yield
    search_budget.cache_clear()
    compile_guarded.cache_clear()


def test_a_search_past_its_budget_ends(short_budget):
    slow = compile_guarded(SLOW)
    started = time.perf_counter()
    with pytest.raises(PatternTimeout):
        slow.search(SLOW_TEXT)
    assert time.perf_counter() - started < 20


def test_pcre2_ends_exponential_backtracking_and_re_then_runs_out_of_time(short_budget, monkeypatch):
    monkeypatch.setattr("air.regex._LEARNED.distrusted", set())  # as air's own pattern
    unguarded = GuardedPattern(r"(a|aa)+$", sre_parse.parse(r"(a|aa)+$", re.MULTILINE))  # past the guard
    assert unguarded._native is not None
    started = time.perf_counter()
    with pytest.raises(PatternTimeout):
        unguarded.search("a" * 60 + "!")  # ASCII: PCRE2 stops at its match limit, then `re` runs
    assert time.perf_counter() - started < 20


def test_a_pack_that_air_does_not_ship_runs_its_patterns_on_re(tmp_path):
    pattern = r"\bslowpoke_(?:one|two)\b"
    load_pack(str(tiny_pack(tmp_path, pattern)))
    assert compile_guarded(pattern)._native is None
    assert compile_guarded(r"\bslowpoke_(?:one|three)\b")._native is not None


def _search_in_child(queue) -> None:
    try:
        compile_guarded(SLOW).search(SLOW_TEXT)
        queue.put("finished")
    except PatternTimeout as timeout:
        queue.put(str(timeout))


def test_a_search_past_its_budget_ends_in_a_forked_process_too(short_budget):
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_search_in_child, args=(queue,))
    child.start()
    try:
        assert queue.get(timeout=30) == "pattern timed out on a text"
    finally:
        child.join(5)
        if child.is_alive():
            child.kill()


def test_a_slow_pack_pattern_leaves_its_row_unknown_and_the_check_ends(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "slow.py").write_text(f"slowpoke = 1\n{SLOW_TEXT}\n", encoding="utf-8")
    directory = tiny_pack(tmp_path, SLOW, prefilter="slowpoke")
    started = time.perf_counter()
    result = air_check(tree, directory, {"AIR_REGEX_BUDGET": "1"})
    assert result.returncode == 0, result.stderr
    assert time.perf_counter() - started < 90
    (row,) = [row for row in json.loads((tree / "report.json").read_text())["rows"] if row["id"] == "slow-row"]
    assert row["outcome"] == "unknown"
    assert "pattern timed out on slow.py" in row["reason"]


def tiny_pack(root: Path, pattern: str, prefilter: str = "") -> Path:
    """A pack of one row whose only evidence is `pattern`."""
    directory = root / "pack"
    (directory / "rows").mkdir(parents=True)
    (directory / "pack.yaml").write_text('id: tiny\nversion: 1.0.0\nframework: pytorch\nrequires_air: ">=0.1"\n')
    spec = {"pattern": pattern, **({"prefilter": [prefilter]} if prefilter else {})}
    (directory / "rows" / "01.yaml").write_text(
        textwrap.dedent(f"""\
        section: device-registration
        rows:
          - id: slow-row
            item: "1.1.1"
            title: A row
            priority: 1
            evidence:
              slow:
                text: {json.dumps(spec)}
            score:
              2: slow
            remediation: Do it.
            docs: [https://example.org/doc]
        """)
    )
    return directory


def air_check(tree: Path, pack: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "air",
        "check",
        str(tree),
        "--pack",
        str(pack),
        "--no-cache",
        "-q",
        "--format",
        "json",
        "--output",
        str(tree / "report.json"),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ, **env})


def test_a_report_cut_short_by_the_budget_is_not_cached(tmp_path, monkeypatch):
    """A timeout depends on the machine's load: the next check must search again."""
    from air import run
    from air.evaluation import Evaluation

    reported = Evaluation.report

    def cut_short(*args, **kwargs):
        report = reported(*args, **kwargs)
        row = replace(report.rows[0], outcome="unknown", reason=f"could not be decided: {TIMED_OUT} on x.py")
        return replace(report, rows=(row, *report.rows[1:]))

    monkeypatch.setenv("AIR_CACHE", str(tmp_path / "cache"))
    lines: list[str] = []
    monkeypatch.setattr(Evaluation, "report", cut_short)
    run.check_tree(FIXTURES / "pu1_full", "pytorch-2.x", progress=lines.append)
    run.check_tree(FIXTURES / "pu1_full", "pytorch-2.x", progress=lines.append)
    assert not any("from the cache" in line for line in lines)
    monkeypatch.setattr(Evaluation, "report", reported)
    run.check_tree(FIXTURES / "pu1_full", "pytorch-2.x", progress=lines.append)
    run.check_tree(FIXTURES / "pu1_full", "pytorch-2.x", progress=lines.append)
    assert any("from the cache" in line for line in lines)
