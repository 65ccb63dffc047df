"""Astronomy Shop problems whose root cause is a Chaos Mesh experiment left running: ITBench's
scheduled scenarios (17, 18, 19, 21, 22, 25, 61, 80, 81, 83, 91).

Chaos Mesh is installed on the cluster like any platform add-on, and a team's `Schedule` in the
shop's namespace spawns one experiment on a workload every minute (cron `* * * * *`, Forbid,
history 1: ITBench's `scheduled-chaos-mesh-experiment`). The twin's chaos engine turns each
spawned experiment into the real symptom (delay, loss, partition, pod failure, memory or CPU
stress). An SRE finds the Schedule (`kubectl get schedules -n astronomy-shop`) and ends it by
deleting it or pausing it (`experiment.chaos-mesh.org/pause: "true"`); either removes or pauses
the running child, as Chaos Mesh does. Restarting the victim only lasts until the next run, so
every check watches long enough to see the next minute's run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE, PORTS
from sregym.problems.catalog.astronomy_shop.common import APP, IMPACT, SUITE, deploy, obj
from sregym.problems.model import Action, CheckSpec, Difficulty, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth

mechanisms({"chaos_experiment": ("chaos mesh", "chaos experiment", "chaos-mesh", "schedule", "networkchaos",
                                 "podchaos", "stresschaos", "httpchaos", "jvmchaos", "experiment")},
           related={"chaos_experiment": ("network_policy", "oom", "cpu_throttling", "memory_pressure")})

KINDS_BLOCK = {"NetworkChaos": "networkChaos", "PodChaos": "podChaos", "StressChaos": "stressChaos"}
CHAOS_IMPACT = (*IMPACT, "timeout", "unreachable", "partition", "loss", "delay", "oomkilled", "restart")
WINDOW_S = 150.0  # the fix lands, then at least two cron minutes of checks


def component(name: str) -> dict[str, str]:
    """The pod selector ITBench's experiments use."""
    return {"app.kubernetes.io/component": name}


@dataclass(frozen=True)
class ScheduledCase:
    """One ITBench scheduled scenario: the Schedule (name, kind, victim, experiment block,
    optional target), the callers that see it, the check that stays green once it is ended."""

    slug: str
    title: str
    schedule: str
    kind: str
    victim: str
    experiment: dict[str, Any]
    detail: str
    affected: tuple[str, ...]
    check: CheckSpec
    sources: tuple[str, ...]
    target: str | None = None
    difficulty: Difficulty = "medium"
    keywords: tuple[str, ...] = field(default=())

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"name": self.schedule, "type": self.kind, "namespace": NAMESPACE,
                             "labels": component(self.victim), "experiment": self.experiment,
                             "schedule_namespace": NAMESPACE}
        if self.target:
            p["target"] = {"namespace": NAMESPACE, "labels": component(self.target)}
        return p


def _reaching(caller: str, callee: str) -> CheckSpec:
    return CheckSpec(check="keeps_reaching", params={"deployment": caller, "targets": [[callee, PORTS[callee]]],
                                                     "seconds": 70.0})


def _partition(slug: str, schedule: str, caller: str, callee: str, sources: tuple[str, ...],
               affected: tuple[str, ...]) -> ScheduledCase:
    return ScheduledCase(
        slug, f"{caller} keeps losing its connection to {callee}", schedule, "NetworkChaos", caller,
        {"action": "partition", "direction": "to", "duration": "55s"},
        f"Schedule {schedule} spawns a NetworkChaos partition from {caller} to {callee} every minute (55 s each)",
        affected, _reaching(caller, callee), sources, target=callee)


