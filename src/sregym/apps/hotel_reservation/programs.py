"""The Hotel Reservation binaries as data-plane programs (DeathStarBench `hotelReservation`).

One image (`yinfangchen/hotelreservation`) holds eight Go binaries; the container's `command`
picks one. Each reads `config.json` from its working directory (mounted from `<svc>-config`):
its own port (`GeoPort` ...) and its database/cache addresses (`GeoMongoAddress`,
`RateMemcAddress` ...). gRPC peers are reached by Service name on the port from the same file.
MongoDB credentials come from the env the Deployment maps from `mongodb-<svc>-credentials`; the
gRPC client timeout and retries from `GRPC_CLIENT_TIMEOUT` / `GRPC_CLIENT_RETRIES_ON_ERROR`.

Call graph (as in the Go code):
frontend /hotels → search.Nearby (→ geo.Nearby, rate.GetRates) → reservation.CheckAvailability →
profile.GetProfiles; /recommendations → recommendation.GetRecommendations → profile.GetProfiles;
/user → user.CheckUser; /reservation → user.CheckUser → reservation.MakeReservation.
rate, profile and reservation read through memcached (cache-aside) into MongoDB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.apps.hotel_reservation.ports import PORTS
from sregym.twin.dataplane.programs import program_image
from sregym.twin.dataplane.spec import (
    Call,
    Dependency,
    LogFormat,
    MemoryModel,
    Operation,
    ProgramSpec,
    RequiredSetting,
    RetryPolicy,
    Setting,
    Startup,
)

if TYPE_CHECKING:
    from sregym.twin.node.images import ImageSpec

IMAGE_REPOSITORY = "docker.io/yinfangchen/hotelreservation"
CONFIG_PATH = "/go/src/github.com/harlow/go-micro-services/config.json"
PORT_KEYS = {"frontend": "FrontendPort", "search": "SearchPort", "geo": "GeoPort", "profile": "ProfilePort",
             "rate": "RatePort", "recommendation": "RecommendPort", "reservation": "ReservePort",
             "user": "UserPort"}
MONGO_KEYS = {"geo": "GeoMongoAddress", "profile": "ProfileMongoAddress", "rate": "RateMongoAddress",
              "recommendation": "RecommendMongoAddress", "reservation": "ReserveMongoAddress",
              "user": "UserMongoAddress"}
STARTUP_COLLECTIONS = {"geo": "geo", "profile": "hotels", "rate": "inventory", "recommendation": "recommendation",
                       "reservation": "reservation", "user": "user"}
MEMC_KEYS = {"profile": "ProfileMemcAddress", "rate": "RateMemcAddress", "reservation": "ReserveMemcAddress"}
GRPC_POLICY = RetryPolicy(timeout=Setting(env="GRPC_CLIENT_TIMEOUT", default="1s"),
                          retries=Setting(env="GRPC_CLIENT_RETRIES_ON_ERROR", default="1"),
                          backoff=Setting(env="GRPC_CLIENT_BACKOFF", default="0ms"))


def _grpc(peer: str) -> Dependency:
    # `<PEER>_ADDR` ("profile:8081") overrides the Service name, as deployments may set it.
    return Dependency(name=peer, kind="grpc", address=Setting(env=f"{peer.upper()}_ADDR", default=peer),
                      port=Setting(config=PORT_KEYS[peer], default=str(PORTS[peer])), policy=GRPC_POLICY)


def _mongo(service: str) -> Dependency:
    db = {"recommendation": "recommendation-db", "reservation": "reservation-db"}.get(service, f"{service}-db")
    return Dependency(name="mongo", kind="mongodb", address=Setting(config=MONGO_KEYS[service]),
                      database=Setting(default=db), username=Setting(env="MONGO_USERNAME"),
                      password=Setting(env="MONGO_PASSWORD"),
                      auth_source=Setting(env="MONGO_AUTH_SOURCE", default="admin"),
                      policy=RetryPolicy(timeout=Setting(env="MONGO_TIMEOUT", default="10s"),
                                         retries=Setting(default="0")),
                      # initializeDatabase: inserts the test data at start; log.Fatal on error.
                      startup_query=STARTUP_COLLECTIONS[service], startup_failure_log="{error}",
                      startup_failure_exit_code=1)


def _memc(service: str) -> Dependency:
    return Dependency(name="memc", kind="memcached", address=Setting(config=MEMC_KEYS[service]),
                      policy=RetryPolicy(timeout=Setting(env="MEMC_TIMEOUT", default="2s"),
                                         retries=Setting(default="0")), hit_ratio=0.9)


def _cached_read(collection: str) -> tuple[Call, ...]:
    """Cache-aside: memcached get; on a miss (or a cache error) read MongoDB and set the cache
    (best effort), so a memcached outage moves the reads to MongoDB instead of failing them."""
    return (Call(dependency="memc", operation="get", id="cache", optional=True),
            Call(dependency="mongo", operation="find", collection=collection, when="miss:cache"),
            Call(dependency="memc", operation="set", when="miss:cache", optional=True))


def _startup(name: str, db: bool) -> Startup:
    # Without its database address the service dials "mongodb://" and panics at start.
    required = (RequiredSetting(setting=Setting(config=MONGO_KEYS[name]),
                                message="error parsing uri: must have at least 1 host", exit_code=2),) if db else ()
    logs = ["Reading config...",
            "Read database URL: {addr[mongo]}" if db else "Read consul address: consul:8500",
            "Initializing DB connection..." if db else "Initializing gRPC clients...",
            f"Initializing jaeger agent [service name: {name} | host: jaeger:6831]...",
            "Jaeger agent initialized", "Starting server..."]
    return Startup(seconds=1.0, logs=tuple(logs),
                   ready_logs=("Successfully registered in consul",),
                   shutdown_logs=("Shutting down server...",), required=required)


def _spec(name: str, operations: tuple[Operation, ...], deps: tuple[Dependency, ...], *,
          protocol: str = "grpc", memory: float = 14.0, settings: dict[str, Setting] | None = None) -> ProgramSpec:
    return ProgramSpec(
        name=name, protocol=protocol,  # type: ignore[arg-type]
        port=Setting(config=PORT_KEYS[name], default=str(PORTS[name])),
        config_file=CONFIG_PATH, operations=operations, dependencies=deps,
        memory=MemoryModel(base_mib=memory, per_inflight_mib=0.05, per_rps_mib=0.02),
        startup=_startup(name, any(d.kind == "mongodb" for d in deps)),
        log=LogFormat(style="zerolog", main_caller=f"cmd/{name}/main.go:37",
                      handler_caller=f"services/{name}/server.go:112"),
        grpc_health=protocol == "grpc", settings=settings or {}, go_runtime=True)


def hotel_programs() -> list[ProgramSpec]:
    frontend = _spec("frontend", (
        Operation(name="/hotels", method="GET", cpu_ms=1.2, weight=0.6, calls=(
            Call(dependency="search", operation="/search.Search/Nearby", feature="search_backend!=v2"),
            # The unreleased v2 search path calls a method the deployed search does not serve.
            Call(dependency="search", operation="/search.Search/NearbyV2", feature="search_backend=v2"),
            Call(dependency="reservation", operation="/reservation.Reservation/CheckAvailability"),
            Call(dependency="profile", operation="/profile.Profile/GetProfiles"))),
        Operation(name="/recommendations", method="GET", cpu_ms=1.0, weight=0.39, calls=(
            Call(dependency="recommendation", operation="/recommendation.Recommendation/GetRecommendations"),
            Call(dependency="profile", operation="/profile.Profile/GetProfiles"))),
        Operation(name="/user", method="POST", cpu_ms=0.6, weight=0.005, calls=(
            Call(dependency="user", operation="/user.User/CheckUser"),)),
        Operation(name="/reservation", method="POST", cpu_ms=0.9, weight=0.005, calls=(
            Call(dependency="user", operation="/user.User/CheckUser"),
            Call(dependency="reservation", operation="/reservation.Reservation/MakeReservation"))),
    ), tuple(_grpc(p) for p in ("search", "reservation", "profile", "recommendation", "user")),
        protocol="http", memory=18.0,
        settings={"search_backend": Setting(env="SEARCH_BACKEND_VERSION", default="v1")})
    search = _spec("search", (
        Operation(name="/search.Search/Nearby", cpu_ms=0.6, calls=(
            Call(dependency="geo", operation="/geo.Geo/Nearby"),
            Call(dependency="rate", operation="/rate.Rate/GetRates"))),
    ), (_grpc("geo"), _grpc("rate")))
    geo = _spec("geo", (
        Operation(name="/geo.Geo/Nearby", cpu_ms=0.5, calls=(
            Call(dependency="mongo", operation="find", collection="geo"),)),
    ), (_mongo("geo"),))
    rate = _spec("rate", (
        Operation(name="/rate.Rate/GetRates", cpu_ms=0.4, calls=_cached_read("inventory")),
    ), (_mongo("rate"), _memc("rate")))
    profile = _spec("profile", (
        Operation(name="/profile.Profile/GetProfiles", cpu_ms=0.5, calls=_cached_read("hotels")),
    ), (_mongo("profile"), _memc("profile")))
    recommendation = _spec("recommendation", (
        Operation(name="/recommendation.Recommendation/GetRecommendations", cpu_ms=0.6, calls=(
            Call(dependency="mongo", operation="find", collection="recommendation"),)),
    ), (_mongo("recommendation"),))
    user = _spec("user", (
        Operation(name="/user.User/CheckUser", cpu_ms=0.3, calls=(
            Call(dependency="mongo", operation="find", collection="user"),)),
    ), (_mongo("user"),))
    reservation = _spec("reservation", (
        Operation(name="/reservation.Reservation/CheckAvailability", cpu_ms=0.4,
                  calls=_cached_read("reservation")),
        Operation(name="/reservation.Reservation/MakeReservation", cpu_ms=0.7, calls=(
            Call(dependency="memc", operation="get", id="cache"),
            Call(dependency="mongo", operation="find", collection="reservation", when="miss:cache"),
            Call(dependency="mongo", operation="insert", collection="reservation"),
            Call(dependency="memc", operation="set", optional=True))),
    ), (_mongo("reservation"), _memc("reservation")))
    return [frontend, search, geo, rate, profile, recommendation, user, reservation]


def hotel_images() -> tuple[ImageSpec, ...]:
    """The two names the all-services image is published under; the container's command picks the binary."""
    return tuple(program_image(repository, ("latest",), tuple(PORTS), cmd=("frontend",), size_mb=341.7)
                 for repository in (IMAGE_REPOSITORY, "docker.io/deathstarbench/hotel-reservation"))
