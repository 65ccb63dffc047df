"""Mitigation checks for symptoms that come and go: a cause that strikes every minute (a chaos
Schedule, a cron job) can be absent at the instant a one-shot check looks.

`keeps_reaching` asks `deployment_reaches`'s question (`nc -z <name> <port>` from inside every
running pod of the Deployment) again every `every_s` seconds for `seconds` of simulated time, so a
partition or packet loss that returns once a minute fails it, while a fix that ended the cause
passes every time.
"""

from __future__ import annotations

from typing import Any

from sregym.oracles.checks import CheckContext, check
from sregym.oracles.checks_network import deployment_reaches


@check("keeps_reaching")
def keeps_reaching(ctx: CheckContext, *, deployment: str, targets: list[list[Any]], seconds: float = 60.0,
                   every_s: float = 10.0, namespace: str | None = None) -> tuple[bool, str]:
    """Every running pod of `deployment` connects to each `[host, port]` of `targets`, asked every
    `every_s` seconds over `seconds` of simulated time."""
    waited = 0.0
    while True:
        ok, detail = deployment_reaches(ctx, deployment=deployment, targets=targets, namespace=namespace)
        if not ok:
            return False, f"after {waited:.0f}s: {detail}"
        if waited >= seconds:
            return True, f"for {seconds:.0f}s: {detail}"
        step = min(every_s, seconds - waited)
        ctx.cluster.advance(step)
        waited += step
