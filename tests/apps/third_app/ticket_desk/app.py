"""ticket-desk: a third-party app in one folder (this file, `manifests/`), loaded from a problems
directory. One HTTP API (`desk-api`, a data-plane program) behind a Service, driven by a
closed-loop (Locust) load: users browse and file tickets, thinking a second between flows."""

from __future__ import annotations

from pathlib import Path

from sregym.apps import AppSpec, ClosedLoop, Slo, app
from sregym.apps.loadgen import Request, Task
from sregym.twin.dataplane.programs import program_image
from sregym.twin.dataplane.spec import MemoryModel, Operation, ProgramSpec, Setting, Startup

NAMESPACE = "ticket-desk"
PORTS = {"api": 8080}
IMAGE_REPOSITORY = "ghcr.io/example/ticket-desk"


def programs() -> list[ProgramSpec]:
    return [ProgramSpec(
        name="desk-api", service_name="api", protocol="http", port=Setting(env="PORT", default=str(PORTS["api"])),
        operations=(Operation(name="/tickets", method="GET", cpu_ms=4.0),
                    Operation(name="/tickets", method="POST", cpu_ms=8.0),
                    Operation(name="/login", method="POST", cpu_ms=2.0)),
        memory=MemoryModel(base_mib=20), startup=Startup(seconds=1.0, logs=("desk-api starting",)))]


LOAD = ClosedLoop(target=f"http://api.{NAMESPACE}.svc.cluster.local:80", users=40, spawn_rate=20.0,
                  think_time_s=1.0, tasks=(
                      Task("browse", 3, (Request("GET", "/tickets"), Request("GET", "/tickets?page=2"))),
                      Task("file_ticket", 1, (Request("POST", "/login"), Request("POST", "/tickets")))))


@app
def ticket_desk() -> AppSpec:
    return AppSpec(name="ticket-desk", namespace=NAMESPACE,
                   description="ticket-desk is a help-desk API: users list and file tickets through the "
                               "`api` Service (HTTP on port 80).",
                   manifest_dir=str(Path(__file__).parent / "manifests"), load=LOAD, ports=PORTS,
                   slo=Slo(success_ratio=0.99, p95_latency_ms=1000.0, entry_service="api"),
                   baseline={"api": 1}, programs=programs,
                   images=(program_image(IMAGE_REPOSITORY, ("1.0",), ("desk-api",), cmd=("desk-api",)),))
