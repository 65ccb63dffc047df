"""Lua's pattern matcher as the twin counts it: where it matches agrees with real Lua (`lupa`
embeds the reference interpreter), and the work it counts grows the way backtracking makes it
grow (cubic for overlapping repeated classes, linear for one)."""

from __future__ import annotations

import pytest
from lupa import LuaRuntime

from sregym.twin.dataplane.lua_patterns import DEFAULT_BUDGET, MalformedPattern, find_steps

CASES = [
    ("hello world", "o w"), ("abc123", "^%a+%d+$"), ("a.b", "[%.]"), ("f(a(b)c)", "%b()"),
    ("  hi there", "%f[%w]%w+"), ("aaab", "a-b"), ("xaaab", "^a-b"), ("key=value&x=1", "[?&]x=([^&]*)"),
    ("/?waf=abc&x=1", "[?&]waf=([^&]*)"), ("THE (quick) fox", "%((%a+)%)"), ("[x]", "[]]"),
    ("abc", "[^%a]"), ("a_b9", "^%a[%w_]*%w*[%w_]*$"), ("aaaa!", "^%a[%w_]*%w*[%w_]*$"),
    ("tab\there", "%s"), ("UPPER lower", "%u+"), ("0x1F", "^0x%x+$"), ("a-b", "[a%-]+"),
    ("colour", "colou?r"), ("color", "colou?r"), ("", "^$"), ("abc", "b*"), ("ctrl\1", "%c"),
]


@pytest.fixture(scope="module")
def lua() -> LuaRuntime:
    return LuaRuntime()


@pytest.mark.parametrize(("subject", "pattern"), CASES)
def test_the_match_position_is_real_luas(lua: LuaRuntime, subject: str, pattern: str) -> None:
    expected = lua.globals().string.find(subject, pattern)
    expected = expected[0] if isinstance(expected, tuple) else expected
    start, steps = find_steps(subject, pattern)
    assert start == expected
    assert 0 < steps <= DEFAULT_BUDGET


def test_overlapping_repeats_backtrack_cubically_a_single_repeat_linearly() -> None:
    bad, fixed = "^%a[%w_]*%w*[%w_]*$", "^%a[%w_]*$"
    bad_steps = [find_steps("a" * n + "!", bad)[1] for n in (20, 40)]
    fixed_steps = [find_steps("a" * n + "!", fixed)[1] for n in (20, 40, 5000)]
    assert bad_steps[1] / bad_steps[0] > 6  # doubling the run: ~8x the work
    assert fixed_steps[1] / fixed_steps[0] < 2.5
    assert fixed_steps[2] < 20_000
    start, steps = find_steps("a" * 5000 + "!", bad)
    assert start is None and steps == DEFAULT_BUDGET + 1  # counted past the budget, not guessed


def test_a_malformed_pattern_fails_as_lua_does(lua: LuaRuntime) -> None:
    with pytest.raises(MalformedPattern, match="ends with '%'"):
        find_steps("abc", "abc%")
    with pytest.raises(Exception, match="malformed pattern"):
        lua.execute('return string.find("abc", "abc%")')
