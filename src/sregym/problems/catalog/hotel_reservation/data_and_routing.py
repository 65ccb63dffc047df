"""Hotel Reservation problems below the services: the databases' on-disk data and the cluster's
pod routing.

- every MongoDB moved to a release that cannot open the data files on its volume (the
  featureCompatibilityVersion rule, `twin/datastores/mongo_versions.py`): six crash loops with
  mongod's own `Wrong mongod version` fatal line;
- Calico BGP route reflectors chosen by a node label that the route-reflector node no longer has
  (`twin/node/bgp.py`): no node learns the others' pod routes, so traffic between pods on
  different nodes times out while traffic on one node still works.

The builders' docstrings are the problem cards. Faults are Kubernetes writes with the admin
credential; the symptoms come from the twin's mongod program and its routing model.
"""

from __future__ import annotations

from functools import partial

from sregym.apps.hotel_reservation import NAMESPACE
from sregym.problems.builders import deployment_cause, patch_container
from sregym.problems.model import CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import GroundTruth

APP = "hotel-reservation"
WINDOW_S = 180.0
SETTLE_S = 60.0
IMPACT = ("unavailable", "fail", "error", "errors", "crash", "crashloopbackoff", "not ready", "outage", "down",
          "timeout", "timed out", "no reachable servers", "deadline exceeded")

mechanisms({
    "incompatible_upgrade": ("featurecompatibilityversion", "feature compatibility", "fcv", "wrong mongod version",
                             "upgrade_problem", "incompatible version", "incompatible image", "data files",
                             "on-disk format", "cannot open the data", "upgrade path", "exit code 62",
                             "8.0.14-rc0", "release candidate"),
}, related={"incompatible_upgrade": ("crashing_image", "bad_image")})

_deploy = partial(deployment_cause, NAMESPACE)

# ---------------------------------------------------- 1. incompatible MongoDB upgrade everywhere
MONGODBS = ("mongodb-geo", "mongodb-profile", "mongodb-rate", "mongodb-recommendation", "mongodb-reservation",
            "mongodb-user")
GOOD_MONGO = "mongo:4.4.6"
RC_MONGO = "mongo:8.0.14-rc0"


def _mongo_container(deployment: str) -> str:
    return f"hotel-reserv-{deployment.removeprefix('mongodb-')}-mongo"


def _clients(deployment: str) -> str:
    return deployment.removeprefix("mongodb-")


@problem
def update_incompatible_correlated() -> Problem:
    """Every MongoDB of Hotel Reservation (geo, profile, rate, recommendation, reservation, user)
    is updated from `mongo:4.4.6` to the release candidate `mongo:8.0.14-rc0` at once.

    The data on each PersistentVolume was written by 4.4 (featureCompatibilityVersion 4.4); an 8.0
    binary opens only FCV 7.0 or 8.0. Each new mongod logs the fatal `Wrong mongod version`
    (`UPGRADE_PROBLEM: Found an invalid featureCompatibilityVersion document ... expected '7.0' or
    '8.0'`), exits with code 62 and goes into CrashLoopBackOff; the Deployments use `Recreate`, so
    the old pods are gone and every service that reads a database fails (`no reachable servers`).
    The image is pullable and the binary fine: the shared cause is the version jump against the
    data files, not six separate bugs. Fix: roll the six databases back to `mongo:4.4.6` (an
    upgrade must go one release at a time, raising the FCV in between).
    """
    return Problem(
        id="hotel-reservation/update-incompatible-correlated-v1",
        title="every database is crash-looping after an update",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("correlated", "app"), difficulty="medium", sources=("sregym:update_incompatible_correlated",)),
        faults=tuple(FaultSpec(fault="set_image", params={"namespace": NAMESPACE, "name": d, "image": RC_MONGO})
                     for d in MONGODBS),
        ground_truth=GroundTruth(
            root_causes=tuple(_deploy(d) for d in MONGODBS), mechanism="incompatible_upgrade",
            detail=f"the six MongoDB Deployments were updated from {GOOD_MONGO} to {RC_MONGO}; mongod 8.0 refuses "
                   "the featureCompatibilityVersion 4.4 data files on their volumes (Wrong mongod version, exit 62)",
            detail_keywords=(RC_MONGO, "8.0.14-rc0", "featurecompatibilityversion", "fcv", "wrong mongod version",
                             "upgrade_problem", "4.4"),
            affected=tuple(_deploy(_clients(d)) for d in MONGODBS), impact_keywords=IMPACT,
            description="All MongoDB backends were upgraded to an incompatible image version (mongo:8.0.14-rc0) "
                        "that cannot open the data files 4.4 wrote, so every database crash-loops and the "
                        "services that persist or read data fail."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="workloads_ready", params={"names": list(MONGODBS)}),),
            window_s=WINDOW_S),
        gold=tuple(patch_container(NAMESPACE, d, _mongo_container(d), {"image": GOOD_MONGO}) for d in MONGODBS),
        settle_s=SETTLE_S,
    )