def _cases() -> tuple[ScheduledCase, ...]:
    return (
        ScheduledCase(
            "product-catalog-scheduled-delay", "every page that lists products is extremely slow",
            "product-catalog-network-delay", "NetworkChaos", "product-catalog",
            {"action": "delay", "delay": {"latency": "20000ms"}},
            "Schedule product-catalog-network-delay runs a NetworkChaos delaying every packet product-catalog "
            "sends by 20 s (no duration: the child runs until removed)",
            ("frontend", "checkout", "recommendation"), CheckSpec(check="entry_slo"), ("itbench:17",)),
        ScheduledCase(
            "checkout-scheduled-pod-failure", "checkouts fail again and again",
            "otel-demo-product-catalog-network-delay", "PodChaos", "checkout",
            {"action": "pod-failure", "duration": "55s"},
            "Schedule otel-demo-product-catalog-network-delay (despite its name) spawns a PodChaos pod-failure on "
            "checkout every minute: its container runs the pause image for 55 s",
            ("frontend",), CheckSpec(check="sustained_ready", params={"deployment": "checkout", "seconds": 70.0}),
            ("itbench:18",)),
        _partition("shipping-quote-scheduled-partition", "shipping-quote-network-partition", "shipping", "quote",
                   ("itbench:81", "itbench:19"), ("frontend", "checkout")),
        _partition("checkout-kafka-scheduled-partition", "fraud-detection-kafka-network-partition", "checkout", "kafka",
                   ("itbench:80",), ("accounting", "fraud-detection")),
        _partition("fraud-detection-kafka-scheduled-partition", "fraud-detection-kafka-network-partition",
                   "fraud-detection", "kafka", ("itbench:83",), ("kafka",)),
        _partition("email-checkout-scheduled-partition", "fraud-detection-kafka-network-partition", "email",
                   "checkout", ("itbench:91",), ("checkout",)),
        ScheduledCase(
            "checkout-payment-scheduled-loss", "payments fail for most of every minute",
            "checkout-payment-network-loss", "NetworkChaos", "checkout",
            {"action": "loss", "direction": "to", "duration": "55s", "loss": {"loss": "100", "correlation": "0"}},
            "Schedule checkout-payment-network-loss spawns a NetworkChaos dropping 100% of the packets from "
            "checkout to payment every minute (55 s each)",
            ("frontend",), _reaching("checkout", "payment"), ("itbench:61",), target="payment"),
    )


def scheduled_problem(case: ScheduledCase) -> Problem:
    """The problem of one Schedule left running in the shop's namespace."""
    return Problem(
        id=f"astronomy-shop/{case.slug}-v1",
        title=case.title,
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network",) if case.kind == "NetworkChaos" else ("k8s",),
                  difficulty=case.difficulty, suites=(SUITE,), sources=case.sources),
        faults=(FaultSpec(fault="scheduled_chaos", params=case.params()),),
        ground_truth=GroundTruth(
            root_causes=(obj("Schedule", case.schedule),), mechanism="chaos_experiment",
            detail=case.detail,
            detail_keywords=(case.schedule, case.kind, "Schedule", *case.keywords),
            affected=(deploy(case.victim), *(deploy(s) for s in case.affected if s != case.victim)),
            impact_keywords=CHAOS_IMPACT,
            description=f"A Chaos Mesh Schedule left running in {NAMESPACE} strikes {case.victim} every minute; "
                        "restarting the victim lasts only until the next run."),
        mitigation=MitigationSpec(must_fix=(case.check,), window_s=WINDOW_S),
        gold=(Action(op="delete", kind="Schedule", namespace=NAMESPACE, name=case.schedule),),
        settle_s=70.0,
    )


CASES: dict[str, ScheduledCase] = {c.slug: c for c in _cases()}


@problem
def scheduled_chaos_left_running() -> list[Problem]:
    """A Chaos Mesh Schedule in the shop's namespace spawns an experiment every minute (ITBench's
    scheduled scenarios): a 20 s delay on product-catalog (17), pod failure on checkout (18),
    partitions shipping→quote (19, 81), checkout→kafka (80), fraud-detection→kafka (83),
    email→checkout (91), 100% loss checkout→payment (61).

    The Schedule is the root cause and the victim workload the first affected entity. Fix: delete
    the Schedule or pause it (`experiment.chaos-mesh.org/pause: "true"`); restarting the victim's
    pods does not help, the next run strikes again.
    """
    return [scheduled_problem(c) for c in CASES.values()]
