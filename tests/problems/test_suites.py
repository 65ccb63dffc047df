"""The `lite` suite: about 20 Hotel Reservation problems and a few Astronomy Shop and Social Network
ones that together cover every layer."""

from __future__ import annotations

from typing import get_args

from sregym.problems.model import Layer
from sregym.problems.registry import select


def test_lite_suite_size_and_layer_coverage() -> None:
    lite = select(suite="lite")
    assert 18 <= len(lite) <= 30, f"lite has {len(lite)} problems: {[p.id for p in lite]}"
    covered = {layer for p in lite for layer in p.tags.layers}
    missing = sorted(set(get_args(Layer)) - {"none"} - covered)  # every fault layer; controls are in `detection`
    assert not missing, f"lite covers no problem of layer(s) {missing}"


def test_lite_problems_are_mostly_hotel_reservation() -> None:
    apps = [p.app for p in select(suite="lite")]
    assert set(apps) == {"hotel-reservation", "astronomy-shop", "social-network"}
    assert apps.count("hotel-reservation") > apps.count("astronomy-shop")
