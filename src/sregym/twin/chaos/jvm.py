"""JVMChaos: Byteman rules installed into a Java process (latency, return, exception, stress, gc,
ruleData on `class#method`).

Selection is container-level, like upstream (`<ns>/<pod>/<container>` records). Applying is what
chaos-daemon's `InstallJVMRules` does: attach Byteman to the container's `java` process. Only an
image flagged `jvm: True` in its catalogue extras runs a JVM; for any other the attach fails and
the record keeps `Not Injected` with the daemon's error in its events (and a `Failed` event on the
experiment), retried every reconcile as upstream does. Injected rules are published through the
chaos service like every other kind, for a Java program model to read (`ChaosService.active`).
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.actions import ACTIONS, INJECTED, ApplyError, ContainerAction
from sregym.twin.node.images import lookup
from sregym.twin.node.runtime import runtime_of

if TYPE_CHECKING:
    from sregym.twin.twin import Twin


def runs_jvm(twin: Twin, pod: dict[str, Any] | None, container: str) -> bool:
    for spec in ((pod or {}).get("spec") or {}).get("containers") or []:
        if spec.get("name") == container:
            try:
                image, _ = lookup(str(spec.get("image") or ""), twin)
            except Exception:  # an unparsable reference runs nothing we know
                return False
            return bool(image is not None and image.extras.get("jvm"))
    return False


def _host_pid(container_id: str) -> int:
    """The container's main process as the node's PID namespace numbers it (stable per instance)."""
    return 1000 + zlib.crc32(container_id.encode()) % 60000


class JvmChaosAction(ContainerAction):
    def apply(self, twin: Twin, obj: dict[str, Any], record: dict[str, Any]) -> str:
        ns, name, container = record["id"].split("/", 2)
        instance = runtime_of(twin).instance(ns, name, container)
        if instance is None or not instance.running:
            raise ApplyError(f"container {container} of pod {ns}/{name} is not running")
        if not runs_jvm(twin, twin.store.peek("Pod", ns, name), container):
            pid = _host_pid(instance.container_id)
            raise ApplyError(
                "rpc error: code = Unknown desc = com.sun.tools.attach.AttachNotSupportedException: Unable to open "
                f"socket file /proc/{pid}/root/tmp/.java_pid{pid}: target process {pid} doesn't respond within "
                "10500ms or HotSpot VM not loaded\n: exit status 1")
        return INJECTED


ACTIONS["JVMChaos"] = JvmChaosAction()
