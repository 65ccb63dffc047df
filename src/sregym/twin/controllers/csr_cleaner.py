"""The CSR cleaner: kubelet certificate requests disappear an hour or two after they are issued.

A kind cluster's kubelets bootstrap their client certificates through CertificateSigningRequests
(auto-approved and issued at boot, twin/cluster_defaults.py), so `kubectl get csr` lists them on
a young cluster and on an older one answers `No resources found`. kube-controller-manager's
csrcleaner polls once an hour and deletes approved (or denied) requests older than one hour
(pkg/controller/certificates/cleaner): a request made at boot is gone at the first poll after
its first hour. The polls run from the first tick, like the controller started with the
cluster.
"""

from __future__ import annotations

from sregym.errors import ApiError
from sregym.twin.clock import parse_time
from sregym.twin.controller import Controller, controller

POLL_S = 3600.0
APPROVED_EXPIRATION_S = 3600.0


@controller
class CsrCleaner(Controller):
    """Deletes approved or denied CertificateSigningRequests older than an hour, hourly."""

    name = "csrcleaner"
    order = 12

    def __init__(self, twin) -> None:  # type: ignore[no-untyped-def]
        super().__init__(twin)
        self._next = twin.clock.now

    def reconcile(self) -> None:
        now = self.twin.clock.now
        if now < self._next:
            return
        self._next = now + POLL_S
        store = self.twin.store
        for csr in list(store.scan("CertificateSigningRequest")):
            conditions = {c.get("type") for c in (csr.get("status") or {}).get("conditions") or []}
            created = (csr.get("metadata") or {}).get("creationTimestamp")
            if not conditions & {"Approved", "Denied"} or not created:
                continue
            if now - parse_time(created) > APPROVED_EXPIRATION_S:
                try:
                    store.delete("CertificateSigningRequest", None, csr["metadata"]["name"],
                                 user=self.user)
                except ApiError:
                    continue
