"""The node runtime: what a kubelet and a container runtime keep and do.

Container instances and their state (`runtime`), the image catalogue and what each image runs
(`images`), the shell and core utilities commands run in (`shell`, `coreutils`), probes, container
logs and how a pod spec becomes a container's environment (`podconfig`).
"""

# The standard commands (`sh`, `echo`, `sleep` ...) register themselves in the shell's command
# registry when imported; doing it here, where the node runtime is assembled, makes them available
# to whatever part of it is imported first, without the shell knowing its commands.
from sregym.twin.node import coreutils  # noqa: F401
