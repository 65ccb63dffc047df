"""What the Astronomy Shop problem modules share: the namespace bound into the builders, the
words of impact, the fix window and the chart's objects (gold solutions restore chart values)."""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems.builders import app_manifest, deployment_cause, object_cause, rollout_restart
from sregym.problems.model import CheckSpec, MitigationSpec

APP = "astronomy-shop"
SUITE = "astronomy-shop"
IMPACT = ("unavailable", "fail", "fails", "error", "errors", "500", "latency", "slow", "cpu", "memory",
          "not ready", "outage", "refused", "leak")
# ITBench scenarios outside ITBench-AA's released set whose problems also join the itbench-aa suite,
# so its dataset reaches 20 tasks while the released scheduled-chaos scenarios cannot be carried
# (docs/coverage.md): one Kubernetes object to name, like the released tasks. AA withheld scenario
# 9 as a duplicate of 1. They carry no `itbench-aa` source.
AA_SUITE_ALSO = frozenset({1, 30, 114})
SETTLE_S = 60.0  # flagd restarts in seconds; one minute of symptom in every window
WINDOW_S = 120.0  # a 1-minute check window after the fix has fully landed
RESTARTED_AT = "2025-06-01T00:00:00Z"  # what `kubectl rollout restart` stamps (any value restarts)

deploy = partial(deployment_cause, NAMESPACE)
obj = partial(object_cause, NAMESPACE)
restart = partial(rollout_restart, NAMESPACE, stamp=RESTARTED_AT)


def selector(component: str) -> str:
    """The chart's pod selector of a component."""
    return f"opentelemetry.io/name={component}"


def chart_object(kind: str, name: str) -> dict[str, Any]:
    """A copy of one object as the chart renders it."""
    return app_manifest(APP, kind, name)


def error_free(service: str, span_name: str | None = None, *, window_s: float = 60.0) -> CheckSpec:
    params: dict[str, Any] = {"service": service, "window_s": window_s}
    if span_name:
        params["span_name"] = span_name
    return CheckSpec(check="service_error_free", params=params)


def mitigation(*must_fix: CheckSpec, must_keep: tuple[CheckSpec, ...] | None = None) -> MitigationSpec:
    if must_keep is None:
        return MitigationSpec(must_fix=must_fix, window_s=WINDOW_S)
    return MitigationSpec(must_fix=must_fix, must_keep=must_keep, window_s=WINDOW_S)
