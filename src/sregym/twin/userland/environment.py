"""The environment a process sees inside a running container, as `kubectl exec -- env` shows it.

The kubelet resolves the container's own variables (`sregym.twin.node.podconfig.resolve_env`: service
links, `envFrom`, `env` with `$(VAR)` expansion) and the runtime puts them after the image's `ENV`;
agents read this to find a wrong value, so the order is the real one:

1. the image's `ENV` (PATH first), then `HOSTNAME`;
2. the kubelet-resolved variables (a name the image also sets keeps the image's position, as
   containerd replaces it in place);
3. `TERM=xterm` for a TTY session and `HOME` when nothing set it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.objects import get_path
from sregym.twin.userland.fs import pod_hostname

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

# Debian's and BusyBox's images both set this PATH.
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def image_env(image: str, twin: Any = None) -> list[tuple[str, str]]:
    """`ENV` lines of the image (from the catalogue's `extras["env"]` when it declares them)."""
    from sregym.twin.node.images import lookup

    declared: Any = None
    try:
        spec, _ref = lookup(image, twin)
    except Exception:  # an unparsable reference has no catalogue entry
        spec = None
    if spec is not None:
        declared = getattr(spec, "env", None) or spec.extras.get("env")
    pairs: list[tuple[str, str]] = []
    if isinstance(declared, dict):
        pairs = [(str(k), str(v)) for k, v in declared.items()]
    elif isinstance(declared, (list, tuple)):
        for item in declared:
            if isinstance(item, str) and "=" in item:
                key, _, value = item.partition("=")
                pairs.append((key, value))
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                pairs.append((str(item[0]), str(item[1])))
    if not any(k == "PATH" for k, _ in pairs):
        pairs.insert(0, ("PATH", DEFAULT_PATH))
    return pairs


def container_env(twin: Twin, pod: dict[str, Any], container: dict[str, Any], *,
                  tty: bool = False, resolved: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a new process in `container` (insertion order = environ order).

    `resolved` is the kubelet's view of the container's variables when the caller has it (the
    running instance's); otherwise it is resolved again from the store."""
    env: dict[str, str] = {}
    pairs = image_env(str(container.get("image") or ""), twin)
    env[pairs[0][0]] = pairs[0][1]
    env["HOSTNAME"] = pod_hostname(pod)
    for key, value in pairs[1:]:
        env[key] = value
    if resolved is None:
        resolved = _resolve(twin, pod, container)
    env.update(resolved)
    if tty:
        env.setdefault("TERM", "xterm")
    env.setdefault("HOME", "/root")
    return env


def _resolve(twin: Twin, pod: dict[str, Any], container: dict[str, Any]) -> dict[str, str]:
    from sregym.twin.node.podconfig import ConfigError, resolve_env, service_env

    try:
        return resolve_env(twin, pod, container)
    except ConfigError:
        # The kubelet would not have started this container; show what does resolve.
        namespace = get_path(pod, "metadata", "namespace", default="default")
        enable = get_path(pod, "spec", "enableServiceLinks") is not False
        return service_env(twin, namespace, enable)
