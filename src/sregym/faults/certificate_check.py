"""A short-lived TLS certificate and the sidecar that checks it, as SREGym sets up its clock-drift
problem: a `kubernetes.io/tls` Secret valid for one day from now, the same certificate in a
ConfigMap as the CA bundle, and a `certcheck` sidecar (`twin/node/certcheck_image.py`) added to
a Deployment that verifies it every 30 s against its node's clock.

`certificate_check` waits for the rollout so the sidecar runs on the node the next fault aims
at; recover removes the sidecar and its volume and deletes the Secret and ConfigMap.
"""

from __future__ import annotations

import base64
import copy
from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, delete_if_present, fault
from sregym.faults.disk_and_metastable import rolled_out
from sregym.faults.ingress import TlsCertificateParams, tls_secret_now
from sregym.faults.objects import required

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

POLL_S = 1.0
VOLUME = "tls-ca"


class CertificateCheckParams(FaultParams):
    certificate: TlsCertificateParams  # the Secret (valid around the cluster's now)
    config_map: str  # the CA bundle (`ca.crt`) the sidecar mounts
    deployment: str
    sidecar: dict[str, Any]  # the checker container; its volumeMount names VOLUME
    wait_s: float = 120.0


def _template(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    return copy.deepcopy(required(cluster, "Deployment", namespace, name)["spec"]["template"]["spec"])


@fault
class CertificateCheck(Fault):
    """A short-lived certificate and a sidecar that verifies it on a schedule."""

    name = "certificate_check"
    Params = CertificateCheckParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, CertificateCheckParams)
        cert = p.certificate
        namespace = cert.namespace
        secret = tls_secret_now(cluster, cert)
        cluster.create(secret)
        pem = base64.b64decode(secret["data"]["tls.crt"]).decode()
        cluster.create({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": p.config_map, "namespace": namespace}, "data": {"ca.crt": pem}})
        spec = _template(cluster, namespace, p.deployment)
        spec["containers"] = [*spec["containers"], copy.deepcopy(p.sidecar)]
        spec["volumes"] = [*(spec.get("volumes") or []), {"name": VOLUME, "configMap": {"name": p.config_map}}]
        cluster.patch("Deployment", namespace, p.deployment,
                      {"spec": {"template": {"spec": {"containers": spec["containers"], "volumes": spec["volumes"]}}}},
                      patch_type="merge")
        waited = 0.0
        while not rolled_out(cluster.get("Deployment", namespace, p.deployment)) and waited < p.wait_s:
            cluster.advance(POLL_S)
            waited += POLL_S
        return {}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, CertificateCheckParams)
        namespace = p.certificate.namespace
        if cluster.get("Deployment", namespace, p.deployment) is not None:
            spec = _template(cluster, namespace, p.deployment)
            containers = [c for c in spec["containers"] if c.get("name") != p.sidecar.get("name")]
            volumes = [v for v in spec.get("volumes") or [] if v.get("name") != VOLUME]
            if len(containers) != len(spec["containers"]) or len(volumes) != len(spec.get("volumes") or []):
                cluster.patch("Deployment", namespace, p.deployment,
                              {"spec": {"template": {"spec": {"containers": containers, "volumes": volumes or None}}}},
                              patch_type="merge")
        delete_if_present(cluster, "ConfigMap", namespace, p.config_map)
        delete_if_present(cluster, "Secret", namespace, p.certificate.name)
