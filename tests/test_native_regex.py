"""PCRE2 translations of `re` patterns: on ASCII text they match exactly where `re` does, or the
pattern is not translated and stays with `re`."""

from __future__ import annotations

import re
import re._parser as sre_parse
import warnings
from pathlib import Path

import pcre2
import pytest
from air.regex import GuardedPattern, compile_guarded, distrust, inherit_trust
from air.regex.native import Untranslatable, compile_native, translate
from helpers.patterns import shipped_patterns


def parsed(pattern: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # `[[:` reads as a possible nested set
        return sre_parse.parse(pattern, re.MULTILINE)


def expected(pattern: str, text: str) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return [(m.span(), m.groups(), m.groupdict()) for m in re.finditer(pattern, text, re.MULTILINE)]


def found(pattern: str, text: str) -> list:
    compiled = compile_native(parsed(pattern))
    assert compiled is not None, f"{pattern!r} was not translated"
    return [
        (m.span(), tuple(map(_decoded, m.groups())), {name: _decoded(value) for name, value in m.groupdict().items()})
        for m in compiled.finditer(text.encode("ascii"))
    ]


def _decoded(value: bytes | None) -> str | None:
    return None if value is None else value.decode("ascii")


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (r"xa{,}b", "xaaab x{,}b xb"),  # `{,}` repeats in re; PCRE2 reads it as text
        (r"a{ 1,2}", "a{ 1,2} aa"),  # spaces: text in re, a repeat in newer PCRE2
        (r"x\vy", "x\x0by x\ny"),  # `\v` is one character in re, a class of line breaks in PCRE2
        (r"a\Z", "xa\nya"),  # `\Z` is the very end in re, also before a final line break in PCRE2
        (r"\n^", "a\nb\n"),  # re's `^` holds after a final line break, PCRE2's does not
        (r"[[:alpha:]]+", "[:a] alpha"),  # a set of characters in re, a POSIX class in PCRE2
        (r"\s+|\S+", "a\x1c\x1fb c\td"),  # re's `\s` holds the separators \x1c-\x1f
        (r"[^\s]+", "a\x1db c"),
        (r"(?i:ab)C", "ABC abc aBC abC"),
        (r"(?s:a.b)|c.d", "a\nb c\nd cxd"),
        (r"(?P<name>\w+)=(?P=name)", "x=x ab=ab ab=ba"),
        (r"(a)?(?(1)b|c)", "ab c b"),
        (r"a++b|(?>c+)d", "aab ccd"),
        (r"(?x) a b  # a comment", "ab a b"),
        (r"\bfoo\B\w*|\d+$", "foobar foo 12\n34"),
        (r"[\w-]+@\x41", "a-b@A c@a"),
        (r"^def (\w+)", "def f():\n  def g(): pass\ndef h(): pass\n"),
    ],
)
def test_translations_match_where_re_does(pattern, text):
    assert found(pattern, text) == expected(pattern, text) != []


@pytest.mark.parametrize(
    "pattern",
    [
        r"a*",  # may match empty text: re and PCRE2 step past empty matches differently
        r"^(?!x)",
        r"é+",  # not ASCII
        r"[^\x00-\uffff]x",
        r"(?-m:^a)",  # its own line mode
        r"a{70000}",  # beyond PCRE2's repeat limit
    ],
)
def test_what_cannot_be_written_alike_is_not_translated(pattern):
    with pytest.raises(Untranslatable):
        translate(parsed(pattern))
    assert compile_native(parsed(pattern)) is None


def test_non_ascii_text_is_matched_by_re():
    assert compile_native(parsed(r"\b\w+_npu\b")) is not None  # translatable: only the text keeps it off PCRE2
    pattern = compile_guarded(r"\b\w+_npu\b")
    text = "ça_npu x_npu\nnaïve_npu"
    assert [m.span() for m in pattern.finditer(text)] == [m.span() for m in re.finditer(pattern.pattern, text, re.M)]
    assert [m.group() for m in pattern.finditer(text)] == ["ça_npu", "x_npu", "naïve_npu"]


def test_a_pcre2_limit_falls_back_to_re():
    pattern, text = r"(x|y)*z", "xy" * 100_000 + "z"
    with pytest.raises(pcre2.LibraryError):
        list(compile_native(parsed(pattern)).finditer(text.encode("ascii")))
    guarded = compile_guarded(pattern)
    assert [m.span() for m in guarded.finditer(text)] == [(0, len(text))]
    assert guarded.search(text).span() == (0, len(text))


# On text beyond ASCII, or for a pattern PCRE2 cannot hold, re searches, from the positions
# where a match may start (see GuardedPattern._plan): the matches are re's own.

UNICODE_TEXT = (
    "x = '中文_npu' if naïve else café_ok  # K Kelvin ſ long s\n"
    "def 函数(a, b):\n    return a٣ + b\u3000+ c\xa0d\n"
    "torch.compile(model)  ;  y.backward()  \n" + "é" * 40 + " z.step()  allclose(1)\n"
    "ab=ab ÿb=ÿb Ω=Ω 12\n"
)


def matches(pattern: str, text: str) -> list:
    return [(m.span(), m.group(), m.groupdict()) for m in compile_guarded(pattern).finditer(text)]


def expected_matches(pattern: str, text: str) -> list:
    return [(m.span(), m.group(), m.groupdict()) for m in re.finditer(pattern, text, re.MULTILINE)]


