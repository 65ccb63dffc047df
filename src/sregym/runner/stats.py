"""The uncertainty of a rate and of a difference between two agents, for reports and the viewer.

A benchmark rate from a few dozen problems is a noisy estimate; a paper that says "A beats B"
needs an interval and a paired test over the same problems and seeds. Kept dependency-free and
deterministic (a fixed-seed bootstrap), so the same run directory always gives the same figures.

- `wilson(passes, n)`: the Wilson score interval of a binomial rate (good at 0 %, 100 % and small n).
- `bootstrap_rate(groups)`: an interval that respects clustering: attempts of one problem (its
  seeds) are resampled together, since they are not independent.
- `paired(a, b)`: two agents on the same (problem, seed) attempts: wins, losses, ties, the exact
  two-sided McNemar (sign) test on the discordant pairs, and a bootstrap interval of the difference.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import comb, sqrt

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float]:
        return {"estimate": round(self.estimate, 6), "low": round(self.low, 6), "high": round(self.high, 6)}


def wilson(passes: int, n: int, z: float = Z95) -> Interval | None:
    """The Wilson score interval of `passes` out of `n` (None when n is 0)."""
    if n <= 0:
        return None
    p = passes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bootstrap_rate(groups: Mapping[str, Sequence[bool]], *, resamples: int = 2000, seed: int = 0) -> Interval | None:
    """The mean pass rate over problems (each problem's seeds averaged first) with a 95 %
    percentile interval from resampling problems with replacement."""
    per_problem = [sum(v) / len(v) for v in groups.values() if v]
    if not per_problem:
        return None
    estimate = sum(per_problem) / len(per_problem)
    rng = random.Random(seed)
    k = len(per_problem)
    means = sorted(sum(per_problem[rng.randrange(k)] for _ in range(k)) / k for _ in range(resamples))
    return Interval(estimate, _percentile(means, 0.025), _percentile(means, 0.975))


@dataclass(frozen=True)
class PairedComparison:
    pairs: int  # attempts both agents ran (same problem, same seed)
    a_only: int  # A passed, B failed
    b_only: int
    both: int
    neither: int
    p_value: float  # exact two-sided McNemar test on the discordant pairs
    difference: Interval | None  # rate(A) - rate(B), bootstrap over problems

    def as_dict(self) -> dict[str, object]:
        return {"pairs": self.pairs, "a_only": self.a_only, "b_only": self.b_only, "both": self.both,
                "neither": self.neither, "p_value": round(self.p_value, 6),
                "difference": self.difference.as_dict() if self.difference else None}


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact binomial test of a_only vs b_only discordant pairs (p = 1 with none)."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    tail = sum(comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired(a: Mapping[tuple[str, int], bool], b: Mapping[tuple[str, int], bool], *, resamples: int = 2000,
           seed: int = 0) -> PairedComparison:
    """Compare two agents' end-to-end verdicts keyed by (problem_id, seed); only keys both have count."""
    keys = sorted(a.keys() & b.keys())
    a_only = sum(1 for k in keys if a[k] and not b[k])
    b_only = sum(1 for k in keys if b[k] and not a[k])
    both = sum(1 for k in keys if a[k] and b[k])
    by_problem: dict[str, list[float]] = {}
    for k in keys:
        by_problem.setdefault(k[0], []).append(float(a[k]) - float(b[k]))
    diffs = [sum(v) / len(v) for v in by_problem.values()]
    difference = None
    if diffs:
        rng = random.Random(seed)
        n = len(diffs)
        means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
        difference = Interval(sum(diffs) / n, _percentile(means, 0.025), _percentile(means, 0.975))
    return PairedComparison(pairs=len(keys), a_only=a_only, b_only=b_only, both=both,
                            neither=len(keys) - a_only - b_only - both, p_value=mcnemar_exact(a_only, b_only),
                            difference=difference)


__all__ = ["Interval", "PairedComparison", "bootstrap_rate", "mcnemar_exact", "paired", "wilson"]
