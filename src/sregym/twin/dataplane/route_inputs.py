"""The generations of a route's per-tick inputs, so a route survives ticks in which none changed.

`Router.route()` splits a connection into a static part (DNS, Service, endpoints, policy: cached
while the watched store kinds are unchanged) and a dynamic part (who listens, chaos, the source
node's kernel). The dynamic part used to be re-evaluated on the first call of every tick although
in a steady cluster nothing it reads moves; re-evaluating ~50 routes per tick was the largest cost
of the Astronomy Shop's data plane. `stamp()` names every input of the dynamic part by a change
counter or a small value snapshot, so a cached route is reused exactly when re-evaluating it
would give the same answer:

- the Router's store version (Pods, Services, Endpoints, NetworkPolicies, ConfigMaps, Namespaces,
  Chaos Mesh objects: IPs, readiness, node placement, policy decisions, the source's own sysctls);
- `Runtime.generation`: a container started, stopped, or its process opened or closed a port
  (`runtime.listener`, the connection-refused legs);
- `ChaosService.version`: the published NetworkChaos injections (partition, loss, delay);
- the source node's kernel: conntrack full or not, and its sysctls (`fs.file-max`, the local
  port range) — read per call because fault injectors and `sysctl -w` change them between ticks;
- the held-connections table's version (`held_connections.py`): a listener at its open-file
  limit stops accepting.

Everything else `_evaluate` reads is a pure function of these (`tcp_loss.path_cost`) or of the
cache key itself (source pod, host, port, protocol, timeout).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane.held_connections import version as held_version

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

# Set to False to re-evaluate every route once per tick (the reference the cache is tested against).
CROSS_TICK = True


def stamp(twin: Twin, store_version: int, src_pod: dict[str, Any] | None) -> tuple[Any, ...]:
    """Everything the dynamic part of a route from `src_pod` depends on beyond its cache key."""
    services = twin.services
    runtime = services.runtime
    chaos = services.chaos
    return (store_version,
            -1 if runtime is None else getattr(runtime, "generation", -1),
            -1 if chaos is None else getattr(chaos, "version", -1),
            _kernel(services.nodeos, src_pod),
            held_version(twin))


def _kernel(nodeos: Any, src_pod: dict[str, Any] | None) -> tuple[Any, ...] | None:
    """The source node's kernel state a connect can fail on (None: no state booted for it yet)."""
    if nodeos is None or src_pod is None:
        return None
    node = (src_pod.get("spec") or {}).get("nodeName") or ""
    state = nodeos.nodes.get(node) if node else None
    if state is None:
        return None
    return nodeos.conntrack_full(node), tuple(state.sysctls.items()) if state.sysctls else ()


__all__ = ["CROSS_TICK", "stamp"]
