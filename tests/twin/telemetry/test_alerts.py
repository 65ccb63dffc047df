"""Alerting rules on the simulated clock: the state machine on scripted series, templating, the
ALERTS series, the default rule files (promtool), and a real CrashLoop scenario."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from sregym.twin import Twin
from sregym.twin.telemetry.alert_template import expand, go_float, humanize
from sregym.twin.telemetry.alerts import (
    RuleFileError,
    RuleManager,
    configure_rules,
    default_rule_files,
    parse_rule_file,
    rule_manager,
)
from sregym.twin.telemetry.tsdb import TSDB, Matcher, is_stale

RULES = """
groups:
  - name: test
    interval: 30s
    rules:
      - alert: HighValue
        expr: my_gauge > 5
        for: 1m
        labels:
          severity: critical
          team: '{{ $labels.pod }}-owners'
        annotations:
          summary: 'Pod {{ $labels.namespace }}/{{ $labels.pod }} is at {{ $value }} ({{ $value | humanize }})'
      - alert: Sticky
        expr: my_gauge > 5
        keep_firing_for: 2m
      - record: namespace:my_gauge:sum
        expr: sum by (namespace) (my_gauge)
"""

T0 = 1_767_603_600_000  # an interval-aligned epoch ms (2026-01-05 09:00:00Z)


class Harness:
    """A rule manager over a TSDB we fill ourselves (no scraper, no controllers)."""

    def __init__(self) -> None:
        self.twin = Twin(seed=3, bootstrap=False)
        self.tsdb = TSDB()
        self.twin.services.tsdb = self.tsdb
        self.manager = RuleManager(self.twin, parse_rule_file(RULES, "test.yaml"))

    def sample(self, t_ms: int, value: float | None, pod: str = "web-1") -> None:
        labels = {"__name__": "my_gauge", "namespace": "shop", "pod": pod, "job": "app"}
        if value is None:
            self.tsdb.mark_stale(labels, t_ms)
        else:
            self.tsdb.append(labels, t_ms, value)

    def run(self, t_ms: int) -> None:
        self.manager.tick(t_ms)

    def states(self, name: str) -> list[str]:
        rule = next(r for g in self.manager.groups for r in g.rules if r.name == name)
        return [a.state for a in rule.active()]  # type: ignore[attr-defined]


def test_pending_then_firing_then_resolved_on_scripted_series() -> None:
    h = Harness()
    h.sample(T0, 1)
    h.run(T0)
    assert h.manager.alerts() == []
    h.sample(T0 + 15_000, 9)
    h.run(T0 + 30_000)
    assert h.states("HighValue") == ["pending"]
    alert = h.manager.alerts("pending")[0]
    assert alert.active_at_ms == T0 + 30_000
    h.sample(T0 + 45_000, 9)
    h.run(T0 + 60_000)
    assert h.states("HighValue") == ["pending"]  # active 30 s < for: 1m
    h.sample(T0 + 75_000, 9)
    h.run(T0 + 90_000)
    assert h.states("HighValue") == ["firing"]  # active 60 s >= 1m
    h.sample(T0 + 105_000, 2)
    h.run(T0 + 120_000)
    assert h.states("HighValue") == []  # resolved: no longer active
    assert h.states("Sticky") == ["firing"]  # keep_firing_for: 2m holds it


def test_pending_alert_that_disappears_is_dropped_without_firing() -> None:
    h = Harness()
    h.sample(T0, 9)
    h.run(T0)
    assert h.states("HighValue") == ["pending"]
    h.sample(T0 + 15_000, 1)
    h.run(T0 + 30_000)
    assert h.states("HighValue") == []
    h.sample(T0 + 45_000, 9)
    h.run(T0 + 60_000)
    assert h.manager.alerts("pending")[0].active_at_ms == T0 + 60_000  # a fresh activation


def test_keep_firing_for_expires() -> None:
    h = Harness()
    for i in range(4):
        h.sample(T0 + i * 15_000, 9)
    h.run(T0)
    assert h.states("Sticky") == ["firing"]  # for: 0 fires at once
    h.sample(T0 + 60_000, 1)
    h.run(T0 + 60_000)
    h.run(T0 + 120_000)
    assert h.states("Sticky") == ["firing"]  # 60 s < keep_firing_for 2m
    sticky = next(a for a in h.manager.alerts() if a.labels["alertname"] == "Sticky")
    assert sticky.keep_firing_since_ms == T0 + 60_000
    h.run(T0 + 180_000)
    assert h.states("Sticky") == []


def test_labels_annotations_and_alerts_series() -> None:
    h = Harness()
    h.sample(T0, 7.5)
    h.run(T0)
    alert = h.manager.alerts()[0]
    assert alert.labels == {"alertname": "HighValue", "job": "app", "namespace": "shop", "pod": "web-1",
                            "severity": "critical", "team": "web-1-owners"}
    assert alert.annotations["summary"] == "Pod shop/web-1 is at 7.5 (7.5)"
    api = h.manager.api_alerts(lambda _l: True)
    first = next(a for a in api if a["labels"]["alertname"] == "HighValue")
    assert first["state"] == "pending" and first["value"] == "7.5e+00"
    assert first["activeAt"] == "2026-01-05T09:00:00Z"
    alerts = h.tsdb.select([Matcher("__name__", "=", "ALERTS"), Matcher("alertname", "=", "HighValue")])
    assert len(alerts) == 1 and alerts[0].labels["alertstate"] == "pending"
    for_state = h.tsdb.select([Matcher("__name__", "=", "ALERTS_FOR_STATE"), Matcher("alertname", "=", "HighValue")])
    assert for_state[0].values[-1] == T0 / 1000
    recorded = h.tsdb.select([Matcher("__name__", "=", "namespace:my_gauge:sum")])
    assert recorded[0].labels == {"__name__": "namespace:my_gauge:sum", "namespace": "shop"}
    assert recorded[0].values == [7.5]
    # Once the alert resolves its ALERTS series goes stale.
    h.sample(T0 + 15_000, 1)
    h.run(T0 + 30_000)
    pending = h.tsdb.select([Matcher("__name__", "=", "ALERTS"), Matcher("alertname", "=", "HighValue")])
    assert is_stale(pending[0].values[-1])


def test_rules_api_shape() -> None:
    h = Harness()
    h.sample(T0, 9)
    h.run(T0)
    groups = h.manager.api_rules(lambda _l: True)
    assert [g["name"] for g in groups] == ["test"]
    group = groups[0]
    assert group["file"] == "test.yaml" and group["interval"] == 30
    high = group["rules"][0]
    assert high["type"] == "alerting" and high["state"] == "pending" and high["duration"] == 60
    assert high["health"] == "ok" and high["query"] == "my_gauge > 5"
    assert high["lastEvaluation"] == "2026-01-05T09:00:00Z"
    record = group["rules"][2]
    assert record["type"] == "recording" and "state" not in record
    only_record = h.manager.api_rules(lambda _l: True, kind="record")
    assert [r["name"] for r in only_record[0]["rules"]] == ["namespace:my_gauge:sum"]
    # The agent view hides alerts whose labels it may not see.
    hidden = h.manager.api_alerts(lambda labels: labels.get("namespace") != "shop")
    assert hidden == []


def test_broken_rule_reports_error_and_others_still_run() -> None:
    h = Harness()
    h.manager.load_text("groups: [{name: bad, rules: [{alert: Bad, expr: 'sum(('}]}]", "bad.yaml")
    h.sample(T0, 9)
    h.run(T0)
    bad = h.manager.api_rules(lambda _l: True, group_names=["bad"])[0]["rules"][0]
    assert bad["health"] == "err" and bad["lastError"]
    assert h.states("HighValue") == ["pending"]


def test_rule_file_validation() -> None:
    with pytest.raises(RuleFileError):
        parse_rule_file("groups: [{name: g, rules: [{expr: up}]}]", "x.yaml")
    with pytest.raises(RuleFileError):
        parse_rule_file("groups: [{name: g, rules: [{alert: A, expr: up, for: 5 minutes}]}]", "x.yaml")


def test_template_functions() -> None:
    assert go_float(1e6) == "1e+06" and go_float(0.25) == "0.25" and go_float(3.0) == "3"
    assert humanize(1234567) == "1.235M" and humanize(0.005) == "5m"
    assert expand("{{ $value | humanizePercentage }}", {}, 0.256) == "25.6%"
    assert expand("{{ humanizeDuration $value }}", {}, 3725) == "1h 2m 5s"
    assert expand('{{ printf "%.1f" $value }}/{{ .Labels.pod }}', {"pod": "p"}, 2.25) == "2.2/p"
    assert expand("{{ if gt $value 1.0 }}high{{ else }}low{{ end }}", {}, 0.5) == "low"
    assert expand("{{ $nope }}", {}, 1).startswith("<error expanding template")


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) missing")
def test_default_rules_pass_promtool() -> None:
    files = [str(p) for p in default_rule_files()]
    assert len(files) >= 3
    result = subprocess.run(["promtool", "check", "rules", *files], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    names = {r.name for p in default_rule_files() for g in parse_rule_file(p.read_text(), str(p)) for r in g.rules}
    for required in ("KubePodNotReady", "KubePodCrashLooping", "KubeDeploymentReplicasMismatch",
                     "KubeContainerWaiting", "PodSchedulingFailure", "ContainerCPUThrottling",
                     "ContainerOOMKilled", "HighRequestErrorRate", "HighRequestLatency", "MessageConsumerLag",
                     "NodeDiskErrors", "NodeFilesystemAlmostFull", "NodeConntrackFull", "NodeClockSkew",
                     "KubeJobFailed", "KubeJobNotCompleted", "CoreDNSDown"):
        assert required in names


CRASHY = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: crashy, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: crashy}}
  template:
    metadata: {labels: {app: crashy}}
    spec:
      containers:
      - name: main
        image: busybox:1.36
        command: ["sh", "-c", "echo starting; exit 1"]
"""


