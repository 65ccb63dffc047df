"""Hotel Reservation metastable failures beyond the burst-triggered retry collapse
(`disk_and_metastable.py`): a short loss of capacity as the trigger.

Each builder's docstring is the problem card. The sustaining loop is the data plane's own: a
caller whose per-attempt timeout is below the callee's latency under load retries every call,
the retries multiply the callee's arrivals past its capacity, and the queue they build keeps
every attempt late. The trigger (`transient_chaos`, a StressChaos that runs out and is deleted)
ends before the agent starts; the durability check (`replayed_chaos_recovers`) replays it.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.problems.builders import deployment_cause
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

APP = "hotel-reservation"
NS = "hotel-reservation"
IMPACT = ("unavailable", "fail", "error", "down", "latency", "slow", "timeout", "cannot", "outage", "degraded",
          "collapse", "stuck", "overload", "saturat")

_deploy = partial(deployment_cause, NS)

# ===================================================== capacity dip + retry storm on profile
FRONTEND_TIMEOUT = "20ms"
FRONTEND_RETRIES = "5"
PROFILE_CPU = "120m"  # ~2× what the base load's GetProfiles need; far below the ×6 attempts
STRESS = {"name": "cpu-load", "kind": "StressChaos", "namespace": NS, "labels": {"io.kompose.service": "profile"},
          "action": {"stressors": {"cpu": {"workers": 2, "load": 100}}}, "seconds": 20.0}


def _env_patch(container: str, env: dict[str, str]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": [
        {"name": container, "env": [{"name": k, "value": v} for k, v in env.items()]}]}}}}


def _cpu_patch(container: str, cpu: str) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": [
        {"name": container, "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}}}}


@problem
def metastable_capacity_retry_storm() -> Problem:
    """frontend's gRPC clients run with a 20 ms per-attempt timeout and 5 retries on error (env
    `GRPC_CLIENT_TIMEOUT`, `GRPC_CLIENT_RETRIES_ON_ERROR` on the frontend Deployment), while
    `profile` runs with a CPU limit that is about twice what normal traffic needs. Then a
    CPU-hungry process shares profile's pod for 20 s and goes away (a short capacity dip).

    During the dip profile's queue grows past 20 ms; frontend abandons its GetProfiles calls and
    retries each up to five times, so profile receives several times the normal load — more than
    its limit can serve even without the dip. Its queue stays at the caller's timeout: every
    call it answers is late, the calls whose deadline passed are cancelled (DeadlineExceeded
    server spans), searches and recommendations fail at the frontend, profile is CPU-throttled,
    and all this persists at normal traffic after the dip is over (SREGym's
    capacity_decrease_rpc_retry_storm anatomy). Restarting profile clears the queue only until
    the next dip. Fix: a timeout above profile's latency and few retries on frontend (rolled
    out), or enough CPU on profile to serve the amplified load. A durability check replays the
    20 s CPU stress; the system must come back within a minute or so.
    """
    return Problem(
        id="hotel-reservation/metastable-capacity-retry-storm-v1",
        title="hotel searches and recommendations keep failing although nothing is down",
        app=APP, namespace=NS,
        tags=Tags(layers=("metastable",), difficulty="hard"),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [
                    {"kind": "Deployment", "namespace": NS, "name": "profile",
                     "patch": _cpu_patch("hotel-reserv-profile", PROFILE_CPU)},
                    {"kind": "Deployment", "namespace": NS, "name": "frontend",
                     "patch": _env_patch("hotel-reserv-frontend", {"GRPC_CLIENT_TIMEOUT": FRONTEND_TIMEOUT,
                                                                   "GRPC_CLIENT_RETRIES_ON_ERROR": FRONTEND_RETRIES})}]}),
                FaultSpec(fault="transient_chaos", params={
                    **STRESS, "wait_rollout": [f"{NS}/profile", f"{NS}/frontend"]})),
        ground_truth=GroundTruth(
            root_causes=(_deploy("frontend"),), mechanism="retry_storm",
            detail=f"frontend's gRPC clients use GRPC_CLIENT_TIMEOUT={FRONTEND_TIMEOUT} with "
                   f"GRPC_CLIENT_RETRIES_ON_ERROR={FRONTEND_RETRIES}: after a short CPU dip on profile the "
                   "retries keep profile overloaded",
            detail_keywords=("GRPC_CLIENT_TIMEOUT", "GRPC_CLIENT_RETRIES_ON_ERROR", FRONTEND_TIMEOUT, "retries",
                             "retry", "timeout", "metastable"),
            affected=(_deploy("profile"), _deploy("frontend")), impact_keywords=IMPACT,
            description="A short CPU dip pushed profile's latency past frontend's tiny timeout; frontend's "
                        "retries multiply the load on profile, which stays saturated at normal traffic."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="entry_slo"),),
            # The stress itself fails calls whatever the policy (profile has almost no CPU left for
            # 20 s): judge a full SLO window after it, so the re-check of the entry SLO that
            # follows the replay sees only the recovered system.
            durability=(CheckSpec(check="replayed_chaos_recovers", params={
                **STRESS, "judge_window_s": 60.0, "recover_within_s": 120.0}),),
            window_s=180.0),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="frontend",
                     patch=_env_patch("hotel-reserv-frontend", {"GRPC_CLIENT_TIMEOUT": "1s",
                                                                "GRPC_CLIENT_RETRIES_ON_ERROR": "1"})),),
    )
