"""`kubectl` inside a pod (`bitnami/kubectl`): the batch jobs and init containers that act on the
cluster with their ServiceAccount.

Why: CronJobs that "rebalance" resources, init containers that read a ConfigMap before the app
starts, maintenance jobs that delete leftovers — each is a container running `kubectl` with the
in-cluster credential, and when its RBAC is wrong or its input is bad the cluster changes (or
refuses to) exactly as the real binary would make it. The command speaks through
`userland/kube_client.py` (the pod's ServiceAccount token, the stored RBAC objects) and supports
the verbs such jobs use: `get` (table, `-o json|yaml|name`), `patch` (`--type
strategic|merge|json`), `set resources` (`--limits`, `--requests`, `-c`) and `delete`. Output and
errors are kubectl 1.32's: `deployment.apps/recommendation patched`, `resource requirements
updated`, `configmap "x" deleted`, `Error from server (Forbidden): ...` with exit status 1.

The image joins the built-in catalogue when this module is imported (the kubelet imports it).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from sregym.errors import ApiError, NotFound, Unauthorized
from sregym.twin.machinery.kinds import ResourceKind
from sregym.twin.machinery.printers import table
from sregym.twin.node.images import MIB, ImageSpec, register_image
from sregym.twin.node.shell import Invocation, Program, Usage
from sregym.twin.userland.kube_client import InClusterClient

REPOSITORY = "docker.io/bitnami/kubectl"
TAGS = ("latest", "1.32", "1.32.3", "1.31", "1.31.7", "1.30")
_VALUE_FLAGS = {"-n", "--namespace", "-o", "--output", "-p", "--patch", "--type", "-c", "--containers",
                "--limits", "--requests", "-l", "--selector", "--wait", "--grace-period"}
_SHORT = {"-n": "--namespace", "-o": "--output", "-p": "--patch", "-c": "--containers", "-l": "--selector"}


class UsageError(Exception):
    """A command line kubectl rejects before calling the server."""


def parse(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """Positional words and flags (`--flag value`, `--flag=value`, `-n value`, short aliases)."""
    words: list[str] = []
    flags: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg.startswith("-") and arg != "-":
            name, eq, value = arg.partition("=")
            name = _SHORT.get(name, name)
            if not eq:
                if name in _VALUE_FLAGS or arg in _VALUE_FLAGS:
                    if index + 1 >= len(args):
                        raise UsageError(f"flag needs an argument: {arg!r} in {arg}")
                    index += 1
                    value = args[index]
                else:
                    value = "true"
            flags[name] = value
        else:
            words.append(arg)
        index += 1
    return words, flags


def _target(client: InClusterClient, words: list[str]) -> tuple[ResourceKind, str]:
    """`TYPE NAME` or `TYPE/NAME`."""
    if words and "/" in words[0]:
        resource, _, name = words[0].partition("/")
    elif len(words) >= 2:
        resource, name = words[0], words[1]
    else:
        raise UsageError("you must specify the type of resource to get. Use \"kubectl api-resources\" for a "
                     "complete list of supported resources." if not words else
                     "resource(s) were provided, but no name was specified")
    return client.kind(resource), name


def _ref(k: ResourceKind, name: str) -> str:
    return f"{k.singular}.{k.group}/{name}" if k.group else f"{k.singular}/{name}"


def _render_table(k: ResourceKind, objects: list[dict[str, Any]], now: float) -> str:
    doc = table(k, objects, now=now)
    headers = [str(c["name"]).upper() for c in doc["columnDefinitions"]]
    rows = [[str(cell) for cell in row["cells"]] for row in doc["rows"]]
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["   ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in [headers, *rows]]
    return "\n".join(lines) + "\n"


def _show(client: InClusterClient, k: ResourceKind, objects: list[dict[str, Any]], output: str, single: bool,
          now: float) -> str:
    if output == "name":
        return "".join(_ref(k, o["metadata"]["name"]) + "\n" for o in objects)
    shown: Any = objects[0] if single else {"apiVersion": "v1", "kind": "List", "items": objects,
                                             "metadata": {"resourceVersion": ""}}
    if output == "json":
        return json.dumps(shown, indent=4) + "\n"
    if output == "yaml":
        return yaml.safe_dump(shown, default_flow_style=False, sort_keys=True)
    if not objects:
        where = f" in {client.namespace} namespace" if k.namespaced else ""
        return f"No resources found{where}.\n"
    return _render_table(k, objects, now)


def _get(call: Invocation, client: InClusterClient, words: list[str], flags: dict[str, str]) -> int:
    if not words:
        raise UsageError('you must specify the type of resource to get. Use "kubectl api-resources" for a complete '
                     'list of supported resources.')
    output = flags.get("--output", "")
    if output not in ("", "json", "yaml", "name", "wide"):
        raise UsageError(f'unable to match a printer suitable for the output format "{output}", allowed formats are: '
                     "json,name,wide,yaml")
    ns = flags.get("--namespace")
    if "/" in words[0] or len(words) >= 2:
        k, name = _target(client, words)
        obj = client.get(k.plural if not k.group else f"{k.plural}.{k.group}", name, ns)
        call.write(_show(client, k, [obj], output, True, call.now))
        return 0
    k = client.kind(words[0])
    items = client.list(f"{k.plural}.{k.group}" if k.group else k.plural, ns, label_selector=flags.get("--selector"))
    if not items and output in ("", "wide"):
        call.error(_show(client, k, items, output, False, call.now).rstrip("\n"))
        return 0
    call.write(_show(client, k, items, output, False, call.now))
    return 0


def _qualified(k: ResourceKind) -> str:
    return f"{k.plural}.{k.group}" if k.group else k.plural


def _patch(call: Invocation, client: InClusterClient, words: list[str], flags: dict[str, str]) -> int:
    k, name = _target(client, words)
    text = flags.get("--patch")
    if text is None:
        raise UsageError("must specify -p to patch")
    kind_of_patch = flags.get("--type", "strategic")
    if kind_of_patch not in ("strategic", "merge", "json"):
        raise UsageError(f'--type must be one of [json merge strategic], not "{kind_of_patch}"')
    try:
        body = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"unable to parse \"{text}\": {exc}") from None
    before = client.get(_qualified(k), name, flags.get("--namespace"))
    after = client.patch(_qualified(k), name, body, namespace=flags.get("--namespace"), patch_type=kind_of_patch)
    same = before.get("metadata", {}).get("resourceVersion") == after.get("metadata", {}).get("resourceVersion")
    call.write(f"{_ref(k, name)} patched{' (no change)' if same else ''}\n")
    return 0


def _quantities(text: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"invalid argument syntax {part}")
        pairs[key.strip()] = value.strip()
    return pairs


def _set_resources(call: Invocation, client: InClusterClient, words: list[str], flags: dict[str, str]) -> int:
    k, name = _target(client, words)
    limits = _quantities(flags["--limits"]) if "--limits" in flags else {}
    requests = _quantities(flags["--requests"]) if "--requests" in flags else {}
    if not limits and not requests:
        raise UsageError("you must specify an update to requests or limits (in the form of --requests/--limits)")
    obj = client.get(_qualified(k), name, flags.get("--namespace"))
    spec = (obj.get("spec") or {}).get("template", {}).get("spec", {})
    if k.kind == "CronJob":
        spec = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    wanted = flags.get("--containers", "*")
    names = [c["name"] for c in spec.get("containers") or [] if wanted in ("*", c["name"])]
    if not names:
        raise UsageError(f"unable to find container named {wanted}")
    resources: dict[str, Any] = {}
    if limits:
        resources["limits"] = limits
    if requests:
        resources["requests"] = requests
    template = {"spec": {"containers": [{"name": n, "resources": resources} for n in names]}}
    patch = {"spec": {"jobTemplate": {"spec": {"template": template}}}} if k.kind == "CronJob" else \
        {"spec": {"template": template}}
    client.patch(_qualified(k), name, patch, namespace=flags.get("--namespace"))
    call.write(f"{_ref(k, name)} resource requirements updated\n")
    return 0


def _delete(call: Invocation, client: InClusterClient, words: list[str], flags: dict[str, str]) -> int:
    k, name = _target(client, words)
    client.delete(_qualified(k), name, flags.get("--namespace"))
    call.write(f'{k.singular} "{name}" deleted\n')
    return 0


_VERBS = {"get": _get, "patch": _patch, "delete": _delete}


def kubectl(call: Invocation) -> Program:
    """`kubectl VERB ...` with the pod's ServiceAccount (in-cluster config)."""
    yield Usage(memory_bytes=38 * MIB, cpu_cores=0.05)
    if call.ctx.twin is None:
        call.error("error: unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                   "KUBERNETES_SERVICE_PORT must be defined")
        return 1
    client = InClusterClient(call.ctx)
    try:
        words, flags = parse(call.args)
        if not words:
            call.write("kubectl controls the Kubernetes cluster manager.\n")
            return 0
        verb, rest = words[0], words[1:]
        if verb == "set":
            if not rest or rest[0] != "resources":
                raise UsageError(f'unknown command "{rest[0] if rest else ""}" for "kubectl set"')
            return _set_resources(call, client, rest[1:], flags)
        handler = _VERBS.get(verb)
        if handler is None:
            call.error(f'error: unknown command "{verb}" for "kubectl"\n\n'
                       f"Did you mean this?\n\tget\n")
            return 1
        return handler(call, client, rest, flags)
    except UsageError as exc:
        call.error(f"error: {exc}")
        return 1
    except NotFound as exc:
        text = str(exc)
        if "resource type" in text:
            call.error(f"error: {text}")
        else:
            call.error(f"Error from server (NotFound): {text}")
        return 1
    except Unauthorized:
        call.error("error: You must be logged in to the server (Unauthorized)")
        return 1
    except ApiError as exc:
        call.error(f"Error from server ({exc.reason}): {exc}")
        return 1


def kubectl_image() -> ImageSpec:
    return ImageSpec(REPOSITORY, TAGS, size_mb=91.4, description="kubectl (Bitnami)", shell="bash",
                     entrypoint=("kubectl",), cmd=("--help",), memory_mb=38.0,
                     commands={"kubectl": kubectl, "/opt/bitnami/kubectl/bin/kubectl": kubectl})


register_image(kubectl_image())

__all__ = ["REPOSITORY", "kubectl", "kubectl_image", "parse"]
