"""`/healthz`, `/livez`, `/readyz` of a 1.32 kube-apiserver, with their real check lists.

The API server registers named checks (ping, log, etcd, one per post-start hook, and for
readiness etcd-readiness, informer-sync and shutdown). `GET /readyz` answers `ok`;
`?verbose` lists every check (`[+]etcd ok`) and ends `readyz check passed`; `?exclude=NAME`
(repeatable) skips a check, shown as `[+]NAME excluded: ok`, and warns about names that match no
check; `/readyz/NAME` runs one check (`ok`), an unknown name is a 404. The twin's control plane is
always healthy, so every check passes.
"""

from __future__ import annotations

_POST_START_HOOKS = (
    "start-apiserver-admission-initializer", "generic-apiserver-start-informers",
    "priority-and-fairness-config-consumer", "priority-and-fairness-filter",
    "storage-object-count-tracker-hook", "start-apiextensions-informers",
    "start-apiextensions-controllers", "crd-informer-synced", "start-system-namespaces-controller",
    "start-cluster-authentication-info-controller", "start-kube-apiserver-identity-lease-controller",
    "start-kube-apiserver-identity-lease-garbage-collector", "start-legacy-token-tracking-controller",
    "start-service-ip-repair-controllers", "rbac/bootstrap-roles",
    "scheduling/bootstrap-system-priority-classes", "priority-and-fairness-config-producer",
    "bootstrap-controller", "start-kubernetes-service-cidr-controller",
    "aggregator-reload-proxy-client-cert", "start-kube-aggregator-informers",
    "apiservice-status-local-available-controller", "apiservice-status-remote-available-controller",
    "apiservice-registration-controller", "apiservice-discovery-controller",
    "kube-apiserver-autoregistration",
)
_HOOKS = tuple(f"poststarthook/{h}" for h in _POST_START_HOOKS)
_TAIL = ("autoregister-completion", "poststarthook/apiservice-openapi-controller",
         "poststarthook/apiservice-openapiv3-controller")

CHECKS: dict[str, tuple[str, ...]] = {
    "healthz": ("ping", "log", "etcd", *_HOOKS, *_TAIL),
    "livez": ("ping", "log", "etcd", *_HOOKS, *_TAIL),
    "readyz": ("ping", "log", "etcd", "etcd-readiness", "informer-sync", *_HOOKS, *_TAIL, "shutdown"),
}
ENDPOINTS = tuple(f"/{name}" for name in CHECKS)


def is_health_path(path: str) -> bool:
    return any(path == e or path.startswith(e + "/") for e in ENDPOINTS)


def answer(path: str, params: dict[str, list[str]]) -> tuple[int, str]:
    """(HTTP status, text body) for a health path and its query parameters."""
    endpoint, _, check = path.lstrip("/").partition("/")
    checks = CHECKS[endpoint]
    if check:
        return (200, "ok") if check in checks else (404, "404 page not found\n")
    excluded = [name for value in params.get("exclude", []) for name in value.split(",") if name]
    verbose = "verbose" in params
    if not verbose:
        return 200, "ok"
    lines = [f"[+]{name} excluded: ok" if name in excluded else f"[+]{name} ok" for name in checks]
    unknown = sorted({name for name in excluded if name not in checks})
    if unknown:
        quoted = ",".join(f'"{name}"' for name in unknown)
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    lines.append(f"{endpoint} check passed")
    return 200, "\n".join(lines) + "\n"


__all__ = ["CHECKS", "ENDPOINTS", "answer", "is_health_path"]
