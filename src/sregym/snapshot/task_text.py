"""What an offline agent is told: the incident overview and, for a program, its instructions file.

The overview is the offline version of the live incident page (app, window, alerts at snapshot
time), read from the snapshot's own files so it can never say more than the snapshot does. The
`react` agent gets it as its task; a `command` agent gets it inside `SREGYM_INSTRUCTIONS` with the
output schema, an example and where to write the answer. (The `baseline` agent gets the live
page instead, rebuilt from the replay: `replay.snapshot_brief`.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sregym.agents import prompts
from sregym.snapshot import layout
from sregym.snapshot.output import json_schema

# Placeholders rather than a plausible answer: a program must not be able to score by copying it.
EXAMPLE_OUTPUT: dict[str, Any] = {
    "entities": [{"kind": "<Kind, e.g. Deployment>", "namespace": "<namespace>", "name": "<object name>"}],
    "explanation": "<what is wrong with it, the concrete change, the evidence>",
}


def _read(path: Path) -> Any:
    """A snapshot JSON file, or None: the overview says `?` rather than failing on a damaged file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def overview(snapshot: Path) -> str:
    """What the agent is told up front: the app, the observation window and history, and the
    alerts at snapshot time — the offline version of the live incident page."""
    from sregym.tools import render

    meta = _read(snapshot / layout.SNAPSHOT_JSON) or {}
    app = _read(snapshot / layout.APP_JSON) or {}
    window = meta.get("window") or {}
    history = meta.get("history") or {}
    span = f"observation window {window.get('start', '?')} to {window.get('end', '?')}"
    if history.get("start"):  # metrics, logs and traces reach back before the window
        span += f"; metrics, logs and traces from {history['start']}"
    lines = [f"INCIDENT SNAPSHOT taken at {meta.get('snapshot_time', '?')} ({span}; times in UTC)"]
    alerts_dir = snapshot / layout.ALERTS_DIR
    alert_files = sorted(alerts_dir.glob("alerts_*.json")) if alerts_dir.is_dir() else []
    alerts = _read(alert_files[-1]) if alert_files else None
    if isinstance(alerts, list) and alerts:
        lines.append("Alerts at snapshot time:\n" + render.alerts({"data": {"alerts": alerts}}))
    else:
        lines.append("Users report that the application is misbehaving (no alert was pending or firing at "
                     "snapshot time).")
    name = app.get("app") or meta.get("app") or "?"
    namespaces = app.get("namespaces") or meta.get("namespaces") or []
    lines.append(f"Application: {name}\nNamespace(s): {', '.join(map(str, namespaces))}")
    if app.get("description"):
        lines.append(str(app["description"]).strip())
    entry = app.get("entry_point")
    if isinstance(entry, dict) and entry.get("service"):
        lines.append(f"Entry point: service {entry['service']}, port {entry.get('port', '?')}")
    return "\n\n".join(lines)


def app_name(snapshot: Path) -> str:
    meta = _read(snapshot / layout.SNAPSHOT_JSON) or {}
    return str(meta.get("app") or "?")


def instructions_text(snapshot: Path, answer: Path, time_limit_s: float) -> str:
    """The `SREGYM_INSTRUCTIONS` file of a command agent (also the preset CLIs' prompt)."""
    indent = lambda text: "\n".join("    " + line for line in text.splitlines())  # noqa: E731
    return prompts.SNAPSHOT_INSTRUCTIONS.format(
        overview=overview(snapshot), snapshot=snapshot, output=answer,
        example=indent(json.dumps(EXAMPLE_OUTPUT, indent=2)),
        schema=indent(json.dumps(json_schema(), indent=2, sort_keys=True)), time_limit=f"{time_limit_s:g}")


__all__ = ["EXAMPLE_OUTPUT", "app_name", "instructions_text", "overview"]
