"""Static checks of a parsed pattern (an `re` parse) for catastrophic backtracking.

A backtracking engine takes exponential or high polynomial time when a pattern can match the
same text in many ways and then fails. The checks look for the constructs that allow this in
the parse, whatever the spelling:

- a repeat nested in an unbounded repeat (`(a+)+`, `(a{1,1000})*`);
- in a long repeat (unbounded, or of more than LONG_REPEAT iterations), alternatives that can
  match the same text (`(a|aa)+`, `(\\w|\\d)*`), or a variable repeat whose end is not fixed by
  what must follow it in the same or the next iteration (`(a|a?)+`, `(\\w+\\s?)*`);
- a wide variable repeat (unbounded, or of more than WIDE_REPEAT iterations) followed, past
  what can match empty (no zero-width test) and short items both can match, by another that
  can take the same characters, with something after them that can fail (`\\w*\\w*!`, `a*a*$`,
  `\\w*_\\w*!`): the first can give back any share of what the next takes.

Character sets are approximated from above (a bit per Latin-1 character, one per kind of the
others: digits, letters, spaces, the rest), so a check may refuse a pattern that is safe, never
pass one of these constructs (a back reference aside: it counts as one character or more).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache, reduce
from operator import or_
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # typeshed describes re._parser and re._constants under their former names
    import sre_parse
    from sre_constants import MAXREPEAT
else:
    try:
        import re._parser as sre_parse  # Python 3.11+
        from re._constants import MAXREPEAT
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse
        from sre_constants import MAXREPEAT

LONG_REPEAT = 100  # a bounded repeat of more iterations counts as unbounded
WIDE_REPEAT = 10_000  # ... and next to another, one wider than this: a narrower window costs at most its width
# A bit per Latin-1 character, then one per kind of character beyond Latin-1.
OTHER_DIGIT, OTHER_LETTER, OTHER_SPACE, OTHER_REST = (1 << bit for bit in range(256, 260))
OTHER = OTHER_DIGIT | OTHER_LETTER | OTHER_SPACE | OTHER_REST
EVERYTHING = (1 << 260) - 1
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
_LOOKAROUNDS = ("ASSERT", "ASSERT_NOT")
_ZERO_WIDTH = ("AT", *_LOOKAROUNDS)

Items = list  # a parsed sequence: (op, value) pairs


def backtracking_risk(parsed: sre_parse.SubPattern) -> str | None:
    """Why matching `parsed` can take exponential or high polynomial time, or None."""
    flags = parsed.state.flags
    items = list(parsed.data)
    if _nests_long_repeats(items, inside=False):
        return "a repeat is nested in an unbounded repeat"
    for body, body_flags in _long_repeat_bodies(items, flags):
        if _overlapping_alternatives(body, body_flags):
            return "a repeated group has alternatives that can match the same text"
        if _ambiguous_ends(body, body_flags):
            return "a repeated group can split the same text between its iterations in more than one way"
    if _adjacent_overlapping_repeats(items, flags):
        return "adjacent repeats can match the same characters before something that can fail"
    return None


def _is_long(high: int) -> bool:
    return high == MAXREPEAT or high > LONG_REPEAT


def _is_wide_variable(op, value) -> bool:
    return str(op) in _REPEATS and (value[1] == MAXREPEAT or value[1] > WIDE_REPEAT) and value[0] < value[1]


def _children(op, value, flags: int) -> Iterator[tuple[Items, int]]:
    """The sub-sequences of one parsed item, each with the flags in force there."""
    name = str(op)
    if name in _REPEATS:
        yield list(value[2]), flags
    elif name == "SUBPATTERN":
        yield list(value[-1]), (flags | value[1]) & ~value[2]
    elif name == "ATOMIC_GROUP":
        yield list(value), flags
    elif name == "BRANCH":
        for branch in value[1]:
            yield list(branch), flags
    elif name in _LOOKAROUNDS:
        yield list(value[1]), flags
    elif name == "GROUPREF_EXISTS":
        yield list(value[1]), flags
        if value[2] is not None:
            yield list(value[2]), flags


def _nests_long_repeats(items: Items, inside: bool) -> bool:
    """Whether a long repeat is nested in an unbounded one (`inside`: in one already). A
    lookaround matches on its own, never backtracked into: it starts afresh."""
    for op, value in items:
        if str(op) in _REPEATS:
            if inside and _is_long(value[1]):
                return True
            if _nests_long_repeats(list(value[2]), inside or value[1] == MAXREPEAT):
                return True
        elif any(
            _nests_long_repeats(child, inside and str(op) not in _LOOKAROUNDS)
            for child, _flags in _children(op, value, 0)
        ):
            return True
    return False


def _long_repeat_bodies(items: Items, flags: int) -> Iterator[tuple[Items, int]]:
    for op, value in items:
        if str(op) in _REPEATS and _is_long(value[1]):
            yield list(value[2]), flags
        for child, child_flags in _children(op, value, flags):
            yield from _long_repeat_bodies(child, child_flags)


# --- Character sets -------------------------------------------------------------------------


_CATEGORIES = {
    "DIGIT": (r"\d", OTHER_DIGIT),
    "WORD": (r"\w", OTHER_DIGIT | OTHER_LETTER),
    "SPACE": (r"\s", OTHER_SPACE),
    "LINEBREAK": (r"\n", 0),
}


@cache
def _category(name: str) -> int:
    """The characters of a category: every character beyond Latin-1 of its kinds."""
    pattern, beyond = _CATEGORIES[name]
    return sum(1 << code for code in range(256) if re.fullmatch(pattern, chr(code))) | beyond


def _category_bits(category: str) -> int:
    name = category.removeprefix("CATEGORY_").removeprefix("UNI_")
    if name.startswith("NOT_"):
        return EVERYTHING & ~_category(name.removeprefix("NOT_"))
    return _category(name)


def _beyond_latin(char: str) -> int:
    if re.fullmatch(r"\d", char):
        return OTHER_DIGIT
    return OTHER_LETTER if re.fullmatch(r"\w", char) else OTHER_SPACE if char.isspace() else OTHER_REST


def _character(code: int, flags: int) -> int:
    """The characters that match `chr(code)`, with the pattern's flags."""
    if code > 255:
        return _beyond_latin(chr(code))
    bits = 1 << code
    if flags & re.IGNORECASE and chr(code).isalpha():
        for variant in (chr(code).lower(), chr(code).upper()):
            bits |= 1 << ord(variant) if len(variant) == 1 and ord(variant) < 256 else OTHER_LETTER
        bits |= OTHER_LETTER  # case folding reaches beyond Latin-1 (the Kelvin sign, the long s)
    return bits


