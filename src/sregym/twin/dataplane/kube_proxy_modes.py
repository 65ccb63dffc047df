"""How the kube-proxy on a connection's source node splits a Service's traffic over its endpoints.

In iptables mode kube-proxy writes one rule per endpoint in its KUBE-SVC chain, matched with
`-m statistic --mode random --probability 1/(n-i)` for the i-th of n endpoints, so each endpoint
gets 1/n of new connections. The rules a node applies are the ones its own kube-proxy (the
DaemonSet's pod on that node) programmed, so the image that pod runs decides the split.

Besides the upstream image, the catalogue knows one in-house build
(`BUGGY_BUILD`, registered below) whose rule writer uses a fixed `--probability 0.5` for every
rule but the last: the first endpoint gets half of the connections, the next a quarter, and so
on, with the last two sharing what is left. Its pods start, log and serve health checks like
the upstream ones; only the split differs. A build's split is the image's `extras["probability"]`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sregym.twin.node.images import lookup, register_image

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

PROXY_LABEL = ("k8s-app", "kube-proxy")
BUGGY_BUILD = "ghcr.io/platform-netops/kube-proxy"
BUGGY_TAGS = ("v1.32.2-np1", "v1.31.12-np1")


def even(n: int) -> list[float]:
    return [1.0 / n] * n


def fixed_half(n: int) -> list[float]:
    """Each rule but the last matches half of what reaches it."""
    if n <= 1:
        return [1.0] * n
    shares = [0.5 ** (i + 1) for i in range(n - 1)]
    return [*shares, 1.0 - sum(shares)]


SPLITS = {"even": even, "fixed-half": fixed_half}


def _node_proxy_image(twin: Twin, node: str) -> str:
    """The image of the kube-proxy pod on `node` (its rules stay in place while it restarts)."""
    for pod in twin.store.scan("Pod", "kube-system"):
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        if (meta.get("labels") or {}).get(PROXY_LABEL[0]) != PROXY_LABEL[1] or spec.get("nodeName") != node:
            continue
        if meta.get("deletionTimestamp"):
            continue
        for container in spec.get("containers") or []:
            return str(container.get("image") or "")
    return ""


def endpoint_shares(twin: Twin, src_pod: dict[str, Any] | None, n: int) -> list[float]:
    """The share of new connections each of `n` endpoints (in rule order) gets from `src_pod`."""
    node = ((src_pod or {}).get("spec") or {}).get("nodeName") or ""
    image = _node_proxy_image(twin, node) if node else ""
    spec, _ = lookup(image, twin) if image else (None, None)
    mode = str(spec.extras.get("probability", "even")) if spec is not None else "even"
    return SPLITS.get(mode, even)(n)


def _register() -> None:
    upstream, _ = lookup("registry.k8s.io/kube-proxy:v1.32.2")
    if upstream is None:
        return
    register_image(replace(upstream, repository=BUGGY_BUILD, tags=BUGGY_TAGS, by_tag={},
                           extras={**upstream.extras, "probability": "fixed-half"}))


_register()

__all__ = ["BUGGY_BUILD", "BUGGY_TAGS", "endpoint_shares", "even", "fixed_half"]
