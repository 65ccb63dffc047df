"""flagd (open-feature/flagd) as a running process: where it reads its flags, when it reloads them,
and what one evaluation answers.

Why a model and not a constant table: an SRE (or a fault) changes a flag by editing the file flagd
was started with (`--uri file:./etc/flagd/demo.flagd.json`), and *when* that reaches the services
depends on how the file got there:

- a ConfigMap mounted as a volume is rewritten by the kubelet at its next pod sync (the atomic
  `..data` swap, every `SYNC_PERIOD_S`), flagd's fsnotify watcher sees the REMOVE event and
  reloads at once, logging `filepath event: <uri> REMOVE`;
- a file in an emptyDir that an init container copied from the ConfigMap (the demo chart's
  `init-config`: `cp /config-ro/demo.flagd.json /config-rw/`) is the ConfigMap as it was when the
  pod started: a ConfigMap edit changes nothing until the pod is recreated (`kubectl rollout
  restart deployment flagd`), as on a real cluster;
- a missing file leaves flagd serving `{}` after logging the open error.

An evaluation follows flagd's resolver: an unknown flag is FLAG_NOT_FOUND, a DISABLED flag is
FLAG_DISABLED, otherwise the `defaultVariant`'s value (reason STATIC). `targeting` rules are not
evaluated (the demo's flags have none): the default variant answers.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from sregym.twin.dataplane.logformat import format_log

if TYPE_CHECKING:
    from sregym.twin.dataplane.programs import ProgramInstance
    from sregym.twin.twin import Twin

SYNC_PERIOD_S = 60.0  # the kubelet's syncFrequency: a mounted ConfigMap follows its object this late
CALLER_SYNC = "file/filepath_sync.go:87"
CALLER_STORE = "store/store.go:219"


class FlagServer(BaseModel):
    """A program that serves feature flags: `uri` names its setting holding the `--uri` source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    uri: str = "uri"
    # settings naming the other ports it serves (`--ofrep-port`: OFREP over HTTP, which the load
    # generator's OpenFeature provider uses): each is listened on next to the gRPC port
    extra_ports: tuple[str, ...] = ()


def extra_listen_ports(server: FlagServer | None, settings: dict[str, str]) -> tuple[int, ...]:
    """The valid extra ports a flag server listens on, from its resolved settings."""
    if server is None:
        return ()
    out = []
    for name in server.extra_ports:
        text = settings.get(name, "")
        if text.isdigit() and 0 < int(text) < 65536:
            out.append(int(text))
    return tuple(out)


