"""The scrape's caches (series refs kept across scrapes, span metrics read per span key) change
how much a scrape costs, never what it stores: every test compares against the uncached path."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from sregym.apps import deploy_app
from sregym.twin.telemetry.exposition import Batch, RefTable, Target
from sregym.twin.telemetry.scrape import scraper_of
from sregym.twin.telemetry.span_metrics import RefCache, SpanMetrics
from sregym.twin.twin import Twin


def hotel(seed: int = 3) -> Twin:
    twin = Twin(seed=seed)
    deploy_app(twin, "hotel-reservation")
    return twin


def tables(twin: Twin) -> list[RefTable]:
    scraper = scraper_of(twin)
    found = [scraper._meta_refs]
    found += [c._refs for c in scraper.collectors if isinstance(getattr(c, "_refs", None), RefTable)]
    return found


def fingerprint(twin: Twin) -> list[tuple[Any, ...]]:
    return [(series.key, tuple(series.timestamps), tuple(struct.pack("<d", v) for v in series.values))
            for series in twin.services.tsdb.all_series()]


@pytest.fixture(scope="module")
def running() -> Twin:
    twin = hotel()
    twin.advance(150)
    return twin


def test_kept_refs_store_the_same_samples_as_fresh_ones() -> None:
    cached = hotel()
    cached.advance(120)
    assert len(tables(cached)) == 3  # scrape meta, kube-state-metrics, node exporter
    assert sum(t.size for t in tables(cached)) > 1000
    with pytest.MonkeyPatch.context() as patch:  # nothing kept: every sample resolves its series again
        patch.setattr(RefTable, "refs_for", lambda self, batch: {})
        fresh = hotel()
        fresh.advance(120)
    assert fingerprint(cached) == fingerprint(fresh)


def test_ref_table_reuses_refs_and_keys_like_batch_add() -> None:
    target = Target("job", "10.0.0.1:9100", {"job": "job", "instance": "10.0.0.1:9100", "pod": "p"},
                    honor_labels=False)
    table = RefTable()
    first, second, plain = Batch(target), Batch(target), Batch(target)
    for batch in (first, second):
        add = table.adder(batch)
        add("node_load1", None, 0.5)
        add("node_cpu_seconds_total", {"cpu": "0", "mode": "idle", "pod": "inner"}, 3)
    plain.add("node_load1", None, 0.5)
    plain.add("node_cpu_seconds_total", {"cpu": "0", "mode": "idle", "pod": "inner"}, 3)
    assert [r.key for r, _ in first.samples] == [r.key for r, _ in plain.samples]
    assert [v for _, v in first.samples] == [v for _, v in plain.samples] == [0.5, 3.0]
    assert all(a is b for (a, _), (b, _) in zip(first.samples, second.samples, strict=True))
    assert ("exported_pod", "inner") in first.samples[1][0].key
    other = Batch(Target("job", "10.0.0.2:9100", {"job": "job", "instance": "10.0.0.2:9100"}, honor_labels=False))
    table.adder(other)("node_load1", None, 1.0)
    assert other.samples[0][0] is not first.samples[0][0]  # another target, another series


def test_span_groups_expand_to_the_span_metric_rows(running: Twin) -> None:
    dataplane = running.services.dataplane
    rows = dataplane.span_metrics()
    assert len(rows) > 100
    expanded = []
    for _key, (labels, buckets, inf), count, hist, total in dataplane.span_metric_groups():
        expanded.append(("traces_span_metrics_calls_total", labels, count))
        if hist is not None:
            expanded += [("traces_span_metrics_duration_milliseconds_bucket", b, v)
                         for b, v in zip(buckets, hist, strict=False)]
            expanded += [("traces_span_metrics_duration_milliseconds_bucket", inf, count),
                         ("traces_span_metrics_duration_milliseconds_sum", labels, total),
                         ("traces_span_metrics_duration_milliseconds_count", labels, count)]
    assert expanded == [(name, labels, value) for name, labels, value, _type in rows]


def test_span_exporter_batch_matches_the_row_by_row_batch(running: Twin) -> None:
    exporter = next(c for c in scraper_of(running).collectors if isinstance(c, SpanMetrics))
    dataplane = running.services.dataplane
    for _ in range(2):  # the second pass runs on the refs kept from the first
        [batch] = exporter.collect(running.clock.now)
        by_rows, keys = Batch(exporter.target), RefCache()
        for name, labels, value, _type in dataplane.span_metrics():
            by_rows.add_ref(keys.ref(by_rows, name, labels), float(value))
        assert [(r.key, v) for r, v in batch.samples] == [(r.key, v) for r, v in by_rows.samples]
        running.advance(15)


def _churned_hotel(skip: bool) -> Twin:
    """Hotel Reservation with series that vanish (a deleted pod, a scaled-down deployment) and
    a series holding a sample stamped after the scrape (written out of band)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sregym.twin.telemetry.scrape.SKIP_UNCHANGED_TARGETS", skip)
        twin = hotel(seed=4)
        twin.advance(90)
        pod = next(p["metadata"]["name"] for p in twin.list("pods", "hotel-reservation")
                   if p["metadata"]["name"].startswith("frontend"))
        twin.delete("pods", "hotel-reservation", pod, grace_period=0)
        twin.patch("deployments", "hotel-reservation", "geo", {"spec": {"replicas": 0}})
        twin.advance(45)
        up = next(s for s in twin.services.tsdb.all_series() if s.labels.get("__name__") == "up")
        up.append(up.timestamps[-1] + 20_000, 1.0)  # ahead of the next scrape: that one is dropped
        twin.advance(60)
        return twin


def test_staleness_skip_of_unchanged_targets_marks_what_a_full_walk_marks() -> None:
    skipping, walking = _churned_hotel(True), _churned_hotel(False)
    assert scraper_of(skipping).stats.stale_markers > 0
    assert scraper_of(skipping).stats.stale_markers == scraper_of(walking).stats.stale_markers
    assert fingerprint(skipping) == fingerprint(walking)