def _class_bits(members: list, flags: int) -> int:
    """The characters of a class. Negated, it keeps every kind beyond Latin-1 that its members
    do not cover whole, since they may name only some characters of a kind."""
    negated = bool(members) and str(members[0][0]) == "NEGATE"
    bits, whole_kinds = 0, 0
    for op, value in members[negated:]:
        name = str(op)
        if name == "LITERAL":
            bits |= _character(value, flags)
        elif name == "RANGE":
            low, high = value
            bits |= reduce(or_, (_character(code, flags) for code in range(low, min(high, 255) + 1)), 0)
            bits |= OTHER if high > 255 else 0
        elif name == "CATEGORY":
            category = _category_bits(str(value))
            bits |= category
            whole_kinds |= category & OTHER
        else:
            bits, whole_kinds = EVERYTHING, OTHER
    if negated:
        return EVERYTHING & ~(bits & ~OTHER) & ~whole_kinds
    return bits


def _single(op, value, flags: int) -> int | None:
    """The characters a one-character item matches; None for other items."""
    name = str(op)
    if name == "LITERAL":
        return _character(value, flags)
    if name == "NOT_LITERAL":
        return EVERYTHING & ~(_character(value, flags) & ~OTHER)
    if name == "ANY":
        return EVERYTHING if flags & re.DOTALL else EVERYTHING & ~(1 << ord("\n"))
    if name == "IN":
        return _class_bits(list(value), flags)
    return None