def parse_flags(text: str) -> dict[str, Any] | None:
    """The `flags` object of a flagd definition file, or None when the text is not one."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    flags = data.get("flags", {})
    return flags if isinstance(flags, dict) else None


def evaluate(flags: dict[str, Any], key: str) -> tuple[Any, str | None]:
    """(value, error code) of flag `key` as flagd resolves it; the value is None on an error."""
    flag = flags.get(key)
    if not isinstance(flag, dict):
        return None, "FLAG_NOT_FOUND"
    if flag.get("state", "ENABLED") == "DISABLED":
        return None, "FLAG_DISABLED"
    variants = flag.get("variants") or {}
    variant = flag.get("defaultVariant")
    if not isinstance(variants, dict) or variant not in variants:
        return None, "GENERAL"
    return variants[variant], None


def source_path(uri: str) -> str | None:
    """The absolute path a `file:` uri names (flagd runs in `/`); None for other sync kinds."""
    if not uri.startswith("file:"):
        return None
    return posixpath.normpath(posixpath.join("/", uri[len("file:"):]))


@dataclass
class FlagdState:
    """What one flagd process has loaded, and the file it watches."""

    inst: ProgramInstance
    uri: str
    path: str | None
    live: tuple[str, str, str] | None = None  # (namespace, configmap, key) the mounted file follows
    file_text: str | None = None  # the file as the process sees it now
    pending: tuple[float, str | None] | None = None  # (when the kubelet rewrites it, new text)
    flags: dict[str, Any] = field(default_factory=dict)
    generation: int = 0  # bumped on every reload: clients' caches are flushed by it


def _mount_of(container: dict[str, Any], path: str) -> tuple[str, str] | None:
    """(volume name, path inside the volume) of the longest mountPath holding `path`."""
    best: tuple[int, str, str] | None = None
    for mount in container.get("volumeMounts") or []:
        base = posixpath.normpath(mount.get("mountPath", ""))
        if path == base or path.startswith(base.rstrip("/") + "/"):
            if best is None or len(base) > best[0]:
                best = (len(base), mount.get("name", ""), posixpath.relpath(path, base))
    return (best[1], best[2]) if best else None


def _configmap_key(twin: Twin, namespace: str, name: str, key: str) -> str | None:
    cm = twin.store.peek("configmaps", namespace, name)
    return ((cm or {}).get("data") or {}).get(key)


def _locate(twin: Twin, pod: dict[str, Any], container_name: str, path: str) -> tuple[tuple[str, str, str] | None,
                                                                                    str | None]:
    """(live ConfigMap source or None, the file's text now) for `path` in the container."""
    spec = pod.get("spec") or {}
    namespace = (pod.get("metadata") or {}).get("namespace", "default")
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    container = next((c for c in spec.get("containers") or [] if c.get("name") == container_name), {})
    found = _mount_of(container, path)
    if found is None:
        return None, None
    volume = volumes.get(found[0]) or {}
    if "configMap" in volume:
        name = volume["configMap"].get("name", "")
        key = _item_key(volume["configMap"], found[1])
        return (namespace, name, key), _configmap_key(twin, namespace, name, key)
    if "emptyDir" in volume:  # seeded by an init container's copy of a ConfigMap key of the same name
        base = posixpath.basename(path)
        for other in spec.get("volumes") or []:
            if "configMap" in other:
                text = _configmap_key(twin, namespace, other["configMap"].get("name", ""),
                                      _item_key(other["configMap"], base))
                if text is not None:
                    return None, text
    return None, None


def _item_key(source: dict[str, Any], rel: str) -> str:
    for item in source.get("items") or []:
        if item.get("path") == rel:
            return str(item.get("key", rel))
    return rel


class FlagdProcesses:
    """Every flagd process of the twin, refreshed once per tick by the data plane."""

    def __init__(self) -> None:
        self.states: dict[tuple[str, str, str], FlagdState] = {}

    def state_of(self, key: tuple[str, str, str]) -> FlagdState | None:
        return self.states.get(key)

    def refresh(self, twin: Twin, servers: list[ProgramInstance], write: Any) -> None:
        """Start watching new processes, forget gone ones, apply due kubelet rewrites."""
        now = twin.clock.now
        alive = {inst.key for inst in servers}
        for key in [k for k in self.states if k not in alive]:
            del self.states[key]
        for inst in servers:
            state = self.states.get(inst.key)
            if state is None or state.inst is not inst:
                state = self._start(twin, inst, write, now)
                self.states[inst.key] = state
            elif state.live is not None:
                self._follow(twin, state, write, now)

    def _start(self, twin: Twin, inst: ProgramInstance, write: Any, now: float) -> FlagdState:
        server = inst.spec.flag_server
        uri = inst.settings.get(server.uri if server else "uri", "")
        path = source_path(uri)
        state = FlagdState(inst=inst, uri=uri, path=path)
        pod = twin.store.peek("pods", inst.namespace, inst.pod) or {}
        if path is not None:
            state.live, state.file_text = _locate(twin, pod, inst.container, path)
        write(inst, now, "info", "Starting filepath sync notifier", CALLER_SYNC)
        self._load(state, write, now)
        write(inst, now, "info", f"watching filepath: {uri}", CALLER_SYNC)
        return state

    def _follow(self, twin: Twin, state: FlagdState, write: Any, now: float) -> None:
        namespace, name, key = state.live  # type: ignore[misc]
        current = _configmap_key(twin, namespace, name, key)
        if state.pending is None and current != state.file_text:
            started = state.inst.started_at
            periods = int((now - started) // SYNC_PERIOD_S) + 1
            state.pending = (started + periods * SYNC_PERIOD_S, current)
        if state.pending is not None and now >= state.pending[0]:
            state.file_text = current
            state.pending = None
            write(state.inst, now, "info", f"filepath event: {state.uri} REMOVE", CALLER_SYNC)
            self._load(state, write, now)

    def _load(self, state: FlagdState, write: Any, now: float) -> None:
        if state.file_text is None:
            where = state.path or state.uri
            write(state.inst, now, "error", f"Error fetching {state.uri}: error opening file {where}: "
                                            f"open {where}: no such file or directory", CALLER_SYNC)
            write(state.inst, now, "warn", f"file {state.uri} is empty", CALLER_SYNC)
            flags: dict[str, Any] | None = {}
        else:
            flags = parse_flags(state.file_text)
            if flags is None:
                write(state.inst, now, "error", f"Error fetching {state.uri}: error converting file content to "
                                                "json: invalid character", CALLER_SYNC)
                return  # the last good definitions stay
        changed = sorted(k for k in set(flags) | set(state.flags) if flags.get(k) != state.flags.get(k))
        state.flags = dict(flags)
        state.generation += 1
        if changed and state.generation > 1:
            write(state.inst, now, "info", f"configuration change (write) for flagKey(s) {', '.join(changed)}",
                  CALLER_STORE)


def flagd_log_line(at: float, level: str, caller: str, message: str) -> str:
    """One flagd (zap production encoder) line."""
    return format_log("json", at, level, caller, message)


__all__ = ["SYNC_PERIOD_S", "FlagServer", "FlagdProcesses", "FlagdState", "evaluate", "extra_listen_ports",
           "flagd_log_line", "parse_flags", "source_path"]
