"""The ServiceAccount admission plugin: every pod runs as an existing ServiceAccount.

A Deployment pointing at a ServiceAccount that was never created (or was deleted) gets no pods at
all, and the only trace is the ReplicaSet's `FailedCreate` event with the plugin's message. Pods
that are admitted get the projected `kube-api-access-xxxxx` volume and its mount, exactly as on a
real cluster, so `kubectl get pod -o yaml` looks familiar.
"""

from __future__ import annotations

from typing import Any

from sregym.twin.admission.base import AdmissionPlugin, admission_plugin, forbidden
from sregym.twin.machinery.store import Operation

TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_VOLUME_PREFIX = "kube-api-access-"
DEFAULT_SERVICE_ACCOUNT = "default"


def token_volume(name: str) -> dict[str, Any]:
    """The projected volume the plugin adds: token, cluster CA bundle and namespace file."""
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt",
                               "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                    "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ],
        },
    }


def _has_token_mount(container: dict[str, Any]) -> bool:
    return any(m.get("mountPath") == TOKEN_MOUNT_PATH for m in container.get("volumeMounts") or [])


@admission_plugin
class ServiceAccountAdmission(AdmissionPlugin):
    name = "ServiceAccount"
    order = 130

    def mutate(self, op: Operation) -> None:
        if op.kind.key != ("", "Pod") or op.verb != "CREATE" or op.obj is None or op.subresource:
            return
        spec = op.obj.setdefault("spec", {})
        # Mirror pods (static pods) are not given a service account.
        if ((op.obj.get("metadata") or {}).get("annotations") or {}).get("kubernetes.io/config.mirror"):
            return
        sa_name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_SERVICE_ACCOUNT
        spec["serviceAccountName"] = sa_name
        spec["serviceAccount"] = sa_name
        account = self.twin.store.peek("ServiceAccount", op.namespace, sa_name)
        if account is None and sa_name != DEFAULT_SERVICE_ACCOUNT:
            raise forbidden(op, f"error looking up service account {op.namespace}/{sa_name}: "
                                f'serviceaccount "{sa_name}" not found')
        automount = spec.get("automountServiceAccountToken")
        if automount is None and account is not None:
            automount = account.get("automountServiceAccountToken")
        if automount is False:
            return
        volumes = spec.setdefault("volumes", [])
        existing = next((v["name"] for v in volumes
                         if str(v.get("name", "")).startswith(TOKEN_VOLUME_PREFIX)), None)
        containers = [c for field in ("initContainers", "containers", "ephemeralContainers")
                      for c in spec.get(field) or []]
        if all(_has_token_mount(c) for c in containers) and containers:
            return
        volume_name = existing or TOKEN_VOLUME_PREFIX + self.twin.rng.suffix(5, "kube-api-access")
        if existing is None:
            volumes.append(token_volume(volume_name))
        for field in ("initContainers", "containers"):
            for container in spec.get(field) or []:
                if not _has_token_mount(container):
                    container.setdefault("volumeMounts", []).append(
                        {"name": volume_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH})
