"""What the Social Network problem modules share: the namespace bound into the builders, the words
of impact, settle time and fix window, the app's manifests (gold solutions restore what they say)
and the checks every module uses.

Most scenarios target `user-service`, as SREGym's do: compose-post calls it for every new post
(ComposeCreatorWithUserId), so when it is unreachable one request in ten fails at nginx-thrift and
the entry SLO breaks, while timelines keep working.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.apps.social_network import NAMESPACE, PORTS
from sregym.problems.builders import (
    app_manifest,
    deployment_cause,
    keep,
    object_cause,
    rollout_restart,
    service_serves,
)
from sregym.problems.model import (
    Action,
    CheckSpec,
    Difficulty,
    FaultSpec,
    Layer,
    MitigationSpec,
    Problem,
    Tags,
)
from sregym.types import GroundTruth, RootCause

APP = "social-network"
NS = NAMESPACE
SUITE = "social-network"
IMPACT = ("unavailable", "fail", "fails", "failed", "error", "errors", "500", "refused", "timeout", "pending",
          "not ready", "crashloopbackoff", "restart", "stuck", "down", "outage", "no such host", "nxdomain",
          "cannot", "compose", "post", "timeline")
SETTLE_S = 60.0  # every mechanism here shows within seconds of the write
WINDOW_S = 120.0  # a one-minute check window after the fix has landed
RESTARTED_AT = "2025-08-01T00:00:00Z"  # what `kubectl rollout restart` stamps (any value restarts)

deploy = partial(deployment_cause, NS)
obj = partial(object_cause, NS)
restart = partial(rollout_restart, NS, stamp=RESTARTED_AT)


def selector(service: str) -> str:
    """The manifests' pod selector of a component (`service: <name>`)."""
    return f"service={service}"


def manifest(kind: str, name: str) -> dict[str, Any]:
    """A copy of one object as the app's manifests declare it."""
    return app_manifest(APP, kind, name)


def serves(service: str, port: int | None = None) -> CheckSpec:
    """The Service answers on its port from a ready pod of the Deployment of the same name."""
    return service_serves(service, port or PORTS[service], service)


def error_free(service: str) -> CheckSpec:
    return CheckSpec(check="service_error_free", params={"service": service})


def mitigation(*must_fix: CheckSpec, also_keep: tuple[CheckSpec, ...] = (),
               durability: tuple[CheckSpec, ...] = (), window_s: float = WINDOW_S) -> MitigationSpec:
    return MitigationSpec(must_fix=must_fix, must_keep=keep(*also_keep), durability=durability,
                          window_s=window_s)


def social_problem(slug: str, title: str, *, layers: tuple[Layer, ...], difficulty: Difficulty,
                   faults: tuple[FaultSpec, ...], root_causes: tuple[RootCause, ...], mechanism: str,
                   detail: str, keywords: tuple[str, ...], affected: tuple[RootCause, ...], description: str,
                   mitigation: MitigationSpec, gold: tuple[Action, ...], suites: tuple[str, ...] = (),
                   sources: tuple[str, ...] = (), settle_s: float = SETTLE_S) -> Problem:
    """One Social Network problem: the shared app, namespace, suite and impact words filled in."""
    return Problem(
        id=f"{APP}/{slug}-v1", title=title, app=APP, namespace=NS,
        tags=Tags(layers=layers, difficulty=difficulty, suites=(SUITE, *suites), sources=sources),
        faults=faults,
        ground_truth=GroundTruth(root_causes=root_causes, mechanism=mechanism, detail=detail,
                                 detail_keywords=keywords, affected=affected, impact_keywords=IMPACT,
                                 description=description),
        mitigation=mitigation, gold=gold, settle_s=settle_s)
