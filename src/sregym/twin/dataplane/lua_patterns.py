"""Lua's pattern matcher (`string.find` / `string.match`), counting the work it does.

An Envoy Lua filter that inspects requests spends its CPU in Lua's matcher, and that matcher
backtracks: each `*`, `+` or `-` item retries every length it could take when what follows
fails, so a pattern with several overlapping repeated items (`^%a[%w_]*%w*[%w_]*$`) costs
O(n^k) on a long near-match ending in a character none of them accept, while `^%a[%w_]*$`
costs O(n). `find_steps` runs the same algorithm as Lua 5.4's `lstrlib.c` (single-character
classes `.`, `%a %c %d %g %l %p %s %u %w %x` and their complements, `[sets]` with ranges and
`^`, escapes, the quantifiers `* + - ?`, anchors `^ $`, captures, `%b` and `%f`) and counts its
steps: one per character tested against a class and one per attempt to match the rest of the
pattern. Back-references (`%1`) match the empty string here. The count stops past `budget`:
the answer then says "more than the budget" (steps > budget), never a guess.
"""

from __future__ import annotations

import functools

DEFAULT_BUDGET = 200_000
SPECIALS = "^$*+?.([%-"


class StepBudgetExceeded(Exception):
    """The match needed more steps than the budget allowed."""


class MalformedPattern(ValueError):
    """What Lua raises for a pattern it cannot read (`malformed pattern (ends with '%')`)."""


def _class_matches(c: str, cl: str) -> bool:
    lower = cl.lower()
    if lower == "a":
        res = c.isalpha() and c.isascii()
    elif lower == "c":
        res = ord(c) < 32 or ord(c) == 127
    elif lower == "d":
        res = "0" <= c <= "9"
    elif lower == "g":
        res = 32 < ord(c) < 127
    elif lower == "l":
        res = "a" <= c <= "z"
    elif lower == "p":
        res = c.isascii() and 32 < ord(c) < 127 and not c.isalnum()
    elif lower == "s":
        res = c in " \t\n\r\f\v"
    elif lower == "u":
        res = "A" <= c <= "Z"
    elif lower == "w":
        res = c.isascii() and c.isalnum()
    elif lower == "x":
        res = c in "0123456789abcdefABCDEF"
    else:
        return cl == c
    return res if cl.islower() else not res