def _crash_alerts(twin: Twin) -> list[tuple[str, str]]:
    return [(a.state, a.labels.get("pod", "")) for a in rule_manager(twin).alerts()
            if a.labels["alertname"] == "KubePodCrashLooping"]


def test_crashlooping_pod_goes_pending_firing_and_resolves_after_fix() -> None:
    twin = Twin(seed=11)
    configure_rules(twin)
    twin.apply(CRASHY)
    seen: list[str] = []
    for _ in range(20):
        twin.advance(30)
        states = [s for s, _pod in _crash_alerts(twin)]
        seen.extend(s for s in states if not seen or seen[-1] != s)
        if "firing" in states:
            break
    assert seen[:2] == ["pending", "firing"], seen
    (_state, pod), = _crash_alerts(twin)
    assert pod.startswith("crashy-")
    alert = rule_manager(twin).alerts("firing")[0]
    assert alert.labels["namespace"] == "default" and alert.labels["container"] == "main"
    assert alert.labels["severity"] == "warning"
    assert 'reason: "CrashLoopBackOff"' in alert.annotations["description"]
    # The fix: a command that keeps running. The rollout replaces the pod and the alert resolves.
    twin.patch("Deployment", "default", "crashy",
               {"spec": {"template": {"spec": {"containers": [
                   {"name": "main", "command": ["sh", "-c", "echo starting; sleep 100000"]}]}}}})
    for _ in range(30):
        twin.advance(30)
        if not _crash_alerts(twin):
            break
    assert _crash_alerts(twin) == []
