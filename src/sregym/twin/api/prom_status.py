"""Prometheus' status and discovery endpoints over the twin's scraper and TSDB.

`/api/v1/targets`, `/api/v1/targets/metadata`, `/api/v1/scrape_pools`, `/api/v1/alertmanagers`
and `/api/v1/status/{config,flags,tsdb,walreplay}` answer from what the twin's Prometheus really
did: the targets of the last scrape (`TelemetryScraper.targets`), the configuration those
targets imply (`telemetry.scrape_config`) and the series stored in the TSDB. Shapes and error
wording follow Prometheus 2.53 (`web/api/v1/api.go`). The agent sees only the targets and series
its visibility allows (`telemetry.visibility`), so no status page reveals the hidden machinery.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sregym.twin.telemetry.promtime import rfc3339
from sregym.twin.telemetry.scrape_config import config_yaml, discovered_labels, scrape_job
from sregym.twin.telemetry.tsdb import Matcher
from sregym.twin.telemetry.visibility import ADMIN, labels_visible, tsdb_for

if TYPE_CHECKING:
    from sregym.twin.telemetry.scrape import TargetState, TelemetryScraper
    from sregym.twin.twin import Twin

# Families Prometheus synthesises per target; they have no exporter metadata.
SYNTHETIC = frozenset({"up", "scrape_samples_scraped", "scrape_duration_seconds",
                       "scrape_samples_post_metric_relabeling", "scrape_series_added"})
_FAMILY_SUFFIXES = ("_bucket", "_sum", "_count", "_created", "_total", "_info")
CHUNK_SAMPLES = 120  # Prometheus cuts a head chunk every 120 samples


class StatusError(Exception):
    """A Prometheus API error raised here (errorType, message, HTTP status)."""

    def __init__(self, error_type: str, message: str, code: int) -> None:
        super().__init__(message)
        self.error_type, self.message, self.code = error_type, message, code


def _bad(message: str) -> StatusError:
    return StatusError("bad_data", message, 400)


def _scraper(twin: Twin) -> TelemetryScraper | None:
    return twin.services.scraper


def _states(twin: Twin, user: str) -> list[TargetState]:
    scraper = _scraper(twin)
    if scraper is None:
        return []
    states = [s for s in scraper.targets.values() if user == ADMIN or labels_visible(s.target.labels)]
    return sorted(states, key=lambda s: (scrape_job(s.target).name, s.target.instance))


def _interval(twin: Twin) -> int:
    scraper = _scraper(twin)
    return scraper.interval_ms // 1000 if scraper is not None else 15


def _public(labels: dict[str, str]) -> dict[str, str]:
    return dict(sorted((k, v) for k, v in labels.items() if not k.startswith("__") and v != ""))


# ------------------------------------------------------------------------------ targets
def targets(twin: Twin, user: str, state: str, pool: str) -> dict[str, Any]:
    """`/api/v1/targets`: state is active, dropped, any or empty (any); pool filters by name."""
    state = state.lower()
    show_active = state in ("", "any", "active")
    show_dropped = state in ("", "any", "dropped")
    interval = f"{_interval(twin)}s"
    active: list[dict[str, Any]] = []
    if show_active:
        for st in _states(twin, user):
            job = scrape_job(st.target)
            if pool and job.name != pool:
                continue
            url = job.scrape_url(st.target)
            active.append({
                "discoveredLabels": discovered_labels(st.target, job, interval),
                "labels": _public(st.target.labels),
                "scrapePool": job.name,
                "scrapeUrl": url,
                "globalUrl": url,
                "lastError": "" if st.target.up else f'Get "{url}": context deadline exceeded',
                "lastScrape": rfc3339(st.last_scrape_ms),
                "lastScrapeDuration": st.duration_s if st.target.up else 10.0,
                "health": "up" if st.target.up else "down",
                "scrapeInterval": interval,
                "scrapeTimeout": "10s",
            })
    out: dict[str, Any] = {"activeTargets": active, "droppedTargets": []}
    if show_dropped:
        pools = sorted({scrape_job(s.target).name for s in _states(twin, user)})
        out["droppedTargetCounts"] = {name: 0 for name in pools}
    else:
        out["droppedTargetCounts"] = None
    return out


def scrape_pools(twin: Twin, user: str) -> dict[str, Any]:
    return {"scrapePools": sorted({scrape_job(s.target).name for s in _states(twin, user)})}


def config(twin: Twin, user: str) -> dict[str, Any]:
    return {"yaml": config_yaml([s.target for s in _states(twin, user)], _interval(twin))}


def family_of(name: str, metadata: dict[str, Any]) -> str | None:
    """The metadata family a stored series name belongs to (histogram/summary/counter parts)."""
    if name in metadata:
        return name
    for suffix in _FAMILY_SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in metadata:
            return name[: -len(suffix)]
    return None


def target_metadata(twin: Twin, user: str, match_target: str, metric: str, limit_text: str,
                    parse_selector: Callable[[str], list[Matcher]]) -> list[dict[str, Any]]:
    """`/api/v1/targets/metadata`: the metadata each matching target exposes (`parse_selector`
    is the API's series-selector parser, raising its own bad_data error)."""
    limit = _number(limit_text, "limit must be a number")
    matchers = parse_selector(match_target) if match_target else []
    tsdb = twin.services.tsdb
    if tsdb is None:
        raise StatusError("not_found", "specified metadata not found", 404)
    view = tsdb_for(tsdb, user)
    out: list[dict[str, Any]] = []
    for st in _states(twin, user):
        labels = _public(st.target.labels)
        if not all(m.matches(labels) for m in matchers):
            continue
        names = {s.name for s in view.select([Matcher("job", "=", st.target.job),
                                              Matcher("instance", "=", st.target.instance)])}
        families = sorted({f for n in names if (f := family_of(n, tsdb.metadata)) and f not in SYNTHETIC})
        for family in families:
            if metric and family != metric:
                continue
            if 0 <= limit <= len(out):
                return out
            meta = tsdb.metadata[family]
            out.append({"target": labels, "metric": family, "type": meta.type, "help": meta.help,
                        "unit": meta.unit})
    if not out:
        raise StatusError("not_found", "specified metadata not found", 404)
    return out


def metadata(twin: Twin, user: str, metric: str, limit_text: str, per_metric_text: str) -> dict[str, Any]:
    """`/api/v1/metadata`: type, help and unit of every family the targets expose."""
    limit = _number(limit_text, "limit must be a number")
    per_metric = _number(per_metric_text, "limit_per_metric must be a number")
    tsdb = twin.services.tsdb
    if tsdb is None:
        return {}
    view = tsdb_for(tsdb, user)
    exposed = {f for n in view.label_values("__name__") if (f := family_of(n, tsdb.metadata))}
    data: dict[str, list[dict[str, str]]] = {}
    for name in sorted(exposed - SYNTHETIC):
        if metric and name != metric:
            continue
        if 0 <= limit <= len(data):
            break
        if per_metric == 0:
            continue
        meta = tsdb.metadata[name]
        data[name] = [{"type": meta.type, "help": meta.help, "unit": meta.unit}]
    return data


def _number(text: str, message: str) -> int:
    if not text:
        return -1
    try:
        return int(text)
    except ValueError:
        raise _bad(message) from None


# --------------------------------------------------------------------------------- tsdb
def tsdb_status(twin: Twin, user: str, limit_text: str) -> dict[str, Any]:
    """`/api/v1/status/tsdb`: head statistics and the top-`limit` cardinality tables."""
    limit = 10
    if limit_text:
        try:
            limit = int(limit_text)
        except ValueError:
            limit = 0
        if limit < 1:
            raise _bad("limit must be a positive number")
    tsdb = twin.services.tsdb
    series = list(tsdb_for(tsdb, user).all_series()) if tsdb is not None else []
    by_metric: Counter[str] = Counter()
    by_pair: Counter[str] = Counter()
    values: dict[str, set[str]] = defaultdict(set)
    chunks, min_t, max_t = 0, None, None
    for s in series:
        by_metric[s.name] += 1
        for k, v in s.labels.items():
            by_pair[f"{k}={v}"] += 1
            values[k].add(v)
        if s.timestamps:
            chunks += -(-len(s.timestamps) // CHUNK_SAMPLES)
            min_t = s.timestamps[0] if min_t is None else min(min_t, s.timestamps[0])
            max_t = s.timestamps[-1] if max_t is None else max(max_t, s.timestamps[-1])
    memory = {k: sum(len(v) for v in vs) for k, vs in values.items()}

    def top(counts: dict[str, int]) -> list[dict[str, Any]]:
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        return [{"name": k, "value": v} for k, v in ranked]

    return {
        "headStats": {"numSeries": len(series), "numLabelPairs": len(by_pair), "chunkCount": chunks,
                      "minTime": min_t if min_t is not None else 9223372036854775807,
                      "maxTime": max_t if max_t is not None else -9223372036854775808},
        "seriesCountByMetricName": top(by_metric),
        "labelValueCountByLabelName": top({k: len(v) for k, v in values.items()}),
        "memoryInBytesByLabelName": top(memory),
        "seriesCountByLabelValuePair": top(by_pair),
    }


def walreplay(twin: Twin) -> dict[str, int]:
    """`/api/v1/status/walreplay`: replay finished at start, so current == max."""
    return {"min": 0, "max": 0, "current": 0}


def alertmanagers() -> dict[str, Any]:
    """No Alertmanager runs in the cluster, so Prometheus discovers none."""
    return {"activeAlertmanagers": [], "droppedAlertmanagers": []}


def flags(max_samples: int, timeout_s: float) -> dict[str, str]:
    """`/api/v1/status/flags`: the command line the operator gives Prometheus, plus defaults."""
    return {
        "agent": "false",
        "alertmanager.notification-queue-capacity": "10000",
        "config.file": "/etc/prometheus/config_out/prometheus.env.yaml",
        "enable-feature": "",
        "log.format": "logfmt",
        "log.level": "info",
        "query.lookback-delta": "5m",
        "query.max-concurrency": "20",
        "query.max-samples": str(max_samples),
        "query.timeout": f"{timeout_s:g}s",
        "rules.alert.for-grace-period": "10m",
        "rules.alert.for-outage-tolerance": "1h",
        "rules.alert.resend-delay": "1m",
        "scrape.adjust-timestamps": "true",
        "scrape.discovery-reload-interval": "5s",
        "scrape.timestamp-tolerance": "2ms",
        "storage.agent.path": "data-agent/",
        "storage.remote.flush-deadline": "1m",
        "storage.remote.read-concurrent-limit": "10",
        "storage.remote.read-max-bytes-in-frame": "1048576",
        "storage.remote.read-sample-limit": "50000000",
        "storage.tsdb.allow-overlapping-blocks": "true",
        "storage.tsdb.head-chunks-write-queue-size": "0",
        "storage.tsdb.max-block-chunk-segment-size": "0B",
        "storage.tsdb.max-block-duration": "2h",
        "storage.tsdb.min-block-duration": "2h",
        "storage.tsdb.no-lockfile": "false",
        "storage.tsdb.path": "/prometheus",
        "storage.tsdb.retention.size": "0B",
        "storage.tsdb.retention.time": "15d",
        "storage.tsdb.samples-per-chunk": "120",
        "storage.tsdb.wal-compression": "true",
        "storage.tsdb.wal-segment-size": "0B",
        "web.config.file": "/etc/prometheus/web_config/web-config.yaml",
        "web.console.libraries": "/etc/prometheus/console_libraries",
        "web.console.templates": "/etc/prometheus/consoles",
        "web.cors.origin": ".*",
        "web.enable-admin-api": "false",
        "web.enable-lifecycle": "true",
        "web.enable-remote-write-receiver": "false",
        "web.external-url": "http://kube-prometheus-stack-prometheus.monitoring:9090",
        "web.listen-address": "0.0.0.0:9090",
        "web.max-connections": "512",
        "web.page-title": "Prometheus Time Series Collection and Processing Server",
        "web.read-timeout": "5m",
        "web.route-prefix": "/",
        "web.user-assets": "",
    }


__all__ = ["StatusError", "alertmanagers", "config", "family_of", "flags", "metadata", "scrape_pools",
           "target_metadata", "targets", "tsdb_status", "walreplay"]
