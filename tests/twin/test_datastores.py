"""Backing-store models: state on volumes, auth and authorization, caches, DB clients in exec."""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401 - registers mongosh/mongo/redis-cli
from sregym.twin.datastores import Memcached, MongoServer, Redis, datastore_for
from sregym.twin.node.runtime import runtime_of
from sregym.twin.node.shell import run_once
from sregym.twin.twin import Twin

INIT = """#!/bin/bash
until mongo --eval "print('waited for connection')" > /dev/null 2>&1; do sleep 1; done
mongo admin --eval "db.createUser({user: 'admin', pwd: 'admin', roles: [{role: 'userAdminAnyDatabase', db: 'admin'}]});"
mongo admin -u admin -p admin --authenticationDatabase admin \\
  --eval "db.grantRolesToUser('admin', [{role: 'readWrite', db: 'geo-db'}]);"
mongo admin -u admin -p admin --authenticationDatabase admin \\
  --eval "db.createUser({user: 'root', pwd: 'root', roles: [{role: 'userAdminAnyDatabase', db: 'admin'}]});"
"""


def _mongo_twin() -> Twin:
    twin = Twin(seed=11)
    twin.apply([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mongo-geo-script", "namespace": "default"},
         "data": {"k8s-geo-mongo.sh": INIT}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "geo-pvc", "namespace": "default"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mongodb-geo", "namespace": "default"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "mongodb-geo"}}, "strategy": {"type": "Recreate"},
                  "template": {"metadata": {"labels": {"app": "mongodb-geo"}}, "spec": {
                      "containers": [{"name": "mongo", "image": "mongo:4.4.6", "args": ["--auth"],
                                      "volumeMounts": [{"mountPath": "/data/db", "name": "geo"},
                                                       {"mountPath": "/docker-entrypoint-initdb.d",
                                                        "name": "init-script"}]}],
                      "volumes": [{"name": "geo", "persistentVolumeClaim": {"claimName": "geo-pvc"}},
                                  {"name": "init-script", "configMap": {"name": "mongo-geo-script"}}]}}}},
    ])
    twin.advance(30)
    return twin


def _pod(twin: Twin, prefix: str) -> dict[str, Any]:
    pods = [p for p in twin.list("pods", "default") if p["metadata"]["name"].startswith(prefix)
            and not p["metadata"].get("deletionTimestamp")]
    assert pods, f"no pod {prefix}"
    return pods[0]


def _exec(twin: Twin, pod: dict[str, Any], container: str, argv: list[str]) -> Any:
    ctx = runtime_of(twin).shell_context("default", pod["metadata"]["name"], container)
    assert ctx is not None
    return run_once(ctx, argv)


def test_init_script_creates_users_and_auth_is_enforced() -> None:
    twin = _mongo_twin()
    store = datastore_for(twin, _pod(twin, "mongodb-geo"))
    assert isinstance(store, MongoServer)
    assert store.auth
    users = store.mongo_state.users
    assert ("readWrite", "geo-db") in users[("admin", "admin")].roles
    assert ("admin", "root") in users
    ok = store.request("find", db="geo-db", collection="geo", user="admin", password="admin", rate=10)
    assert ok.ok and ok.service_ms > 0
    bad = store.request("find", db="geo-db", collection="geo", user="admin", password="nope")
    assert not bad.ok and bad.error == "AuthenticationFailed"
    assert bad.message.endswith('mechanism "SCRAM-SHA-1": (AuthenticationFailed) Authentication failed.')
    anon = store.request("find", db="geo-db", collection="geo")
    assert anon.message == "(Unauthorized) command find requires authentication"
    assert '"msg":"Authentication failed"' in twin.logs("default", _pod(twin, "mongodb-geo")["metadata"]["name"])


def test_revoke_role_from_shell_breaks_app_user_and_survives_restart() -> None:
    twin = _mongo_twin()
    pod = _pod(twin, "mongodb-geo")
    result = _exec(twin, pod, "mongo", [
        "mongosh", "admin", "-u", "root", "-p", "root", "--authenticationDatabase", "admin", "--quiet",
        "--eval", "db.revokeRolesFromUser('admin', [{role: 'readWrite', db: 'geo-db'}]);"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "{ ok: 1 }"
    store = datastore_for(twin, pod)
    assert isinstance(store, MongoServer)
    out = store.request("find", db="geo-db", collection="geo", user="admin", password="admin",
                        filter={"hotelId": "1"})
    assert out.error == "Unauthorized"
    assert out.message.startswith('(Unauthorized) not authorized on geo-db to execute command { find: "geo", '
                                  'filter: { hotelId: "1" }')
    assert out.message.endswith('$db: "geo-db" }')
    # The users live on the PV: a new pod neither re-runs the init script nor restores the role.
    twin.delete("pods", "default", pod["metadata"]["name"])
    twin.advance(40)
    new_pod = _pod(twin, "mongodb-geo")
    assert new_pod["metadata"]["uid"] != pod["metadata"]["uid"]
    again = datastore_for(twin, new_pod)
    assert isinstance(again, MongoServer)
    assert again.request("find", db="geo-db", collection="geo", user="admin", password="admin").error == "Unauthorized"
    assert "init process complete" not in twin.logs("default", new_pod["metadata"]["name"])


def test_mongo_shell_errors_and_user_commands() -> None:
    twin = _mongo_twin()
    pod = _pod(twin, "mongodb-geo")
    wrong = _exec(twin, pod, "mongo", ["mongosh", "-u", "root", "-p", "x", "--authenticationDatabase", "admin",
                                       "--eval", "db.getUsers()"])
    assert wrong.exit_code == 1
    assert "MongoServerError: Authentication failed." in wrong.stderr
    denied = _exec(twin, pod, "mongo", ["mongosh", "geo-db", "--quiet", "--eval", "db.geo.find().count()"])
    assert denied.exit_code == 1
    assert "MongoServerError: command count requires authentication" in denied.stderr
    legacy = _exec(twin, pod, "mongo", ["mongo", "admin", "-u", "root", "-p", "root", "--eval",
                                        "db.dropUser('admin')"])
    assert legacy.exit_code == 0
    assert legacy.stdout.startswith("MongoDB shell version v4.4.6\n")
    store = datastore_for(twin, pod)
    assert isinstance(store, MongoServer)
    assert ("admin", "admin") not in store.mongo_state.users
    missing = _exec(twin, pod, "mongo", ["mongo", "admin", "-u", "root", "-p", "root", "--quiet", "--eval",
                                         "db.dropUser('admin')"])
    assert missing.exit_code == 252
    assert 'uncaught exception: Error: Could not find user "admin" for db "admin"' in missing.stderr
    created = _exec(twin, pod, "mongo", ["mongosh", "admin", "-u", "root", "-p", "root", "--quiet", "--eval",
                                         "db.createUser({user: 'admin', pwd: 'admin', roles: "
                                         "[{role: 'readWrite', db: 'geo-db'}]})"])
    assert created.stdout.strip() == "{ ok: 1 }"
    assert store.request("find", db="geo-db", collection="geo", user="admin", password="admin").ok


def _cache_twin(image: str, args: list[str]) -> tuple[Twin, dict[str, Any]]:
    twin = Twin(seed=5)
    twin.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cache", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": image, "args": args}]}})
    twin.advance(10)
    return twin, twin.get("pods", "default", "cache")


