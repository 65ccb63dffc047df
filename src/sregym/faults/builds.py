"""Faulty builds: images a bad CI job pushed, which `set_image` can point a workload at.

Two exist in the registry of a twin a fault is injected into (`FAULTY_BUILDS`, pushed by
`set_image` when it points a workload at one): an AIOpsLab-style `geo` image whose binary cannot
reach its database and panics, and a broken all-services Hotel Reservation image whose binaries
crash with a nil dereference at start. Until then a pull of either fails like any unknown image.
Kept below both the generic object faults and the application faults, which use them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.foreign_arch import foreign_arch_builds
from sregym.twin.node.images import ImageSpec
from sregym.twin.node.shell import Invocation, Program, Sleep, Usage

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

HR_BINARIES = ("frontend", "search", "geo", "profile", "rate", "recommendation", "reservation", "user")


def _stamp(call: Invocation) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(call.now, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _unreachable_db_geo(call: Invocation) -> Program:
    """geo built against a hard-coded database host that does not exist: dials for the
    driver's server-selection timeout, then panics."""
    ts = _stamp(call)
    for line in ("Reading config...", "Read database URL: mongodb-geo:27777", "Initializing DB connection..."):
        call.write(f"{ts} INF cmd/geo/main.go:37 > {line}\n")
    yield Usage(memory_bytes=12 << 20, cpu_cores=0.001)
    yield Sleep(10.0)
    call.write(f"{_stamp(call)} PNC cmd/geo/db.go:26 > no reachable servers\n")
    call.write("panic: no reachable servers\n\ngoroutine 1 [running]:\nmain.initializeDatabase(...)\n"
               "\t/go/src/github.com/harlow/go-micro-services/cmd/geo/db.go:26 +0x3c5\nmain.main()\n"
               "\t/go/src/github.com/harlow/go-micro-services/cmd/geo/main.go:39 +0x4f1\n", "stderr")
    return 2


def _nil_dereference(binary: str) -> Any:
    def run(call: Invocation) -> Program:
        call.write(f"{_stamp(call)} INF cmd/{binary}/main.go:23 > Reading config...\n")
        yield Usage(memory_bytes=8 << 20, cpu_cores=0.001)
        yield Sleep(0.2)
        call.write("panic: runtime error: invalid memory address or nil pointer dereference\n"
                   "[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x9c4a2e]\n\n"
                   f"goroutine 1 [running]:\nmain.main()\n\t/go/src/github.com/harlow/go-micro-services/cmd/"
                   f"{binary}/main.go:41 +0x2ae\n", "stderr")
        return 2

    run.__name__ = f"broken_{binary}"
    return run


def _faulty_builds() -> list[ImageSpec]:
    return [ImageSpec("docker.io/yinfangchen/geo", ("app3",), size_mb=338.2, shell="dash",
                      description="geo service build with a hard-coded database address",
                      cmd=("geo",), commands={"geo": _unreachable_db_geo}),
            ImageSpec("docker.io/jackcuii/hotel-reservation", ("latest",), size_mb=340.9, shell="dash",
                      description="hotelReservation services (broken build)", cmd=("frontend",),
                      commands={name: _nil_dereference(name) for name in HR_BINARIES})]


FAULTY_BUILDS: dict[str, ImageSpec] = {spec.repository: spec for spec in (*_faulty_builds(), *foreign_arch_builds())}


def push_faulty_build(cluster: Cluster, image: str) -> None:
    """Twin-only hook: push the faulty build `image` names (if it is one) to the registry of the
    twin behind `cluster`, as the bad CI job would have. A real cluster pulls the real image."""
    from sregym.twin.node.images import ImageRef, catalogue_of

    try:
        ref = ImageRef.parse(image)
    except ValueError:
        return
    build = FAULTY_BUILDS.get(ref.base)
    twin = getattr(cluster, "twin", None)
    if build is not None and twin is not None and ref.tag in build.tags:
        catalogue_of(twin).register(build)


__all__ = ["FAULTY_BUILDS", "HR_BINARIES", "push_faulty_build"]
