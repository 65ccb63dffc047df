"""The share of a `d + Exp(m)` latency distribution that falls under each span-histogram bucket.

Every tick the engine adds each operation's and each call's spans to the span-metrics histogram
(`engine._record_span`): per bucket `le` above `d`, the count times `1 - exp((d - le) / m)`. In a
steady state the same (d, m) come back tick after tick, so the shares are memoised on exactly
those two numbers: the key is the whole input, so a changed latency is a fresh computation and a
reused one is bit-identical to what the loop would compute.
"""

from __future__ import annotations

import math

Shares = tuple[int, tuple[float, ...]]  # (first bucket above d, share per bucket from there on)

MEMO_LIMIT = 8192  # distinct (d, m) remembered before the memo starts over
TINY_TAIL_MS = 1e-9  # a tail this small is a point mass at d


class BucketShares:
    """`of(d, m)`: the first bucket whose bound exceeds `d` and the share of spans at or under
    each bound from there on (bounds ascend, so those buckets are a suffix)."""

    def __init__(self, bounds: tuple[float, ...], limit: int = MEMO_LIMIT) -> None:
        self.bounds = tuple(bounds)
        self.limit = limit
        self._memo: dict[tuple[float, float], Shares] = {}

    def of(self, d: float, m: float) -> Shares:
        key = (d, m)
        shares = self._memo.get(key)
        if shares is None:
            if len(self._memo) >= self.limit:
                self._memo.clear()
            shares = self._memo[key] = compute_shares(self.bounds, d, m)
        return shares

    def __len__(self) -> int:
        return len(self._memo)


def compute_shares(bounds: tuple[float, ...], d: float, m: float) -> Shares:
    """The shares without the memo (a point mass at `d` when the tail is negligible)."""
    start = 0
    for bound in bounds:
        if bound > d:
            break
        start += 1
    above = bounds[start:]
    if m <= TINY_TAIL_MS:
        return start, (1.0,) * len(above)
    exp = math.exp
    return start, tuple([1.0 - exp((d - le) / m) for le in above])


__all__ = ["BucketShares", "Shares", "compute_shares"]
