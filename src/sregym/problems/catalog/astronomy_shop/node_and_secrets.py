"""Astronomy Shop problems in what a workload is given rather than what it runs: the credentials
it reads from a Secret, and the resources its container may use.

- product-catalog keeps its pre-rotation PostgreSQL password (SREGym
  `secret_rotation_stale_env_credentials_astronomy_shop`; Hotel Reservation's
  `stale-credentials-after-rotation` is the MongoDB equivalent);
- postgresql's container limits are too small for the server (ITBench 46);
- a worker's kubelet evicts under a `nodefs.available` threshold above the node's free disk
  (SREGym `kubelet_eviction_threshold_misconfig`): the node's stored kubelet configuration,
  edited and loaded by a kubelet restart (`twin/node/kubelet_config.py`).
"""

from __future__ import annotations

import base64
from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.faults.kubelet_config import set_threshold_script
from sregym.faults.node_os import sysctl_pod_spec
from sregym.problems.builders import object_cause, patch_container
from sregym.problems.catalog.astronomy_shop.common import (
    APP,
    IMPACT,
    SETTLE_S,
    SUITE,
    chart_object,
    deploy,
    error_free,
    mitigation,
    obj,
    restart,
    selector,
)
from sregym.problems.catalog.astronomy_shop.node_lifecycle import FRONTEND_NODE, NODE_IMPACT, SYSTEM
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth

mechanisms({
    "eviction_threshold": ("evictionhard", "eviction threshold", "eviction-hard", "nodefs.available",
                           "imagefs.available", "kubelet config", "kubeletconfiguration", "config.yaml",
                           "diskpressure", "disk pressure", "disk-pressure", "threshold"),
}, related={"eviction_threshold": ("memory_pressure", "node_failure", "disk")})

DB_SECRET = "product-catalog-db-conn"
DB_KEY = "DB_CONNECTION_STRING"
OLD_PASSWORD = "otelp"
NEW_PASSWORD = "otelp-2q7k9m4x"
INIT_CONFIGMAP = "postgresql-init"
INIT_KEY = "init.sql"


def _rotated_init_sql() -> str:
    text = chart_object("ConfigMap", INIT_CONFIGMAP)["data"][INIT_KEY]
    old = f"CREATE USER otelu WITH PASSWORD '{OLD_PASSWORD}';"
    if old not in text:
        raise ValueError(f"{INIT_CONFIGMAP} does not create role otelu with {OLD_PASSWORD!r}")
    return text.replace(old, f"CREATE USER otelu WITH PASSWORD '{NEW_PASSWORD}';")


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _container(deployment: str) -> dict[str, Any]:
    return chart_object("Deployment", deployment)["spec"]["template"]["spec"]["containers"][0]


def _env_index(deployment: str, variable: str) -> int:
    return next(i for i, e in enumerate(_container(deployment).get("env") or []) if e["name"] == variable)


def _env_value(deployment: str, variable: str = DB_KEY) -> str:
    return _container(deployment)["env"][_env_index(deployment, variable)]["value"]


def _with_password(text: str, password: str) -> str:
    """A client's connection string with the role's password swapped (each client spells it its way)."""
    for old in (f":{OLD_PASSWORD}@", f"Password={OLD_PASSWORD};", f"password={OLD_PASSWORD} "):
        if old in text:
            return text.replace(old, old.replace(OLD_PASSWORD, password))
    raise ValueError(f"no password {OLD_PASSWORD!r} in {text!r}")


