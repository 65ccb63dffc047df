"""No-incident controls: problems where nothing is broken.

Why: a detection score means nothing without negatives. Each control runs the app with its noise
and, for some, a benign operator change (a rollout restart, a scale-up) made while the agent
works; the right detection answer is "no incident", the right diagnosis names no root cause,
and the mitigation oracle holds only the must_keep checks, so any disruptive "fix" is collateral
damage and fails. Controls carry `kind="control"` and the `controls` and `detection` suites;
nothing the agent can reach says so (their ids never reach the cluster, and the changes are the
same writes `kubectl rollout restart` and `kubectl scale` make).
"""

from __future__ import annotations

from sregym.apps.astronomy_shop import NAMESPACE as ASTRO_NAMESPACE
from sregym.apps.hotel_reservation import NAMESPACE as HR_NAMESPACE
from sregym.apps.social_network import NAMESPACE as SN_NAMESPACE
from sregym.problems.builders import keep
from sregym.problems.model import CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

SUITES = ("controls", "detection")
WINDOW_S = 180.0
SETTLE_S = 60.0


def _nothing_wrong(what: str) -> GroundTruth:
    return GroundTruth(root_causes=(), mechanism="none", detail="nothing is broken",
                       description=f"No incident: {what}")


def _control(app: str, namespace: str, slug: str, title: str, what: str, *,
             changes: tuple[FaultSpec, ...] = (), extra_keep: tuple[CheckSpec, ...] = (),
             app_suites: tuple[str, ...] = (), sources: tuple[str, ...] = ()) -> Problem:
    return Problem(
        id=f"{app}/{slug}-v1", title=title, app=app, namespace=namespace, kind="control",
        tags=Tags(layers=("none",), difficulty="easy", suites=(*SUITES, *app_suites), sources=sources),
        changes=changes, ground_truth=_nothing_wrong(what),
        mitigation=MitigationSpec(must_keep=keep(*extra_keep), window_s=WINDOW_S),
        settle_s=SETTLE_S)


@problem
def hotel_noise_only() -> Problem:
    """Hotel Reservation with its ambient noise only: pods replaced, warning events, a container
    restart, log chatter, a short network delay. Nothing needs an operator."""
    return _control("hotel-reservation", HR_NAMESPACE, "no-incident-noise",
                    "Hotel Reservation on an ordinary day", "ambient noise only",
                    sources=("aiopslab:noop_detection_hotel_reservation-1",))


@problem
def hotel_rollout_restart() -> Problem:
    """A routine `kubectl rollout restart` of the recommendation Deployment while the agent is on
    call: every pod is replaced by an identical one, briefly not ready, then serving again."""
    change = FaultSpec(fault="rollout_restart", params={"namespace": HR_NAMESPACE, "name": "recommendation"})
    return _control("hotel-reservation", HR_NAMESPACE, "no-incident-rollout",
                    "Hotel Reservation during a routine restart", "a completed rollout restart of recommendation",
                    changes=(change,))


@problem
def hotel_scale_up() -> Problem:
    """Capacity added ahead of demand: the frontend Deployment scaled from 1 to 3 replicas. The
    new pods start, become ready and join the Service; scaling back is collateral damage."""
    change = FaultSpec(fault="scale_up", params={"namespace": HR_NAMESPACE, "name": "frontend", "replicas": 3})
    return _control("hotel-reservation", HR_NAMESPACE, "no-incident-scale-up",
                    "Hotel Reservation after a scale-up", "the frontend Deployment scaled up to 3 replicas",
                    changes=(change,),
                    extra_keep=(CheckSpec(check="replicas_kept", params={"name": "frontend", "replicas": 3}),))


@problem
def astronomy_noise_only() -> Problem:
    """Astronomy Shop with its ambient noise only. Nothing needs an operator."""
    return _control("astronomy-shop", ASTRO_NAMESPACE, "no-incident-noise",
                    "Astronomy Shop on an ordinary day", "ambient noise only",
                    sources=("aiopslab:noop_detection_astronomy_shop-1",))


@problem
def social_network_noise_only() -> Problem:
    """Social Network with its ambient noise only (AIOpsLab `noop_detection_social_network`):
    the wrk2 mixes post and read timelines, nothing needs an operator."""
    return _control("social-network", SN_NAMESPACE, "no-incident-noise",
                    "Social Network on an ordinary day", "ambient noise only", app_suites=("social-network",),
                    sources=("aiopslab:noop_detection_social_network-1",))
