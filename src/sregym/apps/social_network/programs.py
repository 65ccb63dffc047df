"""The Social Network binaries as data-plane programs (DeathStarBench `socialNetwork`).

One image (`deathstarbench/social-network-microservices`) holds the eleven C++ Thrift services;
the container's `command` (`ComposePostService`, `UserService` ...) picks one. Each reads
`/social-network-microservices/config/service-config.json` (mounted from the ConfigMap named after
the service): its peers' and stores' `addr`, `port` and `timeout_ms` under keys named after them
(`user-service`, `user-mongodb`, `home-timeline-redis` ...). The two OpenResty front ends
(`nginx-thrift` serving `/wrk2-api/...`, `media-frontend` serving media uploads) reach the
services by name plus the `fqdn_suffix` env.

Call graph (as in the handlers): nginx `/wrk2-api/post/compose` → compose-post ComposePost, which
fans out to unique-id, text (→ url-shorten, user-mention), media and user, then stores the post
(post-storage), and writes the author's timeline (user-timeline) and the followers' home timelines
(home-timeline → social-graph GetFollowers). Reading a home timeline reads home-timeline's Redis
then post-storage ReadPosts (memcached, MongoDB on a miss); reading a user timeline reads
user-timeline's Redis (MongoDB on a miss) then post-storage.

The services log through Boost.Log (`[time] <error>: (Handler.h:line:Function) message`); a failed
Thrift call carries the C++ client's `TTransportException` text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.apps.social_network.ports import PORTS, THRIFT_PORT
from sregym.twin.dataplane.programs import program_command
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
from sregym.twin.node.images import ImageSpec

if TYPE_CHECKING:
    from collections.abc import Iterable

SERVICES_IMAGE = "docker.io/deathstarbench/social-network-microservices"
OPENRESTY_IMAGE = "docker.io/yg397/openresty-thrift"
MEDIA_FRONTEND_IMAGE = "docker.io/yg397/media-frontend"
CONFIG_PATH = "/social-network-microservices/config/service-config.json"
# The binary each service's Deployment runs (`command:` in the chart).
BINARIES = {"compose-post-service": "ComposePostService", "home-timeline-service": "HomeTimelineService",
            "user-timeline-service": "UserTimelineService", "post-storage-service": "PostStorageService",
            "social-graph-service": "SocialGraphService", "text-service": "TextService",
            "url-shorten-service": "UrlShortenService", "user-service": "UserService",
            "user-mention-service": "UserMentionService", "media-service": "MediaService",
            "unique-id-service": "UniqueIdService"}
OPENRESTY_BINARIES = ("openresty", "/usr/local/openresty/bin/openresty")


def _timeout(key: str) -> RetryPolicy:
    # The C++ pools read `timeout_ms` per peer and do not retry.
    return RetryPolicy(timeout=Setting(config=f"{key}.timeout_ms", default="10000"), timeout_unit="ms",
                       retries=Setting(default="0"))


def _thrift(peer: str, *, fqdn_suffix: bool = False) -> Dependency:
    """A Thrift client pool to `peer`; the front ends append `fqdn_suffix` to the name, the C++
    services read `addr` from service-config.json."""
    address = Setting(default=peer) if fqdn_suffix else Setting(config=f"{peer}.addr", default=peer)
    return Dependency(name=peer, kind="thrift", address=address,
                      port=Setting(config=f"{peer}.port", default=str(THRIFT_PORT)), policy=_timeout(peer),
                      error_log=f"{{operation}} to {peer} failed: {{error}}")


def _store(key: str, kind: str, database: str | None = None, hit_ratio: float = 0.9) -> Dependency:
    """A MongoDB, memcached or Redis the service reaches through `service-config.json`'s `key`."""
    what = {"mongodb": "MongoDB", "memcached": "Memcached", "redis": "Redis"}[kind]
    return Dependency(name=key, kind=kind, address=Setting(config=f"{key}.addr"),  # type: ignore[arg-type]
                      port=Setting(config=f"{key}.port"),
                      database=Setting(default=database) if database else None, policy=_timeout(key),
                      hit_ratio=hit_ratio, error_log=f"{what} {{operation}} failed: {{error}}")


