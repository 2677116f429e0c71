"""Pack patterns: matched by PCRE2 on ASCII text or searched only where a match can start, with
exactly the matches `re` gives either way."""

from __future__ import annotations

import re

import pytest
from air.pack.families import expand_families
from air.pack.schemas import defined_properties
from air.regex import UnsafePattern, compile_guarded
from air.yamldoc import load_yaml
from helpers.paths import FIXTURES, SHIPPED_PACK_DIR
from hypothesis import given, settings
from hypothesis import strategies as st


def _patterns(data) -> list[str]:
    if isinstance(data, dict):
        found = [value for key, value in data.items() if key in ("pattern", "matches") and isinstance(value, str)]
        return found + [p for value in data.values() for p in _patterns(value)]
    if isinstance(data, list):
        return [p for value in data for p in _patterns(value)]
    return []


ROW_FILES = sorted((SHIPPED_PACK_DIR / "rows").glob("*.yaml"))
PACK_PATTERNS = sorted(
    {
        p
        for path in ROW_FILES
        for p in _patterns(expand_families(load_yaml(path), defined_properties("row", "row")).data)
    }
)
FIXTURE_TEXTS = [path.read_text() for path in sorted(FIXTURES.rglob("*")) if path.is_file()]
FIXTURE_LINES = sorted({line for text in FIXTURE_TEXTS for line in text.splitlines()})


def spans(pattern, text: str) -> list[tuple[tuple[int, int], dict]]:
    return [(match.span(), match.groupdict()) for match in pattern.finditer(text)]


@pytest.mark.parametrize("native", [True, False], ids=["pcre2", "re"])
@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (r"\bassert\w*\(|\ballclose\(", "assertEqual(x)\nnot_assert(y) allclose(a, b)\nassert_close(\n"),
        (r"(?<!def )\bregister_\w+\(", "def register_x(\nregister_y(1)\nx.register_z(2) unregister_w(\n"),
        (r"\b(?:self_)?device_time\b", "self_device_time device_time my_device_time device_timer\n"),
        (
            r"^(?=[^\n]*?bfloat16)(?![^\n]*skip)[^\n]*torch\.\w+",
            "x = torch.ones(dtype=torch.bfloat16)\nskip torch.bfloat16\nbfloat16\ny = torch.zeros(1)\n",
        ),
        (
            r"^[ \t]*@(?=[\w.]*?skip)[^\n]*\n[ \t]*def",
            "@unittest.skipIf(x)\ndef f(): pass\n  @skip\n  def g(): pass\n@dec\ndef h(): pass\n",
        ),
        (r"literal_first\w*", "literal_first literal_firstly not_literal_first\n"),
        (r"(?i)\bfloat16\b", "Float16 FLOAT16 float16x bfloat16\n"),
        (r"\s*\bfloat16\b", "  float16\n\tfloat16 xfloat16\n"),
        (r"^(?=[\s\S]*?bfloat16)\w+", "first line\nsecond\nbfloat16 last\n"),  # the lookahead may leave the line
        (r"^(?=[^\n]*?\d{4}|[ \t]*@)(?![^\n]*skip)\w+", "x = 1\nyear 2024\n@dec\nskip 2024\n  @y\n"),
        # `|` and `)` in a class or escaped
        (r"^(?=[^\n]*?[|)\]]x|[^\n]*?\(y\|)\w", "a |x\nb )x\nc ]x\nd (y|\ne (y\nf x\n"),
        (r"^(?=[\s\S]*?\d{4})\w+", "a\nb 2024\n"),
        (r"^(?=[^\n]*?torch)\w+", "import torch\nx = 1\n"),
    ],
)
def test_searching_only_where_a_match_can_start_finds_what_re_finds(pattern, text, native):
    assert spans(compile_guarded(pattern, native), text) == spans(re.compile(pattern, re.M), text) != []


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