def _db_secret(connection: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": DB_SECRET, "namespace": NAMESPACE}, "data": {DB_KEY: _b64(connection)}}


def _literal_client(deployment: str) -> dict[str, Any]:
    """A client with the password in its env, rolled to the new password."""
    return {"kind": "Deployment", "namespace": NAMESPACE, "name": deployment, "patch_type": "strategic",
            "patch": {"spec": {"template": {"spec": {"containers": [{"name": deployment, "env": [
                {"name": DB_KEY, "value": _with_password(_env_value(deployment), NEW_PASSWORD)}]}]}}}}}


@problem
def product_catalog_stale_credentials() -> Problem:
    """The PostgreSQL password of role `otelu` is rotated: the role's line in `postgresql-init`
    (which a restarted server re-runs, having no persistent data directory), `ALTER ROLE otelu
    PASSWORD ...` on the live server, Secret `product-catalog-db-conn` updated, accounting and
    product-reviews rolled with the new password; product-catalog, which reads
    DB_CONNECTION_STRING from that Secret, is not restarted and keeps the old one.

    Symptoms: product-catalog's queries fail with `pq: password authentication failed for user
    "otelu"`; product pages, ads' product lookups and checkouts fail, while the Secret and the
    database agree with each other and every pod is Running and Ready. Fix: restart
    product-catalog so it reads the rotated password.
    """
    old_connection = _env_value("product-catalog")
    new_connection = _with_password(old_connection, NEW_PASSWORD)
    index = _env_index("product-catalog", DB_KEY)
    return Problem(
        id="astronomy-shop/product-catalog-stale-credentials-v1",
        title="product-catalog fails to authenticate to its database",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app", "config"), difficulty="medium", suites=(SUITE,),
                  sources=("sregym:secret_rotation_stale_env_credentials_astronomy_shop",)),
        faults=(
            FaultSpec(fault="create_objects", params={"objects": [_db_secret(old_connection)]}),
            FaultSpec(fault="patch_objects", params={"patches": [{
                "kind": "Deployment", "namespace": NAMESPACE, "name": "product-catalog", "patch_type": "json",
                "patch": [{"op": "replace", "path": f"/spec/template/spec/containers/0/env/{index}",
                           "value": {"name": DB_KEY, "valueFrom": {"secretKeyRef": {"name": DB_SECRET,
                                                                                    "key": DB_KEY}}}}]}]}),
            FaultSpec(fault="wait_pod_turnover", params={"namespace": NAMESPACE,
                                                         "label_selector": selector("product-catalog"),
                                                         "replace_live": True}),
            # The server re-runs init.sql whenever its container starts on an empty data directory:
            # the role's password there must change too, or a restarted postgresql undoes the rotation.
            FaultSpec(fault="patch_objects", params={"patches": [{
                "kind": "ConfigMap", "namespace": NAMESPACE, "name": INIT_CONFIGMAP, "patch_type": "merge",
                "field": "data", "patch": {"data": {INIT_KEY: _rotated_init_sql()}}}]}),
            FaultSpec(fault="postgres_sql", params={
                "namespace": NAMESPACE, "deployment": "postgresql", "database": "otel",
                "statement": f"ALTER ROLE otelu PASSWORD '{NEW_PASSWORD}'",
                "undo": f"ALTER ROLE otelu PASSWORD '{OLD_PASSWORD}'"}),
            FaultSpec(fault="patch_objects", params={"patches": [
                {"kind": "Secret", "namespace": NAMESPACE, "name": DB_SECRET, "patch_type": "merge", "field": "data",
                 "patch": {"data": {DB_KEY: _b64(new_connection)}}},
                _literal_client("accounting"), _literal_client("product-reviews")]}),
        ),
        ground_truth=GroundTruth(
            root_causes=(deploy("product-catalog"),), mechanism="db_auth",
            detail=f"the running product-catalog pod still uses the pre-rotation PostgreSQL password of role otelu "
                   f"from its env; Secret {DB_SECRET} and PostgreSQL have the new one",
            detail_keywords=("rotat", "stale", "old password", "restart", DB_KEY, "password authentication failed"),
            affected=(obj("Secret", DB_SECRET), deploy("frontend"), deploy("checkout")), impact_keywords=IMPACT,
            description="The rotation changed the Secret and the database but not the running product-catalog pod, "
                        "which keeps authenticating with the old password."),
        mitigation=mitigation(error_free("product-catalog")),
        gold=(restart("product-catalog"),),
        settle_s=SETTLE_S,
    )