def _first(items: Items, flags: int, last: bool = False) -> tuple[int, bool]:
    """The characters a match of the sequence can start with (or end with, if `last`), and
    whether it can be empty."""
    found = 0
    for op, value in reversed(items) if last else items:
        bits, nullable = _first_of_item(op, value, flags, last)
        found |= bits
        if not nullable:
            return found, False
    return found, True


def _first_of_item(op, value, flags: int, last: bool = False) -> tuple[int, bool]:
    single = _single(op, value, flags)
    if single is not None:
        return single, False
    name = str(op)
    if name in _ZERO_WIDTH:
        return 0, True
    if name in _REPEATS:
        bits, nullable = _first(list(value[2]), flags, last)
        return bits, nullable or value[0] == 0
    if name in ("SUBPATTERN", "ATOMIC_GROUP", "BRANCH", "GROUPREF_EXISTS"):
        found = [_first(child, child_flags, last) for child, child_flags in _children(op, value, flags)]
        bits = reduce(or_, (child_bits for child_bits, _nullable in found), 0)
        return bits, any(nullable for _bits, nullable in found) or (name == "GROUPREF_EXISTS" and value[2] is None)
    return EVERYTHING, False  # a back reference: counted as one character or more, of any kind


def _all_characters(items: Items, flags: int) -> int:
    """Every character some part of the sequence can match."""
    found = 0
    for op, value in items:
        single = _single(op, value, flags)
        if single is not None:
            found |= single
        elif str(op) == "GROUPREF":
            found |= EVERYTHING
        elif str(op) not in _LOOKAROUNDS:
            for child, child_flags in _children(op, value, flags):
                found |= _all_characters(child, child_flags)
    return found


# --- Ambiguity ------------------------------------------------------------------------------


def _overlapping_alternatives(items: Items, flags: int) -> bool:
    """Whether an alternation of the sequence (lookarounds aside, which never backtrack into)
    has two alternatives that may match the same text, or one a beginning of the other's."""
    for op, value in items:
        if str(op) == "BRANCH":
            branches = [list(branch) for branch in value[1]]
            for index, branch in enumerate(branches):
                if any(_may_overlap(branch, other, flags) for other in branches[index + 1 :]):
                    return True
        if str(op) not in _LOOKAROUNDS:
            if any(_overlapping_alternatives(child, child_flags) for child, child_flags in _children(op, value, flags)):
                return True
    return False


def _may_overlap(first: Items, second: Items, flags: int) -> bool:
    """Unless some leading one-character position of the two admits no common character."""
    return all(bits_a & bits_b for bits_a, bits_b in zip(_fixed_steps(first, flags), _fixed_steps(second, flags)))


def _fixed_steps(items: Items, flags: int) -> list[int]:
    """The character sets of the sequence's leading one-character items, zero-width tests skipped."""
    steps = []
    for op, value in _flatten_groups(items):
        if str(op) in _ZERO_WIDTH:
            continue
        single = _single(op, value, flags)
        if single is None:
            break
        steps.append(single)
    return steps


def _flatten_groups(items: Items) -> Iterator:
    """The items of a sequence with its groups that set no flags opened up."""
    for op, value in items:
        if str(op) == "SUBPATTERN" and not value[1] and not value[2]:
            yield from _flatten_groups(list(value[-1]))
        else:
            yield op, value


def _ambiguous_ends(body: Items, flags: int) -> bool:
    """Whether a variable repeat in the repeated `body` can end where what follows it (in the
    body, or at the start of the next iteration) could begin: then a run of text can be split
    between them in many ways."""
    wrap = _first(body, flags)[0]
    return any(starts & follow for starts, follow in _repeat_ends(body, flags, [], wrap))


