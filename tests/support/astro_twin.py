"""The Astronomy Shop deployed and warmed up on a twin: the start of every astro test module.

`warm_astro_twin(seed, advance_s)` deploys the app exactly as `sregym twin up --app astronomy-shop`
does and runs `advance_s` simulated seconds (images pulled, Kafka and PostgreSQL up, Locust's ten
users on the shop, first scrapes in the TSDB). It costs a few CPU seconds, so:

- a module that only *reads* the twin (PromQL/LogQL/trace queries, `twin.list`, `twin.logs`) asks
  for `shared=True` and gets the one twin this process built for that (seed, advance_s); every
  such module on a worker shares the build. A shared twin must never be advanced, patched or sent
  requests: `dataplane.http_request` counts in the span metrics, so one module's request would
  change what another reads, depending on how xdist spread the modules.
- a module that changes the twin (flips flags, scales, advances, sends requests) asks for its own
  (the default) and keeps it in a module-scoped fixture, as before.

Why not a copy of one cached build for everybody: a running twin holds its container programs as
Python generators parked in `Sleep`, which neither `copy.deepcopy` nor pickle can duplicate, and
`problems.warm`'s fork-per-run cannot hand a twin back to the test that asked (and is unsafe under
xdist's receiver thread). The same (seed, advance_s) always gives the same state, shared or not.
"""

from __future__ import annotations

from sregym.apps import deploy_app
from sregym.twin import Twin

NS = "astronomy-shop"
READ_ONLY_SEED = 42
READ_ONLY_ADVANCE_S = 120.0

_SHARED: dict[tuple[int, float], tuple[Twin, float]] = {}


class SharedTwinChanged(AssertionError):
    """A module advanced the shared read-only twin: the modules after it would read another state."""


def build_astro_twin(seed: int, advance_s: float) -> Twin:
    """A fresh twin with the Astronomy Shop deployed and `advance_s` simulated seconds run."""
    twin = Twin(seed=seed)
    deploy_app(twin, NS)
    twin.advance(advance_s)
    return twin


def warm_astro_twin(seed: int = READ_ONLY_SEED, advance_s: float = READ_ONLY_ADVANCE_S, *,
                    shared: bool = False) -> Twin:
    """The Astronomy Shop on a twin after `advance_s` s: a new one of the caller's own, or with
    `shared=True` this process's read-only one for (seed, advance_s), built on first use. Read-only
    modules should keep the defaults so they share one build per worker."""
    if not shared:
        return build_astro_twin(seed, advance_s)
    key = (int(seed), float(advance_s))
    if key not in _SHARED:
        twin = build_astro_twin(seed, advance_s)
        _SHARED[key] = (twin, twin.clock.now)
    twin, built_at = _SHARED[key]
    if twin.clock.now != built_at:
        raise SharedTwinChanged(f"the shared Astronomy Shop twin was advanced from {built_at} s to {twin.clock.now} s")
    return twin


__all__ = ["NS", "READ_ONLY_ADVANCE_S", "READ_ONLY_SEED", "SharedTwinChanged", "build_astro_twin",
           "warm_astro_twin"]


def flip_flag(twin: Twin, flag: str, variant: str) -> None:
    """Set `flag`'s defaultVariant in the flagd ConfigMap and restart flagd (`kubectl rollout
    restart`): flagd reads an init container's copy of the file, so the edit takes effect only then."""
    import json

    ns = "astronomy-shop"
    data = json.loads(twin.get("configmaps", ns, "flagd-config")["data"]["demo.flagd.json"])
    data["flags"][flag]["defaultVariant"] = variant
    twin.patch("configmaps", ns, "flagd-config", {"data": {"demo.flagd.json": json.dumps(data, indent=2)}})
    twin.patch("deployments", ns, "flagd", {"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": str(twin.clock.now)}}}}})