@problem
def postgresql_resources_too_small() -> Problem:
    """postgresql's container is given a 16Mi memory limit, below what the server's shared memory
    and backends need (ITBench 46, `insufficient-kubernetes-workload-container-resources`): the
    new pod is OOMKilled (exit 137) at start and goes into CrashLoopBackOff (the alert
    KubePodCrashLooping), so the rollout never completes.

    Fix: put the chart's resources back (`kubectl rollout undo`, or edit the limit).
    """
    container = _container("postgresql")
    return Problem(
        id="astronomy-shop/postgresql-resources-too-small-v1",
        title="a postgresql pod keeps restarting",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("k8s", "config"), difficulty="easy", suites=(SUITE,), sources=("itbench:46",)),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [{
            "kind": "Deployment", "namespace": NAMESPACE, "name": "postgresql",
            "patch": {"spec": {"template": {"spec": {"containers": [{
                "name": container["name"],
                "resources": {"limits": {"memory": "16Mi"}, "requests": {"memory": "16Mi"}}}]}}}}}]}),),
        ground_truth=GroundTruth(
            root_causes=(deploy("postgresql"),), mechanism="oom",
            detail="postgresql's memory limit was lowered to 16Mi, below what the PostgreSQL server needs: the "
                   "container is OOMKilled (exit 137) and restarts into CrashLoopBackOff",
            detail_keywords=("OOMKilled", "memory limit", "16Mi", "postgresql", "CrashLoopBackOff"),
            affected=(deploy("product-catalog"), deploy("accounting")), impact_keywords=IMPACT,
            description="The new postgresql pod cannot stay up under its memory limit; its rollout stalls."),
        mitigation=mitigation(CheckSpec(check="workloads_ready", params={"names": ["postgresql"]})),
        # The chart sets only the limit; the API server defaults the request to it (100Mi).
        gold=(patch_container(NAMESPACE, "postgresql", container["name"], {"resources": {
            "limits": container["resources"]["limits"], "requests": container["resources"]["limits"]}}),),
        settle_s=SETTLE_S,
    )


KUBELET_JOB = "kubelet-config-sync"
THRESHOLD = "90%"  # "evict at 90 % used" written as the free-space signal: above the node's free disk
DEFAULT_NODEFS = "10%"


def _kubelet_fix_pod() -> dict[str, Any]:
    """What an SRE runs without SSH (a `kubectl debug node` pod with the host's namespaces): the
    threshold back, then a kubelet restart so it is loaded."""
    spec = sysctl_pod_spec(FRONTEND_NODE, set_threshold_script("evictionHard", "nodefs.available", DEFAULT_NODEFS),
                           restart="Never")
    spec.pop("nodeSelector")
    spec["nodeName"] = FRONTEND_NODE
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"node-debugger-{FRONTEND_NODE}",
                                                             "namespace": SYSTEM}, "spec": spec}


@problem
def kubelet_eviction_threshold() -> Problem:
    """The kubelet of the worker that runs the shop's frontend (kind-worker) is given
    `evictionHard: nodefs.available: 90%` in `/var/lib/kubelet/config.yaml` (meant as "evict at
    90 % used") and restarted by a one-shot privileged Job (SREGym
    `kubelet_eviction_threshold_misconfig`). The node has ~80 % of its disk free, so the threshold is
    always met: DiskPressure=True, the `node.kubernetes.io/disk-pressure:NoSchedule` taint, and
    the kubelet evicts one pod per pass ("The node was low on resource: ephemeral-storage.
    Threshold quantity: ..., available: ..."), frontend, cart, postgresql and the rest; their
    replacements can only run on the other workers, and the node takes no new pods.

    Fix: set the threshold back in the node's kubelet config and restart the kubelet (from a
    privileged node-debugger pod); the condition and the taint clear at the new kubelet's first
    housekeeping.
    """
    return Problem(
        id="astronomy-shop/kubelet-eviction-threshold-v1",
        title="a worker node reports DiskPressure and evicts the shop's pods",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("os",), difficulty="hard", suites=(SUITE,),
                  sources=("sregym:kubelet_eviction_threshold_misconfig",)),
        faults=(FaultSpec(fault="kubelet_config", params={
            "name": KUBELET_JOB, "signal": "nodefs.available", "value": THRESHOLD, "restore": DEFAULT_NODEFS,
            "target_namespace": NAMESPACE, "target_labels": {"opentelemetry.io/name": "frontend"}}),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(None, "Node", FRONTEND_NODE),), mechanism="eviction_threshold",
            detail=f"the kubelet on {FRONTEND_NODE} was restarted with evictionHard nodefs.available {THRESHOLD} in "
                   "/var/lib/kubelet/config.yaml, more than the disk has free: DiskPressure, the disk-pressure "
                   "taint and evictions of the shop's pods although the disk is mostly empty",
            detail_keywords=("evictionHard", "nodefs.available", THRESHOLD, "DiskPressure", "kubelet",
                             "config.yaml", FRONTEND_NODE),
            affected=(deploy("frontend"), deploy("cart"), deploy("postgresql")),
            impact_keywords=NODE_IMPACT,
            description="A kubelet eviction threshold set above the node's free disk makes the node report "
                        "DiskPressure and evict the shop's pods."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="nodes_without_pressure", params={"conditions": ["DiskPressure"]}),),
            window_s=300.0),
        gold=(Action(op="apply", manifest=_kubelet_fix_pod()),),
        settle_s=SETTLE_S,
    )
