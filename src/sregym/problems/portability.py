"""Which problems run on a real cluster: those whose faults and changes are all plain Kubernetes
writes (or Chaos Mesh experiments Chaos Mesh itself executes).

A fault that needs a twin extension (device-scoped IOChaos, a build that exists only in the
twin's registry, a node repaired through the twin's node OS) says so (`Fault.twin_only_reason`);
`--backend kube` skips such a problem with that reason instead of running something that would
grade differently.
"""

from __future__ import annotations

from sregym.faults.base import make_fault
from sregym.problems.model import Problem

CHAOS_GROUP = "chaos-mesh.org"


def twin_only_reason(problem: Problem) -> str:
    """Why `problem` needs the twin ("" when it runs on any cluster)."""
    for spec in (*problem.faults, *problem.changes):
        reason = make_fault(spec.fault, spec.params).twin_only_reason()
        if reason:
            return f"{spec.fault}: {reason}"
    return ""


def needs_chaos_mesh(problem: Problem) -> bool:
    """Whether a fault of `problem` creates Chaos Mesh experiments (the CRDs must be installed)."""
    from sregym.faults.chaos_objects import ChaosExperiment

    return any(isinstance(make_fault(s.fault, s.params), ChaosExperiment) for s in problem.faults) or \
        any(isinstance(make_fault(s.fault, s.params), ChaosExperiment) for s in problem.changes)


__all__ = ["CHAOS_GROUP", "needs_chaos_mesh", "twin_only_reason"]
