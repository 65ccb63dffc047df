"""Time as the machine sees it: the served twin's timestamps read on the client's wall clock.

A real cluster started a few minutes ago shows ages of minutes in every kubectl view (server-side
Table cells and client-side ages alike), timestamps a few seconds before `date`, and answers
"the last hour" by the wall clock from Prometheus, Loki and Jaeger. The `cluster` fixture runs in
manual (stepped) mode, where simulated time stands still between calls and jumps on `advance`,
the case the wall anchor exists for (`sregym/twin/api/wall_time.py`).
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from typing import Any

import pytest

from support.kube import KubeHarness

NS = "hotel-reservation"
# The cluster is minutes old: no age may read in days/years, negative, or unknown.
_BAD_AGE_TOKEN = re.compile(r"<invalid>|-\d+[smhdy]\w*|\d+d(?:\d+h)?|\d+y(?:\d+d)?")
_AGE = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


class _BadAges:
    """Age-like tokens (whitespace/bracket separated) that a minutes-old cluster never shows."""

    @staticmethod
    def findall(text: str) -> list[str]:
        return [t for t in re.split(r"[\s(),]+", text) if _BAD_AGE_TOKEN.fullmatch(t)]


_BAD_AGE = _BadAges()


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _age_s(text: str) -> int:
    match = _AGE.match(text)
    assert match and text, f"not a kubectl age: {text!r}"
    d, h, m, s = (int(g or 0) for g in match.groups())
    return ((d * 24 + h) * 60 + m) * 60 + s


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as resp:
        return json.load(resp)


def _pod(cluster: KubeHarness, prefix: str = "frontend") -> str:
    names = cluster.ok("get", "pods", "-n", NS, "-o", "name").split()
    return next(n.split("/", 1)[1] for n in names if n.split("/", 1)[1].startswith(prefix))


# --------------------------------------------------------------------------- kubectl
@pytest.mark.parametrize("args", [
    ("get", "pods", "-n", NS),
    ("get", "pods", "-n", NS, "-o", "wide"),
    ("get", "deployments", "-n", NS),
    ("get", "replicasets", "-n", NS),
    ("get", "services", "-n", NS),
    ("get", "nodes"),
    ("get", "namespaces"),
    ("get", "events", "-n", NS),
    ("get", "events", "-A"),
    ("events", "-n", NS),
    ("events", "-A"),
    ("get", "leases", "-A"),
    ("get", "endpoints", "-n", NS),
    ("describe", "deployment", "frontend", "-n", NS),
    ("describe", "nodes"),
    ("top", "pods", "-n", NS),
], ids=lambda a: " ".join(a))
def test_ages_read_like_a_young_cluster(cluster: KubeHarness, args: tuple[str, ...]) -> None:
    out = cluster.ok(*args)
    assert out.strip()
    bad = _BAD_AGE.findall(out)
    assert not bad, f"kubectl {' '.join(args)} shows ages {bad}:\n{out[:2000]}"


def test_describe_pod_ages_and_timestamps(cluster: KubeHarness) -> None:
    pod = _pod(cluster)
    out = cluster.ok("describe", "pod", pod, "-n", NS)
    assert not _BAD_AGE.findall(out), out
    start = re.search(r"^Start Time:\s+(.+)$", out, re.M)
    assert start, out
    started = datetime.strptime(start.group(1).strip(), "%a, %d %b %Y %H:%M:%S %z").timestamp()
    assert time.time() - 3600 < started <= time.time() + 1
    events = out.split("\nEvents:", 1)[1]
    ages = re.findall(r"^\s+Normal\s+\S+\s+(\S+)", events, re.M)
    assert ages, events
    assert all(_age_s(a) <= 3600 for a in ages), events


def test_describe_pod_event_ages_agree_with_get_events(cluster: KubeHarness) -> None:
    pod = _pod(cluster, "search")
    described = cluster.ok("describe", "pod", pod, "-n", NS).split("\nEvents:", 1)[1]
    listed = cluster.ok("get", "events", "-n", NS, "--field-selector", f"involvedObject.name={pod}",
                        "--no-headers")
    by_reason_described = {m.group(1): _age_s(m.group(2)) for m in
                           re.finditer(r"^\s+(?:Normal|Warning)\s+(\w+)\s+(\S+?)(?:\s|\()", described, re.M)}
    by_reason_listed = {}
    for line in listed.splitlines():
        cells = line.split()
        by_reason_listed[cells[2]] = _age_s(cells[0])
    common = set(by_reason_described) & set(by_reason_listed)
    assert common, (described, listed)
    for reason in common:
        assert abs(by_reason_described[reason] - by_reason_listed[reason]) <= 60, (reason, described, listed)


@pytest.mark.parametrize("jsonpath", [
    "{.metadata.creationTimestamp}",
    "{.status.startTime}",
    "{.status.conditions[0].lastTransitionTime}",
    "{.status.containerStatuses[0].state.running.startedAt}",
])
def test_pod_timestamps_are_recent_on_the_wall_clock(cluster: KubeHarness, jsonpath: str) -> None:
    pod = _pod(cluster)
    value = cluster.ok("get", "pod", pod, "-n", NS, "-o", f"jsonpath={jsonpath}")
    assert time.time() - 3600 < _stamp(value) <= time.time() + 1, value


def test_new_object_created_now_and_aged_after_advance(cluster: KubeHarness) -> None:
    cluster.ok("create", "configmap", "time-probe", "-n", "default", "--from-literal=a=b", user="admin")
    try:
        created = _stamp(cluster.ok("get", "configmap", "time-probe", "-n", "default", "-o",
                                    "jsonpath={.metadata.creationTimestamp}"))
        assert abs(time.time() - created) <= 5
        yaml_out = cluster.ok("get", "configmap", "time-probe", "-n", "default", "-o", "yaml")
        assert re.search(r"creationTimestamp: \"\d{4}-", yaml_out), yaml_out
        cluster.advance(600)  # stepped: simulated time runs ten minutes ahead of the wall clock
        row = cluster.ok("get", "configmap", "time-probe", "-n", "default", "--no-headers").split()
        assert row[-1] == "10m", row
        later = _stamp(cluster.ok("get", "configmap", "time-probe", "-n", "default", "-o",
                                  "jsonpath={.metadata.creationTimestamp}"))
        assert abs((time.time() - later) - 600) <= 5
        out = cluster.ok("get", "pods", "-n", NS)
        assert not _BAD_AGE.findall(out), out
    finally:
        cluster.kubectl("delete", "configmap", "time-probe", "-n", "default", user="admin")


def test_watch_events_carry_wall_timestamps(cluster: KubeHarness) -> None:
    pod = _pod(cluster)
    result = cluster.kubectl("get", "pod", pod, "-n", NS, "-w", "--request-timeout=2s", "-o",
                             "jsonpath={.metadata.creationTimestamp}{\"\\n\"}", timeout=30)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert lines, result.stderr
    assert all(time.time() - 7200 < _stamp(line) <= time.time() + 1 for line in lines), lines
    table = cluster.kubectl("get", "pods", "-n", NS, "-w", "--request-timeout=2s", timeout=30)
    assert table.stdout.startswith("NAME"), table.stderr
    assert not _BAD_AGE.findall(table.stdout), table.stdout


def test_logs_timestamps_and_since_time(cluster: KubeHarness) -> None:
    pod = _pod(cluster)
    stamped = cluster.ok("logs", pod, "-n", NS, "--timestamps", "--tail=5").splitlines()
    assert stamped
    for line in stamped:
        at = _stamp(re.sub(r"(\.\d{6})\d+", r"\1", line.split(" ", 1)[0]))
        assert time.time() - 3600 < at <= time.time() + 1, line
    # The program's own log times (zerolog's leading RFC 3339) read on the same clock.
    printed = [line.split(" ", 1)[0] for line in cluster.ok("logs", pod, "-n", NS, "--tail=20").splitlines()]
    printed = [p for p in printed if re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:]+Z", p)]
    assert printed and all(time.time() - 3600 < _stamp(p) <= time.time() + 1 for p in printed), printed
    # The served clock stands still while the wall clock runs, so the wall anchor may move by a
    # whole second between calls on a loaded machine: the pair is taken again until a listing
    # after the `--since-time` call reads the same as the one before it.
    for _ in range(5):
        everything = cluster.ok("logs", pod, "-n", NS, "--timestamps").splitlines()
        stamps = [_stamp(re.sub(r"(\.\d{6})\d+", r"\1", line.split(" ", 1)[0])) for line in everything]
        # --since-time at a second that some lines precede: exactly the lines from that second on.
        cut = next(int(t) + 1 for t in stamps if int(t) + 1 <= stamps[-1])
        since = datetime.fromtimestamp(cut, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        by_time = cluster.ok("logs", pod, "-n", NS, f"--since-time={since}", "--timestamps").splitlines()
        if cluster.ok("logs", pod, "-n", NS, "--timestamps").splitlines() == everything:
            break
    assert by_time == [line for line, t in zip(everything, stamps, strict=True) if t >= cut]
    assert 0 < len(by_time) < len(everything)


def test_metrics_api_timestamp_is_now(cluster: KubeHarness) -> None:
    doc = json.loads(cluster.ok("get", "--raw", f"/apis/metrics.k8s.io/v1beta1/namespaces/{NS}/pods"))
    stamps = [_stamp(item["timestamp"]) for item in doc["items"]]
    assert stamps and all(time.time() - 120 < s <= time.time() + 1 for s in stamps)


# ----------------------------------------------------------------- observability APIs
def test_prometheus_query_range_last_hour_by_wall_clock(cluster: KubeHarness) -> None:
    now = time.time()
    params = urllib.parse.urlencode({"query": "up", "start": f"{now - 3600:.3f}", "end": f"{now:.3f}",
                                     "step": "60"})
    doc = _get_json(cluster.observability["prometheus"] + "/api/v1/query_range?" + params)
    assert doc["status"] == "success"
    samples = [v[0] for series in doc["data"]["result"] for v in series["values"]]
    assert samples, doc
    assert all(now - 3601 <= t <= now + 1 for t in samples)
    rfc = urllib.parse.urlencode({"query": "up", "time": datetime.fromtimestamp(now, tz=UTC).isoformat()})
    instant = _get_json(cluster.observability["prometheus"] + "/api/v1/query?" + rfc)
    assert instant["data"]["result"] and abs(instant["data"]["result"][0]["value"][0] - now) <= 1


def test_prometheus_default_time_is_now(cluster: KubeHarness) -> None:
    doc = _get_json(cluster.observability["prometheus"] + "/api/v1/query?query=up")
    assert abs(doc["data"]["result"][0]["value"][0] - time.time()) <= 5


def test_loki_query_range_defaults_to_the_last_hour(cluster: KubeHarness) -> None:
    params = urllib.parse.urlencode({"query": f'{{namespace="{NS}"}}', "limit": "20"})
    doc = _get_json(cluster.observability["loki"] + "/loki/api/v1/query_range?" + params)
    lines = [v for stream in doc["data"]["result"] for v in stream["values"]]
    assert lines, doc
    now_ns = time.time() * 1e9
    assert all(now_ns - 3600e9 <= int(ts) <= now_ns + 1e9 for ts, _line in lines)
    days = {m for _ts, line in lines for m in re.findall(r"(\d{4}-\d\d-\d\d)T", line)}
    assert days and days <= {time.strftime("%Y-%m-%d", time.gmtime(now_ns / 1e9 - 3600)),
                             time.strftime("%Y-%m-%d", time.gmtime())}, days
    for start, end in ((str(int(now_ns - 3600e9)), str(int(now_ns))),  # nanoseconds
                       (f"{now_ns / 1e9 - 3600:.3f}", f"{now_ns / 1e9:.3f}"),  # float seconds
                       (datetime.fromtimestamp(now_ns / 1e9 - 3600, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                        datetime.fromtimestamp(now_ns / 1e9 + 1, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))):
        wall = urllib.parse.urlencode({"query": f'{{namespace="{NS}"}}', "limit": "5", "start": start,
                                       "end": end})
        assert _get_json(cluster.observability["loki"] + "/loki/api/v1/query_range?" + wall)["data"]["result"]


def test_jaeger_traces_and_dependencies_by_wall_clock(cluster: KubeHarness) -> None:
    now_us = int(time.time() * 1e6)
    params = urllib.parse.urlencode({"service": "frontend", "start": now_us - 3600 * 10**6,
                                     "end": now_us, "limit": "5"})
    doc = _get_json(cluster.observability["jaeger"] + "/api/traces?" + params)
    assert doc["data"], doc
    starts = [s["startTime"] for trace in doc["data"] for s in trace["spans"]]
    assert all(now_us - 3600 * 10**6 <= t <= now_us + 10**6 for t in starts)
    deps = _get_json(cluster.observability["jaeger"] + f"/api/dependencies?endTs={now_us // 1000}")
    assert deps["data"], deps