def _repeat_ends(items: Items, flags: int, rest: list[tuple[Items, int]], wrap: int) -> Iterator[tuple[int, int]]:
    """(characters a variable repeat's match can start with, characters that can follow it) for
    each variable repeat in `items`, which the sequences `rest` follow, then text starting with `wrap`."""
    for position, (op, value) in enumerate(items):
        following = [(items[position + 1 :], flags), *rest]
        if str(op) in _REPEATS and value[0] < value[1]:
            yield _first(list(value[2]), flags)[0], _follow(following, wrap)
        if str(op) not in _LOOKAROUNDS:
            for child, child_flags in _children(op, value, flags):
                yield from _repeat_ends(child, child_flags, following, wrap)


def _follow(sequences: list[tuple[Items, int]], wrap: int) -> int:
    found = 0
    for items, flags in sequences:
        bits, nullable = _first(items, flags)
        found |= bits
        if not nullable:
            return found
    return found | wrap


def _adjacent_overlapping_repeats(items: Items, flags: int, tail: bool = False) -> bool:
    """Whether a wide variable repeat is followed, past items that can match empty and short
    ones both repeats can match, by another that can take what the first gives back, with
    something after them that can fail. `tail`: whether something follows `items`."""
    sequence = list(_flatten_groups(items))
    for position, (op, value) in enumerate(sequence):
        if _gives_back(op, value):
            body = list(value[2])
            given_back = _all_characters(body, flags), _first(body, flags, last=True)[0]
            between = 0  # the characters of the short items passed on the way
            for later in range(position + 1, len(sequence)):
                next_op, next_value = sequence[later]
                followed = later + 1 < len(sequence) or tail
                takers = _leading_repeats(next_op, next_value, flags)
                if followed and any(_can_take(given_back, taker) and not between & ~taker[1] for taker in takers):
                    return True
                if _passable(next_op, next_value, flags):
                    continue
                if not _short_within(next_op, next_value, flags, given_back[0]):
                    break
                between |= _all_characters([(next_op, next_value)], flags)
        followed = (position + 1 < len(sequence) or tail) and str(op) not in _LOOKAROUNDS
        if any(
            _adjacent_overlapping_repeats(child, child_flags, followed)
            for child, child_flags in _children(op, value, flags)
        ):
            return True
    return False


def _gives_back(op, value) -> bool:
    """Whether the item is a wide variable repeat that backtracking can make give back text."""
    return str(op) != "POSSESSIVE_REPEAT" and _is_wide_variable(op, value)


def _can_take(given_back: tuple[int, int], taker: tuple[int, int]) -> bool:
    """Whether a repeat taking text (its first characters, all its characters) can start on
    the text another gives back (all its characters, its last ones) and take it to the end."""
    given_characters, given_last = given_back
    taker_first, taker_characters = taker
    return bool(given_characters & taker_first and given_last & taker_characters)


def _leading_repeats(op, value, flags: int) -> Iterator[tuple[int, int]]:
    """(first characters, all characters) of each wide variable repeat that can begin a match
    of the item."""
    if _is_wide_variable(op, value):
        body = list(value[2])
        yield _first(body, flags)[0], _all_characters(body, flags)
    if str(op) in _LOOKAROUNDS:
        return
    for child, child_flags in _children(op, value, flags):
        for child_op, child_value in child:
            yield from _leading_repeats(child_op, child_value, child_flags)
            if not _passable(child_op, child_value, child_flags):
                break


def _short_within(op, value, flags: int, characters: int) -> bool:
    """Whether the item matches a short text (no long repeat) of `characters` only: a repeat
    over them can give it back with what precedes it (`\\w*_\\w*!` splits `a_a_a...` many ways)."""
    if str(op) in _ZERO_WIDTH or next(_long_repeat_bodies([(op, value)], flags), None) is not None:
        return False
    return not _all_characters([(op, value)], flags) & ~characters


def _passable(op, value, flags: int) -> bool:
    """Whether the item can match empty text anywhere: then what follows it may take text the
    item before it gives back. A zero-width test (`\\b`, a lookahead) fixes where that can be."""
    return str(op) not in _ZERO_WIDTH and _first_of_item(op, value, flags)[1]
