"""The node runtime: what a kubelet and a container runtime keep and do.

Container instances and their state (`runtime`), the image catalogue and what each image runs
(`images`), the shell and core utilities commands run in (`shell`, `coreutils`), probes, container
logs and how a pod spec becomes a container's environment (`podconfig`).
"""
