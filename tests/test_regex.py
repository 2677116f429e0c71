"""Pack patterns: matched by PCRE2 on ASCII text or searched only where a match can start, with
exactly the matches `re` gives either way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from air.families import expand_families
from air.regex import GuardedPattern, UnsafePattern, compile_guarded, sre_parse
from air.schemas import defined_properties
from air.yamldoc import load_yaml
from hypothesis import given, settings
from hypothesis import strategies as st

PACK = Path(__file__).resolve().parents[1] / "rulepacks" / "pytorch-2.x"
ROWS = PACK / "rows"


def _patterns(data) -> list[str]:
    if isinstance(data, dict):
        found = [value for key, value in data.items() if key in ("pattern", "matches") and isinstance(value, str)]
        return found + [p for value in data.values() for p in _patterns(value)]
    if isinstance(data, list):
        return [p for value in data for p in _patterns(value)]
    return []


PACK_PATTERNS = sorted({p for path in sorted(ROWS.glob("*.yaml"))
                        for p in _patterns(expand_families(load_yaml(path), defined_properties("row", "row")).data)})
FIXTURE_TEXTS = [path.read_text() for path in sorted((PACK / "fixtures").rglob("*")) if path.is_file()]
FIXTURE_LINES = sorted({line for text in FIXTURE_TEXTS for line in text.splitlines()})


def spans(pattern, text: str) -> list[tuple[tuple[int, int], dict]]:
    return [(match.span(), match.groupdict()) for match in pattern.finditer(text)]


def test_the_pack_has_patterns_of_each_search_mode():
    modes = {p: compile_guarded(p) for p in PACK_PATTERNS}
    assert any(m._starts for m in modes.values())
    assert any(m._line_literals for m in modes.values())
    assert any(not m._starts and not m._line_literals for m in modes.values())


@pytest.mark.parametrize(
    ("pattern", "starts", "line_literals"),
    [
        (r"\bassert\w*\(|\ballclose\(", ["allclose(", "assert"], None),
        (r"(?<!def )\bregister_\w+\(", ["register_"], None),
        (r"\b(?:self_)?device_time\b", ["device_time", "self_device_time"], None),
        (r"^(?=[^\n]*?bfloat16)(?![^\n]*skip)[^\n]*torch\.\w+", None, ["bfloat16"]),
        (r"^[ \t]*@(?=[\w.]*?skip)[^\n]*\n[ \t]*def", None, ["skip"]),
        (r"literal_first\w*", None, None),  # re finds a leading literal fast by itself
        (r"(?i)\bfloat16\b", None, None),  # case-insensitive: literals do not say where
        (r"\s*\bfloat16\b", None, None),
        (r"^(?=[\s\S]*?bfloat16)\w+", None, None),  # the lookahead may leave the line
    ],
)
def test_where_a_pattern_is_searched_from(pattern, starts, line_literals):
    compiled = compile_guarded(pattern)
    assert compiled._starts == starts
    assert compiled._line_literals == line_literals


def test_a_line_test_is_searched_for_instead_of_tried_at_every_line():
    compiled = compile_guarded(r"^(?=[^\n]*?\d{4}|[ \t]*@)(?![^\n]*skip)\w+")
    assert compiled._line_test.pattern == r"(?:\d{4})|^(?:[ \t]*@)"
    text = "x = 1\nyear 2024\n@dec\nskip 2024\n  @y\n"
    assert spans(compiled, text) == spans(re.compile(compiled.pattern, re.M), text) != []
    tricky = compile_guarded(r"^(?=[^\n]*?[|)\]]x|[^\n]*?\(y\|)\w")  # `|` and `)` in a class or escaped
    assert tricky._line_test.pattern == r"(?:[|)\]]x)|(?:\(y\|)"
    assert compile_guarded(r"^(?=[\s\S]*?\d{4})\w+")._line_test is None  # the test may leave the line
    assert compile_guarded(r"^(?=[^\n]*?torch)\w+")._line_test is None  # a literal says where already


@pytest.mark.parametrize("native", [True, False], ids=["pcre2", "re"])
def test_matches_do_not_overlap_as_in_re(native):
    text = "aaaa_b aaaa_b"
    pattern = r"\b(?:aaa|aaaa)\w*|\baaa_b"
    assert spans(compile_guarded(pattern, native), text) == spans(re.compile(pattern, re.M), text)


@pytest.mark.parametrize("native", [True, False], ids=["pcre2", "re"])
def test_search_finds_the_first_match(native):
    found = compile_guarded(r"\bnpu_\w+", native).search("x = 1\ny = torch_npu_x + npu_format(1)\n")
    assert found is not None and found.group() == "npu_format" and found.span() == (24, 34)
    assert compile_guarded(r"\bnpu_\w+", native).search("nothing here") is None


def test_nested_unbounded_repeats_are_refused():
    with pytest.raises(UnsafePattern):
        compile_guarded(r"(?:\w+\s*)+;")


def test_most_pack_patterns_are_matched_natively(monkeypatch):
    monkeypatch.setattr("air.regex._DISTRUSTED", set())  # as in a check of the shipped pack alone
    native = [p for p in PACK_PATTERNS if GuardedPattern(p, sre_parse.parse(p, re.M))._native is not None]
    assert len(native) > 0.9 * len(PACK_PATTERNS)


@pytest.mark.parametrize("native", [True, False], ids=["pcre2", "re"])
def test_pack_patterns_find_in_the_fixtures_what_re_finds(native):
    found = 0
    for pattern in PACK_PATTERNS:
        fast, plain = compile_guarded(pattern, native), re.compile(pattern, re.M)
        for text in FIXTURE_TEXTS:
            expected = spans(plain, text)
            assert spans(fast, text) == expected, pattern
            found += len(expected)
    assert found > 200  # the fixtures are written to be found


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(PACK_PATTERNS),
    st.lists(st.sampled_from(FIXTURE_LINES), max_size=60).map("\n".join),
    st.booleans(),
)
def test_pack_patterns_find_what_re_finds_in_shuffled_fixture_lines(pattern, text, native):
    assert spans(compile_guarded(pattern, native), text) == spans(re.compile(pattern, re.M), text)
