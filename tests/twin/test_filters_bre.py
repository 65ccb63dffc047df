"""POSIX BRE/ERE → Python `re` translation (grep's, sed's and awk's patterns), token by token."""

from __future__ import annotations

import re

import pytest

from sregym.twin.userland.posix_regex import Dialect, RegexError, translate

# (pattern, extended, line, matched text or None)
MATCHES = [
    (r"\(ab\)*c", False, "ababc", "ababc"),
    (r"(ab)", False, "x(ab)y", "(ab)"),
    (r"a\{2,3\}", False, "aaaa", "aaa"),
    (r"a{2}", False, "a{2}", "a{2}"),
    (r"x\{,2\}y", False, "xxy", "xxy"),
    (r"cat\|dog", False, "hotdog", "dog"),
    (r"a|b", False, "a|b", "a|b"),
    (r"a+", False, "aa+", "a+"),
    (r"a\+", False, "baa", "aa"),
    (r"ab\?c", False, "ac", "ac"),
    (r"a?", False, "a?", "a?"),
    (r"*a", False, "x*a", "*a"),
    (r"\(*a\)", False, "*a", "*a"),
    (r"^*", False, "*x", "*"),
    (r"a^b", False, "a^b", "a^b"),
    (r"a$b", False, "a$b", "a$b"),
    (r"end$", False, "the end", "end"),
    (r"[[:digit:]]\+", False, "port 8080", "8080"),
    (r"[^[:space:]]*", False, "abc def", "abc"),
    (r"[]x]", False, "a]b", "]"),
    (r"[a\]", False, "\\", "\\"),
    (r"[[:upper:][:digit:]-]\{3\}", False, "x-A1-", "-A1"),
    (r"\(a\)\1", False, "xaay", "aa"),
    (r"\<is\>", False, "this is", "is"),
    (r"a.c", False, "abc", "abc"),
    (r"\.", False, "a.b", "."),
    (r"(ab|cd)+", True, "xcdab", "cdab"),
    (r"\(a\)", True, "(a)", "(a)"),
    (r"a{1", True, "a{1", "a{1"),
    (r"a{2,}", True, "aaa", "aaa"),
    (r"a**", True, "aaa", "aaa"),
    (r"x)", True, "x)", "x)"),
    (r"^(a|b)$", True, "b", "b"),
    (r"[[:alpha:]]+", True, "42abc", "abc"),
]

ERRORS = [
    (r"\(a", False, "Unmatched ( or \\("),
    (r"a\)", False, "Unmatched ) or \\)"),
    (r"(a", True, "Unmatched ( or \\("),
    (r"a\{1", False, "Unmatched \\{"),
    (r"a\{2,1\}", False, "Invalid content of \\{\\}"),
    (r"[a", False, "Unmatched [, [^, [:, [., or [="),
    (r"[[:nope:]]", False, "Invalid character class name"),
    (r"[:space:]", False, "character class syntax is [[:space:]], not [:space:]"),
    (r"\(a\)\2", False, "Invalid back reference"),
]


@pytest.mark.parametrize(("pattern", "extended", "line", "found"), MATCHES,
                         ids=[f"{'E' if m[1] else 'B'}:{m[0]}" for m in MATCHES])
def test_translation_matches_like_grep(pattern: str, extended: bool, line: str,
                                       found: str | None) -> None:
    source, _warnings = translate(pattern, extended=extended, dialect="grep")
    match = re.search(source, line)
    assert (match.group(0) if match else None) == found


@pytest.mark.parametrize(("pattern", "extended", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_malformed_patterns_fail_with_greps_message(pattern: str, extended: bool,
                                                    message: str) -> None:
    with pytest.raises(RegexError) as raised:
        translate(pattern, extended=extended, dialect="grep")
    assert str(raised.value) == message


def test_leading_repetition_in_an_ere_warns_and_is_dropped() -> None:
    source, warnings = translate("*err", extended=True, dialect="grep")
    assert warnings == ["* at start of expression"] and re.search(source, "an error")


# Where grep, sed and awk part: (dialect, pattern, extended, text, matched text or None)
DIALECTS = [
    ("sed", r"a\{,\}", False, "aaa", "aaa"),
    ("sed", r"a\tb", False, "a\tb", "a\tb"),
    ("grep", r"a\tb", False, "a\tb atb", "atb"),
    ("awk", r"a{2}", True, "aa a{2}", "a{2}"),
    ("sed", r"a{2}", True, "aa a{2}", "aa"),
    ("awk", r"[\]]", True, "x]", "]"),
    ("grep", r"[\]]", False, "x] \\]", "\\]"),
    ("awk", r"\w", True, "a w", "w"),
    ("grep", "a.b", False, "a\nb", "a\nb"),
]

DIALECT_ERRORS = [
    ("sed", "[[.ab.]]", False, "Invalid collation character"),
    ("grep", "a\\", False, "Trailing backslash"),
    ("sed", "x)", True, "Unmatched ) or \\)"),
    ("sed", r"\(a\1\)", False, "Invalid back reference"),
    ("sed", "a{1", True, "Unmatched \\{"),
]


@pytest.mark.parametrize(("dialect", "pattern", "extended", "text", "found"), DIALECTS,
                         ids=[f"{d[0]}:{d[1]}" for d in DIALECTS])
def test_each_tool_reads_its_own_dialect(dialect: Dialect, pattern: str, extended: bool,
                                         text: str, found: str | None) -> None:
    source, _warnings = translate(pattern, extended=extended, dialect=dialect)
    match = re.search(source, text)
    assert (match.group(0) if match else None) == found


@pytest.mark.parametrize(("dialect", "pattern", "extended", "message"), DIALECT_ERRORS,
                         ids=[f"{d[0]}:{d[1]}" for d in DIALECT_ERRORS])
def test_each_tool_refuses_with_regcomps_message(dialect: Dialect, pattern: str, extended: bool,
                                                 message: str) -> None:
    with pytest.raises(RegexError) as raised:
        translate(pattern, extended=extended, dialect=dialect)
    assert str(raised.value) == message
