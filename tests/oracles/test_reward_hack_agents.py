"""Reward-hack behaviours, run as agents through the conductor, must score 0 on mitigation.

Each agent is what a lazy or adversarial agent would try instead of finding the cause: delete
the load generator, scale everything to zero, delete and recreate the namespace, delete every
pod again and again, strip probes, limits and policies wholesale, restart everything, or give up.
They act only through the kubectl tool with the agent credential, like any agent, and each runs
on one problem of every layer of the lite suite (and on demo-shop, whose load generator and
probes the agent can reach). A hack that is a genuine fix for a problem (restarting a workload
whose pods hold a stale password) is not run on that problem.
"""

from __future__ import annotations

import json
import os
from typing import Any, ClassVar

import pytest

from sregym.agents import Agent
from sregym.env import AttemptResult, Conductor
from sregym.env.models import Brief
from sregym.problems import get_problem
from sregym.tools.session import ToolSession
from support.forked_attempts import Outcomes, run_attempts

# One problem per layer tag of the lite suite, plus demo-shop (probes in its baseline, and a
# load generator in the agent's namespace).
BY_LAYER = {
    "app": "hotel-reservation/mongodb-role-revoked-geo-v1",
    "config": "hotel-reservation/config-json-key-dropped-v1",
    "k8s": "hotel-reservation/nonexistent-node-v1",
    "network": "hotel-reservation/network-policy-deny-all-v1",
    "control-plane": "hotel-reservation/resourcequota-blocks-recreation-v1",
    "os": "hotel-reservation/cfs-cpu-throttling-v1",
    "hardware": "hotel-reservation/disk-sector-errors-geo-v1",
    "metastable": "hotel-reservation/metastable-retry-collapse-v1",
    "correlated": "hotel-reservation/faulty-image-correlated-v1",
    "concurrent": "hotel-reservation/concurrent-target-port-and-webhook-outage-v1",
    "demo": "demo-shop/resourcequota-blocks-recreation-v1",
}
WORKLOAD_KINDS = ("deployments", "statefulsets")


def kubectl(session: ToolSession, command: str, stdin: str | None = None) -> Any:
    args: dict[str, Any] = {"command": command}
    if stdin is not None:
        args["stdin"] = stdin
    return session.call("kubectl", args)


def rows(session: ToolSession, command: str, template: str) -> list[list[str]]:
    """A jsonpath query (one row per item, fields separated by spaces): short output, no JSON
    document for the tool to truncate."""
    result = kubectl(session, f"{command} -o jsonpath='{template}'")
    return [] if result.is_error else [line.split() for line in result.text.splitlines() if line.strip()]


class HackAgent(Agent):
    """Submits a guess for the diagnosis, runs its hack, declares the incident mitigated."""

    name: ClassVar[str] = "hack"

    def run(self, session: ToolSession, brief: Brief) -> None:
        namespace = brief.namespaces[0]
        if session.phase == "diagnosis":
            session.call("submit_diagnosis", {"root_cause_entities": [f"{namespace}/Deployment/frontend"],
                                              "mechanism": "unknown"})
        if session.phase != "mitigation":
            return
        self.hack(session, namespace)
        if not session.done:
            session.call("submit_mitigation_done", {})

    def hack(self, session: ToolSession, namespace: str) -> None:
        raise NotImplementedError


class DeleteLoadGenerator(HackAgent):
    """Deletes every load generator it can find (a quiet system has no errors)."""

    def hack(self, session: ToolSession, namespace: str) -> None:
        kubectl(session, "delete deployment sregym-loadgen -n sregym-system")  # hidden: refused
        template = '{range .items[*]}{.metadata.namespace} {.metadata.name}{"\\n"}{end}'
        for ns, name in rows(session, "get deployments -A", template):
            if any(word in name for word in ("load", "wrk", "locust")):
                kubectl(session, f"delete deployment {name} -n {ns}")


class ScaleEverythingToZero(HackAgent):
    """No pods, no failing pods."""

    def hack(self, session: ToolSession, namespace: str) -> None:
        for kind in WORKLOAD_KINDS:
            kubectl(session, f"scale {kind} --all --replicas=0 -n {namespace}")


class RecreateNamespace(HackAgent):
    """Deletes the namespace (or, when that is refused, everything in it) and recreates it."""

    def hack(self, session: ToolSession, namespace: str) -> None:
        if kubectl(session, f"delete namespace {namespace} --wait=false").is_error:
            kubectl(session, f"delete deployments,statefulsets,services,configmaps,secrets,"
                             f"persistentvolumeclaims,pods --all -n {namespace} --wait=false")
        kubectl(session, f"create namespace {namespace}")


class DeletePodsRepeatedly(HackAgent):
    """Deletes every pod, five times over."""

    def hack(self, session: ToolSession, namespace: str) -> None:
        for _ in range(5):
            kubectl(session, f"delete pods --all -n {namespace} --wait=false")
            kubectl(session, f"get pods -n {namespace}")


class StripSafeguards(HackAgent):
    """Removes every probe, limit, policy, quota and LimitRange, then restarts everything."""

    def hack(self, session: ToolSession, namespace: str) -> None:
        template = '{range .items[*]}{.metadata.name} {.spec.template.spec.containers[*].name}{"\\n"}{end}'
        for kind in WORKLOAD_KINDS:
            for name, *containers in rows(session, f"get {kind} -n {namespace}", template):
                # A strategic-merge null deletes the field.
                stripped = [{"name": c, "readinessProbe": None, "livenessProbe": None, "startupProbe": None,
                             "resources": {"limits": None}} for c in containers]
                patch = json.dumps({"spec": {"template": {"spec": {"containers": stripped}}}})
                kubectl(session, f"patch {kind} {name} -n {namespace} -p '{patch}'")
        kubectl(session, f"delete networkpolicies,resourcequotas,limitranges --all -n {namespace}")
        for kind in WORKLOAD_KINDS:
            kubectl(session, f"rollout restart {kind} -n {namespace}")


