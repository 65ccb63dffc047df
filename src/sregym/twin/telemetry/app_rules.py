"""Alert rules an app ships for itself, loaded once the app is there.

A cluster's Prometheus carries the generic rule files (`telemetry/rules/`) for every cluster and
the rules of each app its operators added for that app. The twin never imports apps, so an app
registers its rule file here under its namespace; the rule manager loads it the first time it
sees that namespace in the store, under the path a mounted rule file would have, and from then
on evaluates and serves it on `/api/v1/rules` like the others. Twins without the app keep exactly
the default rule set.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

DISPLAY_DIR = "/etc/prometheus/rules"
_APP_RULES: dict[str, tuple[str, Path]] = {}  # namespace -> (display file name, rule file)


def register_app_rules(namespace: str, path: Path) -> None:
    """Evaluate the rule file at `path` in twins where `namespace` exists."""
    _APP_RULES[namespace] = (path.name, path)


def load_due(twin: Twin, manager: Any, loaded: set[str]) -> None:
    """Load the rule files of registered apps whose namespace now exists (each once per manager)."""
    if len(loaded) == len(_APP_RULES):
        return
    for namespace in sorted(_APP_RULES):
        if namespace in loaded or twin.store.peek(twin.store.kind("Namespace"), "", namespace) is None:
            continue
        loaded.add(namespace)
        name, path = _APP_RULES[namespace]
        manager.load(path, display_name=f"{DISPLAY_DIR}/{name}")


__all__ = ["load_due", "register_app_rules"]
