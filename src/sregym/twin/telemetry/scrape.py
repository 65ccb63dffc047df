"""The Prometheus scraper of the twin: every 15 simulated seconds, each exporter's targets are
"scraped" into the TSDB (`twin.services.tsdb`).

What a kube-prometheus-stack install would store is reproduced, not approximated:

- scrape timestamps are aligned to the clock (multiples of the interval, in ms), one sample per
  series per scrape;
- every target gets `up{job, instance, ...}` plus `scrape_samples_scraped` and
  `scrape_duration_seconds`, and its series carry the target labels the ServiceMonitors attach
  (`job`, `instance`, `namespace`, `pod`, `service`, `endpoint`, `container`, `node`,
  `metrics_path`) with `honor_labels` semantics where the chart uses them (the exporter's own
  `namespace`/`pod`/`container` labels win over the target's);
- a series that a target stops reporting — and every series of a target that disappears — gets
  Prometheus' staleness marker at the next scrape, so queries stop returning it exactly as they
  would against Prometheus;
- HELP/TYPE metadata goes into `tsdb.metadata`; retention is bounded (`retention_s`).

Exporters are small collectors in their own modules (`kube_state_metrics`, `cadvisor`,
`node_exporter`, `span_metrics`, `app_metrics`); each returns `Batch`es of samples (`exposition`). Series refs
are cached per entity by the collectors, so a scrape of a 500-pod cluster is mostly dictionary
lookups and list appends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING

from sregym.twin.controller import Controller, controller
from sregym.twin.telemetry.app_metrics import AppMetrics
from sregym.twin.telemetry.cadvisor import Cadvisor
from sregym.twin.telemetry.exposition import (
    Batch,
    Collector,
    Family,
    RefTable,
    SeriesRef,
    Target,
)
from sregym.twin.telemetry.kube_state_metrics import KubeStateMetrics
from sregym.twin.telemetry.node_exporter import NodeExporter
from sregym.twin.telemetry.postgres_receiver import PostgresReceiver
from sregym.twin.telemetry.runtime_metrics import RuntimeMetrics
from sregym.twin.telemetry.span_metrics import SpanMetrics
from sregym.twin.telemetry.tsdb import STALE_NAN, TSDB, is_stale

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

SCRAPE_INTERVAL_S = 15
RETENTION_S = 6 * 3600
USAGE_SAMPLE_S = 5  # how often container CPU usage is integrated into the counters
RETENTION_EVERY_SCRAPES = 40  # apply retention every 10 simulated minutes

@dataclass
class ScrapeStats:
    scrapes: int = 0
    samples: int = 0
    stale_markers: int = 0
    last_scrape_ms: int | None = None
    per_job: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class TargetState:
    """What Prometheus' target manager remembers of one target's last scrape (`/api/v1/targets`)."""

    target: Target
    last_scrape_ms: int
    duration_s: float
    samples: int


@controller
class TelemetryScraper(Controller):
    """Prometheus: scrapes every exporter on a fixed interval into `twin.services.tsdb`."""

    name = "telemetry-scraper"
    order = 95  # after the data plane (85) so a scrape sees this tick's usage and counters

    def __init__(self, twin: Twin, *, interval_s: int = SCRAPE_INTERVAL_S,
                 retention_s: float = RETENTION_S, usage_sample_s: int = USAGE_SAMPLE_S) -> None:
        super().__init__(twin)
        tsdb = twin.services.tsdb
        if tsdb is None:
            tsdb = TSDB()
            twin.services.tsdb = tsdb
        self.tsdb: TSDB = tsdb
        twin.services.scraper = self
        self.interval_ms = int(interval_s * 1000)
        self.retention_ms = int(retention_s * 1000)
        self.usage_sample_ms = int(usage_sample_s * 1000)
        self.cadvisor = Cadvisor(twin)
        self.node_exporter = NodeExporter(twin, self.cadvisor)
        self.collectors: list[Collector] = [KubeStateMetrics(twin), self.cadvisor, self.node_exporter,
                                            SpanMetrics(twin), AppMetrics(twin), RuntimeMetrics(twin),
                                            PostgresReceiver(twin)]
        start_ms = _ms(twin.clock.now)
        self._last_slot = start_ms // self.interval_ms
        self._last_usage_slot = start_ms // self.usage_sample_ms
        # Per target, the series refs written last scrape (in order): the staleness pass only
        # walks the targets whose list changed (see `_write`).
        self._previous: dict[tuple[str, str, str], list[SeriesRef]] = {}
        self._meta_refs = RefTable()  # each target's up/scrape_* series
        self._generation = 0  # bumped when retention may have removed series refs point to
        self.stats = ScrapeStats()
        self.targets: dict[tuple[str, str, str], TargetState] = {}  # the active targets, last scrape
        self._register_metadata()

    # ------------------------------------------------------------------ metadata
    def _register_metadata(self) -> None:
        for family in _PROMETHEUS_FAMILIES:
            self.tsdb.set_metadata(family.name, family.type, family.help)
        for collector in self.collectors:
            for family in collector.families:
                self.tsdb.set_metadata(family.name, family.type, family.help)

    def register_family(self, family: Family) -> None:
        """Metadata for families discovered at run time (app metrics)."""
        if family.name not in self.tsdb.metadata:
            self.tsdb.set_metadata(family.name, family.type, family.help)

    # ------------------------------------------------------------------- ticking
    def reconcile(self) -> None:
        now_ms = _ms(self.twin.clock.now)
        usage_slot = now_ms // self.usage_sample_ms
        slot = now_ms // self.interval_ms
        if usage_slot > self._last_usage_slot or slot > self._last_slot:
            self._last_usage_slot = usage_slot
            self.cadvisor.sample(now_ms / 1000)
            self.node_exporter.sample(now_ms / 1000)
        if slot > self._last_slot:
            self._last_slot = slot
            self.scrape(slot * self.interval_ms)

    def scrape(self, t_ms: int) -> None:
        """One scrape of every target at `t_ms` (ms since the epoch)."""
        now = t_ms / 1000
        batches: list[Batch] = []
        for collector in self.collectors:
            batches.extend(collector.collect(now))
        self._write(t_ms, batches)
        self.stats.scrapes += 1
        self.stats.last_scrape_ms = t_ms
        if self.stats.scrapes % RETENTION_EVERY_SCRAPES == 0:
            self.tsdb.drop_before(t_ms - self.retention_ms)
            self._generation += 1

    def _write(self, t_ms: int, batches: list[Batch]) -> None:
        tsdb, gen = self.tsdb, self._generation
        current: dict[tuple[str, str, str], list[SeriesRef]] = {}
        previous = self._previous
        changed: set[tuple[str, str, str]] = set()  # targets whose last refs may need a marker
        current_targets: dict[tuple[str, str, str], TargetState] = {}
        for batch in batches:
            target = batch.target
            if target.pushed:  # OTLP-received: no staleness markers, no target meta series
                for ref, value in batch.samples:
                    if ref.series is None or ref.gen != gen:
                        ref.series = tsdb.series_for(ref.key)
                        ref.gen = gen
                    ref.series.append(t_ms, value)
                self.stats.samples += len(batch.samples)
                continue
            scraped = len(batch.samples) if target.up else 0
            meta = Batch(Target(target.job, target.instance, target.labels, honor_labels=False))
            add = self._meta_refs.adder(meta)
            add("up", None, 1.0 if target.up else 0.0)
            add("scrape_samples_scraped", None, scraped)
            # A deterministic stand-in for the time a scrape of this size takes.
            duration = round(0.003 + scraped * 2.5e-6, 6)
            add("scrape_duration_seconds", None, duration)
            current_targets[target.id] = TargetState(target, t_ms, duration, scraped)
            samples = (batch.samples if target.up else []) + meta.samples
            refs = current[target.id] = list(map(_FIRST, samples))
            regular = True  # every series got this scrape's sample as its last one
            for ref, value in samples:
                series = ref.series
                if series is None or ref.gen != gen:
                    series = ref.series = tsdb.series_for(ref.key)
                    ref.gen = gen
                stamps = series.timestamps
                if stamps and t_ms <= stamps[-1]:
                    series.append(t_ms, value)
                    regular = False
                else:  # the common case, inlined: this loop runs for every sample
                    stamps.append(t_ms)
                    series.values.append(value)
            if not (SKIP_UNCHANGED_TARGETS and regular and previous.get(target.id) == refs):
                changed.add(target.id)  # (SeriesRef compares by identity)
            self.stats.samples += len(samples)
            self.stats.per_job[target.job] = self.stats.per_job.get(target.job, 0) + len(samples)
        # Series a target no longer reports (or of targets that are gone) get a staleness marker:
        # whatever was written last scrape and has no sample at this one. A target that wrote the
        # same refs again, each now ending in this scrape's sample, has none to mark: only the
        # others are walked (in the order of last scrape's targets, as a full walk would mark).
        for target_id, before in previous.items():
            if target_id in current and target_id not in changed:
                continue
            for ref in before:
                series = ref.series
                if series is None:
                    continue
                stamps = series.timestamps
                if stamps and stamps[-1] != t_ms and not is_stale(series.values[-1]):
                    series.append(t_ms, STALE_NAN)
                    self.stats.stale_markers += 1
        self._previous = current
        self.targets = current_targets


_FIRST = itemgetter(0)  # the ref of a (ref, value) sample
# Set to False to walk every target's last refs for staleness (the reference the skip is tested against).
SKIP_UNCHANGED_TARGETS = True


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


_PROMETHEUS_FAMILIES = (
    Family("up", "gauge", "Health of the scrape target: 1 if the last scrape succeeded, 0 otherwise."),
    Family("scrape_samples_scraped", "gauge", "The number of samples the target exposed."),
    Family("scrape_duration_seconds", "gauge", "Duration of the scrape."),
)


def scraper_of(twin: Twin) -> TelemetryScraper:
    """The twin's scraper controller (every twin has one)."""
    found = twin.services.scraper
    if found is None:
        raise KeyError("the telemetry scraper is not installed")
    return found  # type: ignore[no-any-return]


__all__ = ["RETENTION_S", "SCRAPE_INTERVAL_S", "USAGE_SAMPLE_S", "ScrapeStats", "TargetState", "TelemetryScraper", "scraper_of"]
