"""Social Network problems in the stores behind the services: a MongoDB that starts requiring
authentication the services were never given credentials for (SREGym's `auth_miss_mongodb`), and
a MongoDB whose configuration ConfigMap was deleted (`missing_configmap_social_network`).

The services read their stores' addresses from `service-config.json`, which carries no MongoDB
credentials: they connect unauthenticated, exactly as the DeathStarBench C++ clients do, so a
mongod started with `--auth` answers every command with `command ... requires authentication`.
"""

from __future__ import annotations

from sregym.problems.builders import workload_ready
from sregym.problems.catalog.social_network.common import (
    NS,
    deploy,
    error_free,
    manifest,
    mitigation,
    obj,
    restart,
    selector,
    serves,
    social_problem,
)
from sregym.problems.model import Action, FaultSpec, Problem
from sregym.problems.registry import problem

MONGO_PORT = 27017
URL_MONGO = "url-shorten-mongodb"
MEDIA_MONGO = "media-mongodb"


def _mongo_args(name: str) -> list[str]:
    """The mongod arguments the app's manifest gives a store (`--config <mounted mongod.conf>`)."""
    return list(manifest("Deployment", name)["spec"]["template"]["spec"]["containers"][0]["args"])


@problem
def url_shorten_mongodb_auth_required() -> Problem:
    """url-shorten-mongodb is restarted with access control on (`mongod ... --auth`), while
    url-shorten-service has no MongoDB credentials in its configuration (SREGym and AIOpsLab
    `auth_miss_mongodb`, there by requiring TLS the client cannot offer; here by requiring
    authentication it cannot perform).

    Symptoms: url-shorten-service's inserts fail with `command insert requires authentication`
    (Unauthorized, code 13) in its log and error spans; text-service's ComposeText and with it every
    new post fail with a 500 at nginx-thrift, while timelines load. The database pod is Running and
    Ready. Fix: run mongod without `--auth` again (or give the service credentials it can use).
    """
    args = _mongo_args(URL_MONGO)
    return social_problem(
        "url-shorten-mongodb-auth-required", "new posts fail while timelines load",
        layers=("app", "config"), difficulty="medium", suites=("lite",),
        sources=("sregym:auth_miss_mongodb", "aiopslab:auth_miss_mongodb-1"),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [{
            "kind": "Deployment", "namespace": NS, "name": URL_MONGO, "patch_type": "json",
            "patch": [{"op": "replace", "path": "/spec/template/spec/containers/0/args",
                       "value": [*args, "--auth"]}]}]}),),
        root_causes=(deploy(URL_MONGO),), mechanism="db_auth",
        detail="url-shorten-mongodb runs mongod with --auth (authorization enabled), but url-shorten-service "
               "connects without credentials: every command requires authentication",
        keywords=("--auth", "authentication", "requires authentication", "authorization", "credentials"),
        affected=(deploy("url-shorten-service"), deploy("text-service"), deploy("compose-post-service")),
        description="The URL database now demands authentication the service cannot perform, so storing a "
                    "post's shortened URLs fails and so does composing a post.",
        mitigation=mitigation(error_free("url-shorten-service"), also_keep=(workload_ready(URL_MONGO),)),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name=URL_MONGO, patch_type="json", patch=[
            {"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": args}]),))


@problem
def media_mongodb_configmap_missing() -> Problem:
    """The ConfigMap `media-mongodb` (its mongod.conf) is deleted and the media-mongodb pod is then
    replaced (SREGym `missing_configmap_social_network`).

    Symptoms: the new media-mongodb pod stays in ContainerCreating (`FailedMount ... configmap
    "media-mongodb" not found`); the old pod is gone, so the media database is down and media-frontend
    cannot store or serve media. Fix: recreate the ConfigMap (with its mongod.conf) so the pod
    starts.
    """
    return social_problem(
        "media-mongodb-configmap-missing", "the media database does not come back after a restart",
        layers=("config",), difficulty="easy",
        sources=("sregym:missing_configmap_social_network",),
        faults=(FaultSpec(fault="delete_object", params={
            "kind": "ConfigMap", "namespace": NS, "name": MEDIA_MONGO,
            "restart_selector": selector(MEDIA_MONGO), "restart_namespace": NS}),),
        root_causes=(obj("ConfigMap", MEDIA_MONGO),), mechanism="missing_config",
        detail="ConfigMap media-mongodb (mongod.conf), mounted by the media-mongodb pod, was deleted",
        keywords=("configmap", "media-mongodb", "not found", "FailedMount", "mongod.conf"),
        affected=(deploy(MEDIA_MONGO), deploy("media-frontend")),
        description="The replacement media-mongodb pod cannot mount its configuration, so the media "
                    "database is down.",
        mitigation=mitigation(workload_ready(MEDIA_MONGO), serves(MEDIA_MONGO, MONGO_PORT)),
        gold=(Action(op="apply", manifest=manifest("ConfigMap", MEDIA_MONGO)), restart(MEDIA_MONGO)))
