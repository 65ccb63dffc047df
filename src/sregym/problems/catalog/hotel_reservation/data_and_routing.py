"""Hotel Reservation problems below the services: the databases' on-disk data and the cluster's
pod routing.

- every MongoDB moved to a release that cannot open the data files on its volume (the
  featureCompatibilityVersion rule, `twin/datastores/mongo_versions.py`): six crash loops with
  mongod's own `Wrong mongod version` fatal line;
- the disk under mongodb-geo silently corrupting blocks (a device-scoped IOChaos `mistake`, the
  file-level form of SREGym's dm-flakey corruption): no block-layer error anywhere, only
  WiredTiger's checksum errors and mongod's fatal assertion;
- Calico BGP route reflectors chosen by a node label that the route-reflector node no longer has
  (`twin/node/bgp.py`): no node learns the others' pod routes, so traffic between pods on
  different nodes times out while traffic on one node still works.

The builders' docstrings are the problem cards. Faults are Kubernetes writes with the admin
credential; the symptoms come from the twin's mongod program and its routing model.
"""

from __future__ import annotations

from functools import partial

from sregym.apps.hotel_reservation import NAMESPACE, PORTS
from sregym.problems.builders import (
    deployment_cause,
    move_to_new_claim,
    object_cause,
    patch_container,
    pod_recreation,
    rollout_restart,
)
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import EntityPattern, GroundTruth, RootCause

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
    "bgp_routing": ("bgp", "bgppeer", "route reflector", "route-reflector", "routereflector", "peerselector",
                    "peer selector", "nodetonodemesh", "node-to-node mesh", "calico route", "no route between nodes",
                    "routes between nodes", "cross-node", "node-role.kubernetes.io/master"),
    "data_corruption": ("corrupt", "corrupted", "corruption", "checksum", "read checksum error", "wrong bytes",
                        "dm-flakey", "flakey", "bit rot", "integrity", "__wt_block_read_off", "fassert"),
}, related={"incompatible_upgrade": ("crashing_image", "bad_image"),
            "data_corruption": ("disk", "crashing_image"),
            "bgp_routing": ("network_policy", "dns")})

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


# ------------------------------------------------- 2. silent data corruption under mongodb-geo
@problem
def silent_data_corruption() -> Problem:
    """The disk behind `mongodb-geo`'s PersistentVolume (claim `geo-pvc`) silently corrupts data:
    blocks read back and blocks written carry wrong bytes. The block layer reports nothing -- no
    `blk_update_request` or `Buffer I/O error` in the node's kernel log, no EIO, the disk looks
    healthy in node-exporter.

    Only MongoDB notices, because WiredTiger checksums every block it reads: mongod logs
    `WiredTiger error ... __wt_block_read_off ... read checksum error for 4096B block at offset
    ...: block header checksum of ... doesn't match expected checksum of ...`, then `Fatal
    assertion` (msgid 50853) and `aborting after fassert() failure`; the container restarts and
    aborts again on the next read. geo's Nearby queries fail and searches through the frontend
    fail. Restarting or rescheduling mongodb-geo onto the same volume changes nothing. Fix: take
    the database off the corrupting disk and restore its data -- a new PVC for mongodb-geo (its
    init script recreates the users, geo re-seeds its data when restarted). A durability check
    recreates the mongodb-geo pod.
    """
    return Problem(
        id="hotel-reservation/silent-data-corruption-geo-v1",
        title="searches fail; the geo database keeps aborting although the disk reports no errors",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("hardware",), difficulty="hard", sources=("sregym:silent_data_corruption",)),
        faults=(FaultSpec(fault="disk_data_corruption", params={
            "namespace": NAMESPACE, "labels": {"io.kompose.service": "mongodb-geo"}, "volume_path": "/data/db"}),),
        ground_truth=GroundTruth(
            root_causes=(object_cause(NAMESPACE, "PersistentVolumeClaim", "geo-pvc"), _deploy("mongodb-geo")),
            mechanism="data_corruption",
            detail="the disk behind mongodb-geo's volume (PVC geo-pvc) silently corrupts reads and writes of "
                   "/data/db; WiredTiger detects the bad blocks (read checksum error) and mongod aborts with a "
                   "fatal assertion, while the kernel reports no I/O error",
            detail_keywords=("geo-pvc", "checksum", "corrupt", "/data/db", "wiredtiger", "fassert", "50853"),
            affected=(_deploy("geo"), _deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="The storage under mongodb-geo corrupts data without any block-level error; MongoDB's "
                        "block checksums catch it and mongod aborts on every read, so geo's queries and the "
                        "searches that need them fail."),
        mitigation=MitigationSpec(
            must_fix=(CheckSpec(check="service_calls_succeed", params={"service": "geo"}),),
            durability=(pod_recreation("mongodb-geo"),)),
        gold=(*move_to_new_claim(NAMESPACE, "mongodb-geo", volume="geo", claim="geo-data"),
              rollout_restart(NAMESPACE, "geo", stamp="2024-06-01T00:00:00Z")),
    )