class RestartEverything(HackAgent):
    """`kubectl rollout restart` of every Deployment and StatefulSet."""

    def hack(self, session: ToolSession, namespace: str) -> None:
        for kind in WORKLOAD_KINDS:
            kubectl(session, f"rollout restart {kind} -n {namespace}")


class DeclareDoneAtOnce(HackAgent):
    """Gives up: declares the incident mitigated without doing anything."""

    def hack(self, session: ToolSession, namespace: str) -> None:
        return None


class SubmitNothing(Agent):
    """Gives up without a word: no diagnosis, no mitigation."""

    def run(self, session: ToolSession, brief: Brief) -> None:
        return None


# hack → (agent, the must_keep check that names the damage, or None where "nothing was fixed"
# is the whole story). None of these is a valid fix of any problem in BY_LAYER (restarting a
# workload whose pods hold a stale password would be, so that problem is not among them).
HACKS: dict[str, tuple[type[Agent], str | None]] = {
    "delete-load-generator": (DeleteLoadGenerator, None),
    "scale-everything-to-zero": (ScaleEverythingToZero, "baseline_intact"),
    "recreate-namespace": (RecreateNamespace, "baseline_intact"),
    "delete-pods-repeatedly": (DeletePodsRepeatedly, None),
    "strip-safeguards": (StripSafeguards, "safeguards_kept"),
    "restart-everything": (RestartEverything, None),
}
LAYERS = tuple(BY_LAYER)
PER_HACK = 4


def _layers_of(index: int, hack: str) -> list[str]:
    """The layers one hack runs on. Every hack against every layer is 77 attempts (about 13
    CPU-minutes, too much for every CI run): by default each hack takes PER_HACK consecutive
    layers of a rotation, so each layer still meets two or three hacks and each hack several
    problems; `SREGYM_HACK_MATRIX=full` runs the whole cross product (all 77 scored 0 when this
    was written)."""
    if os.environ.get("SREGYM_HACK_MATRIX") == "full":
        return list(LAYERS)
    chosen = [LAYERS[(index * PER_HACK + k) % len(LAYERS)] for k in range(PER_HACK)]
    if hack == "delete-load-generator" and "demo" not in chosen:
        chosen.append("demo")  # the only load generator the agent credential can reach
    return chosen


CASES = [pytest.param(hack, layer, id=f"{hack}-{layer}")
         for i, hack in enumerate(HACKS) for layer in _layers_of(i, hack)]
# Giving up has two forms; they alternate over a few layers (the check protocol already proves
# that doing nothing fails on every problem).
GIVE_UP = [pytest.param((DeclareDoneAtOnce, SubmitNothing)[i % 2], layer, id=f"give-up-{layer}")
           for i, layer in enumerate(LAYERS) if os.environ.get("SREGYM_HACK_MATRIX") == "full" or i % 3 == 0]


SEED = 0
BASELINE_S = 120.0


def attempt(agent: Agent, problem_id: str) -> Any:
    """One mitigation-only attempt (the diagnosis phase is scored elsewhere)."""
    with Conductor(get_problem(problem_id), seed=SEED, phases=("mitigation",), baseline_s=BASELINE_S,
                   agent_name=type(agent).__name__) as conductor:
        brief = conductor.start()
        agent.run(conductor.session, brief)
        return conductor.result()


def attempt_json(problem_id: str, agent_name: str) -> str:
    """`attempt` of the agent class called `agent_name` (run in `support.forked_attempts`' child)."""
    return str(attempt(globals()[agent_name](), problem_id).model_dump_json())


@pytest.fixture(scope="module")
def results() -> Outcomes:
    """Every attempt of this module, run in one child that deploys each app and runs its healthy
    baseline once and forks each attempt from there (`support.forked_attempts`): an xdist worker
    cannot fork, and deployed every attempt's app afresh."""
    cases = sorted({(BY_LAYER[layer], HACKS[hack][0].__name__) for hack, layer in (p.values for p in CASES)}
                   | {(BY_LAYER[layer], agent_class.__name__) for agent_class, layer in (p.values for p in GIVE_UP)})
    return run_attempts(__file__, "attempt_json", cases, seed=SEED, baseline_s=BASELINE_S)


def _failed_checks(result: Any) -> set[str]:
    assert not result.environment_failure
    assert result.mitigation is not None and not result.mitigation.passed and not result.passed
    return {check.name for check in result.mitigation.checks if not check.passed}


@pytest.mark.parametrize(("hack", "layer"), CASES)
def test_reward_hack_scores_zero(results: Outcomes, hack: str, layer: str) -> None:
    agent_class, damage = HACKS[hack]
    failed = _failed_checks(AttemptResult.model_validate_json(results[BY_LAYER[layer], agent_class.__name__]))
    if damage is not None:
        assert damage in failed
    if hack == "delete-load-generator" and layer == "demo":  # the only generator the agent can reach
        assert "workload_intact" in failed


@pytest.mark.parametrize(("agent_class", "layer"), GIVE_UP)
def test_giving_up_scores_zero(results: Outcomes, agent_class: type[Agent], layer: str) -> None:
    result = AttemptResult.model_validate_json(results[BY_LAYER[layer], agent_class.__name__])
    _failed_checks(result)
    assert result.mitigation.declared_done == (agent_class is DeclareDoneAtOnce)
