"""Valkey: the Redis model under Valkey's name, banner and `INFO server` fields.

Valkey is a fork of Redis 7.2.4 and keeps its protocol, configuration and memory policy, so the
store is `redis.Redis` unchanged; what differs is what it says about itself. The server logs
"Valkey is starting" and `Valkey version=...`, and `INFO server` keeps `redis_version:7.2.4` for
client compatibility next to `server_name:valkey` and `valkey_version`. The image ships
`valkey-server`/`valkey-cli` and the `redis-*` names as symlinks.
"""

from __future__ import annotations

import re
from typing import Any

from sregym.twin.node import images
from sregym.twin.node.images import ImageSpec, register_image
from sregym.twin.node.shell import Invocation, Program

VALKEY_TAGS = ("7.2", "7.2.8", "7.2-alpine", "8.0", "8.0.2", "8.0-alpine", "8.0.2-alpine", "8.1", "8.1.1",
               "8.1.3", "8.1-alpine", "8.1.1-alpine", "8.1.3-alpine", "9.0.1-alpine3.23", "latest")
REDIS_COMPAT = "7.2.4"


def version_of(image: str) -> str:
    """The Valkey (or Redis) version an image tag names, else the newest we know."""
    tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else "latest"
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", tag)
    if not match:
        return "8.1.3"
    major, minor, patch = match.group(1), match.group(2), match.group(3)
    known = {"7.2": "7.2.8", "8.0": "8.0.2", "8.1": "8.1.3", "9.0": "9.0.1"}
    return f"{major}.{minor}.{patch}" if patch is not None else known.get(f"{major}.{minor}", f"{major}.{minor}.0")


def _image_of(call: Invocation) -> str:
    from sregym.twin.node.runtime import runtime_of

    ctx = call.ctx
    meta = (ctx.pod or {}).get("metadata") or {}
    if ctx.twin is None:
        return ""
    instance = runtime_of(ctx.twin).instance(meta.get("namespace", "default"), meta.get("name", ""), ctx.container)
    return instance.image if instance is not None else ""


def valkey_server(call: Invocation) -> Program:
    """`valkey-server [config] [--option value ...]` with Valkey's startup lines."""
    return (yield from images.redis_like_server(call, product="Valkey", version=version_of(_image_of(call)),
                                                binary="valkey-server"))


def server_section(store: Any) -> list[str]:
    """`INFO server` of a Redis-model store, worded as the image's server prints it."""
    from sregym.twin.node.runtime import runtime_of

    twin = store.twin
    instance = runtime_of(twin).instance(store.namespace, store.pod_name, store.container)
    image = instance.image if instance is not None else ""
    started = instance.started_at if instance is not None else twin.clock.now
    uptime = max(0, int(twin.clock.now - started))
    valkey = "valkey" in image.rsplit("/", 1)[-1].split(":")[0] or "/valkey" in image
    lines = ["# Server"]
    if valkey:
        lines += [f"redis_version:{REDIS_COMPAT}", "server_name:valkey", f"valkey_version:{version_of(image)}"]
    else:
        tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else "7.2.4"
        lines += [f"redis_version:{tag if re.fullmatch(r'[0-9.]+', tag) else '7.2.4'}"]
    lines += ["redis_git_sha1:00000000", "redis_git_dirty:0", "redis_mode:standalone" if not valkey
              else "server_mode:standalone", "arch_bits:64", "multiplexing_api:epoll", "process_id:1",
              f"tcp_port:{store.port}", f"uptime_in_seconds:{uptime}", f"uptime_in_days:{uptime // 86400}",
              f"executable:/data/{'valkey' if valkey else 'redis'}-server", "config_file:"]
    return lines


def register() -> None:
    cmds: dict[str, Any] = {"valkey-server": valkey_server, "redis-server": valkey_server,
                            "docker-entrypoint.sh": images.docker_entrypoint("valkey-server", valkey_server, conf_first=True)}
    register_image(ImageSpec("docker.io/valkey/valkey", VALKEY_TAGS, size_mb=41.5, description="Valkey",
                             ports=(6379,), memory_mb=8, entrypoint=("docker-entrypoint.sh",), cmd=("valkey-server",),
                             shell="ash", extras={"datastore": "redis"}, commands=cmds))


register()