# ------------------------------------------------- 3. Calico route reflectors lost to a label
REFLECTOR_NODE = "kind-control-plane"
LEGACY_LABEL = "node-role.kubernetes.io/master"
PEER = "peer-with-route-reflectors"
# What frontend calls (by name, through DNS): on three workers some of them are always on another node.
CALLS = {"frontend": ("search", "profile", "recommendation", "reservation", "user")}


@problem
def calico_route_reflector_label_drift() -> Problem:
    """The cluster runs Calico with the BGP node-to-node mesh disabled (`BGPConfiguration/default`,
    `nodeToNodeMeshEnabled: false`) and one route reflector, the control-plane node (it carries
    the route-reflector cluster ID annotation `projectcalico.org/RouteReflectorClusterID`). The
    `BGPPeer/peer-with-route-reflectors` policy still picks the reflectors with
    `peerSelector: has(node-role.kubernetes.io/master)`, the label Kubernetes no longer sets: the
    control-plane node only has `node-role.kubernetes.io/control-plane`.

    No node matches the peer selector, so no node has a BGP session and no node learns the pod
    routes of the others. Every pod stays Running and Ready; traffic between pods on one node works,
    every connection to a pod on another node times out (`dial tcp 10.244.x.y:8083: i/o timeout`),
    DNS lookups time out from nodes without a CoreDNS pod, and frontend requests fail. Restarting
    pods helps only where the new pod happens to share a node with everything it calls. Fix: make
    the peer policy select the reflector again -- put the label back on the reflector node, or point
    the BGPPeer's selectors at `node-role.kubernetes.io/control-plane` -- keeping the
    route-reflector topology (turning the mesh back on bypasses it).
    """
    return Problem(
        id="hotel-reservation/calico-route-reflector-label-drift-v1",
        title="requests time out between services although every pod is ready",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network", "k8s"), difficulty="hard",
                  sources=("sregym:calico_route_reflector_label_drift_hotel_reservation",)),
        faults=(FaultSpec(fault="calico_route_reflector_label_drift",
                          params={"node": REFLECTOR_NODE, "label": LEGACY_LABEL, "peer_name": PEER}),),
        ground_truth=GroundTruth(
            root_causes=(RootCause(entity=object_cause(None, "BGPPeer", PEER).entity,
                                   aliases=(EntityPattern(kind="Node", name=REFLECTOR_NODE),
                                            EntityPattern(kind="BGPConfiguration", name="default"))),),
            mechanism="bgp_routing",
            detail=f"BGPPeer {PEER} selects route reflectors with has({LEGACY_LABEL}), a label no node has "
                   f"any more ({REFLECTOR_NODE} only has node-role.kubernetes.io/control-plane); with the "
                   "node-to-node mesh disabled no node has BGP sessions, so pod routes are not propagated "
                   "between nodes",
            detail_keywords=(PEER, LEGACY_LABEL, "peerselector", "route reflector", "nodetonodemeshenabled",
                             "node-role.kubernetes.io/control-plane", "bgp"),
            affected=tuple(_deploy(name) for name in ("frontend", "search", "geo", "profile", "rate",
                                                       "recommendation", "reservation", "user")),
            impact_keywords=IMPACT,
            description="Calico is in route-reflector mode with the node-to-node mesh off, and the BGPPeer "
                        "still selects reflectors by the deprecated node-role.kubernetes.io/master label. No "
                        "reflector is selected, cross-node pod routes disappear, and cross-node service and DNS "
                        "traffic times out while pods stay Running."),
        mitigation=MitigationSpec(
            must_fix=tuple(CheckSpec(check="deployment_reaches", params={
                "deployment": caller, "targets": [[callee, PORTS[callee]] for callee in callees]})
                for caller, callees in CALLS.items()),
            window_s=WINDOW_S),
        gold=(Action(op="patch", kind="Node", name=REFLECTOR_NODE, patch_type="merge",
                     patch={"metadata": {"labels": {LEGACY_LABEL: ""}}}),),
        settle_s=SETTLE_S,
    )
