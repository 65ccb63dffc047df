"""Hotel Reservation problems in the application itself, its configuration and its databases:
bad and broken images, MongoDB users and roles, `config.json` and referenced ConfigMaps, a feature
flag that wakes a latent bug, a shadowed env var and credentials gone stale after a rotation.

The pods of the broken component often look fine (Running, Ready): the evidence is in the
service's own logs (`not authorized on geo-db`, `AuthenticationFailed`, `Unimplemented`), its
spans and error rates, and in what changed in its configuration.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sregym.apps.hotel_reservation import NAMESPACE, PORTS
from sregym.problems.builders import (
    app_manifest,
    deployment_cause,
    keep,
    object_cause,
    patch_container,
    rollout_restart,
    service_serves,
)
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

APP = "hotel-reservation"
IMAGE = "yinfangchen/hotelreservation:latest"
SERVICES = ("frontend", "search", "geo", "profile", "rate", "recommendation", "reservation", "user")
IMPACT = ("unavailable", "fail", "error", "errors", "500", "crash", "crashloopbackoff", "not ready",
          "outage", "down", "refused", "unauthorized", "not authorized", "authentication failed")
WINDOW_S = 180.0
SETTLE_S = 60.0
RESTARTED_AT = "2025-06-01T00:00:00Z"  # what `kubectl rollout restart` stamps (any value restarts)


# ------------------------------------------------------------------------------ helpers
_manifest = partial(app_manifest, APP)


_deploy = partial(deployment_cause, NAMESPACE)
_obj = partial(object_cause, NAMESPACE)
_restart = partial(rollout_restart, NAMESPACE, stamp=RESTARTED_AT, patch_type="strategic")


def _container(service: str) -> str:
    return f"hotel-reserv-{service}"


def _ready(*names: str) -> CheckSpec:
    return CheckSpec(check="workloads_ready", params={"names": list(names)})


def _error_free(service: str, span_name: str | None = None) -> CheckSpec:
    params: dict[str, Any] = {"service": service}
    if span_name:
        params["span_name"] = span_name
    return CheckSpec(check="service_error_free", params=params)


def _mitigation(*must_fix: CheckSpec) -> MitigationSpec:
    return MitigationSpec(must_fix=must_fix, window_s=WINDOW_S)


def _set_image(service: str, image: str) -> Action:
    return patch_container(NAMESPACE, service, _container(service), {"image": image})


def _mongo_admin(deployment: str, script: str) -> Action:
    """`kubectl exec deploy/<mongodb> -- mongo admin -u root -p root ... --eval <script>`."""
    return Action(op="exec", kind="Deployment", namespace=NAMESPACE, name=deployment,
                  command=("mongo", "admin", "--quiet", "-u", "root", "-p", "root", "--authenticationDatabase",
                           "admin", "--eval", script))


def _selector(service: str) -> str:
    return f"io.kompose.service={service}"


# ------------------------------------------------------------------- 1. bad image tag
def _bad_image(service: str, image: str, crashing: bool) -> Problem:
    tag = image.rsplit(":", 1)[-1]
    slug = "crashing-image" if crashing else "image-tag-missing"
    if crashing:
        detail = (f"{service} Deployment image changed to {image}, a build whose {service} binary cannot reach its "
                  "database and panics at start")
        description = (f"A release moved {service} to {image}. The new pod starts, logs `no reachable servers`, "
                       "panics and goes into CrashLoopBackOff; the rollout never completes.")
    else:
        detail = f"{service} Deployment image changed to {image}, a tag the registry does not have"
        description = (f"A release pointed {service} at the tag `{tag}`, which was never pushed: the new pod "
                       "sits in ErrImagePull/ImagePullBackOff and the rollout never completes.")
    return Problem(
        id=f"hotel-reservation/{slug}-{service}-v1",
        title=f"{service} rollout stuck after an image update",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app",), difficulty="easy", suites=("lite",),
                  sources=("sregym:misconfig_app_hotel_res", "aiopslab:misconfig_app_hotel_res-1") if crashing else ()),
        faults=(FaultSpec(fault="set_image", params={"namespace": NAMESPACE, "name": service, "image": image}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy(service),), mechanism="crashing_image" if crashing else "bad_image",
            detail=detail, detail_keywords=(image, tag), affected=(), impact_keywords=IMPACT,
            description=description),
        # The old pod keeps serving during the stuck rollout: serving is a must_keep here.
        mitigation=MitigationSpec(must_fix=(_ready(service),), window_s=WINDOW_S,
                                  must_keep=keep(service_serves(service, PORTS[service], service))),
        gold=(_set_image(service, IMAGE),),
        settle_s=SETTLE_S,
    )


@problem
def bad_image_tag() -> list[Problem]:
    """A release changes the geo Deployment's image.

    Variant `crashing-image-geo`: `yinfangchen/geo:app3`, a build with a hard-coded database
    address — the container logs `no reachable servers`, panics (exit 2) and crash-loops.
    Variant `image-tag-missing-geo`: a tag that was never pushed — `ErrImagePull`, then
    `ImagePullBackOff`. Either way the rollout is stuck with one new broken pod while the old pod
    still serves. Fix: roll back (or set an image that works); the rollout must complete.
    """
    return [_bad_image("geo", "yinfangchen/geo:app3", crashing=True),
            _bad_image("geo", "yinfangchen/hotelreservation:v2.1.0", crashing=False)]


# ------------------------------------------------------- 2. faulty image everywhere
FAULTY_IMAGE = "jackcuii/hotel-reservation:latest"


@problem
def faulty_image_correlated() -> Problem:
    """Every Hotel Reservation service (frontend, search, geo, profile, rate, recommendation,
    reservation, user) is updated to the same broken build `jackcuii/hotel-reservation:latest`.

    Symptoms: eight new pods crash at start (`panic: runtime error: invalid memory address or nil
    pointer dereference`, exit 2) and go into CrashLoopBackOff; eight rollouts are stuck. The
    shared cause is the image, not eight separate bugs. Fix: put every service back on a working
    image; all rollouts must complete.
    """
    return Problem(
        id="hotel-reservation/faulty-image-correlated-v1",
        title="every service's rollout is crash-looping",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("correlated", "app"), difficulty="medium", suites=("lite",), sources=("sregym:faulty_image_correlated",)),
        faults=tuple(FaultSpec(fault="set_image", params={"namespace": NAMESPACE, "name": s, "image": FAULTY_IMAGE})
                     for s in SERVICES),
        ground_truth=GroundTruth(
            root_causes=tuple(_deploy(s) for s in SERVICES), mechanism="crashing_image",
            detail=f"all eight service Deployments were updated to the broken image {FAULTY_IMAGE}",
            detail_keywords=(FAULTY_IMAGE, "jackcuii", "hotel-reservation:latest"), impact_keywords=IMPACT,
            description="One bad build rolled out to every service at once: each new pod panics with a nil "
                        "pointer dereference at start, so no rollout can finish."),
        mitigation=_mitigation(_ready(*SERVICES)),
        gold=tuple(_set_image(s, IMAGE) for s in SERVICES),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------------------- 3. MongoDB role revoked
# The peers' scenarios of the same revoked role (SREGym and AIOpsLab `revoke_auth_mongodb`, first variant).
REVOKED_SOURCES = {"geo": ("sregym:revoke_auth_mongodb-1", "aiopslab:revoke_auth_mongodb-1")}


def _revoke(service: str, suites: tuple[str, ...]) -> Problem:
    db = f"{service}-db"
    mongo = f"mongodb-{service}"
    grant = f"db.grantRolesToUser('admin', [{{role: 'readWrite', db: '{db}'}}])"
    return Problem(
        id=f"hotel-reservation/mongodb-role-revoked-{service}-v1",
        title=f"{service} requests fail although every pod is running",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app",), difficulty="medium", suites=suites, sources=REVOKED_SOURCES.get(service, ())),
        faults=(FaultSpec(fault="mongo_revoke_role", params={"namespace": NAMESPACE, "deployment": mongo, "db": db}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy(mongo),), mechanism="db_auth",
            detail=f"the readWrite role on {db} was revoked from MongoDB user admin in {mongo}",
            detail_keywords=("readWrite", "revoke", "role", "not authorized"),
            affected=(_deploy(service), _deploy("frontend")), impact_keywords=IMPACT,
            description=f"{service} still authenticates to {mongo} as admin, but the user lost readWrite on "
                        f"{db}: every query fails with `not authorized on {db} to execute command`, and the "
                        "user requests that need it fail."),
        mitigation=_mitigation(_error_free(service)),
        gold=(_mongo_admin(mongo, grant),),
        settle_s=SETTLE_S,
    )


@problem
def mongodb_role_revoked() -> list[Problem]:
    """The application user's `readWrite` role on the service's database is revoked inside its
    MongoDB (`db.revokeRolesFromUser` through `mongo --eval` in the database pod).

    Symptoms: the service (geo, or recommendation in the second variant) logs `(Unauthorized) not
    authorized on geo-db to execute command { find: "geo", ... }`; its spans error; frontend
    searches fail. Every pod is Running and Ready. Fix: grant the role back (or give the service
    a user that has it); the service's requests must succeed again.
    """
    # rate is not a variant: it reads through memcached, whose warm cache hides the database.
    return [_revoke("geo", ("lite", "detection")), _revoke("recommendation", ())]


# ------------------------------------------------------------- 4. MongoDB user removed
# SREGym `storage_user_unregistered-1` and AIOpsLab `user_unregistered_mongodb-1` drop geo's user.
REMOVED_SOURCES = {"geo": ("sregym:storage_user_unregistered-1", "aiopslab:user_unregistered_mongodb-1")}


def _user_removed(service: str) -> Problem:
    db = f"{service}-db"
    mongo = f"mongodb-{service}"
    create = (f"db.createUser({{user: 'admin', pwd: 'admin', roles: [{{role: 'userAdminAnyDatabase', db: 'admin'}}, "
              f"{{role: 'readWrite', db: '{db}'}}]}})")
    return Problem(
        id=f"hotel-reservation/mongodb-user-removed-{service}-v1",
        title=f"{service} cannot log in to its database",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app",), difficulty="medium", sources=REMOVED_SOURCES.get(service, ())),
        faults=(FaultSpec(fault="mongo_drop_user", params={
            "namespace": NAMESPACE, "deployment": mongo,
            "roles": [["userAdminAnyDatabase", "admin"], ["readWrite", db]]}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy(mongo),), mechanism="db_auth",
            detail=f"MongoDB user admin (the user {service} logs in as) was dropped from {mongo}",
            detail_keywords=("dropUser", "user", "UserNotFound", "AuthenticationFailed", "removed", "deleted"),
            affected=(_deploy(service), _deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description=f"{service} logs in to {mongo} with credentials of a user that no longer exists: every "
                        "connection fails SCRAM authentication and the requests that need it fail."),
        mitigation=_mitigation(_error_free(service)),
        gold=(_mongo_admin(mongo, create),),
        settle_s=SETTLE_S,
    )


@problem
def mongodb_user_removed() -> Problem:
    """The MongoDB user the geo service logs in as is dropped from `mongodb-geo`.

    Symptoms: geo logs `auth error: sasl conversation error: unable to authenticate using
    mechanism "SCRAM-SHA-1": (AuthenticationFailed) Authentication failed.`, mongod logs
    `UserNotFound: Could not find user "admin" for db "admin"`; searches fail. Fix: recreate the
    user with its roles (or point geo at another valid user).
    """
    return _user_removed("geo")


# ---------------------------------------------------- 5. config.json key dropped
@problem
def config_json_key_dropped() -> Problem:
    """`GeoMongoAddress` is dropped from the `config.json` in the `geo-config` ConfigMap, and geo
    restarts.

    Symptoms: geo logs `Read database URL: ` (empty), then `error parsing uri: must have at
    least 1 host` and exits 2 — CrashLoopBackOff; searches fail because search cannot reach geo.
    Fix: restore the key in geo-config and restart geo.
    """
    return Problem(
        id="hotel-reservation/config-json-key-dropped-v1",
        title="geo crash-loops after a configuration change",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("config",), difficulty="medium", suites=("lite",), sources=("sregym:configmap_drift_hotel_reservation",)),
        faults=(FaultSpec(fault="drop_config_json_key", params={
            "namespace": NAMESPACE, "configmap": "geo-config", "json_key": "GeoMongoAddress",
            "restart_selector": _selector("geo")}),),
        ground_truth=GroundTruth(
            root_causes=(_obj("ConfigMap", "geo-config"),), mechanism="missing_config",
            detail="key GeoMongoAddress removed from config.json in ConfigMap geo-config",
            detail_keywords=("GeoMongoAddress",),
            affected=(_deploy("geo"), _deploy("search"), _deploy("frontend")), impact_keywords=IMPACT,
            description="geo reads its database address from config.json at start; without it the driver "
                        "rejects the empty URI and geo exits, so every search fails."),
        mitigation=_mitigation(_ready("geo"), _error_free("geo")),
        gold=(Action(op="patch", kind="ConfigMap", namespace=NAMESPACE, name="geo-config", patch_type="merge",
                     patch={"data": _manifest("ConfigMap", "geo-config")["data"]}),
              _restart("geo")),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------------ 6. referenced ConfigMap deleted
def _gold_configmap(name: str) -> dict[str, Any]:
    manifest = _manifest("ConfigMap", name)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": name, "namespace": NAMESPACE, **({"labels": manifest["metadata"]["labels"]}
                                                 if manifest["metadata"].get("labels") else {})},
        "data": manifest["data"]}


@problem
def referenced_configmap_deleted() -> Problem:
    """The `mongo-geo-script` ConfigMap (mounted by mongodb-geo at /docker-entrypoint-initdb.d)
    is deleted, and the mongodb-geo pod is replaced.

    Symptoms: the new mongodb-geo pod stays in ContainerCreating with `FailedMount ...
    configmap "mongo-geo-script" not found`; geo cannot reach its database and searches fail.
    Fix: recreate the ConfigMap (or stop mounting it); mongodb-geo must run and geo serve.
    """
    return Problem(
        id="hotel-reservation/referenced-configmap-deleted-v1",
        title="mongodb-geo does not start",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("config",), difficulty="medium", sources=("sregym:missing_configmap_hotel_reservation",)),
        faults=(FaultSpec(fault="delete_object", params={
            "kind": "ConfigMap", "namespace": NAMESPACE, "name": "mongo-geo-script",
            "restart_selector": _selector("mongodb-geo")}),),
        ground_truth=GroundTruth(
            root_causes=(_obj("ConfigMap", "mongo-geo-script"),), mechanism="missing_config",
            detail="ConfigMap mongo-geo-script, mounted as a volume by mongodb-geo, was deleted",
            detail_keywords=("mongo-geo-script", "FailedMount", "not found"),
            affected=(_deploy("mongodb-geo"), _deploy("geo"), _deploy("search"), _deploy("frontend")),
            impact_keywords=IMPACT,
            description="mongodb-geo's pod cannot mount its init-script volume, so the database is down and "
                        "geo's queries fail."),
        mitigation=_mitigation(_ready("mongodb-geo"), _error_free("geo")),
        gold=(Action(op="apply", manifest=_gold_configmap("mongo-geo-script")),),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------- 7. feature flag enables latent bug
@problem
def feature_flag_latent_bug() -> Problem:
    """`SEARCH_BACKEND_VERSION` in the `frontend-runtime-config` ConfigMap is flipped from `v1`
    to `v2`, and the frontend restarts with it.

    The v2 search path of the frontend calls `/search.Search/NearbyV2`, which the deployed search
    does not implement. Symptoms: every `/hotels` request returns HTTP 500 (`rpc error: code =
    Unimplemented desc = unknown method NearbyV2 for service search.Search`); recommendations
    still work; every pod is healthy. Fix: set the flag back (or remove it) and restart frontend.
    """
    return Problem(
        id="hotel-reservation/feature-flag-latent-bug-v1",
        title="hotel searches return HTTP 500",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app",), difficulty="hard", sources=("sregym:feature_flag_latent_bug_hotel_reservation",)),
        faults=(FaultSpec(fault="set_configmap_value", params={
            "namespace": NAMESPACE, "configmap": "frontend-runtime-config", "key": "SEARCH_BACKEND_VERSION",
            "value": "v2", "restart_selector": _selector("frontend")}),),
        ground_truth=GroundTruth(
            root_causes=(_obj("ConfigMap", "frontend-runtime-config"),), mechanism="feature_flag",
            detail="SEARCH_BACKEND_VERSION set to v2 in ConfigMap frontend-runtime-config; the v2 path calls "
                   "the unimplemented /search.Search/NearbyV2",
            detail_keywords=("SEARCH_BACKEND_VERSION", "v2", "NearbyV2"),
            affected=(_deploy("frontend"),), impact_keywords=IMPACT,
            description="A runtime flag switched the frontend onto a dormant code path that calls a search "
                        "method that was never deployed; /hotels answers 500."),
        mitigation=_mitigation(_error_free("frontend", "/hotels")),
        gold=(Action(op="patch", kind="ConfigMap", namespace=NAMESPACE, name="frontend-runtime-config",
                     patch_type="merge", patch={"data": {"SEARCH_BACKEND_VERSION": "v1"}}),
              _restart("frontend")),
        settle_s=SETTLE_S,
    )


# ----------------------------------------------------------- 8. env var shadowed
@problem
def env_var_shadowed() -> Problem:
    """A second `PROFILE_ADDR` entry (`localhost:8081`) is appended to the frontend container's
    env, after the real `PROFILE_ADDR=profile:8081`; the later entry wins.

    Symptoms: after the rollout, frontend logs `connection refused` for profile calls at
    `localhost:8081`; nearly every search and recommendation fails with HTTP 500; the profile
    service itself is healthy and idle. Fix: remove the duplicate (or make it correct).
    """
    env = _manifest("Deployment", "frontend")["spec"]["template"]["spec"]["containers"][0].get("env") or []
    return Problem(
        id="hotel-reservation/env-var-shadowed-v1",
        title="frontend cannot reach profile",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("config",), difficulty="medium", suites=("lite",)),
        faults=(FaultSpec(fault="shadow_env_var", params={
            "namespace": NAMESPACE, "name": "frontend", "env": "PROFILE_ADDR", "value": "localhost:8081"}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("frontend"),), mechanism="env_shadowing",
            detail="frontend container env defines PROFILE_ADDR twice; the later localhost:8081 shadows profile:8081",
            detail_keywords=("PROFILE_ADDR", "localhost", "duplicate"),
            affected=(), impact_keywords=IMPACT,
            description="A duplicate env entry points the frontend's profile client at itself; every request "
                        "that needs hotel profiles fails with connection refused."),
        mitigation=_mitigation(_error_free("frontend")),
        gold=(Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="frontend", patch_type="json",
                     patch=[{"op": "remove", "path": f"/spec/template/spec/containers/0/env/{len(env)}"}]),),
        settle_s=SETTLE_S,
    )


# ------------------------------------------------- 9. stale credentials after rotation
@problem
def stale_credentials_after_rotation() -> Problem:
    """The recommendation service's MongoDB password is rotated — in `mongodb-recommendation` and
    in the Secret `mongodb-recommendation-credentials` — but the running recommendation pod keeps
    the old password in its env (env from a Secret is read at container start).

    Symptoms: recommendation logs `(AuthenticationFailed) Authentication failed.`, mongod logs
    SCRAM `storedKey mismatch`; every `/recommendations` request fails. The Secret and the
    database agree with each other. Fix: restart recommendation so it reads the rotated password.
    """
    return Problem(
        id="hotel-reservation/stale-credentials-after-rotation-v1",
        title="recommendation fails to authenticate to its database",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app",), difficulty="medium", suites=("lite",)),
        faults=(FaultSpec(fault="mongo_rotate_password", params={
            "namespace": NAMESPACE, "deployment": "mongodb-recommendation",
            "secret": "mongodb-recommendation-credentials", "new_password": "Zq7v-recommend-2025"}),),
        ground_truth=GroundTruth(
            root_causes=(_deploy("recommendation"),), mechanism="db_auth",
            detail="the recommendation pods still use the pre-rotation MongoDB password from their env; the "
                   "Secret mongodb-recommendation-credentials and mongodb-recommendation have the new one",
            detail_keywords=("rotat", "stale", "old password", "restart", "MONGO_PASSWORD"),
            affected=(_deploy("frontend"),), impact_keywords=IMPACT,
            description="The rotation changed the Secret and the database but not the running recommendation "
                        "pod, which keeps authenticating with the old password."),
        mitigation=_mitigation(_error_free("recommendation")),
        gold=(_restart("recommendation"),),
        settle_s=SETTLE_S,
    )
