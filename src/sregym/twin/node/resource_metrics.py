"""The resource metrics pipeline the HPA controller reads: what metrics-server serves.

A kind cluster with metrics-server gives the HPA controller exactly what `kubectl top pod`
shows: the `metrics.k8s.io` PodMetrics of the pod, its containers' CPU and memory summed. The
twin serves that API in every mode (in-process, `twin up`, attempts), so the HPA must read the
same figures in every mode too; this provider is wired in `Twin.__init__` rather than by whoever
serves the API, which is how `twin up` once ended with `<unknown>/50%` while `kubectl top` worked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.twin.machinery.quantity import parse_quantity

if TYPE_CHECKING:
    from sregym.twin.twin import Twin


class ServedPodMetrics:
    """`pod_usage(namespace, pod) -> (cpu_cores, memory_bytes) | None` from the PodMetrics the
    API serves (None where metrics-server would have no sample: pod not running, or no container
    running since the last sample)."""

    def __init__(self, twin: Twin) -> None:
        self._twin = twin

    def pod_usage(self, namespace: str, pod: str) -> tuple[float, int] | None:
        # The metrics API module renders the samples; imported here because the API layer
        # imports the twin, not the other way round.
        from sregym.twin.api.kube.metrics import pod_metrics

        obj = self._twin.store.peek("Pod", namespace, pod)
        item = pod_metrics(self._twin, obj) if obj is not None else None
        if item is None:
            return None
        cpu = sum(float(parse_quantity(c["usage"]["cpu"])) for c in item["containers"])
        memory = sum(int(parse_quantity(c["usage"]["memory"])) for c in item["containers"])
        return cpu, memory


__all__ = ["ServedPodMetrics"]
