"""Hotel Reservation problems whose root cause is a team's Chaos Mesh experiment left running in
the app's namespace: AIOpsLab's Chaos Mesh scenarios (container kill on geo; pod failure, pod
kill, packet loss and delay on user).

AIOpsLab writes each experiment once, in the app namespace, for 100-200 s: a one-shot kill heals
by itself, so a benchmark that grades mitigation would pass the noop agent. Here each one is a
`Schedule` a team forgot (`kubectl get schedules -n hotel-reservation`): it spawns the experiment
every minute (cron `* * * * *`, Forbid, history 1), and experiments with a lasting effect run 55 s
per minute, so each run selects the current pods again. Restarting or deleting the victim's pods
therefore lasts only until the next run; the fix is to delete the Schedule or pause it
(`experiment.chaos-mesh.org/pause: "true"`). Every check watches a little over a minute, long
enough to see the next run, and no longer: the registry-wide check protocol runs each of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from sregym.apps.hotel_reservation import NAMESPACE, PORTS
from sregym.problems.builders import deployment_cause, object_cause
from sregym.problems.family import Param, declare_family
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth

mechanisms({"chaos_experiment": ("chaos mesh", "chaos experiment", "chaos-mesh", "schedule", "networkchaos",
                                 "podchaos", "experiment")},
           related={"chaos_experiment": ("network_policy", "crashing_image", "oom")})

APP = "hotel-reservation"
SELECTOR_KEY = "io.kompose.service"
IMPACT = ("unavailable", "not ready", "fail", "error", "errors", "timeout", "unreachable", "loss", "delay",
          "latency", "slow", "restart", "killed", "down", "500")
WINDOW_S = 150.0  # the fix lands, then at least two cron minutes of checks
WATCH_S = 70.0  # one cron minute and a margin: long enough to see the next run
RUN = "55s"  # an experiment with a lasting effect is on 55 s of every minute

# The Deployments whose requests need each service (its callers up to the entry point).
CALLERS: dict[str, tuple[str, ...]] = {
    "geo": ("search", "frontend"), "rate": ("search", "frontend"), "search": ("frontend",),
    "profile": ("frontend",), "recommendation": ("frontend",), "reservation": ("frontend",), "user": ("frontend",),
}
VICTIMS = Param("service", tuple(CALLERS))

_deploy = partial(deployment_cause, NAMESPACE)
_obj = partial(object_cause, NAMESPACE)


@dataclass(frozen=True)
class TeamChaos:
    """One AIOpsLab scenario as a Schedule: its action, the experiment block (without mode and
    selector), what the agent sees, and the check that stays green once the Schedule is gone."""

    action: str  # the slug's verb: container-kill, pod-failure, pod-kill, network-loss, network-delay
    kind: str
    experiment: dict[str, Any]
    title: str
    effect: str  # what one run does to the victim, for the ground-truth detail
    sources: tuple[str, ...]  # AIOpsLab's ids, spelled as docs/coverage.md's rows derive them
    default_victim: str

    def schedule_name(self, service: str) -> str:
        return f"{service}-{self.action}"

    def block(self, service: str) -> dict[str, Any]:
        if self.action == "container-kill":
            return {**self.experiment, "containerNames": [f"hotel-reserv-{service}"]}
        return dict(self.experiment)

    def check(self, service: str) -> CheckSpec:
        if self.kind == "PodChaos":
            return CheckSpec(check="sustained_ready", params={"deployment": service, "seconds": WATCH_S})
        if self.action == "network-loss":
            caller = CALLERS[service][0]
            return CheckSpec(check="keeps_reaching", params={"deployment": caller, "seconds": WATCH_S,
                                                             "targets": [[service, PORTS[service]]]})
        return CheckSpec(check="entry_slo")


SCENARIOS: dict[str, TeamChaos] = {s.action: s for s in (
    TeamChaos("container-kill", "PodChaos", {"action": "container-kill"},
              "the geo container is killed again and again", "SIGKILLs the {container} container",
              ("aiopslab:container_kill-detection", "aiopslab:container_kill-localization"), "geo"),
    TeamChaos("pod-failure", "PodChaos", {"action": "pod-failure", "duration": RUN},
              "user pods keep failing", "swaps every container image of the pod for the pause image for 55 s",
              ("aiopslab:pod_failure_hotel_res-1",), "user"),
    TeamChaos("pod-kill", "PodChaos", {"action": "pod-kill"},
              "user pods keep disappearing", "deletes the pod", ("aiopslab:pod_kill_hotel_res-1",), "user"),
    TeamChaos("network-loss", "NetworkChaos",
              {"action": "loss", "duration": RUN, "loss": {"loss": "99", "correlation": "100"}},
              "calls to user keep failing", "drops 99% of the packets the pod sends, for 55 s",
              ("aiopslab:network_loss_hotel_res-1",), "user"),
    TeamChaos("network-delay", "NetworkChaos",
              {"action": "delay", "duration": RUN, "delay": {"latency": "10s", "correlation": "100", "jitter": "0ms"}},
              "requests that need user are extremely slow", "delays every packet the pod sends by 10 s, for 55 s",
              ("aiopslab:network_delay_hotel_res-1",), "user"),
)}


def team_chaos_problem(action: str, service: str | None = None) -> Problem:
    """One scenario on one victim service (the AIOpsLab victim by default)."""
    s = SCENARIOS[action]
    service = service or s.default_victim
    name = s.schedule_name(service)
    effect = s.effect.format(container=f"hotel-reserv-{service}")
    return Problem(
        id=f"hotel-reservation/{s.default_victim}-scheduled-{action}-v1",  # a variant's id is set by its family
        title=s.title.replace(s.default_victim, service),
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",) if s.kind == "NetworkChaos" else ("k8s",), difficulty="medium",
                  sources=s.sources),
        faults=(FaultSpec(fault="scheduled_chaos", params={
            "name": name, "type": s.kind, "namespace": NAMESPACE, "labels": {SELECTOR_KEY: service},
            "experiment": s.block(service), "schedule_namespace": NAMESPACE}),),
        ground_truth=GroundTruth(
            root_causes=(_obj("Schedule", name),), mechanism="chaos_experiment",
            detail=f"Schedule {name} in {NAMESPACE} spawns a {s.kind} {s.experiment['action']} on {service} "
                   f"every minute; each run {effect}",
            detail_keywords=(name, s.kind, "Schedule", s.experiment["action"]),
            affected=(_deploy(service), *(_deploy(c) for c in CALLERS[service])),
            impact_keywords=IMPACT,
            description=f"A Chaos Mesh Schedule left running in {NAMESPACE} strikes {service} every minute; "
                        "restarting the victim lasts only until the next run."),
        mitigation=MitigationSpec(must_fix=(s.check(service),), window_s=WINDOW_S),
        gold=(Action(op="delete", kind="Schedule", namespace=NAMESPACE, name=name),),
        settle_s=WATCH_S,
    )


@problem
def team_chaos_left_running() -> list[Problem]:
    """A team's Chaos Mesh Schedule in hotel-reservation strikes one service every minute
    (AIOpsLab's Chaos Mesh scenarios): container-kill on geo's `hotel-reserv-geo` container
    (`container_kill`), and on user a 55 s pod-failure (`pod_failure_hotel_res`), a pod-kill
    (`pod_kill_hotel_res`), 99% packet loss (`network_loss_hotel_res`) and a 10 s delay
    (`network_delay_hotel_res`).

    Symptoms: the victim's pods restart, disappear or run the pause image once a minute, or its
    callers time out; `kubectl get schedules,podchaos,networkchaos -n hotel-reservation` shows
    the Schedule and its current run. The Schedule is the root cause, the victim and its callers
    are affected. Fix: delete the Schedule or pause it; restarting the victim does not help.
    Each scenario is a family over the victim service (`@service=rate` ...).
    """
    return [team_chaos_problem(action) for action in SCENARIOS]


def _declare_families() -> None:
    for action, s in SCENARIOS.items():
        declare_family(f"hotel-reservation/{s.default_victim}-scheduled-{action}-v1", (VICTIMS,),
                       partial(_variant, action), defaults={"service": s.default_victim}, module=__name__)


def _variant(action: str, service: str) -> Problem:
    return team_chaos_problem(action, service)


_declare_families()
