"""PCRE2 translations of `re` patterns: on ASCII text they match exactly where `re` does, or the
pattern is not translated and stays with `re`."""

from __future__ import annotations

import re
import re._parser as sre_parse
import warnings

import pcre2
import pytest
from air.regex import compile_guarded
from air.regex.native import Untranslatable, compile_native, translate


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
