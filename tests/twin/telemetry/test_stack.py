"""The monitoring stack runs as pods and the scrape targets name them (telemetry.stack)."""

from __future__ import annotations

from sregym.twin import Twin
from sregym.twin.telemetry import stack
from sregym.twin.telemetry.exposition import MONITORING_NAMESPACE
from sregym.twin.telemetry.kube_state_metrics import POD_NAME as FIXED_KSM_POD
from sregym.twin.telemetry.kube_state_metrics import live_ksm_target
from sregym.twin.telemetry.scrape import scraper_of


def _pods(twin: Twin) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in twin.list("Pod") if p["metadata"]["namespace"] == MONITORING_NAMESPACE}


def test_fresh_twin_runs_the_stack_and_targets_name_its_pods() -> None:
    twin = Twin(seed=3)
    twin.advance(30)
    pods = _pods(twin)
    assert all(p["status"]["phase"] == "Running" for p in pods.values())
    assert "prometheus-kube-prometheus-stack-prometheus-0" in pods and "loki-0" in pods
    targets = [s.target for s in scraper_of(twin).targets.values()]
    by_job = {t.job: t for t in targets}
    ksm = by_job["kube-state-metrics"]
    assert ksm.labels["pod"] in pods
    assert ksm.instance == f"{pods[ksm.labels['pod']]['status']['podIP']}:8080"
    exporters = [t for t in targets if t.job == "node-exporter"]
    assert len(exporters) == 4 and all(t.labels["pod"] in pods for t in exporters)


def test_a_replaced_ksm_pod_becomes_the_target() -> None:
    twin = Twin(seed=3)
    twin.advance(30)
    old = live_ksm_target(twin)
    assert old is not None
    twin.delete("Pod", MONITORING_NAMESPACE, old.labels["pod"])
    twin.advance(60)
    new = live_ksm_target(twin)
    assert new is not None and new.labels["pod"] != old.labels["pod"]
    assert scraper_of(twin).targets[new.id].target.labels["pod"] == new.labels["pod"]


def test_a_twin_without_the_stack_keeps_the_fixed_target() -> None:
    twin = Twin(seed=3, bootstrap=False)
    assert not stack.installed(twin)
    target = live_ksm_target(twin)
    assert target is not None and target.labels["pod"] == FIXED_KSM_POD


def test_stack_names_match_the_charts() -> None:
    names = {(o["kind"], o["metadata"]["name"]) for o in stack.stack_objects()}
    assert ("DaemonSet", "kube-prometheus-stack-prometheus-node-exporter") in names
    assert ("Deployment", "kube-prometheus-stack-kube-state-metrics") in names
    assert ("StatefulSet", "prometheus-kube-prometheus-stack-prometheus") in names
    text = repr(stack.stack_objects()).lower()
    assert not any(word in text for word in ("sregym", "benchmark", "chaos", "fault", "inject"))
