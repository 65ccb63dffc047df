"""Per-tick shortcuts of the kubelet and the data plane give exactly what the full computation
gives: each test runs the same cluster with the shortcut and with it switched off, checks the
shortcut was taken, and compares everything observable bit for bit."""

from __future__ import annotations

import hashlib
import struct

import pytest

from sregym.apps import deploy_app
from sregym.twin.controllers.kubelet import Kubelet
from sregym.twin.dataplane.engine import DataPlaneEngine
from sregym.twin.dataplane.synthetic import synthetic_app
from sregym.twin.twin import Twin


def _observed(twin: Twin) -> str:
    """Objects (events included), container logs, every TSDB sample's bits and every span."""
    digest = hashlib.sha256(twin.dump().encode())
    logs = twin.services.logs
    for container_id, _labels in sorted(logs.instances(), key=lambda i: i[0]):
        for line in logs.lines(container_id):
            digest.update(repr(line).encode())
    for series in sorted(twin.services.tsdb.all_series(), key=lambda s: sorted(s.labels.items())):
        digest.update(repr(sorted(series.labels.items())).encode())
        digest.update(struct.pack(f"<{len(series.values)}d", *series.values))
    for span in twin.services.traces.spans():
        digest.update(repr(span).encode())
    return digest.hexdigest()


def _leaking_app(shortcut: bool) -> tuple[str, int, int]:
    """A memory-limited app whose middle tier leaks into an OOM kill and restarts: (what was
    observed, ticks a limited pod skipped its sync, restarts of the leaking pods)."""
    skipped = 0
    idle = Kubelet._idle_within_limits

    def counted(self: Kubelet, *args: object) -> bool:
        nonlocal skipped
        answer = idle(self, *args) if shortcut else False
        skipped += answer
        return answer

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Kubelet, "_idle_within_limits", counted)
        twin = Twin(seed=2)
        synthetic_app("leak", layers=(1, 2), rps=20, leak_mib_per_min=200.0, memory_limit="128Mi").deploy(twin)
        twin.advance(150)
    restarts = sum(s.get("restartCount", 0) for p in twin.list("pods", "leak", label_selector="app=svc-1-0")
                   for s in p["status"].get("containerStatuses") or [])
    return _observed(twin), skipped, restarts


def test_limited_pods_skip_only_syncs_that_would_change_nothing() -> None:
    fast, skipped, restarts = _leaking_app(True)
    full, none_skipped, full_restarts = _leaking_app(False)
    assert skipped > 100 and none_skipped == 0
    assert restarts >= 1 and restarts == full_restarts  # the OOM kills still happen, on the same ticks
    assert fast == full


def _hotel(memo: bool) -> tuple[str, int]:
    """Hotel Reservation for two simulated minutes: (what was observed, edges computed)."""
    computed = 0
    edge = DataPlaneEngine._edge

    def counted(self: DataPlaneEngine, *args: object) -> object:
        nonlocal computed
        computed += 1
        result = edge(self, *args)
        if not memo:
            self._edge_reads_self = True  # as for a call to its own process: never reused
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DataPlaneEngine, "_edge", counted)
        twin = Twin(seed=6)
        deploy_app(twin, "hotel-reservation")
        twin.advance(120)
    return _observed(twin), computed


def test_an_edge_shared_by_operations_is_computed_once_per_tick_with_the_same_outcome() -> None:
    memoised, fewer = _hotel(True)
    plain, every = _hotel(False)
    assert fewer < every * 0.9
    assert memoised == plain
