"""Kubernetes resource quantities (`100m`, `1.5`, `128Mi`, `1G`, `2e3`)."""

from __future__ import annotations

import functools
import re
from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
            "k": Decimal(10**3), "M": Decimal(10**6), "G": Decimal(10**9), "T": Decimal(10**12),
            "P": Decimal(10**15), "E": Decimal(10**18)}
_PATTERN = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


class QuantityError(ValueError):
    pass


def parse_quantity(value: str | int | float | None) -> Decimal:
    """Parse a quantity into a Decimal of base units (cores, bytes, count)."""
    if value is None:
        return Decimal(0)
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    return _parse_text(str(value).strip())


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> Decimal:
    """The parse of one quantity text, memoised: the data plane and the datastore models read
    every container's CPU limit and request each tick, and a Decimal is immutable (a bad text
    raises every time; exceptions are not cached)."""
    m = _PATTERN.match(text)
    if not m:
        raise QuantityError("quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    try:
        number = Decimal(m.group(1))
    except InvalidOperation as exc:
        raise QuantityError(f"invalid quantity {text!r}") from exc
    suffix = m.group(2) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    return number * _DECIMAL[suffix]


def cpu_cores(value: str | int | float | None) -> float:
    return float(parse_quantity(value))


def memory_bytes(value: str | int | float | None) -> int:
    return int(parse_quantity(value))


def is_valid_quantity(value: object) -> bool:
    try:
        parse_quantity(value)  # type: ignore[arg-type]
        return True
    except (QuantityError, TypeError):
        return False


def format_cpu(cores: float) -> str:
    """Millicores as kubectl prints them (`250m`, `2`)."""
    milli = round(cores * 1000)
    return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"


def format_memory(num_bytes: float) -> str:
    """Binary-suffixed bytes (`128Mi`), the way kubectl top prints memory."""
    n = int(num_bytes)
    for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if n >= size and n % size == 0:
            return f"{n // size}{suffix}"
    if n >= 2**20:
        return f"{n // 2**20}Mi"
    if n >= 2**10:
        return f"{n // 2**10}Ki"
    return str(n)


def is_binary_quantity(value: str | int | float | None) -> bool:
    """Whether a quantity was written with a binary suffix (`Ki` ... `Ei`)."""
    m = _PATTERN.match(str(value).strip()) if value is not None else None
    return bool(m and (m.group(2) or "") in _BINARY)


def format_quantity(value: Decimal | int | float, binary: bool = False) -> str:
    """Canonical text of a quantity, as `resource.Quantity.String()` prints it.

    Binary quantities keep the largest `Ki`/`Mi`/`Gi` suffix that divides them evenly (`1536Mi`,
    `2Gi`); values under 1Ki or fractional fall back to decimal SI (`500m`, `1k`, `1500`).
    """
    number = Decimal(str(value)) if not isinstance(value, Decimal) else value
    if binary and abs(number) >= 1024 and number == number.to_integral_value():
        whole = int(number)
        for suffix, size in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
            if whole % size == 0:
                return f"{whole // size}{suffix}"
        return str(whole)
    if number == 0:
        return "0"
    for suffix, scale in (("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3), ("", 0),
                          ("m", -3), ("u", -6), ("n", -9)):
        mantissa = number.scaleb(-scale)
        if mantissa == mantissa.to_integral_value():
            return f"{int(mantissa)}{suffix}"
    # Finer than a nanounit: the API server rounds up to the next nano.
    return f"{int(number.scaleb(9).to_integral_value(rounding='ROUND_CEILING'))}n"


# ------------------------------------------------------------------ canonical form
_SI_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = {0: "", 10: "Ki", 20: "Mi", 30: "Gi", 40: "Ti", 50: "Pi", 60: "Ei"}
_NANO = Decimal("1e-9")


@functools.lru_cache(maxsize=4096, typed=True)
def canonical_quantity(value: str | int | float) -> str:
    """The form the API server stores and returns a quantity in (apimachinery's Quantity.String).

    A quantity keeps the family it was written in: binary suffixes (`Ki` ... `Ei`), decimal
    exponents (`e3`), or decimal SI suffixes (`m`, `k`, `M` ... and plain numbers); within it the
    largest suffix that keeps the number whole wins (`1000m` → `1`, `0.5` → `500m`, `2000` →
    `2k`, `1024Mi` → `1Gi`, `1536Mi` stays). Binary amounts under 1024, or not whole, are written
    as decimal SI. Precision finer than nano is rounded up, as upstream does.
    """
    text = str(value).strip()
    match = _PATTERN.match(text)
    if not match:
        raise QuantityError(f"invalid quantity {text!r}")
    amount = parse_quantity(text)
    if amount == 0:
        return "0"
    exact = amount.quantize(_NANO, rounding="ROUND_CEILING" if amount > 0 else "ROUND_FLOOR")
    suffix = match.group(2) or ""
    exponent_form = "e" in match.group(1).lower()
    if suffix in _BINARY and -1024 < exact < 1024:
        suffix = ""
    if suffix in _BINARY and exact == exact.to_integral_value():
        whole = int(exact)
        shift = max(k for k in _BINARY_SUFFIX if whole % (1 << k) == 0)
        return f"{whole >> shift}{_BINARY_SUFFIX[shift]}"
    scale = max(e for e in _SI_SUFFIX
                if (exact / Decimal(10) ** e) == (exact / Decimal(10) ** e).to_integral_value())
    mantissa = int(exact / Decimal(10) ** scale)
    if exponent_form:
        return f"{mantissa}e{scale}" if scale else str(mantissa)
    return f"{mantissa}{_SI_SUFFIX[scale]}"
