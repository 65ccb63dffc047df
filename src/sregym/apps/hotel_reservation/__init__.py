"""Hotel Reservation (DeathStarBench): a Go/gRPC hotel search and booking app on MongoDB and
memcached, deployed from plain manifests into namespace `hotel-reservation`.

The manifests in `manifests/` are what a user would `kubectl apply -f`: one `config.json`
ConfigMap per service, MongoDB init scripts and credentials Secrets, PVCs for the six databases,
consul and jaeger as in the original. The load generator (wrk2 with the original mixed workload:
search 60 %, recommend 39 %, user login 0.5 %, reserve 0.5 %, ~100 req/s open loop) runs in the
hidden `sregym-system` namespace. The services' ports are the one table in `ports.py`; the
all-services image and the wrk2 client are pushed to each twin the app is deployed into.
"""

from __future__ import annotations

from sregym.apps.catalog import AppSpec, OpenLoop, RequestClass, Slo, app
from sregym.apps.hotel_reservation import loadgen
from sregym.apps.hotel_reservation.ports import PORTS
from sregym.apps.hotel_reservation.programs import hotel_images, hotel_programs

NAMESPACE = "hotel-reservation"
DESCRIPTION = (
    "Hotel Reservation is a microservice application for searching, recommending and booking hotels. "
    "Users reach the `frontend` (HTTP on port 5000), which calls the gRPC services `search`, `geo`, "
    "`rate`, `profile`, `recommendation`, `reservation` and `user`. `geo`, `profile`, `rate`, "
    "`recommendation`, `reservation` and `user` each keep their data in their own MongoDB "
    "(`mongodb-<service>`, with access control and a persistent volume); `profile`, `rate` and "
    "`reservation` cache reads in memcached (`memcached-profile`, `memcached-rate`, "
    "`memcached-reserve`). Each service reads its ports and database addresses from the `config.json` "
    "in its `<service>-config` ConfigMap, and its MongoDB credentials from the "
    "`mongodb-<service>-credentials` Secret. Users see search results and recommendations within a "
    "few hundred milliseconds; essentially every request should succeed."
)
MIX = (
    RequestClass("search", 0.60, "GET", "/hotels?inDate={in_date}&outDate={out_date}&lat={lat}&lon={lon}",
                 "/hotels"),
    RequestClass("recommend", 0.39, "GET", "/recommendations?require={require}&lat={lat}&lon={lon}",
                 "/recommendations"),
    RequestClass("user", 0.005, "POST", "/user?username={user}&password={password}", "/user"),
    RequestClass("reserve", 0.005, "POST",
                 "/reservation?inDate={in_date}&outDate={out_date}&lat={lat}&lon={lon}&hotelId={hotel}"
                 "&customerName={user}&username={user}&password={password}&number=1", "/reservation"),
)
WORKLOAD = OpenLoop(target=f"http://frontend.{NAMESPACE}.svc.cluster.local:{PORTS['frontend']}", rate=100.0,
                    mix=MIX, connections=100, threads=3, distribution="exp", script=loadgen.lua_script,
                    script_name=loadgen.SCRIPT)
SLO = Slo(success_ratio=0.995, p95_latency_ms=500.0, window_s=60.0, entry_service="frontend")
BASELINE = {name: 1 for name in (
    "frontend", "search", "geo", "profile", "rate", "recommendation", "reservation", "user",
    "mongodb-geo", "mongodb-profile", "mongodb-rate", "mongodb-recommendation", "mongodb-reservation",
    "mongodb-user", "memcached-profile", "memcached-rate", "memcached-reserve", "consul", "jaeger")}


@app
def hotel_reservation() -> AppSpec:
    return AppSpec(name="hotel-reservation", namespace=NAMESPACE, description=DESCRIPTION,
                   manifest_package=__name__, load=WORKLOAD, slo=SLO, baseline=BASELINE, ports=PORTS,
                   images=hotel_images(), programs=hotel_programs)


__all__ = ["BASELINE", "DESCRIPTION", "MIX", "NAMESPACE", "PORTS", "SLO", "WORKLOAD", "hotel_reservation"]
