"""Clock, RNG streams, selectors, quantities and kind resolution."""

from __future__ import annotations

import pytest

from sregym.errors import BadRequest, NotFound
from sregym.twin.clock import SimClock, format_age, parse_time
from sregym.twin.machinery.kinds import KindRegistry
from sregym.twin.machinery.quantity import cpu_cores, format_cpu, format_memory, memory_bytes
from sregym.twin.machinery.selectors import parse_label_selector, selector_from_spec, selector_to_string
from sregym.twin.rng import RngStreams


def test_clock_advances_in_ticks_and_formats() -> None:
    clock = SimClock(tick=0.5)
    start = clock.now
    clock.step()
    clock.step()
    assert clock.now - start == pytest.approx(1.0)
    assert parse_time(clock.iso()) == int(clock.now)


@pytest.mark.parametrize(("seconds", "text"), [(5, "5s"), (119, "119s"), (125, "2m5s"), (600, "10m"),
                                               (3 * 3600 + 60, "3h1m"), (30 * 3600, "30h"),
                                               (3 * 86400, "3d")])
def test_age_matches_kubectl(seconds: int, text: str) -> None:
    assert format_age(seconds) == text


def test_rng_streams_are_independent_and_seeded() -> None:
    a, b = RngStreams(3), RngStreams(3)
    a.stream("noise").random()  # drawing from one stream must not shift another
    assert a.stream("uid").random() == b.stream("uid").random()
    assert RngStreams(4).uuid() != RngStreams(3).uuid()
    assert all(c in "bcdfghjklmnpqrstvwxz2456789" for c in a.suffix(20))


def test_label_selector_parsing() -> None:
    sel = parse_label_selector("app=web, tier notin (db), env in (prod,stage),!legacy,team")
    assert sel.matches({"app": "web", "env": "prod", "team": "x"})
    assert not sel.matches({"app": "web", "env": "prod", "team": "x", "legacy": "1"})
    assert not sel.matches({"app": "web", "env": "dev", "team": "x"})
    with pytest.raises(BadRequest):
        parse_label_selector("app in web")


def test_structured_selector() -> None:
    spec = {"matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe", "be"]}]}
    sel = selector_from_spec(spec)
    assert sel.matches({"app": "web", "tier": "fe"}) and not sel.matches({"app": "web"})
    assert selector_to_string(spec) == "app=web,tier in (fe,be)"
    assert not selector_from_spec(None).matches({})
    assert selector_from_spec({}).matches({"any": "thing"})


def test_quantities() -> None:
    assert cpu_cores("250m") == 0.25 and cpu_cores("2") == 2.0 and cpu_cores("1e3m") == 1.0
    assert memory_bytes("128Mi") == 128 * 2**20 and memory_bytes("1G") == 10**9
    assert format_cpu(0.25) == "250m" and format_memory(64 * 2**20) == "64Mi"


def test_kind_resolution() -> None:
    kinds = KindRegistry()
    for name in ("Deployment", "deployments", "deploy", "deployments.apps", "apps/v1/Deployment"):
        assert kinds.resolve(name).kind == "Deployment"
    assert kinds.resolve("po").kind == "Pod"
    with pytest.raises(NotFound):
        kinds.resolve("widgets")