@pytest.mark.parametrize(
    "pattern",
    [
        r"\b\w+_npu\b",
        r"(?<!\w)\w+(?!\w)",
        r"[^\W\d_]+",
        r"\d+",
        r"\s+\S",
        r"[^a-z\s]+",
        r"(?<![\w.])(?:café|naïve)\w*",
        r"é+ z",
        r"(?P<name>\w+)=(?P=name)",
        r"(?>\w+)\(",
        r"\w++\s",
        r"(?i)k\w+",
        r"(?i:ſ)\s",
        r"^(?=[^\n]*?compile)(?![^\n]*(?i:skip|disabl))[^\n]+",
        r"\.backward\(\)(?:(?!\.backward\(\))[\s\S]){0,3000}?\.step\(\)(?:(?!\.backward\(\))[\s\S]){0,3000}?allclose",
        r"(?<!cpu\.)\b(?:torch\.)?compile\s*\((?![^)\n]{0,200}fullgraph)",
        r"\w+(?=\s*[+=])",
    ],
)
def test_a_search_beyond_ascii_finds_what_re_finds(pattern):
    compiled = compile_guarded(pattern)
    for text in (UNICODE_TEXT, UNICODE_TEXT.encode("ascii", "replace").decode("ascii")):
        assert matches(pattern, text) == expected_matches(pattern, text)
        first, wanted = compiled.search(text), expected_matches(pattern, text)
        assert (first and first.span()) == (wanted[0][0] if wanted else None)


@pytest.mark.parametrize(
    ("pattern", "text"),
    [(r"x(?:ab)+c", "xababc xabc"), (r"\bfo+_bar", "a fooo_bar fo_bar"), (r"\b(?:lo)*?ng\(", "lolong( ng(")],
)
def test_a_repeated_start_is_tried_wherever_its_first_repetition_is(pattern, text):
    text = text.replace(" ", " " + "." * 200 + " ")  # few candidates in a long text: re tries only them
    on_re = compile_guarded(pattern, native=False)
    assert [m.span() for m in on_re.finditer(text)] == [m.span() for m in re.finditer(pattern, text)] != []


def test_a_pattern_too_large_for_pcre2_is_searched_by_re():
    pattern = r"\.backward\(\)(?:(?!\.backward\(\))[\s\S]){0,3000}?\.step\(\)"
    assert compile_native(parsed(pattern)) is None  # the bounded repeat's copies overflow PCRE2's code
    text = ("a.backward() b\n" + "x" * 4000 + " c.step()\n") * 3 + "d.backward()\n.step()\n"
    assert matches(pattern, text) == expected_matches(pattern, text) != []


def test_case_blind_a_letter_beyond_ascii_is_found_where_re_folds_it_onto_an_ascii_one():
    compiled = compile_guarded(r"(?i)kelvin\b(?![^\n]*(?i:skip))")
    text = "\u212aelvin KELVIN Kelvin \u017fkip"  # re folds the Kelvin sign to k, the long s to s
    assert [m.span() for m in compiled.finditer(text)] == [m.span() for m in re.finditer(compiled.pattern, text)]
    assert [m.span() for m in compiled.finditer(text)] == []
    assert [m.span() for m in compiled.finditer(text.replace("\u017f", "-"))] == [(0, 6), (7, 13), (14, 20)]


@pytest.mark.parametrize(("pattern", "text"), [(r"(?i)[ſ]\w+", "ab Sx sy"), (r"(?i)(?![^ſ])\w", "s t S")])
def test_a_case_blind_character_beyond_ascii_matches_its_ascii_twins(pattern, text):
    assert compile_native(parsed(pattern)) is None
    assert matches(pattern, text) == expected_matches(pattern, text) != []


def test_every_shipped_pattern_finds_what_re_finds_beyond_ascii(monkeypatch):
    """On code with characters beyond ASCII, and on the same code made ASCII."""
    monkeypatch.setattr("air.regex._LEARNED.distrusted", set())  # packs other tests load leave their marks
    fixtures = sorted((Path(__file__).parent.parent / "rulepacks" / "pytorch-2.x" / "fixtures").rglob("*.py"))
    code = "\n".join(path.read_text(encoding="utf-8", errors="replace") for path in fixtures[:20])
    texts = [code, UNICODE_TEXT + code.replace("torch", "tørch", 3).replace("def ", "def é", 5)]
    checked = 0
    for pattern in shipped_patterns():
        compiled = GuardedPattern(pattern, sre_parse.parse(pattern, re.MULTILINE))
        for text in texts:
            found = [(m.span(), m.group(), m.groupdict()) for m in compiled.finditer(text)]
            assert found == expected_matches(pattern, text), pattern
        checked += 1
    assert checked > 100


def test_every_shipped_pattern_that_matches_text_runs_on_pcre2():
    """A pack pattern left to `re` is searched several times slower: a bounded repeat of a
    group (`(?:(?!x)[\\s\\S]){0,3000}?`) is copied that often into PCRE2's code and overflows it.
    Windows are written in lines instead. Only patterns that can match empty text (tests of
    short captured values) stay with `re`."""
    on_re = [
        pattern
        for pattern, (compiled, _how) in shipped_patterns().items()
        if compiled._on_pcre2 and parsed(pattern).getwidth()[0] > 0 and compile_native(parsed(pattern)) is None
    ]
    assert on_re == []


def test_a_pattern_built_from_a_distrusted_one_stays_off_pcre2():
    """A pack's own pattern runs on `re`, which ends a search on time; so does one that air
    builds from it by putting names in."""
    pattern = r"\b(?:check_close|{helpers})\(x_\w+\)"
    derived = pattern.replace("{helpers}", "same|near")
    distrust(pattern)
    inherit_trust(pattern, derived)
    inherit_trust(r"\bkept\(", r"\bkept_too\(")
    assert compile_guarded(derived)._native is None
    assert compile_guarded(r"\bkept_too\(")._native is not None
    assert [m.group() for m in compile_guarded(derived).finditer("near(x_cpu) far(x_cpu)")] == ["near(x_cpu)"]
