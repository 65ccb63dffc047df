"""kubectl fixes, one small builder per mechanism. Each returns the commands to run, in order.

A command is `(kubectl arguments, stdin or None)`. Builders never run anything: the agent applies
them and then verifies with the same signals it diagnosed from.
"""

from __future__ import annotations

import json

Command = tuple[str, str | None]


def restart(ns: str, deployment: str, token: str = "baseline") -> Command:
    """Roll a Deployment's pods (what `kubectl rollout restart` does, as a patch)."""
    patch = {"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": f"sregym-baseline-{token}"}}}}}
    return (f"patch deployment {deployment} -n {ns} --type merge -p '{json.dumps(patch)}'", None)


def rollout_undo(ns: str, deployment: str) -> list[Command]:
    return [(f"rollout undo deployment/{deployment} -n {ns}", None)]


def set_image(ns: str, deployment: str, container: str, image: str) -> list[Command]:
    return [(f"set image deployment/{deployment} {container}={image} -n {ns}", None)]


def delete(kind: str, name: str, ns: str | None = None) -> list[Command]:
    scope = f" -n {ns}" if ns else ""
    return [(f"delete {kind.lower()} {name}{scope}", None)]


def json_patch(kind: str, name: str, ns: str, ops: list[dict]) -> list[Command]:
    return [(f"patch {kind.lower()} {name} -n {ns} --type json -p '{json.dumps(ops)}'", None)]


def strategic_patch(kind: str, name: str, ns: str, body: dict) -> list[Command]:
    return [(f"patch {kind.lower()} {name} -n {ns} --type strategic -p '{json.dumps(body)}'", None)]


def container_patch(ns: str, deployment: str, container: str, fields: dict) -> list[Command]:
    body = {"spec": {"template": {"spec": {"containers": [{"name": container, **fields}]}}}}
    return strategic_patch("deployment", deployment, ns, body)


def apply_yaml(manifest: str) -> list[Command]:
    return [("apply -f -", manifest)]


def configmap_manifest(ns: str, name: str, data: dict[str, str]) -> str:
    """A ConfigMap manifest (JSON is valid YAML) for `kubectl apply -f -`."""
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name, "namespace": ns}, "data": data})


__all__ = ["Command", "apply_yaml", "configmap_manifest", "container_patch", "delete", "json_patch",
           "restart", "rollout_undo", "set_image", "strategic_patch"]
