"""Endpoints and EndpointSlices derived from pods, as kube-controller-manager does.

Pod status is set by hand and only the endpoints controller is run, so these tests do not depend
on the scheduler or kubelet.
"""

from __future__ import annotations

from typing import Any

import pytest

from sregym.twin.twin import Twin

NS = "shop"


@pytest.fixture()
def twin() -> Twin:
    t = Twin(seed=5)
    t.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    return t


def sync(twin: Twin) -> None:
    twin.controller("endpoints").reconcile()


def service(twin: Twin, name: str = "web", selector: dict[str, str] | None = None,
            target_port: Any = 8080, **spec: Any) -> None:
    twin.create({"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": name, "namespace": NS, "labels": {"tier": "front"}},
                 "spec": {"selector": selector if selector is not None else {"app": "web"},
                          "ports": [{"name": "http", "port": 80, "targetPort": target_port,
                                     "protocol": "TCP"}], **spec}})


def running_pod(twin: Twin, name: str, ip: str, *, ready: bool = True, labels: dict[str, str] | None = None,
                port_name: str | None = "http", node: str = "kind-worker") -> None:
    port: dict[str, Any] = {"containerPort": 8080}
    if port_name:
        port["name"] = port_name
    created = twin.create({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": labels or {"app": "web"}},
        "spec": {"nodeName": node, "containers": [{"name": "web", "image": "nginx:1.27", "ports": [port]}]}})
    created["status"] = {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                         "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    twin.store.update_status(created)


def set_ready(twin: Twin, name: str, ready: bool) -> None:
    def change(pod: dict[str, Any]) -> None:
        pod["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]

    twin.store.mutate("Pod", NS, name, change, status=True)


def ips(addresses: list[dict[str, Any]] | None) -> list[str]:
    return [a["ip"] for a in addresses or []]


def slices(twin: Twin, service_name: str = "web") -> list[dict[str, Any]]:
    return twin.list("endpointslices", NS, label_selector=f"kubernetes.io/service-name={service_name}")


def test_ready_and_not_ready_addresses(twin: Twin) -> None:
    service(twin)
    running_pod(twin, "web-a", "10.244.1.10")
    running_pod(twin, "web-b", "10.244.2.7")
    running_pod(twin, "web-c", "10.244.3.4", ready=False)
    running_pod(twin, "other", "10.244.3.5", labels={"app": "db"})
    sync(twin)
    ep = twin.get("endpoints", NS, "web")
    assert ep["metadata"]["labels"] == {"tier": "front"}
    [subset] = ep["subsets"]
    assert ips(subset["addresses"]) == ["10.244.1.10", "10.244.2.7"]
    assert ips(subset["notReadyAddresses"]) == ["10.244.3.4"]
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    first = subset["addresses"][0]
    assert first["nodeName"] == "kind-worker"
    assert first["targetRef"]["kind"] == "Pod" and first["targetRef"]["name"] == "web-a"

    [slice_obj] = slices(twin)
    assert slice_obj["metadata"]["name"].startswith("web-") and len(slice_obj["metadata"]["name"]) == 9
    assert slice_obj["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == \
        "endpointslice-controller.k8s.io"
    assert slice_obj["metadata"]["ownerReferences"][0]["kind"] == "Service"
    assert slice_obj["addressType"] == "IPv4"
    conditions = {e["addresses"][0]: e["conditions"] for e in slice_obj["endpoints"]}
    assert conditions["10.244.3.4"] == {"ready": False, "serving": False, "terminating": False}
    assert conditions["10.244.1.10"] == {"ready": True, "serving": True, "terminating": False}

    # Readiness changes move the address between the lists.
    set_ready(twin, "web-a", False)
    set_ready(twin, "web-c", True)
    sync(twin)
    [subset] = twin.get("endpoints", NS, "web")["subsets"]
    assert ips(subset["addresses"]) == ["10.244.2.7", "10.244.3.4"]
    assert ips(subset["notReadyAddresses"]) == ["10.244.1.10"]


def test_wrong_selector_gives_empty_endpoints(twin: Twin) -> None:
    service(twin, selector={"app": "web-v2"})
    running_pod(twin, "web-a", "10.244.1.10")
    sync(twin)
    ep = twin.get("endpoints", NS, "web")
    assert not ep.get("subsets")
    [placeholder] = slices(twin)
    assert placeholder["endpoints"] == []
    # Fixing the selector fills them in.
    twin.store.mutate("Service", NS, "web", lambda s: s["spec"].update(selector={"app": "web"}))
    sync(twin)
    assert ips(twin.get("endpoints", NS, "web")["subsets"][0]["addresses"]) == ["10.244.1.10"]
    assert [e["addresses"][0] for e in slices(twin)[0]["endpoints"]] == ["10.244.1.10"]


def test_named_target_port_leaves_out_pods_without_it(twin: Twin) -> None:
    service(twin, target_port="http")
    running_pod(twin, "web-a", "10.244.1.10")
    running_pod(twin, "web-b", "10.244.1.11", port_name=None)
    sync(twin)
    [subset] = twin.get("endpoints", NS, "web")["subsets"]
    assert ips(subset["addresses"]) == ["10.244.1.10"]
    assert subset["ports"][0]["port"] == 8080


def test_terminating_pod_leaves_addresses(twin: Twin) -> None:
    service(twin)
    running_pod(twin, "web-a", "10.244.1.10")
    running_pod(twin, "web-b", "10.244.1.11")
    twin.delete("pods", NS, "web-b")  # bound to a node: graceful, stays Terminating
    assert twin.get("pods", NS, "web-b")["metadata"].get("deletionTimestamp")
    sync(twin)
    [subset] = twin.get("endpoints", NS, "web")["subsets"]
    assert ips(subset["addresses"]) == ["10.244.1.10"]
    assert "notReadyAddresses" not in subset
    conditions = {e["addresses"][0]: e["conditions"] for e in slices(twin)[0]["endpoints"]}
    assert conditions["10.244.1.11"] == {"ready": False, "serving": True, "terminating": True}


def test_publish_not_ready_addresses(twin: Twin) -> None:
    service(twin, publishNotReadyAddresses=True, clusterIP="None")
    running_pod(twin, "web-a", "10.244.1.10", ready=False)
    sync(twin)
    ep = twin.get("endpoints", NS, "web")
    assert ips(ep["subsets"][0]["addresses"]) == ["10.244.1.10"]
    assert ep["metadata"]["labels"]["service.kubernetes.io/headless"] == ""
    assert slices(twin)[0]["endpoints"][0]["conditions"]["ready"] is True


def test_writes_only_on_change_and_cleanup(twin: Twin) -> None:
    service(twin)
    running_pod(twin, "web-a", "10.244.1.10")
    sync(twin)
    rv = twin.get("endpoints", NS, "web")["metadata"]["resourceVersion"]
    slice_rv = slices(twin)[0]["metadata"]["resourceVersion"]
    for _ in range(3):
        twin.store.mutate("Pod", NS, "web-a", lambda p: p["metadata"].setdefault(
            "annotations", {}).update(touched="yes"))  # an unrelated change wakes the service up
        sync(twin)
    assert twin.get("endpoints", NS, "web")["metadata"]["resourceVersion"] == rv
    assert slices(twin)[0]["metadata"]["resourceVersion"] == slice_rv
    # Someone deletes the Endpoints by hand: the controller puts them back.
    twin.delete("endpoints", NS, "web")
    sync(twin)
    assert ips(twin.get("endpoints", NS, "web")["subsets"][0]["addresses"]) == ["10.244.1.10"]
    # Deleting the Service removes its Endpoints and slices.
    twin.delete("services", NS, "web")
    sync(twin)
    assert twin.try_get("endpoints", NS, "web") is None
    assert slices(twin) == []


def test_selectorless_service_endpoints_left_alone(twin: Twin) -> None:
    twin.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext", "namespace": NS},
                 "spec": {"ports": [{"port": 5432}]}})
    twin.create({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ext", "namespace": NS},
                 "subsets": [{"addresses": [{"ip": "192.168.10.5"}], "ports": [{"port": 5432}]}]})
    sync(twin)
    twin.advance(2)
    assert ips(twin.get("endpoints", NS, "ext")["subsets"][0]["addresses"]) == ["192.168.10.5"]


def test_pod_label_change_updates_endpoints(twin: Twin) -> None:
    service(twin)
    running_pod(twin, "web-a", "10.244.1.10")
    running_pod(twin, "web-b", "10.244.1.11")
    sync(twin)
    twin.store.mutate("Pod", NS, "web-b", lambda p: p["metadata"]["labels"].update(app="quarantine"))
    sync(twin)
    assert ips(twin.get("endpoints", NS, "web")["subsets"][0]["addresses"]) == ["10.244.1.10"]
