"""What a fresh twin holds beyond nodes and add-ons (twin/cluster_defaults.py), the CSR cleaner,
the events.k8s.io conversion and the HPA's metrics provider."""

from __future__ import annotations

from sregym.twin import Twin
from sregym.twin.machinery.event_conversion import core_to_events_v1, events_v1_to_core


def _identity(twin: Twin) -> list[tuple[str, str, str]]:
    return [(n["status"]["nodeInfo"]["machineID"], n["status"]["nodeInfo"]["systemUUID"],
             n["status"]["nodeInfo"]["bootID"]) for n in twin.list("nodes", None)]


def test_node_identity_is_seeded_and_kind_shaped() -> None:
    first, again, other = _identity(Twin(seed=5)), _identity(Twin(seed=5)), _identity(Twin(seed=6))
    assert first == again and first != other
    assert len({m for m, _, _ in first}) == len(first)  # a machine-id per node container
    assert len({(s, b) for _, s, b in first}) == 1  # one host kernel


def test_defaults_draw_no_uid_from_the_shared_stream() -> None:
    # Objects created after bootstrap keep the uids they had before the defaults existed.
    twin = Twin(seed=5)
    uids = {o["metadata"]["uid"] for o in twin.list("flowschemas", None)}
    assert len(uids) == 13
    cm = twin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}})
    assert cm["metadata"]["uid"] not in uids


def test_csr_cleaner_removes_issued_requests_after_an_hour() -> None:
    twin = Twin(seed=5)
    assert len(twin.list("certificatesigningrequests", None)) == 4
    twin.advance(1800)
    assert len(twin.list("certificatesigningrequests", None)) == 4
    twin.advance(3600)
    assert twin.list("certificatesigningrequests", None) == []


def test_events_v1_conversion_round_trips() -> None:
    core = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "web"}, "reason": "Started", "message": "hi",
            "source": {"component": "kubelet"}, "count": 3, "type": "Normal",
            "firstTimestamp": "2026-01-05T09:00:00Z", "lastTimestamp": "2026-01-05T09:01:00Z"}
    served = core_to_events_v1(core)
    assert served["apiVersion"] == "events.k8s.io/v1"
    assert (served["regarding"], served["note"], served["deprecatedCount"]) == (
        {"kind": "Pod", "name": "web"}, "hi", 3)
    back = events_v1_to_core(served)
    back.pop("eventTime")
    assert back == core


def test_events_are_listed_in_both_groups() -> None:
    twin = Twin(seed=5)
    core = twin.list("events", "kube-system")
    grouped = twin.store.kinds.by_resource("events.k8s.io", "v1", "events")
    assert grouped.key == ("", "Event") and len(list(twin.store.scan(grouped, "kube-system"))) == len(core)


def test_hpa_metrics_provider_reads_what_kubectl_top_shows() -> None:
    twin = Twin(seed=5)
    twin.advance(60)
    pod = twin.list("pods", "kube-system")[0]
    usage = twin.services.metrics.pod_usage("kube-system", pod["metadata"]["name"])
    assert usage is not None and usage[1] > 0
    assert twin.services.metrics.pod_usage("kube-system", "no-such-pod") is None
