"""Quantities stored in canonical form, as decoding into the Go types leaves them.

Runs first on every create and update of a built-in kind (status writes included, as upstream:
`status.capacity` is a Quantity too), before defaulting copies limits into requests, so what is
stored and served is `cpu: "1"` for an applied `cpu: 1000m` whoever wrote it.
"""

from __future__ import annotations

from sregym.twin.admission.base import AdmissionPlugin, admission_plugin
from sregym.twin.machinery.quantity_fields import canonicalize
from sregym.twin.machinery.store import Operation


@admission_plugin
class CanonicalQuantities(AdmissionPlugin):
    name = "canonical-quantities"
    order = 1

    def mutate(self, op: Operation) -> None:
        if op.obj is None or op.verb not in ("CREATE", "UPDATE") or op.kind.custom:
            return
        canonicalize(op.obj, op.kind.group, op.kind.version, op.kind.kind)
