"""Social Network (DeathStarBench): a C++/Thrift microblogging app on MongoDB, Redis and
memcached behind OpenResty, deployed from plain manifests into namespace `social-network`.

The manifests in `manifests/` are what the project's Helm chart renders (standalone stores, no
sharding or clusters), written out as a user would `kubectl apply -f` them: one ConfigMap per
service named after it with `service-config.json` and `jaeger-config.yml`, `nginx.conf` for the
two front ends, `mongod.conf` / `redis.conf` for the stores. The load generator (wrk2 with the
original mixed workload: read home timeline 60 %, read user timeline 30 %, compose post 10 %,
open loop) runs in the hidden `sregym-system` namespace against `nginx-thrift:8080`. Ports are the
one table in `ports.py`; the services image, the two OpenResty images and the wrk2 client are
pushed to each twin the app is deployed into.
"""

from __future__ import annotations

from sregym.apps.catalog import AppSpec, OpenLoop, RequestClass, Slo, app
from sregym.apps.social_network import loadgen
from sregym.apps.social_network.ports import PORTS
from sregym.apps.social_network.programs import social_images, social_programs

NAMESPACE = "social-network"
DESCRIPTION = (
    "Social Network is a microservice application where users write posts, follow each other and read "
    "timelines. Users reach `nginx-thrift` (OpenResty, HTTP on port 8080), whose Lua handlers call the C++ "
    "Thrift services on port 9090: `compose-post-service` assembles a post from `unique-id-service`, "
    "`text-service` (which calls `url-shorten-service` and `user-mention-service`), `media-service` and "
    "`user-service`, then stores it in `post-storage-service` and writes it to `user-timeline-service` and "
    "`home-timeline-service` (which asks `social-graph-service` for the author's followers). Reading a home "
    "timeline goes through `home-timeline-service`, a user timeline through `user-timeline-service`; both "
    "fetch the posts from `post-storage-service`. Services keep their data in their own stores: MongoDB "
    "(`<service>-mongodb`), Redis for timelines and the social graph (`home-timeline-redis`, "
    "`user-timeline-redis`, `social-graph-redis`) and memcached caches (`post-storage-memcached`, "
    "`user-memcached`, `url-shorten-memcached`, `media-memcached`). `media-frontend` (port 8081) serves media "
    "uploads. Every service reads the addresses of its peers and stores from the `service-config.json` in "
    "the ConfigMap named after it. Users see timelines within a few hundred milliseconds; essentially "
    "every request should succeed."
)
MIX = (
    RequestClass("read-home-timeline", 0.60, "GET", "/wrk2-api/home-timeline/read?user_id={user}&start=0&stop=10",
                 "/wrk2-api/home-timeline/read"),
    RequestClass("read-user-timeline", 0.30, "GET", "/wrk2-api/user-timeline/read?user_id={user}&start=0&stop=10",
                 "/wrk2-api/user-timeline/read"),
    RequestClass("compose-post", 0.10, "POST", "/wrk2-api/post/compose", "/wrk2-api/post/compose"),
)
WORKLOAD = OpenLoop(target=f"http://nginx-thrift.{NAMESPACE}.svc.cluster.local:{PORTS['nginx-thrift']}",
                    rate=100.0, mix=MIX, connections=100, threads=3, distribution="exp",
                    script=loadgen.lua_script, script_name=loadgen.SCRIPT)
SLO = Slo(success_ratio=0.995, p95_latency_ms=500.0, window_s=60.0, entry_service="nginx-thrift")
STORES = ("home-timeline-redis", "media-memcached", "media-mongodb", "post-storage-memcached",
          "post-storage-mongodb", "social-graph-mongodb", "social-graph-redis", "url-shorten-memcached",
          "url-shorten-mongodb", "user-memcached", "user-mongodb", "user-timeline-mongodb", "user-timeline-redis")
BASELINE = {name: 1 for name in (*PORTS, *STORES, "jaeger")}


@app
def social_network() -> AppSpec:
    return AppSpec(name="social-network", namespace=NAMESPACE, description=DESCRIPTION,
                   manifest_package=__name__, load=WORKLOAD, slo=SLO, baseline=BASELINE, ports=PORTS,
                   images=social_images(), programs=social_programs)


__all__ = ["BASELINE", "DESCRIPTION", "MIX", "NAMESPACE", "PORTS", "SLO", "STORES", "WORKLOAD", "social_network"]