def _service(name: str, operations: tuple[Operation, ...], deps: tuple[Dependency, ...], *,
             handler: str, memory: float = 6.0) -> ProgramSpec:
    stores = [d for d in deps if d.kind in ("mongodb", "memcached", "redis")]
    required = tuple(RequiredSetting(setting=Setting(config=f"{d.name}.addr"), exit_code=134,
                                     message="terminate called after throwing an instance of "
                                             "'nlohmann::detail::type_error'\n  what():  [json.exception.type_error.302] "
                                             "type must be string, but is null") for d in stores[:1])
    return ProgramSpec(
        name=BINARIES[name], service_name=name, protocol="thrift",
        port=Setting(config=f"{name}.port", default=str(THRIFT_PORT)), config_file=CONFIG_PATH,
        operations=operations, dependencies=deps,
        memory=MemoryModel(base_mib=memory, per_inflight_mib=0.02, per_rps_mib=0.01),
        startup=Startup(seconds=0.5, logs=(f"Starting the {name} server ...",), required=required),
        log=LogFormat(style="boost", main_caller=f"{BINARIES[name]}.cpp:90:main", handler_caller=handler))


def _cached_posts() -> tuple[Call, ...]:
    """post-storage ReadPosts: memcached multi-get, MongoDB for the misses, then fill the cache."""
    return (Call(dependency="post-storage-memcached", operation="get", id="cache", optional=True),
            Call(dependency="post-storage-mongodb", operation="find", collection="post", when="miss:cache"),
            Call(dependency="post-storage-memcached", operation="set", when="miss:cache", optional=True))


