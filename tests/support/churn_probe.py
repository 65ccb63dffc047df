"""What the injectors wrote, ranked among everything the agent can list at the page.

An agent that lists everything it can see and sorts by `resourceVersion` learns what changed
last; in a quiet cluster that would be the fault. `rank_injected` is a `PageProbe` for the check
protocol's noop run (`sregym.problems.check`): it records every object the admin credential
creates, updates or deletes while the faults are injected, and when the faults have settled (the
moment the agent gets the page) sorts everything the `agent` credential can list (Events
excluded: their churn would only make the ranking easier to pass) by resourceVersion, newest
first. The rank is the best 1-based position of any object the injectors wrote; problems whose
faults leave nothing the agent can list (deleted objects, database users, hidden experiments)
have none. `tests/problems/test_churn_rank.py` states the criterion.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def rank_injected(run: Any) -> Callable[[], dict[str, Any]]:
    """Start recording what the admin writes on `run`'s twin; the returned function stops and ranks."""
    from sregym.cluster.base import ADMIN

    twin = run.cluster.twin
    written: set[tuple[str, str, str]] = set()
    recording = [True]

    def record(op: Any) -> None:
        if recording[0] and op.user == ADMIN and not op.dry_run:
            written.add((op.kind.kind, op.namespace, op.name))

    twin.store.add_mutator("churn-rank-probe", record, 10**6)

    def rank_at_page() -> dict[str, Any]:
        recording[0] = False
        return _rank(run, written)

    # The injection starts when this returns: nothing written before it counts.
    return rank_at_page


def _rank(run: Any, written: set[tuple[str, str, str]]) -> dict[str, Any]:
    """Rank by resourceVersion what the agent may list. The agent's `list` would copy every object
    only for its resourceVersion, so this applies the same two rules (may the agent list the kind
    cluster-wide, and is the object hidden from it) to the stored objects, read in place."""
    from sregym.cluster.base import AGENT
    from sregym.twin.machinery.authz import authorize, is_hidden

    twin = run.cluster.twin
    rows: list[tuple[int, str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for kind in list(twin.kinds.kinds):
        if kind.virtual or kind.key in seen or kind.kind == "Event":
            continue
        seen.add(kind.key)
        if not authorize(AGENT, "list", kind.group, kind.plural, None, None, None)[0]:
            continue  # hidden from the agent
        for obj in twin.store.scan(kind):
            meta = obj["metadata"]
            if is_hidden(AGENT, kind.group, meta.get("namespace"), kind.plural, meta["name"]):
                continue
            rows.append((int(meta["resourceVersion"]), kind.kind, meta.get("namespace", ""), meta["name"]))
    rows.sort(reverse=True)
    rank = next((i + 1 for i, row in enumerate(rows) if row[1:] in written), None)
    return {"rank": rank, "injected": sorted("/".join(w) for w in written),
            "newest": ["/".join(r[1:]) for r in rows[:3]]}
