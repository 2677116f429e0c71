"""Release ranges: membership, overlap, and whether a row's range admits a backend's target."""

from __future__ import annotations

import pytest
from air.versions import admits, is_release, ranges_overlap, satisfies


@pytest.mark.parametrize(
    ("first", "second", "overlap"),
    [
        (">=2.5", ">=2.1,<2.5", False),
        (">=2.5", ">=2.1,<2.6", True),
        (">=2.5", ">=2.1", True),
        (">=2.6", "==2.5.1", False),
        (">=2.6", "~=2.6", True),
        ("<2.0", ">2.0", False),
        ("<=2.0", ">=2.0", True),
        (">2.5,<2.6", ">=2.5.1", True),
        (">=2.5", "~=2.4.1", False),
        (">=2.6", "~=2.4", True),
        ("<2.4", "~=2.4.0", False),
    ],
)
def test_ranges_overlap(first, second, overlap):
    assert ranges_overlap(first, second) is overlap
    assert ranges_overlap(second, first) is overlap


def test_admits_a_release_or_a_pinned_range():
    assert admits(">=2.6", "2.6.0") and not admits(">=2.6", "2.4")
    assert admits(">=2.5", ">=2.1") and not admits(">=2.5", "<2.5")


def test_is_release():
    assert is_release("2.4") and is_release("2.13.0") and not is_release(">=2.4") and not is_release("two")


@pytest.mark.parametrize(
    ("version", "admitted"), [("2.4.1", True), ("2.4.9", True), ("2.5.0", False), ("2.4.0", False), ("3.0", False)]
)
def test_a_compatible_release_stays_below_its_next_minor(version, admitted):
    assert satisfies(version, "~=2.4.1") is admitted
    assert satisfies("2.9", "~=2.4") and not satisfies("3.0", "~=2.4")