def test_memcached_warms_up_and_is_bounded_by_memory() -> None:
    twin, pod = _cache_twin("memcached:1.6.7", ["-m", "1"])
    cache = datastore_for(twin, pod)
    assert isinstance(cache, Memcached)
    first = cache.request("get", rate=200, keyspace=1000, item_bytes=512).hit_ratio
    for _ in range(30):
        cache.request("get", rate=200, keyspace=1000, item_bytes=512)
        twin.step()
    warm = cache.request("get", rate=200, keyspace=1000, item_bytes=512).hit_ratio
    assert first == 0.0 and warm is not None and warm > 0.95
    # A working set larger than -m 1 MiB cannot all fit: evictions, hit ratio capped.
    for _ in range(30):
        cache.request("get", rate=2000, keyspace=100_000, item_bytes=512)
        twin.step()
    capped = cache.request("get", rate=1, keyspace=100_000, item_bytes=512).hit_ratio
    assert capped is not None and capped < 0.05
    assert cache.stats()["evictions"] > 0
    _cpu, memory = runtime_of(twin).container_usage("default", "cache", "c")
    assert memory > 1_000_000


def test_redis_auth_maxmemory_and_cli() -> None:
    twin, pod = _cache_twin("redis:7.4", ["--requirepass", "s3cret"])
    redis = datastore_for(twin, pod)
    assert isinstance(redis, Redis)
    assert redis.request("GET").message == "NOAUTH Authentication required."
    assert redis.request("GET", password="bad").message == (
        "WRONGPASS invalid username-password pair or user is disabled.")
    assert redis.request("SET", password="s3cret").ok
    ping = _exec(twin, pod, "c", ["redis-cli", "-a", "s3cret", "PING"])
    assert ping.stdout == "PONG\n" and ping.exit_code == 0
    assert "Using a password with '-a'" in ping.stderr
    noauth = _exec(twin, pod, "c", ["redis-cli", "GET", "k"])
    assert noauth.stdout == "(error) NOAUTH Authentication required.\n"
    assert _exec(twin, pod, "c", ["redis-cli", "-a", "s3cret", "CONFIG", "SET", "maxmemory", "1mb"]).stdout == "OK\n"
    got = _exec(twin, pod, "c", ["redis-cli", "-a", "s3cret", "CONFIG", "GET", "maxmemory"])
    assert got.stdout == "maxmemory\n1048576\n"
    redis.request("SET", password="s3cret", rate=10_000, keyspace=10_000, value_bytes=1024)
    oom = redis.request("SET", password="s3cret", rate=1, keyspace=10_000, value_bytes=1024)
    assert oom.message == "OOM command not allowed when used memory > 'maxmemory'."
    info = _exec(twin, pod, "c", ["redis-cli", "-a", "s3cret", "INFO", "memory"])
    assert "maxmemory:1048576" in info.stdout and "maxmemory_policy:noeviction" in info.stdout


@pytest.mark.parametrize("image", ["valkey/valkey:8.0"])
def test_valkey_is_a_redis_store(image: str) -> None:
    twin, pod = _cache_twin(image, [])
    assert isinstance(datastore_for(twin, pod), Redis)


def test_data_plane_store_request_contract() -> None:
    """D1's engine sends `StoreRequest` objects and reads ok/latency_ms/error/error_class."""
    from sregym.twin.dataplane.backends import StoreRequest, ask

    twin = _mongo_twin()
    pod = _pod(twin, "mongodb-geo")
    good = ask(twin, pod, StoreRequest("mongodb", "find", "geo-db", "geo", "admin", "admin", "admin", 50.0), 0.9)
    assert good.ok and good.latency_ms > 0 and good.error == ""
    bad = ask(twin, pod, StoreRequest("mongodb", "find", "geo-db", "geo", "admin", "wrong", "admin", 50.0), 0.9)
    assert not bad.ok and bad.error_class == "auth"
    assert bad.error.endswith("(AuthenticationFailed) Authentication failed.")