class _Matcher:
    def __init__(self, subject: str, pattern: str, budget: int) -> None:
        self.s, self.p = subject, pattern
        self.steps, self.budget = 0, budget

    def _tick(self) -> None:
        self.steps += 1
        if self.steps > self.budget:
            raise StepBudgetExceeded(self.steps)

    def class_end(self, pi: int) -> int:
        p = self.p
        if pi >= len(p):
            raise MalformedPattern("malformed pattern (ends with '%')")
        c = p[pi]
        pi += 1
        if c == "%":
            if pi >= len(p):
                raise MalformedPattern("malformed pattern (ends with '%')")
            return pi + 1
        if c == "[":
            if pi < len(p) and p[pi] == "^":
                pi += 1
            while True:  # look for a ']'
                if pi >= len(p):
                    raise MalformedPattern("malformed pattern (missing ']')")
                c = p[pi]
                pi += 1
                if c == "%":
                    pi += 1
                if pi < len(p) and p[pi] == "]":
                    return pi + 1
                if pi >= len(p):
                    raise MalformedPattern("malformed pattern (missing ']')")
        return pi

    def _in_set(self, c: str, start: int, end: int) -> bool:
        p = self.p
        pi, negate = start + 1, False
        if p[pi] == "^":
            negate, pi = True, pi + 1
        while pi < end:
            if p[pi] == "%" and pi + 1 < end:
                pi += 1
                if _class_matches(c, p[pi]):
                    return not negate
                pi += 1
            elif pi + 2 < end and p[pi + 1] == "-":
                if p[pi] <= c <= p[pi + 2]:
                    return not negate
                pi += 3
            else:
                if p[pi] == c:
                    return not negate
                pi += 1
        return negate

    def single(self, si: int, pi: int, ep: int) -> bool:
        self._tick()
        if si >= len(self.s):
            return False
        c, pc = self.s[si], self.p[pi]
        if pc == ".":
            return True
        if pc == "%":
            return _class_matches(c, self.p[pi + 1])
        if pc == "[":
            return self._in_set(c, pi, ep - 1)
        return pc == c

    def match(self, si: int, pi: int) -> int | None:
        p, s = self.p, self.s
        while True:
            self._tick()
            if pi >= len(p):
                return si
            c = p[pi]
            if c == "(":
                pi += 2 if pi + 1 < len(p) and p[pi + 1] == ")" else 1
                continue
            if c == ")":
                pi += 1
                continue
            if c == "$" and pi + 1 == len(p):
                return si if si == len(s) else None
            if c == "%" and pi + 1 < len(p) and p[pi + 1] == "b":
                si = self._balance(si, pi + 2)
                if si is None:
                    return None
                pi += 4
                continue
            if c == "%" and pi + 1 < len(p) and p[pi + 1] == "f":
                pi += 2
                ep = self.class_end(pi)
                prev = s[si - 1] if si > 0 else "\0"
                cur = s[si] if si < len(s) else "\0"
                if self._in_set(prev, pi, ep - 1) or not self._in_set(cur, pi, ep - 1):
                    return None
                pi = ep
                continue
            if c == "%" and pi + 1 < len(p) and p[pi + 1].isdigit():
                pi += 2  # a back-reference: taken as the empty capture
                continue
            ep = self.class_end(pi)
            quant = p[ep] if ep < len(p) else ""
            if not self.single(si, pi, ep):
                if quant in ("*", "?", "-"):
                    pi = ep + 1
                    continue
                return None
            if quant == "?":
                res = self.match(si + 1, ep + 1)
                if res is not None:
                    return res
                pi = ep + 1
                continue
            if quant == "+":
                return self._max_expand(si + 1, pi, ep)
            if quant == "*":
                return self._max_expand(si, pi, ep)
            if quant == "-":
                return self._min_expand(si, pi, ep)
            si, pi = si + 1, ep

    def _max_expand(self, si: int, pi: int, ep: int) -> int | None:
        i = 0
        while self.single(si + i, pi, ep):
            i += 1
        while i >= 0:  # try with the longest run first, then shorter ones
            res = self.match(si + i, ep + 1)
            if res is not None:
                return res
            i -= 1
        return None

    def _min_expand(self, si: int, pi: int, ep: int) -> int | None:
        while True:
            res = self.match(si, ep + 1)
            if res is not None:
                return res
            if not self.single(si, pi, ep):
                return None
            si += 1

    def _balance(self, si: int, pi: int) -> int | None:
        if pi + 1 >= len(self.p):
            raise MalformedPattern("malformed pattern (missing arguments to '%b')")
        if si >= len(self.s) or self.s[si] != self.p[pi]:
            return None
        opening, closing, depth = self.p[pi], self.p[pi + 1], 1
        si += 1
        while si < len(self.s):
            self._tick()
            ch = self.s[si]
            if ch == closing:
                depth -= 1
                if depth == 0:
                    return si + 1
            elif ch == opening:
                depth += 1
            si += 1
        return None


@functools.lru_cache(maxsize=512)
def find_steps(subject: str, pattern: str, budget: int = DEFAULT_BUDGET) -> tuple[int | None, int]:
    """(1-based start of the first match or None, steps taken) of `string.find(subject, pattern)`.

    Past `budget` steps the count stops: (None, budget + 1). Raises `MalformedPattern` as Lua
    would. Memoised: a request filter asks this for the same request every tick."""
    m = _Matcher(subject, pattern, budget)
    anchor = pattern.startswith("^")
    pi = 1 if anchor else 0
    si = 0
    try:
        while True:
            if m.match(si, pi) is not None:
                return si + 1, m.steps
            si += 1
            if anchor or si > len(subject):
                return None, m.steps
    except StepBudgetExceeded:
        return None, budget + 1


__all__ = ["DEFAULT_BUDGET", "MalformedPattern", "StepBudgetExceeded", "find_steps"]
