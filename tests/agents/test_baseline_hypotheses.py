"""`baseline` hypotheses on evidence from an application they were not developed on.

Each test feeds one hypothesis the kubectl outputs an on-call engineer would see for a small
made-up shop (other names, images, ports and labels than Hotel Reservation), through a scripted
session, and checks the finding (root cause, mechanism words, fix commands) — and, for each
rule, a look-alike healthy situation on which it must stay silent.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from sregym.agents.baseline.context import Ctx
from sregym.agents.baseline.databases import USER_MISSING
from sregym.agents.baseline.flags import feature_flag, previous_value
from sregym.agents.baseline.hypotheses import config_reference, db_auth, probe, service_extra_pods
from sregym.agents.baseline.investigate import Event, Facts, Pod
from sregym.agents.baseline.workloads import job_sidecar, missing_volume_source, volume_attach
from sregym.tools.spec import ToolResult

NS = "shop"


class ScriptedSession:
    """Answers kubectl commands from a table (the longest key contained in the command wins)."""

    def __init__(self, outputs: dict[str, str]) -> None:
        self.outputs = outputs
        self.commands: list[str] = []
        self.tool_calls = 0

    def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        self.tool_calls += 1
        command = args.get("command", "")
        self.commands.append(command)
        keys = [k for k in self.outputs if k in command]
        if not keys:
            return ToolResult("", is_error=True)
        return ToolResult(self.outputs[max(keys, key=len)])


def _ctx(outputs: dict[str, str], **facts: Any) -> Ctx:
    return Ctx(ScriptedSession(outputs), Facts(NS, **facts))  # type: ignore[arg-type]


def _deployment(name: str, pod: dict[str, Any], replicas: int = 1, revision: str = "1",
                strategy: dict[str, Any] | None = None) -> str:
    return json.dumps({"metadata": {"name": name, "annotations": {"deployment.kubernetes.io/revision": revision}},
                       "spec": {"replicas": replicas, "strategy": strategy or {"type": "RollingUpdate"},
                                "template": {"metadata": {"labels": {"app": name}}, "spec": pod}}})


def _commands(finding: Any) -> str:
    return "\n".join(c for c, _ in finding.fixes)


# ------------------------------------------------------------------ Jobs and regular sidecars
def _job_outputs(main_state: dict[str, Any]) -> dict[str, str]:
    statuses = [{"name": "export", "state": main_state}, {"name": "envoy", "state": {"running": {}}}]
    cronjob = {"spec": {"jobTemplate": {"spec": {"template": {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "export", "image": "acme/export:2"}, {"name": "envoy", "image": "envoyproxy/envoy:v1.31"}],
    }}}}}}
    return {
        "get pods -n shop -l job-name": f"nightly-export-290-x1\tnightly-export-290\t{json.dumps(statuses)}\n",
        "get jobs -n shop": "nightly-export-290\tCronJob/nightly-export\t1\t\n",
        "get cronjob nightly-export -n shop -o json": json.dumps(cronjob),
    }


def test_job_whose_sidecar_outlives_the_main_container_gets_a_native_sidecar() -> None:
    ctx = _ctx(_job_outputs({"terminated": {"exitCode": 0, "reason": "Completed"}}),
               pods=[Pod("nightly-export-290-x1", "1/2", "NotReady", "0", "node-a")])
    finding = job_sidecar(ctx)
    assert finding is not None and finding.roots == ["shop/CronJob/nightly-export"]
    assert "sidecar" in finding.mechanism and "envoy" in finding.explanation
    patch = json.loads(finding.fixes[0][0].split("-p '", 1)[1].rstrip("'"))
    base = "/spec/jobTemplate/spec/template/spec"
    assert patch[0] == {"op": "remove", "path": f"{base}/containers/1"}
    assert patch[1]["path"] == f"{base}/initContainers"
    assert patch[1]["value"][0]["name"] == "envoy" and patch[1]["value"][0]["restartPolicy"] == "Always"
    assert finding.fixes[1][0] == "delete job nightly-export-290 -n shop"


def test_job_still_working_is_not_a_sidecar_problem() -> None:
    ctx = _ctx(_job_outputs({"running": {}}), pods=[Pod("nightly-export-290-x1", "1/2", "NotReady", "0", "node-a")])
    assert job_sidecar(ctx) is None


# ------------------------------------------------------------------ ReadWriteOnce volumes
def _ledger_outputs(modes: list[str], affinity: dict[str, Any] | None = None) -> dict[str, str]:
    pod: dict[str, Any] = {"containers": [{"name": "ledger", "image": "acme/ledger:5"}],
                           "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "ledger-data"}}]}
    if affinity:
        pod["affinity"] = affinity
    return {"get deployment ledger -n shop -o json": _deployment("ledger", pod, replicas=2),
            "get pvc ledger-data -n shop -o jsonpath": json.dumps(modes)}


def test_replicas_sharing_a_readwriteonce_claim_across_nodes_are_colocated() -> None:
    events = [Event("FailedAttachVolume", "pod/ledger-6f7c9-k2x", 'Multi-Attach error for volume "pvc-1f" '
                    "Volume is already used by pod(s) ledger-6f7c9-a1b")]
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "kubernetes.io/hostname"}]}}
    ctx = _ctx(_ledger_outputs(["ReadWriteOnce"], anti), events=events, deployments=["ledger"])
    finding = volume_attach(ctx)
    assert finding is not None
    assert finding.roots == ["shop/Deployment/ledger", "shop/PersistentVolumeClaim/ledger-data"]
    assert "readwriteonce" in finding.mechanism.lower() and "multi-attach" in finding.mechanism.lower()
    ops = json.loads(finding.fixes[0][0].split("-p '", 1)[1].rstrip("'"))
    assert {"op": "remove", "path": "/spec/template/spec/affinity"} in ops
    assert {"op": "replace", "path": "/spec/strategy", "value": {"type": "Recreate"}} in ops


def test_shared_readwritemany_claim_is_not_an_attach_problem() -> None:
    events = [Event("FailedAttachVolume", "pod/ledger-6f7c9-k2x", "Multi-Attach error for volume \"pvc-1f\"")]
    ctx = _ctx(_ledger_outputs(["ReadWriteMany"]), events=events, deployments=["ledger"])
    assert volume_attach(ctx) is None


# ------------------------------------------------------------------ Services selecting other workloads
def _shop_services(worker_port: int) -> dict[str, str]:
    return {
        "get services -n shop -o jsonpath":
            'web\t{"tier":"front"}\t[{"port":80,"protocol":"TCP","targetPort":8080}]\n',
        "get deployments -n shop -o jsonpath":
            f'web\t{{"app":"web","tier":"front"}}\t8080\nworker\t{{"app":"worker","tier":"front"}}\t{worker_port}\n',
    }


def test_service_whose_selector_also_matches_a_workload_on_another_port_is_narrowed() -> None:
    ctx = _ctx(_shop_services(9000), deployments=["web", "worker"])
    finding = service_extra_pods(ctx)
    assert finding is not None and finding.roots == ["shop/Service/web"]
    assert "selector" in finding.mechanism and "worker" in finding.explanation
    assert '"value": {"app": "web"}' in _commands(finding)
    assert "shop/Deployment/worker" in finding.affected


def test_service_over_two_workloads_that_both_serve_the_port_is_left_alone() -> None:
    ctx = _ctx(_shop_services(8080), deployments=["web", "worker"])  # a canary-like pair
    assert service_extra_pods(ctx) is None


# ------------------------------------------------------------------ runtime feature flags
def _checkout_outputs(flag: str) -> dict[str, str]:
    pod = {"containers": [{"name": "checkout", "image": "acme/checkout:9", "env": [
        {"name": "PAYMENTS_API", "valueFrom": {"configMapKeyRef": {"name": "checkout-flags", "key": "PAYMENTS_API"}}}]}]}
    return {"get deployment checkout -n shop -o json": _deployment("checkout", pod),
            "get configmap checkout-flags -n shop -o json": json.dumps({"data": {"PAYMENTS_API": flag}})}


def test_previous_value_of_a_flag() -> None:
    assert [previous_value(v) for v in ("v2", "V3", "4", "true", "Enabled", "v1", "blue")] == \
        ["v1", "V2", "3", "false", "Disabled", None, None]


def test_flag_that_routes_calls_to_an_unimplemented_method_is_rolled_back() -> None:
    logs = [("checkout", "rpc error: code = Unimplemented desc = unknown method ChargeV3 for service payments.Payments")]
    ctx = _ctx(_checkout_outputs("v3"), deployments=["checkout", "payments"], error_logs=logs)
    finding = feature_flag(ctx)
    assert finding is not None and finding.roots == ["shop/ConfigMap/checkout-flags"]
    assert "feature flag" in finding.mechanism and "configmap" not in finding.mechanism.lower()
    assert "PAYMENTS_API=v3" in finding.explanation
    assert '{"data": {"PAYMENTS_API": "v2"}}' in finding.fixes[0][0]
    assert "patch deployment checkout" in finding.fixes[1][0]


def test_flag_the_error_does_not_point_at_is_kept() -> None:
    logs = [("checkout", "rpc error: code = Unimplemented desc = unknown method Refund for service ledger.Ledger")]
    ctx = _ctx(_checkout_outputs("v3"), deployments=["checkout"], error_logs=logs)
    assert feature_flag(ctx) is None


# ------------------------------------------------------------------ database logins
def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _orders_outputs(db_log: str) -> dict[str, str]:
    client = {"containers": [{"name": "orders", "image": "acme/orders:3", "env": [
        {"name": "DB_USER", "valueFrom": {"secretKeyRef": {"name": "orders-db-credentials", "key": "username"}}},
        {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "orders-db-credentials", "key": "password"}}}]}]}
    database = {"containers": [{"name": "mongo", "image": "mongo:6.0", "env": [
        {"name": "MONGO_INITDB_ROOT_USERNAME", "value": "boss"}, {"name": "MONGO_INITDB_ROOT_PASSWORD", "value": "hunter2"}]}]}
    secret = {"username": _b64("app"), "password": _b64("s3cret"), "authSource": _b64("admin"), "database": _b64("orders")}
    return {"get deployment orders -n shop -o json": _deployment("orders", client),
            "get deployment orders-db -n shop -o json": _deployment("orders-db", database),
            "get secret orders-db-credentials -n shop -o jsonpath": json.dumps(secret),
            "logs deployment/orders-db -n shop": db_log}


AUTH_FAILED = [("orders", "connection() error occurred during connection handshake: auth error: sasl conversation "
                          "error: unable to authenticate using mechanism \"SCRAM-SHA-256\": (AuthenticationFailed) "
                          "Authentication failed.")]


def test_removed_database_user_is_recreated_with_the_clients_credentials() -> None:
    log = ('{"msg":"Authentication failed","attr":{"principalName":"app","error":"UserNotFound: Could not find user '
           '\\"app\\" for db \\"admin\\""}}\n')
    ctx = _ctx(_orders_outputs(log), deployments=["orders", "orders-db"], error_logs=AUTH_FAILED)
    finding = db_auth(ctx)
    assert finding is not None and finding.roots == ["shop/Deployment/orders-db"]
    assert "shop/Deployment/orders" in finding.affected and "removed" in finding.mechanism
    command = _commands(finding)
    assert command.startswith("exec deployment/orders-db -n shop -- mongo admin --quiet -u boss -p hunter2")
    assert "createUser({user: 'app', pwd: 's3cret', roles: [{role: 'readWrite', db: 'orders'}]})" in command


def test_wrong_password_after_rotation_still_blames_the_client() -> None:
    log = '{"msg":"Authentication failed","attr":{"error":"AuthenticationFailed: SCRAM authentication failed, storedKey mismatch"}}\n'
    ctx = _ctx(_orders_outputs(log), deployments=["orders", "orders-db"], error_logs=AUTH_FAILED)
    finding = db_auth(ctx)
    assert finding is not None and finding.roots == ["shop/Deployment/orders"]
    assert "patch deployment orders -n shop" in _commands(finding)


def test_user_missing_messages_of_several_databases() -> None:
    assert USER_MISSING.search('FATAL:  role "app" does not exist')
    assert USER_MISSING.search('UserNotFound: Could not find user "app" for db "admin"')
    assert not USER_MISSING.search('FATAL:  password authentication failed for user "app"')


# ------------------------------------------------------------------ deleted volume sources, missing keys
def test_deleted_configmap_is_recreated_from_a_sibling_workload() -> None:
    events = [Event("FailedMount", "pod/cache-eu-5d8f-q1", 'MountVolume.SetUp failed for volume "conf" : '
                    'configmap "cache-eu-conf" not found')]
    rows = "cache-eu\tredis:7\tcache-eu-conf\ncache-us\tredis:7\tcache-us-conf\nweb\tacme/web:1\t\n"
    sibling = {"metadata": {"name": "cache-us-conf"}, "data": {"redis.conf": "replica-announce-ip cache-us\nport 6379\n"}}
    ctx = _ctx({"get deployments -n shop -o jsonpath": rows,
                "get configmap cache-us-conf -n shop -o json": json.dumps(sibling)},
               events=events, deployments=["cache-eu", "cache-us", "web"])
    finding = missing_volume_source(ctx)
    assert finding is not None and finding.roots == ["shop/ConfigMap/cache-eu-conf"]
    command, manifest = finding.fixes[0]
    assert command == "apply -f -"
    created = json.loads(manifest or "{}")
    assert created["metadata"]["name"] == "cache-eu-conf"
    assert created["data"]["redis.conf"] == "replica-announce-ip cache-eu\nport 6379\n"


def test_deleted_configmap_without_a_sibling_becomes_an_optional_volume() -> None:
    events = [Event("FailedMount", "pod/web-5d8f-q1", 'MountVolume.SetUp failed for volume "conf" : '
                    'configmap "web-conf" not found')]
    pod = {"containers": [{"name": "web", "image": "acme/web:1"}],
           "volumes": [{"name": "tmp", "emptyDir": {}}, {"name": "conf", "configMap": {"name": "web-conf"}}]}
    ctx = _ctx({"get deployments -n shop -o jsonpath": "web\tacme/web:1\tweb-conf\n",
                "get deployment web -n shop -o json": _deployment("web", pod)},
               events=events, deployments=["web"])
    finding = missing_volume_source(ctx)
    assert finding is not None
    assert '"path": "/spec/template/spec/volumes/1/configMap/optional", "value": true' in _commands(finding)


def test_missing_key_with_no_earlier_revision_makes_the_reference_optional() -> None:
    events = [Event("Failed", "pod/web-5d8f-q1", "Error: couldn't find key THEME in ConfigMap shop/web-settings")]
    pod = {"containers": [{"name": "web", "image": "acme/web:1", "env": [
        {"name": "PORT", "value": "8080"},
        {"name": "THEME", "valueFrom": {"configMapKeyRef": {"name": "web-settings", "key": "THEME"}}}]}]}
    ctx = _ctx({"get deployment web -n shop -o json": _deployment("web", pod)}, events=events, deployments=["web"])
    finding = config_reference(ctx)
    assert finding is not None and finding.roots == ["shop/ConfigMap/web-settings"]
    assert "/spec/template/spec/containers/0/env/1/valueFrom/configMapKeyRef/optional" in _commands(finding)


# ------------------------------------------------------------------ probes
def test_liveness_probe_timing_out_under_load_gets_slack_and_capacity() -> None:
    events = [Event("Unhealthy", "pod/api-7c9-z1", 'Liveness probe failed: Get "http://10.0.0.7:3000/healthz": '
                    "context deadline exceeded (Client.Timeout exceeded while awaiting headers)")]
    pod = {"containers": [{"name": "api", "image": "acme/api:4", "ports": [{"containerPort": 3000}],
                           "livenessProbe": {"httpGet": {"path": "/healthz", "port": 3000}, "periodSeconds": 2,
                                             "timeoutSeconds": 1, "failureThreshold": 1}}]}
    ctx = _ctx({"get deployment api -n shop -o json": _deployment("api", pod, replicas=3, revision="2")},
               events=events, deployments=["api"], pods=[Pod("api-7c9-z1", "0/1", "CrashLoopBackOff", "4", "node-b")])
    finding = probe(ctx)
    assert finding is not None and "liveness" in finding.mechanism
    command = _commands(finding)
    assert '"periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3' in command
    assert "scale deployment api -n shop --replicas=6" in command
