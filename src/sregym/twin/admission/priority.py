"""The Priority admission plugin: pods get their numeric priority from a PriorityClass.

The scheduler only ever reads `spec.priority` and `spec.preemptionPolicy`; this plugin is what
turns `priorityClassName` (or the cluster's global-default class) into those numbers at create
time, and it rejects a pod naming a class that does not exist with the API server's 403. It also
guards PriorityClasses themselves: one global default, user values capped at one billion, and
the `system-` prefix reserved.
"""

from __future__ import annotations

from typing import Any

from sregym.errors import Forbidden, invalid
from sregym.twin.admission.base import AdmissionPlugin, admission_plugin
from sregym.twin.machinery.store import Operation

HIGHEST_USER_PRIORITY = 1_000_000_000
SYSTEM_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"


@admission_plugin
class PriorityAdmission(AdmissionPlugin):
    name = "Priority"
    order = 110

    def mutate(self, op: Operation) -> None:
        if op.verb != "CREATE" or op.obj is None or op.kind.key != ("", "Pod"):
            return
        spec = op.obj.setdefault("spec", {})
        class_name = spec.get("priorityClassName") or ""
        if class_name:
            pc = self.twin.store.peek("PriorityClass", None, class_name)
            if pc is None:
                raise Forbidden(
                    f'pods "{op.name}" is forbidden: no PriorityClass with name {class_name} was found',
                    details={"name": op.name, "kind": "pods"})
        else:
            pc = self._global_default()
            if pc is not None:
                spec["priorityClassName"] = pc["metadata"]["name"]
        # The defaulting step may have written priority 0 already; the class is authoritative.
        spec["priority"] = int(pc.get("value", 0)) if pc is not None else 0
        if pc is not None:
            # A class without a policy defaults to PreemptLowerPriority, like the API server.
            spec["preemptionPolicy"] = pc.get("preemptionPolicy") or DEFAULT_PREEMPTION_POLICY
        else:
            spec["preemptionPolicy"] = spec.get("preemptionPolicy") or DEFAULT_PREEMPTION_POLICY

    def validate(self, op: Operation) -> None:
        if op.kind.key != ("scheduling.k8s.io", "PriorityClass") or op.obj is None:
            return
        if op.verb not in ("CREATE", "UPDATE") or op.subresource:
            return
        self._validate_class(op)

    # ---------------------------------------------------------------- helpers
    def _global_default(self) -> dict[str, Any] | None:
        """The global-default class; with several (a race in a real cluster) the lowest wins."""
        best: dict[str, Any] | None = None
        for pc in self.twin.store.scan("PriorityClass"):
            if pc.get("globalDefault") and (best is None or int(pc.get("value", 0)) < int(best.get("value", 0))):
                best = pc
        return best

    def _validate_class(self, op: Operation) -> None:
        assert op.obj is not None
        name = op.name
        value = int(op.obj.get("value", 0) or 0)
        group = "scheduling.k8s.io"
        if name.startswith("system-"):
            if SYSTEM_CLASSES.get(name) != value:
                raise invalid("PriorityClass", name, [(
                    "FieldValueForbidden", "metadata.name",
                    "Forbidden: priority class names with 'system-' prefix are reserved for system use only")],
                    group)
        elif value > HIGHEST_USER_PRIORITY:
            raise invalid("PriorityClass", name, [(
                "FieldValueForbidden", "value",
                f"Forbidden: maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}")],
                group)
        if op.obj.get("globalDefault"):
            current = self._global_default()
            if current is not None and current["metadata"]["name"] != name:
                raise Forbidden(
                    f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: PriorityClass '
                    f"{current['metadata']['name']} is already marked as default. Only one default can exist",
                    details={"name": name, "group": group, "kind": "priorityclasses"})
