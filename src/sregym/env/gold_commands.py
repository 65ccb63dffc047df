"""A gold `Action` as the kubectl command an operator would type.

The gold agent acts through the same kubectl tool as any agent, so a gold pass proves the fix
is reachable with the agent credential and the real client. A manifest to apply is staged as a
file in kubectl's working directory (an operator would have it on disk) and applied with `-f`.
A `wait` is its watching command (an exec, or `get pods`), repeated by the conductor until the
wait's seconds have passed at its clock's seconds per tool call.
"""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

import yaml

from sregym.problems.model import Action

_PATCH_TYPES = {"strategic": "strategic", "merge": "merge", "json": "json"}


def _target(action: Action) -> list[str]:
    args = [action.kind.lower(), action.name]
    if action.namespace:
        args += ["-n", action.namespace]
    return args


def action_to_command(action: Action, workdir: Path, index: int = 0) -> str:
    """The kubectl arguments (no leading `kubectl`) that perform `action`."""
    if action.op == "patch":
        args = ["patch", *_target(action), "--type", _PATCH_TYPES[action.patch_type],
                "-p", json.dumps(action.patch, sort_keys=True, separators=(",", ":"))]
    elif action.op == "delete":
        args = ["delete", *_target(action)]
    elif action.op == "apply":
        path = Path(workdir) / f"gold-{index}.yaml"
        path.write_text(yaml.safe_dump(action.manifest, sort_keys=False))
        args = ["apply", "-f", str(path)]
    elif action.op == "wait" and not action.command:
        args = ["get", "pods", "-n", action.namespace or "default"]
    else:  # exec, or a wait that watches with an exec
        target = action.name
        if action.kind and action.kind.lower() not in ("pod", "pods", "po"):
            target = f"{action.kind.lower()}/{action.name}"  # kubectl picks a running pod of it
        args = ["exec", target, "-n", action.namespace or "default"]
        if action.container:
            args += ["-c", action.container]
        args += ["--", *action.command]
    return shlex.join(args)


def wait_repeats(action: Action, seconds_per_call: float) -> int:
    """How many times a `wait` is run: each tool call lets `seconds_per_call` pass, so the
    watching command is repeated until the action's seconds have gone (once for other ops)."""
    if action.op != "wait" or seconds_per_call <= 0:
        return 1
    return max(1, math.ceil(action.seconds / seconds_per_call - 1e-9))


__all__ = ["action_to_command", "wait_repeats"]
