"""Linux capabilities of the exec'd container: what `date -s` (CAP_SYS_TIME) or `nsenter`
(CAP_SYS_ADMIN) may do. Entering the node itself is `node_host.py`."""

from __future__ import annotations

from typing import Any

from sregym.twin.node.shell import Invocation


def _container(call: Invocation) -> dict[str, Any]:
    spec = (call.ctx.pod or {}).get("spec") or {}
    return next((c for c in spec.get("containers") or [] if c.get("name") == call.ctx.container), {})


def privileged(call: Invocation, capability: str = "SYS_ADMIN") -> bool:
    """Whether the exec's container runs privileged or was granted `capability`."""
    security = _container(call).get("securityContext") or {}
    added = {str(c).upper().removeprefix("CAP_") for c in (security.get("capabilities") or {}).get("add") or []}
    return bool(security.get("privileged")) or capability in added or "ALL" in added


