"""Images built for the wrong CPU: a release pipeline that pushed only its linux/arm64 build.

The twin's nodes are amd64 (`twin/topology.py`). A single-platform arm64 image pulls fine (no
manifest list to reject it), but the kernel cannot run its entrypoint: runc's init fails the
exec with `exec format error`, the container exits 255 at once and the kubelet backs it off into
CrashLoopBackOff. `builds.py` pushes these to the twin's registry when `set_image` points a
workload at one; until then a pull fails like any unknown image.
"""

from __future__ import annotations

from typing import Any

from sregym.twin.node.images import ImageSpec
from sregym.twin.node.shell import Invocation, Program, Usage

ARM64_CHECKOUT = "ghcr.io/astronomy-shop-builds/checkout:2.2.0-arm64"


def _exec_format_error(entrypoint: str) -> Any:
    def run(call: Invocation) -> Program:
        yield Usage(memory_bytes=1 << 20, cpu_cores=0.0)
        call.write(f"exec {entrypoint}: exec format error\n", "stderr")
        return 255

    run.__name__ = "foreign_arch_" + entrypoint.rsplit("/", 1)[-1]
    return run


def foreign_arch_builds() -> list[ImageSpec]:
    """The arm64-only builds a workload can be pointed at (repository, tag, entrypoint)."""
    repository, tag = ARM64_CHECKOUT.rsplit(":", 1)
    return [ImageSpec(repository, (tag,), size_mb=21.4, shell="", cmd=("./checkout",),
                      description="checkout service (linux/arm64 build)",
                      commands={"checkout": _exec_format_error("./checkout")})]


__all__ = ["ARM64_CHECKOUT", "foreign_arch_builds"]
