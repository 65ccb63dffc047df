"""Fault injectors: registered, parameterised `inject`/`recover` pairs.

An injector only writes through a `Cluster` with the admin credential: it creates, patches and
deletes objects (Chaos Mesh CRs included) and execs admin commands inside pods, the way a human
would break a cluster. It never scripts a symptom, and never leaves a label, annotation or name
that says "injected" — the agent must find the cause from its effects.

`inject()` returns a JSON-able state (what the objects looked like before) that `recover()` uses
to restore exactly the pre-fault state. Parameters are a pydantic model per fault (`Params`), so a
problem file with a wrong parameter fails when it is loaded, not halfway through a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from sregym.registry import Registry

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster


class FaultParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Fault:
    """Base class: subclasses set `name`, `Params` and implement `inject`/`recover`."""

    name: ClassVar[str] = ""
    Params: ClassVar[type[FaultParams]] = FaultParams
    twin_only: ClassVar[str] = ""
    """Why this fault needs the twin (a twin extension or hook); empty: it runs on any cluster."""

    def __init__(self, params: dict[str, Any] | FaultParams) -> None:
        self.params = params if isinstance(params, FaultParams) else self.Params(**params)

    def twin_only_reason(self) -> str:
        """Why this fault, with these parameters, cannot run on a real cluster ("" if it can)."""
        return self.twin_only

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        raise NotImplementedError

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        raise NotImplementedError


def delete_if_present(cluster: Cluster, kind: str, namespace: str | None, name: str) -> None:
    """Delete an object unless it is already gone: recover may run after the agent removed it."""
    if name and cluster.get(kind, namespace, name) is not None:
        cluster.delete(kind, namespace, name)


def node_of(cluster: Cluster, namespace: str, labels: dict[str, str], *, skip_terminating: bool = False) -> str:
    """The node of the first scheduled pod (by name) that `labels` select: where a fault aimed at
    a service's node lands. `skip_terminating` passes over pods being deleted."""
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    for pod in sorted(cluster.list("Pod", namespace, label_selector=selector), key=lambda p: p["metadata"]["name"]):
        node = (pod.get("spec") or {}).get("nodeName")
        if node and not (skip_terminating and pod["metadata"].get("deletionTimestamp")):
            return str(node)
    raise LookupError(f"cannot inject: no scheduled pod matches {selector} in {namespace}")


FAULTS: Registry[type[Fault]] = Registry("fault", ("sregym.faults",))


def fault(cls: type[Fault]) -> type[Fault]:
    """Register a Fault subclass under its `name`."""
    if not cls.name:
        raise ValueError(f"fault {cls.__name__} has no name")
    FAULTS.register(cls.name, cls)
    return cls


def make_fault(name: str, params: dict[str, Any]) -> Fault:
    return FAULTS.get(name)(params)
