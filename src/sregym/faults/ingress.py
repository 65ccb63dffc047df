"""Sending an app's users through ingress-nginx, and the Ingress writes that break that path.

`serve_through_ingress` is a problem's environment, not a fault: it installs ingress-nginx
(`twin/ingress/install.py`), creates the app's Ingress (and its TLS Secret) and points the load
generator at the controller's Service with the site's Host header, as users reaching the site
by its name would. It runs before the healthy baseline is recorded, so the baseline (and every
must_keep check) already has the users entering through the Ingress.

The faults are ordinary Kubernetes writes: `set_ingress_backend` changes one path's backend
Service; an expired certificate is `create_objects`-style replacement of the TLS Secret
(`replace_secret`).
"""

from __future__ import annotations

import copy
import shlex
from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, fault
from sregym.faults.disk_and_metastable import rolled_out
from sregym.faults.objects import required

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

POLL_S = 5.0
DAY_S = 86_400.0
LOADGEN = ("sregym-system", "sregym-loadgen")


class TlsCertificateParams(FaultParams):
    namespace: str
    name: str  # the kubernetes.io/tls Secret (created when missing)
    hosts: tuple[str, ...]
    not_before_days: float = -30.0  # relative to the cluster's now
    not_after_days: float = 60.0
    serial: int = 1


def tls_secret_now(cluster: Cluster, p: TlsCertificateParams) -> dict[str, Any]:
    """The Secret with a certificate for `p.hosts` valid in [now + not_before_days, now +
    not_after_days]: the same bytes for the same parameters and clock."""
    from sregym.twin.dataplane.tls_validity import make_tls_secret

    now = float(int(cluster.now()))
    seed = f"{p.namespace}/{p.name}/{p.serial}/{now:.0f}"
    return make_tls_secret(p.namespace, p.name, p.hosts, now + p.not_before_days * DAY_S,
                           now + p.not_after_days * DAY_S, seed, p.serial)


class ServeThroughIngressParams(FaultParams):
    objects: tuple[dict[str, Any], ...]  # the Ingress, its TLS Secret ...
    url: str  # what the users' client now targets: "https://ingress-nginx-controller.ingress-nginx..."
    host: str  # the site's name (Host header, TLS SNI)
    certificates: tuple[TlsCertificateParams, ...] = ()  # TLS Secrets made now, valid around now
    wait_s: float = 120.0


def point_loadgen(cluster: Cluster, url: str, host: str) -> dict[str, Any]:
    """Rewrite the wrk loop's target URL (and add the Host header); returns the old args."""
    deploy = required(cluster, "Deployment", LOADGEN[0], LOADGEN[1])
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    old = list(container.get("args") or [])
    target = next(w for w in old[0].split() if w.startswith(("http://", "https://")))
    loop = old[0].replace(f" {target} ", f" -H {shlex.quote('Host: ' + host)} {url} ", 1)
    containers = copy.deepcopy(deploy["spec"]["template"]["spec"]["containers"])
    containers[0]["args"] = [loop]
    cluster.patch("Deployment", LOADGEN[0], LOADGEN[1],
                  {"spec": {"template": {"spec": {"containers": containers}}}}, patch_type="merge")
    return {"args": old}


def _wait_replaced(cluster: Cluster, wait_s: float) -> None:
    """Until the generator's rollout is done and no old generator pod still sends traffic."""
    waited = 0.0
    while waited < wait_s:
        deploy = cluster.get("Deployment", *LOADGEN)
        pods = cluster.list("Pod", LOADGEN[0])
        if rolled_out(deploy) and len(pods) <= int((deploy or {}).get("spec", {}).get("replicas", 1) or 0):
            return
        cluster.advance(POLL_S)
        waited += POLL_S


