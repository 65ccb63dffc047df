"""What an exec targets, decided before anything runs: the container (the API server's 400s when
the name is missing or wrong), whether it is running, and containerd's error when the executable
is not in the image. Shared by the API server's exec endpoint and the in-process cluster client."""

from __future__ import annotations

from typing import Any

from sregym.errors import BadRequest
from sregym.twin.machinery.objects import get_path
from sregym.twin.userland.context import container_status


def _names(containers: list[dict[str, Any]]) -> str:
    return " ".join(str(c.get("name")) for c in containers)


def resolve_container(pod: dict[str, Any], name: str, requested: str) -> str:
    """The container an exec targets, or the API server's 400."""
    spec = pod.get("spec") or {}
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    inits = [c for c in spec.get("initContainers") or [] if isinstance(c, dict)]
    ephemeral = [c for c in spec.get("ephemeralContainers") or [] if isinstance(c, dict)]
    if not requested:
        if len(containers) == 1:
            return str(containers[0].get("name"))
        if not containers:
            raise BadRequest(f"a container name must be specified for pod {name}")
        message = f"a container name must be specified for pod {name}, choose one of: [{_names(containers)}]"
        if inits:
            message += f" or one of the init containers: [{_names(inits)}]"
        if ephemeral:
            message += f" or one of the ephemeral containers: [{_names(ephemeral)}]"
        raise BadRequest(message)
    if not any(c.get("name") == requested for c in [*containers, *inits, *ephemeral]):
        raise BadRequest(f"container {requested} is not valid for pod {name}")
    return requested


def container_running(pod: dict[str, Any], container: str) -> bool:
    status = container_status(pod, container) or {}
    return bool(get_path(status, "state", "running"))


def exec_start_error(twin: Any, pod: dict[str, Any], container: str, executable: str) -> str:
    """containerd's message when the executable does not exist in the image."""
    exec_id = _exec_id(twin)
    if executable.startswith("/"):
        cause = f'exec: "{executable}": stat {executable}: no such file or directory'
    else:
        cause = f'exec: "{executable}": executable file not found in $PATH'
    inner = (f'error executing command in container: failed to exec in container: failed to start '
             f'exec "{exec_id}": OCI runtime exec failed: exec failed: unable to start container '
             f'process: {cause}: unknown')
    # The kubelet wraps it in an InternalError; the API server's stream translator wraps again.
    return f"Internal error occurred: {inner}"


def _exec_id(twin: Any) -> str:
    """A containerd exec id (64 hex), deterministic per twin and exec."""
    rng = twin.rng.stream("exec-ids")
    return "".join(f"{rng.getrandbits(32):08x}" for _ in range(8))