def service_programs() -> list[ProgramSpec]:
    """The eleven Thrift services."""
    op = Operation
    compose = _service("compose-post-service", (
        op(name="ComposePost", cpu_ms=0.6, parallel=True, calls=(
            Call(dependency="unique-id-service", operation="ComposeUniqueId"),
            Call(dependency="text-service", operation="ComposeText"),
            Call(dependency="media-service", operation="ComposeMedia"),
            Call(dependency="user-service", operation="ComposeCreatorWithUserId"),
            Call(dependency="post-storage-service", operation="StorePost"),
            Call(dependency="user-timeline-service", operation="WriteUserTimeline"),
            Call(dependency="home-timeline-service", operation="WriteHomeTimeline"))),
    ), tuple(_thrift(p) for p in ("unique-id-service", "text-service", "media-service", "user-service",
                                  "post-storage-service", "user-timeline-service", "home-timeline-service")),
        handler="ComposePostHandler.h:125:ComposePost")
    unique_id = _service("unique-id-service", (op(name="ComposeUniqueId", cpu_ms=0.1),), (),
                         handler="UniqueIdHandler.h:85:ComposeUniqueId", memory=4.0)
    media = _service("media-service", (op(name="ComposeMedia", cpu_ms=0.15),), (),
                     handler="MediaHandler.h:60:ComposeMedia", memory=4.0)
    text = _service("text-service", (
        op(name="ComposeText", cpu_ms=0.4, parallel=True, calls=(
            Call(dependency="url-shorten-service", operation="ComposeUrls"),
            Call(dependency="user-mention-service", operation="ComposeUserMentions"))),
    ), (_thrift("url-shorten-service"), _thrift("user-mention-service")), handler="TextHandler.h:95:ComposeText")
    url_shorten = _service("url-shorten-service", (
        op(name="ComposeUrls", cpu_ms=0.2, calls=(
            Call(dependency="url-shorten-mongodb", operation="insert", collection="url-shorten"),)),
        op(name="GetExtendedUrls", cpu_ms=0.2, weight=0.0, calls=(
            Call(dependency="url-shorten-memcached", operation="get", id="cache", optional=True),
            Call(dependency="url-shorten-mongodb", operation="find", collection="url-shorten", when="miss:cache"))),
    ), (_store("url-shorten-mongodb", "mongodb", "url-shorten"), _store("url-shorten-memcached", "memcached")),
        handler="UrlShortenHandler.h:110:ComposeUrls")
    user_mention = _service("user-mention-service", (
        op(name="ComposeUserMentions", cpu_ms=0.2, calls=(
            Call(dependency="user-memcached", operation="get", id="cache", optional=True),
            Call(dependency="user-mongodb", operation="find", collection="user", when="miss:cache"))),
    ), (_store("user-memcached", "memcached"), _store("user-mongodb", "mongodb", "user")),
        handler="UserMentionHandler.h:75:ComposeUserMentions")
    user = _service("user-service", (
        op(name="ComposeCreatorWithUserId", cpu_ms=0.1),
        op(name="RegisterUserWithId", cpu_ms=0.5, weight=0.0, calls=(
            Call(dependency="user-mongodb", operation="insert", collection="user"),)),
        op(name="Login", cpu_ms=0.6, weight=0.0, calls=(
            Call(dependency="user-memcached", operation="get", id="cache", optional=True),
            Call(dependency="user-mongodb", operation="find", collection="user", when="miss:cache"),
            Call(dependency="user-memcached", operation="set", when="miss:cache", optional=True))),
    ), (_store("user-memcached", "memcached"), _store("user-mongodb", "mongodb", "user")),
        handler="UserHandler.h:230:ComposeCreatorWithUserId")
    post_storage = _service("post-storage-service", (
        op(name="StorePost", cpu_ms=0.2, calls=(
            Call(dependency="post-storage-mongodb", operation="insert", collection="post"),)),
        op(name="ReadPosts", cpu_ms=0.3, calls=_cached_posts()),
    ), (_store("post-storage-mongodb", "mongodb", "post"), _store("post-storage-memcached", "memcached")),
        handler="PostStorageHandler.h:150:ReadPosts")
    user_timeline = _service("user-timeline-service", (
        op(name="WriteUserTimeline", cpu_ms=0.2, calls=(
            Call(dependency="user-timeline-mongodb", operation="update", collection="user-timeline"),
            Call(dependency="user-timeline-redis", operation="ZADD", optional=True))),
        op(name="ReadUserTimeline", cpu_ms=0.3, calls=(
            Call(dependency="user-timeline-redis", operation="ZREVRANGE", id="cache", optional=True),
            Call(dependency="user-timeline-mongodb", operation="find", collection="user-timeline",
                 when="miss:cache"),
            Call(dependency="user-timeline-redis", operation="ZADD", when="miss:cache", optional=True),
            Call(dependency="post-storage-service", operation="ReadPosts"))),
    ), (_store("user-timeline-mongodb", "mongodb", "user-timeline"), _store("user-timeline-redis", "redis"),
        _thrift("post-storage-service")), handler="UserTimelineHandler.h:180:ReadUserTimeline")
    home_timeline = _service("home-timeline-service", (
        op(name="WriteHomeTimeline", cpu_ms=0.3, calls=(
            Call(dependency="social-graph-service", operation="GetFollowers"),
            Call(dependency="home-timeline-redis", operation="ZADD"))),
        op(name="ReadHomeTimeline", cpu_ms=0.3, calls=(
            Call(dependency="home-timeline-redis", operation="ZREVRANGEBYSCORE"),
            Call(dependency="post-storage-service", operation="ReadPosts"))),
    ), (_store("home-timeline-redis", "redis"), _thrift("social-graph-service"), _thrift("post-storage-service")),
        handler="HomeTimelineHandler.h:160:ReadHomeTimeline")
    social_graph = _service("social-graph-service", (
        op(name="GetFollowers", cpu_ms=0.2, calls=(
            Call(dependency="social-graph-redis", operation="ZRANGE", id="cache", optional=True),
            Call(dependency="social-graph-mongodb", operation="find", collection="social-graph", when="miss:cache"),
            Call(dependency="social-graph-redis", operation="ZADD", when="miss:cache", optional=True))),
        op(name="Follow", cpu_ms=0.4, weight=0.0, calls=(
            Call(dependency="social-graph-mongodb", operation="update", collection="social-graph"),
            Call(dependency="social-graph-redis", operation="ZADD", optional=True))),
    ), (_store("social-graph-mongodb", "mongodb", "social-graph"), _store("social-graph-redis", "redis")),
        handler="SocialGraphHandler.h:330:GetFollowers")
    return [compose, unique_id, media, text, url_shorten, user_mention, user, post_storage, user_timeline,
            home_timeline, social_graph]


# nginx's error log: `2026/01/05 09:00:01 [error] 7#7: [lua] compose.lua:60: ...`
_NGINX_ERROR = "[error] 7#7: [lua] {caller_operation}: {operation} failure: {error}"


