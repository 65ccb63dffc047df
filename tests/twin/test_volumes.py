"""PVC/PV binding, WaitForFirstConsumer provisioning, attach/detach and Multi-Attach errors."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.twin.twin import Twin
from sregym.twin.workloads.volumes import ANN_SELECTED_NODE, attach_status, attachment_name


def pvc(name: str, *, size: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",),
        storage_class: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def pod(name: str, claim: str, *, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "app", "image": "nginx:1.27",
                        "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
        "terminationGracePeriodSeconds": 0,
    }
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def static_pv(name: str, size: str, *, storage_class: str = "", node: str | None = None,
              modes: tuple[str, ...] = ("ReadWriteOnce",)) -> dict[str, Any]:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": list(modes),
                            "persistentVolumeReclaimPolicy": "Retain",
                            "storageClassName": storage_class, "hostPath": {"path": f"/mnt/{name}"}}
    if node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}


def events(twin: Twin, reason: str, name: str | None = None) -> list[dict[str, Any]]:
    return twin.event_list("default", reason=reason, involved_name=name)


def pod_message(twin: Twin, name: str) -> str:
    p = twin.get("pods", "default", name)
    return next(c for c in p["status"]["conditions"] if c["type"] == "PodScheduled")["message"]


@pytest.fixture
def twin() -> Twin:
    return Twin(seed=5)


def test_wait_for_first_consumer_then_dynamic_provisioning(twin: Twin) -> None:
    created = twin.create(pvc("data"))
    twin.advance(20)
    claim = twin.get("pvc", "default", "data")
    assert claim["status"]["phase"] == "Pending"
    wait = events(twin, "WaitForFirstConsumer", "data")
    assert wait[0]["message"] == "waiting for first consumer to be created before binding"
    assert wait[0]["count"] >= 2  # re-emitted on every resync
    assert twin.list("pv") == []

    twin.create(pod("app", "data"))
    assert twin.settle(10, until=lambda: twin.get("pods", "default", "app")["spec"].get("nodeName"))
    node = twin.get("pods", "default", "app")["spec"]["nodeName"]
    claim = twin.get("pvc", "default", "data")
    pv_name = f"pvc-{created['metadata']['uid']}"
    assert claim["metadata"]["annotations"][ANN_SELECTED_NODE] == node
    assert (claim["status"]["phase"], claim["spec"]["volumeName"]) == ("Bound", pv_name)
    assert claim["status"]["capacity"] == {"storage": "1Gi"}
    pv = twin.get("pv", None, pv_name)
    assert pv["status"]["phase"] == "Bound"
    assert pv["spec"]["claimRef"]["uid"] == created["metadata"]["uid"]
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    assert events(twin, "ProvisioningSucceeded", "data")[0]["message"] == \
        f"Successfully provisioned volume {pv_name}"
    assert events(twin, "ExternalProvisioning", "data")
    # The volume is attached to the pod's node like a CSI block device.
    twin.advance(1)
    assert attach_status(twin, twin.get("pods", "default", "app")) == (True, None)
    va = twin.get("volumeattachments", None, attachment_name(pv, node))
    assert va["spec"] == {"attacher": "rancher.io/local-path", "nodeName": node,
                          "source": {"persistentVolumeName": pv_name}}
    attached = twin.get("nodes", None, node)["status"]["volumesAttached"]
    assert [a["name"] for a in attached] == [f"kubernetes.io/csi/rancher.io/local-path^{pv_name}"]
    assert events(twin, "SuccessfulAttachVolume", "app")[0]["message"] == \
        f'AttachVolume.Attach succeeded for volume "{pv_name}"'


def test_statefulset_style_pods_each_get_their_own_volume(twin: Twin) -> None:
    for i in range(3):
        twin.create(pvc(f"data-web-{i}"))
        twin.create(pod(f"web-{i}", f"data-web-{i}"))
    twin.advance(6)
    nodes = {twin.get("pods", "default", f"web-{i}")["spec"].get("nodeName") for i in range(3)}
    assert nodes <= {"kind-worker", "kind-worker2", "kind-worker3"}
    volumes = {twin.get("pvc", "default", f"data-web-{i}")["spec"]["volumeName"] for i in range(3)}
    assert len(volumes) == 3
    for i in range(3):
        assert attach_status(twin, twin.get("pods", "default", f"web-{i}")) == (True, None)


def test_rwo_volume_shared_across_nodes_gives_multi_attach_error(twin: Twin) -> None:
    twin.create(pvc("shared"))
    twin.create(pod("web-0", "shared", node="kind-worker"))
    twin.advance(5)
    twin.create(pod("web-1", "shared", node="kind-worker2"))
    twin.advance(5)
    first, second = (twin.get("pods", "default", n) for n in ("web-0", "web-1"))
    assert second["spec"]["nodeName"] == "kind-worker2"  # RWO does not stop scheduling
    pv_name = twin.get("pvc", "default", "shared")["spec"]["volumeName"]
    failed = events(twin, "FailedAttachVolume", "web-1")
    assert len(failed) == 1 and failed[0]["type"] == "Warning"
    assert failed[0]["message"] == f'Multi-Attach error for volume "{pv_name}" Volume is already used by pod(s) web-0'
    assert failed[0]["source"]["component"] == "attachdetach-controller"
    assert failed[0]["count"] == 1  # reported once per volume and node
    assert attach_status(twin, first) == (True, None)
    ok, reason = attach_status(twin, second)
    assert not ok and "kind-worker2" in (reason or "")
    # Once the holder is gone the volume detaches and follows the waiting pod.
    twin.delete("pods", "default", "web-0", grace_period=0)
    twin.advance(2)
    assert attach_status(twin, twin.get("pods", "default", "web-1")) == (True, None)
    assert "volumesAttached" not in twin.get("nodes", None, "kind-worker")["status"]


def test_rwx_volume_attaches_to_several_nodes(twin: Twin) -> None:
    twin.create(pvc("files", modes=("ReadWriteMany",)))
    twin.create(pod("a", "files", node="kind-worker"))
    twin.create(pod("b", "files", node="kind-worker3"))
    twin.advance(6)
    assert not events(twin, "FailedAttachVolume")
    for name in ("a", "b"):
        assert attach_status(twin, twin.get("pods", "default", name)) == (True, None)


def test_static_binding_picks_smallest_fitting_volume(twin: Twin) -> None:
    twin.create(static_pv("pv-big", "10Gi"))
    twin.create(static_pv("pv-small", "2Gi"))
    twin.create(static_pv("pv-tiny", "500Mi"))
    twin.create(pvc("claim", size="1Gi", storage_class=""))
    twin.advance(2)
    claim = twin.get("pvc", "default", "claim")
    assert (claim["status"]["phase"], claim["spec"]["volumeName"]) == ("Bound", "pv-small")
    assert claim["status"]["capacity"] == {"storage": "2Gi"}
    assert twin.get("pv", None, "pv-small")["status"]["phase"] == "Bound"
    assert twin.get("pv", None, "pv-big")["status"]["phase"] == "Available"
    # A hostPath volume needs no attachment.
    twin.create(pod("user", "claim"))
    twin.advance(2)
    assert attach_status(twin, twin.get("pods", "default", "user")) == (True, None)
    assert twin.list("volumeattachments") == []


def test_unbound_and_missing_claims_block_scheduling(twin: Twin) -> None:
    twin.create(pvc("nothing-fits", size="5Gi", storage_class=""))
    twin.create(pod("needs-missing", "no-such-claim"))
    twin.create(pod("needs-unbound", "nothing-fits"))
    twin.advance(16)
    assert pod_message(twin, "needs-missing") == (
        '0/4 nodes are available: persistentvolumeclaim "no-such-claim" not found. '
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")
    assert pod_message(twin, "needs-unbound") == (
        "0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")
    binding = events(twin, "FailedBinding", "nothing-fits")
    assert binding[0]["message"] == "no persistent volumes available for this claim and no storage class is set"
    assert binding[0]["count"] >= 2
    # Creating a fitting volume unblocks both the claim and the pod.
    twin.create(static_pv("pv-5", "5Gi"))
    twin.advance(12)
    assert twin.get("pods", "default", "needs-unbound")["spec"].get("nodeName")


def test_volume_node_affinity_conflict(twin: Twin) -> None:
    twin.create(static_pv("local-3", "1Gi", node="kind-worker3"))
    twin.create(pvc("local", storage_class=""))
    twin.advance(2)
    twin.create(pod("elsewhere", "local", node="kind-worker"))
    twin.create(pod("follows", "local"))
    twin.advance(2)
    assert twin.get("pods", "default", "follows")["spec"]["nodeName"] == "kind-worker3"
    assert pod_message(twin, "elsewhere") == (
        "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
        "1 node(s) had volume node affinity conflict, 2 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")


def test_claim_in_use_is_protected_then_volume_reclaimed(twin: Twin) -> None:
    created = twin.create(pvc("precious"))
    assert "kubernetes.io/pvc-protection" in created["metadata"]["finalizers"]
    twin.create(pod("holder", "precious"))
    twin.advance(5)
    pv_name = twin.get("pvc", "default", "precious")["spec"]["volumeName"]
    twin.delete("pvc", "default", "precious")
    twin.advance(3)
    assert twin.get("pvc", "default", "precious")["metadata"].get("deletionTimestamp")
    twin.delete("pods", "default", "holder", grace_period=0)
    twin.advance(3)
    assert twin.try_get("pvc", "default", "precious") is None
    # Reclaim policy Delete: the released volume goes too, and the attachment with it.
    assert twin.try_get("pv", None, pv_name) is None
    assert twin.list("volumeattachments") == []


def test_storage_class_without_provisioner_and_missing_class(twin: Twin) -> None:
    twin.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "manual"},
                 "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "Immediate"})
    twin.create(pvc("manual-claim", storage_class="manual"))
    twin.create(pvc("ghost-claim", storage_class="fast"))
    twin.advance(2)
    assert events(twin, "ProvisioningFailed", "manual-claim")[0]["message"] == \
        "no volume plugin matched name: kubernetes.io/no-provisioner"
    assert events(twin, "ProvisioningFailed", "ghost-claim")[0]["message"] == \
        'storageclass.storage.k8s.io "fast" not found'
