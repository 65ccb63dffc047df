"""Float arithmetic with Go's semantics (IEEE results instead of Python exceptions).

Prometheus is written in Go: 1/0 is +Inf, 0/0 and log(-1) are NaN, math.Max propagates NaN.
Python raises instead, so every operator and function goes through these helpers.
"""

from __future__ import annotations

import math

NAN = float("nan")
INF = float("inf")


def div(a: float, b: float) -> float:
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return NAN
        return math.copysign(INF, a) * math.copysign(1.0, b)
    return a / b


def mod(a: float, b: float) -> float:
    if b == 0.0 or math.isinf(a) or math.isnan(a) or math.isnan(b):
        return NAN
    if math.isinf(b):
        return a
    return math.fmod(a, b)


def pow_(a: float, b: float) -> float:
    try:
        result = math.pow(a, b)
    except OverflowError:
        # Go returns ±Inf on overflow; the sign follows an odd integer exponent of a negative base.
        odd = b == math.floor(b) and math.fmod(b, 2.0) != 0.0
        return -INF if a < 0 and odd else INF
    except ValueError:
        if a == 0.0 and b < 0:
            odd = b == math.floor(b) and math.fmod(b, 2.0) != 0.0
            return math.copysign(INF, a) if odd else INF
        return NAN
    return result


def gmax(a: float, b: float) -> float:
    if (math.isinf(a) and a > 0) or (math.isinf(b) and b > 0):
        return INF
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == 0.0 and b == 0.0:
        return a if math.copysign(1.0, a) > 0 else b
    return a if a > b else b


def gmin(a: float, b: float) -> float:
    if (math.isinf(a) and a < 0) or (math.isinf(b) and b < 0):
        return -INF
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == 0.0 and b == 0.0:
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


def floor(v: float) -> float:
    return v if math.isinf(v) or math.isnan(v) else float(math.floor(v))


def ceil(v: float) -> float:
    return v if math.isinf(v) or math.isnan(v) else float(math.ceil(v))


def exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return INF


def sqrt(v: float) -> float:
    return NAN if v < 0 or math.isnan(v) else math.sqrt(v)


def _log(fn, v: float) -> float:  # type: ignore[no-untyped-def]
    if math.isnan(v) or v < 0:
        return NAN
    if v == 0:
        return -INF
    if math.isinf(v):
        return INF
    return fn(v)


def ln(v: float) -> float:
    return _log(math.log, v)


def log2(v: float) -> float:
    return _log(math.log2, v)


def log10(v: float) -> float:
    return _log(math.log10, v)


def atan2(a: float, b: float) -> float:
    return math.atan2(a, b)


def kahan_inc(inc: float, total: float, c: float) -> tuple[float, float]:
    """Neumaier-compensated summation step, as Prometheus' kahanSumInc."""
    t = total + inc
    if abs(total) >= abs(inc):
        c += (total - t) + inc
    else:
        c += (inc - t) + total
    return t, c


def to_int64(v: float) -> int:
    """Go's int64(float) conversion for the values PromQL feeds it (trunc, saturating)."""
    if math.isnan(v):
        return -(2**63)
    if math.isinf(v):
        return 2**63 - 1 if v > 0 else -(2**63)
    return int(v)