def frontend_programs() -> list[ProgramSpec]:
    """The OpenResty front ends: nginx-thrift (the wrk2 API) and media-frontend (media uploads)."""
    def thrift(peer: str) -> Dependency:
        dep = _thrift(peer, fqdn_suffix=True)
        return dep.model_copy(update={"error_log": _NGINX_ERROR})

    nginx = ProgramSpec(
        name="nginx-thrift", service_name="nginx-web-server", protocol="http",
        port=Setting(default=str(PORTS["nginx-thrift"])), operations=(
            Operation(name="/wrk2-api/post/compose", method="POST", cpu_ms=0.5, weight=0.1, calls=(
                Call(dependency="compose-post-service", operation="ComposePost"),)),
            Operation(name="/wrk2-api/home-timeline/read", cpu_ms=0.4, weight=0.6, calls=(
                Call(dependency="home-timeline-service", operation="ReadHomeTimeline"),)),
            Operation(name="/wrk2-api/user-timeline/read", cpu_ms=0.4, weight=0.3, calls=(
                Call(dependency="user-timeline-service", operation="ReadUserTimeline"),)),
            Operation(name="/wrk2-api/user/register", method="POST", cpu_ms=0.4, weight=0.0, calls=(
                Call(dependency="user-service", operation="RegisterUserWithId"),)),
            Operation(name="/wrk2-api/user/follow", method="POST", cpu_ms=0.4, weight=0.0, calls=(
                Call(dependency="social-graph-service", operation="Follow"),)),
        ), dependencies=tuple(thrift(p) for p in ("compose-post-service", "home-timeline-service",
                                                  "user-timeline-service", "user-service", "social-graph-service")),
        memory=MemoryModel(base_mib=12.0, per_inflight_mib=0.02, per_rps_mib=0.01),
        startup=Startup(seconds=0.3), log=LogFormat(style="plain", main_caller="nginx", handler_caller="nginx"))
    media_frontend = ProgramSpec(
        name="media-frontend", service_name="media-frontend", protocol="http",
        port=Setting(default="8080"), config_file=CONFIG_PATH, operations=(
            Operation(name="/upload-media", method="POST", cpu_ms=1.0, calls=(
                Call(dependency="media-mongodb", operation="insert", collection="media"),)),
            Operation(name="/get-media", cpu_ms=0.5, calls=(
                Call(dependency="media-mongodb", operation="find", collection="media"),)),
        ), dependencies=(_store("media-mongodb", "mongodb", "media").model_copy(
            update={"error_log": "[error] 7#7: [lua] {caller_operation}: {error}"}),),
        memory=MemoryModel(base_mib=12.0), startup=Startup(seconds=0.3),
        log=LogFormat(style="plain", main_caller="nginx", handler_caller="nginx"))
    return [nginx, media_frontend]


def social_programs() -> list[ProgramSpec]:
    return [*service_programs(), *frontend_programs()]


def _openresty(repository: str, program: str, size_mb: float) -> ImageSpec:
    commands = {binary: program_command(program) for binary in OPENRESTY_BINARIES}
    return ImageSpec(repository, ("xenial",), size_mb=size_mb, description="OpenResty with Lua Thrift",
                     entrypoint=("/usr/local/openresty/bin/openresty",), cmd=("-g", "daemon off;"),
                     shell="dash", commands=commands,
                     # Ubuntu xenial; the Dockerfile installs curl with its build tools and keeps it.
                     extras={"family": "ubuntu", "add_binaries": ["curl"]})


def social_images() -> tuple[ImageSpec, ...]:
    """The all-services image (the container's command picks the binary), the two OpenResty
    images, and the Redis tag the chart pins."""
    services = ImageSpec(SERVICES_IMAGE, ("latest",), size_mb=620.0, description="Social Network services",
                         shell="bash", cmd=("bash",),
                         commands={binary: program_command(binary) for binary in _binaries()})
    return (services, _openresty(OPENRESTY_IMAGE, "nginx-thrift", 402.0),
            _openresty(MEDIA_FRONTEND_IMAGE, "media-frontend", 398.0),
            ImageSpec("docker.io/library/redis", ("6.2.4",), extras={"datastore": "redis"}))


def _binaries() -> Iterable[str]:
    return BINARIES.values()


__all__ = ["BINARIES", "CONFIG_PATH", "SERVICES_IMAGE", "frontend_programs", "service_programs", "social_images",
           "social_programs"]
