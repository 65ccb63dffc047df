"""Container probes evaluated against what the process really does.

A probe succeeds only if the container's process listens on the probed port (and, for HTTP, serves
the path), so a probe on the wrong port, a path the server 404s, or a server still starting up
fails with the real kubelet's wording ("dial tcp 10.244.1.5:8081: connect: connection refused",
"HTTP probe failed with statuscode: 404").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.node.runtime import ContainerInstance
from sregym.twin.node.shell import run_once

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

PROBE_KINDS = ("startupProbe", "livenessProbe", "readinessProbe")
PROBE_LABEL = {"startupProbe": "Startup", "livenessProbe": "Liveness", "readinessProbe": "Readiness"}


def resolve_port(container: dict[str, Any], port: Any) -> int | None:
    """A probe's port: a number, or the name of one of the container's ports."""
    if isinstance(port, int):
        return port
    text = str(port)
    if text.isdigit():
        return int(text)
    for item in container.get("ports") or []:
        if item.get("name") == text:
            return int(item.get("containerPort") or 0)
    return None


def _path_served(paths: tuple[str, ...] | None, path: str) -> bool:
    if paths is None:
        return False
    if not paths:
        return True
    bare = path.split("?", 1)[0] or "/"
    return bare in paths or any(p.endswith("/") and p != "/" and bare.startswith(p) for p in paths)


def server_latency_ms(twin: Twin, probe: dict[str, Any], container: dict[str, Any], pod_ip: str) -> float:
    """How long the application server takes to answer an HTTP/gRPC probe right now.

    The hook that lets load reach probes: a probe request waits in the same queue as user
    requests, so the data plane (`twin.services.dataplane.probe_latency_ms(ip, port)`, when it
    offers it) reports the server's current queueing delay. TCP and exec probes are answered by
    the kernel / a separate process and do not see it. 0 when nothing reports a delay."""
    dataplane = twin.services.dataplane if twin is not None else None
    hook = getattr(dataplane, "probe_latency_ms", None)
    if hook is None:
        return 0.0
    if "httpGet" in probe:
        port = resolve_port(container, (probe.get("httpGet") or {}).get("port"))
    elif "grpc" in probe:
        port = int((probe.get("grpc") or {}).get("port") or 0)
    else:
        return 0.0
    return float(hook(pod_ip, port)) if port else 0.0


def _grpc_status(instance: ContainerInstance, pod_ip: str, port: int) -> str | None:
    """What the server's grpc.health.v1 Check answers (the data plane's `grpc_health_status`
    hook, when it offers one); None when nothing models it (SERVING)."""
    twin = getattr(getattr(instance, "ctx", None), "twin", None)
    dataplane = twin.services.dataplane if twin is not None else None
    hook = getattr(dataplane, "grpc_health_status", None)
    return hook(pod_ip, port) if hook is not None else None


def run_probe(probe: dict[str, Any], container: dict[str, Any], instance: ContainerInstance,
              pod_ip: str, hosts: set[str] | None = None, latency_ms: float = 0.0) -> tuple[bool, str]:
    """Evaluate one probe now; returns (success, failure detail as the kubelet prints it).

    `hosts` are the addresses that reach the container (its pod IP; also loopback for
    host-network pods, whose probes often target 127.0.0.1). `latency_ms` is the server's
    current answer time (`server_latency_ms`): an HTTP or gRPC probe whose `timeoutSeconds` it
    exceeds fails with the kubelet's timeout message."""
    reach = hosts or {pod_ip}
    timeout_ms = 1000.0 * float(probe.get("timeoutSeconds") or 1)
    if "exec" in probe:
        command = [str(a) for a in (probe.get("exec") or {}).get("command") or []]
        ctx = instance.ctx
        result = run_once(ctx, command, max_seconds=float(probe.get("timeoutSeconds") or 1))
        if not result.finished:
            return False, f"command \"{' '.join(command)}\" timed out"
        if result.exit_code == 0:
            return True, ""
        output = (result.stdout + result.stderr)
        if "executable file not found" in result.stderr:
            return False, ("rpc error: code = Unknown desc = failed to exec in container: failed to start "
                           f'exec "{instance.container_id}": {result.stderr.strip()}')
        return False, output.rstrip("\n") if output else ""
    if "httpGet" in probe:
        http = probe.get("httpGet") or {}
        port = resolve_port(container, http.get("port"))
        host = http.get("host") or pod_ip
        scheme = (http.get("scheme") or "HTTP").lower()
        path = http.get("path") or "/"
        if not path.startswith("/"):
            path = "/" + path
        url = f"{scheme}://{host}:{port}{path}"
        if port is None:
            return False, f"unable to resolve port name {http.get('port')!r}"
        listen = instance.listening.get((port, "TCP"))
        if listen is None or host not in reach:
            return False, f'Get "{url}": dial tcp {host}:{port}: connect: connection refused'
        if listen.http_paths is None:
            return False, (f'Get "{url}": net/http: HTTP/1.x transport connection broken: '
                           "malformed HTTP response")
        if latency_ms >= timeout_ms:
            return False, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
        if not _path_served(listen.http_paths, path):
            return False, "HTTP probe failed with statuscode: 404"
        return True, ""
    if "tcpSocket" in probe:
        tcp = probe.get("tcpSocket") or {}
        port = resolve_port(container, tcp.get("port"))
        host = tcp.get("host") or pod_ip
        if port is None or (port, "TCP") not in instance.listening or host not in reach:
            return False, f"dial tcp {host}:{port}: connect: connection refused"
        return True, ""
    if "grpc" in probe:
        grpc = probe.get("grpc") or {}
        port = int(grpc.get("port") or 0)
        listen = instance.listening.get((port, "TCP"))
        timeout = int(probe.get("timeoutSeconds") or 1)
        if listen is None:
            return False, (f'timeout: failed to connect service "{pod_ip}:{port}" within {timeout}s: '
                           "context deadline exceeded")
        if not listen.grpc_health and listen.http_paths is not None:
            return False, (f'timeout: failed to connect service "{pod_ip}:{port}" within {timeout}s: '
                           "context deadline exceeded")
        if latency_ms >= timeout_ms:
            return False, f"timeout: health rpc did not complete within {timeout}s"
        status = _grpc_status(instance, pod_ip, port)
        if status not in (None, "SERVING"):
            return False, f'service unhealthy (responded with "{status}")'
        return True, ""
    return True, ""