@fault
class ServeThroughIngress(Fault):
    """Install ingress-nginx, create the app's Ingress and send the users through it."""

    name = "serve_through_ingress"
    Params = ServeThroughIngressParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        from sregym.twin.ingress.install import NAME, NAMESPACE, install_ingress_nginx

        p = self.params
        assert isinstance(p, ServeThroughIngressParams)
        install_ingress_nginx(cluster)
        created = []
        for cert in p.certificates:
            if cluster.get("Secret", cert.namespace, cert.name) is None:
                cluster.create(tls_secret_now(cluster, cert))
                created.append({"kind": "Secret", "namespace": cert.namespace, "name": cert.name})
        for obj in p.objects:
            meta = obj["metadata"]
            if cluster.get(obj["kind"], meta.get("namespace"), meta["name"]) is None:
                cluster.create(copy.deepcopy(obj))
                created.append({"kind": obj["kind"], "namespace": meta.get("namespace"), "name": meta["name"]})
        waited = 0.0
        while waited < p.wait_s:
            deploy = cluster.get("Deployment", NAMESPACE, NAME) or {}
            if int((deploy.get("status") or {}).get("readyReplicas") or 0) >= 1:
                break
            cluster.advance(POLL_S)
            waited += POLL_S
        state = point_loadgen(cluster, p.url, p.host)
        _wait_replaced(cluster, p.wait_s)
        return {"created": created, **state}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        if state.get("args"):
            deploy = required(cluster, "Deployment", LOADGEN[0], LOADGEN[1])
            containers = copy.deepcopy(deploy["spec"]["template"]["spec"]["containers"])
            containers[0]["args"] = state["args"]
            cluster.patch("Deployment", LOADGEN[0], LOADGEN[1],
                          {"spec": {"template": {"spec": {"containers": containers}}}}, patch_type="merge")
        for ref in reversed(state.get("created") or []):
            if cluster.get(ref["kind"], ref["namespace"], ref["name"]) is not None:
                cluster.delete(ref["kind"], ref["namespace"], ref["name"])


class IngressBackendParams(FaultParams):
    namespace: str
    ingress: str
    path: str
    service: str  # the backend the path is given
    port: int


@fault
class SetIngressBackend(Fault):
    """Route one Ingress path to another Service (and port). Recover restores the old backend."""

    name = "set_ingress_backend"
    Params = IngressBackendParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, IngressBackendParams)
        ing = required(cluster, "Ingress", p.namespace, p.ingress)
        rules = copy.deepcopy(ing["spec"]["rules"])
        old = None
        for rule in rules:
            for entry in (rule.get("http") or {}).get("paths") or []:
                if entry.get("path") == p.path:
                    old = copy.deepcopy(entry["backend"])
                    entry["backend"] = {"service": {"name": p.service, "port": {"number": p.port}}}
        if old is None:
            raise LookupError(f"Ingress {p.namespace}/{p.ingress} has no path {p.path}")
        cluster.patch("Ingress", p.namespace, p.ingress, {"spec": {"rules": rules}}, patch_type="merge")
        return {"backend": old}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, IngressBackendParams)
        ing = required(cluster, "Ingress", p.namespace, p.ingress)
        rules = copy.deepcopy(ing["spec"]["rules"])
        for rule in rules:
            for entry in (rule.get("http") or {}).get("paths") or []:
                if entry.get("path") == p.path:
                    entry["backend"] = state["backend"]
        cluster.patch("Ingress", p.namespace, p.ingress, {"spec": {"rules": rules}}, patch_type="merge")


@fault
class SetTlsCertificate(Fault):
    """Put a certificate with the given validity window into a TLS Secret (an expired one, when
    the window lies in the past). Recover restores the Secret's old data."""

    name = "set_tls_certificate"
    Params = TlsCertificateParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, TlsCertificateParams)
        secret = tls_secret_now(cluster, p)
        old = cluster.get("Secret", p.namespace, p.name)
        if old is None:
            cluster.create(secret)
            return {"created": True}
        cluster.patch("Secret", p.namespace, p.name, {"data": secret["data"]}, patch_type="merge")
        return {"data": old.get("data") or {}}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, TlsCertificateParams)
        if state.get("created"):
            if cluster.get("Secret", p.namespace, p.name) is not None:
                cluster.delete("Secret", p.namespace, p.name)
            return
        cluster.patch("Secret", p.namespace, p.name, {"data": state["data"]}, patch_type="merge")


class ReplaceSecretParams(FaultParams):
    secret: dict[str, Any]  # the Secret as it becomes (same name)


@fault
class ReplaceSecret(Fault):
    """Replace a Secret's data (a certificate rotated to a bad one). Recover restores the old data."""

    name = "replace_secret"
    Params = ReplaceSecretParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ReplaceSecretParams)
        meta = p.secret["metadata"]
        old = required(cluster, "Secret", meta["namespace"], meta["name"])
        cluster.patch("Secret", meta["namespace"], meta["name"], {"data": p.secret["data"]}, patch_type="merge")
        return {"data": old.get("data") or {}}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, ReplaceSecretParams)
        meta = p.secret["metadata"]
        cluster.patch("Secret", meta["namespace"], meta["name"], {"data": state["data"]}, patch_type="merge")


__all__ = ["ReplaceSecret", "ServeThroughIngress", "SetIngressBackend", "SetTlsCertificate", "point_loadgen",
           "tls_secret_now"]
