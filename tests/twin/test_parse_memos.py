"""The memoised parses (quantities, image references) answer exactly what a fresh parse does,
and a bad text fails every time, not only the first."""

from __future__ import annotations

from decimal import Decimal

import pytest

from sregym.twin.machinery.quantity import QuantityError, cpu_cores, memory_bytes, parse_quantity
from sregym.twin.node.images import ImageRef


@pytest.mark.parametrize("text, expected", [("100m", Decimal("0.1")), ("1.5", Decimal("1.5")),
                                             ("128Mi", Decimal(128 * 2**20)), (" 2e3 ", Decimal("2e3"))])
def test_quantity_parse_is_the_same_on_every_call(text: str, expected: Decimal) -> None:
    assert [parse_quantity(text) for _ in range(3)] == [expected] * 3


def test_memoised_quantity_feeds_cpu_and_memory_conversions() -> None:
    assert cpu_cores("250m") == 0.25 and cpu_cores("250m") == 0.25
    assert memory_bytes("64Mi") == 64 * 2**20 and memory_bytes("64Mi") == 64 * 2**20


def test_a_bad_quantity_fails_on_every_call() -> None:
    for _ in range(2):
        with pytest.raises(QuantityError):
            parse_quantity("12 cores")


@pytest.mark.parametrize("ref", ["nginx", "nginx:1.27", "ghcr.io/open-telemetry/demo:1.12.0-cart",
                                 "localhost:5000/app@sha256:" + "a" * 64, "deathstarbench/hotel-reservation:latest"])
def test_image_reference_parse_matches_a_fresh_parse(ref: str) -> None:
    fresh = ImageRef._parse(ref)
    assert ImageRef.parse(ref) == fresh and ImageRef.parse(ref) == fresh
    assert ImageRef.parse(ref).canonical == fresh.canonical
