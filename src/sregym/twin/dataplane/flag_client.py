"""Feature flags as the services see them at run time: the OpenFeature SDK with the flagd provider.

Why per tick: the demo's services call `getBooleanValue("adFailure", false, ctx)` (and friends) on
every request that checks a flag, against flagd over gRPC (the RPC provider, whose cache is
flushed by flagd's configuration-change stream), so a reload reaches them at once. Each tick this
module resolves every flag a program declares (`FlagClient.flags`, with the code default) through
its flagd connection — DNS, Service, endpoints, policy, chaos as any call — and writes the value
into the program's settings under the flag's name (`"true"`, `"0.1"`), where `Call.feature`,
`Consumer.slow_when` and `CodePath.when` read it. When flagd cannot be reached, or answers an
error (flag missing or disabled, a variant of the wrong type), the SDK returns the code default
and the program logs the failure (at most once per `ERROR_EVERY_S`).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from sregym.twin.dataplane import log_channel
from sregym.twin.dataplane.codepaths import BranchLogs, Leaks
from sregym.twin.dataplane.flag_events import TracesHook, server_span_events
from sregym.twin.dataplane.flagd import FlagdProcesses, evaluate, flagd_log_line
from sregym.twin.dataplane.logformat import format_log

if TYPE_CHECKING:
    from sregym.twin.dataplane.programs import ProgramInstance

ERROR_EVERY_S = 10.0


class FlagClient(BaseModel):
    """The flags a program evaluates: `flags` maps each name to its code default as JSON
    ("false", "0"); `dependency` is the flagd connection; `error_log` how a failed evaluation is
    logged (fields: flag, error; empty: not logged, as for the browsers' provider behind a proxy)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dependency: str = "flagd"
    flags: dict[str, str]
    error_log: str = "{error}"
    traces_hook: TracesHook | None = None  # the OpenTelemetry hook's span events (flag_events.py)


def _same_type(value: Any, default: Any) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float))
    return isinstance(value, type(default))


def resolve(flags: dict[str, Any] | None, name: str, default: str) -> tuple[str, str | None]:
    """(the value as a setting, error code or None) of one evaluation."""
    if flags is None:
        return default, "PROVIDER_NOT_READY"
    value, error = evaluate(flags, name)
    if error is not None:
        return default, error
    if not _same_type(value, _decoded(default)):
        return default, "TYPE_MISMATCH"
    return _encoded(value), None


@functools.lru_cache(maxsize=1024)
def _decoded(default: str) -> Any:
    """A client's default as JSON (else the text): every client resolves every flag every tick,
    and its defaults never change. Only read (its type), so sharing the decoded value is safe."""
    try:
        return json.loads(default)
    except ValueError:
        return default


_SCALARS = (bool, int, str)  # not float: 0.0 and -0.0 are one key but print differently


def _encoded(value: Any) -> str:
    """`json.dumps(value)`, remembered for booleans, integers and strings (keyed with their type:
    `True` is not `1`)."""
    if type(value) in _SCALARS:
        return _encoded_scalar(type(value), value)
    return json.dumps(value)


@functools.lru_cache(maxsize=1024)
def _encoded_scalar(kind: type, value: Any) -> str:
    return json.dumps(value)


@dataclass
class FlagRuntime:
    """The data plane's flag state: flagd processes, the last SDK error logs, kept leaks."""

    flagd: FlagdProcesses = field(default_factory=FlagdProcesses)
    logged: dict[tuple[tuple[str, str, str], str], float] = field(default_factory=dict)
    leaks: Leaks = field(default_factory=Leaks)
    branch_logs: BranchLogs = field(default_factory=BranchLogs)
    # per program: flag → (value, variant) of this tick's successful evaluations
    evaluated: dict[tuple[str, str, str], dict[str, tuple[str, str]]] = field(default_factory=dict)
    failed: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)  # flag → error code

    def update(self, engine: Any) -> None:
        """Reload flagd processes, then evaluate every client's flags into its settings."""
        now = engine.twin.clock.now
        procs = [engine.procs[k] for k in sorted(engine.procs)]
        servers = [p.inst for p in procs if p.inst.spec.flag_server is not None]
        if servers or self.flagd.states:
            self.flagd.refresh(engine.twin, servers, lambda inst, at, level, msg, caller:
                               _append(engine, inst, flagd_log_line(at, level, caller, msg)))
        for proc in procs:
            client = proc.inst.spec.flags
            if client is None:
                continue
            flags, error = self._reach(engine, proc, client)
            good: dict[str, tuple[str, str]] = {}
            bad: dict[str, str] = {}
            for name, default in client.flags.items():
                value, code = resolve(flags, name, default)
                proc.inst.settings[name] = value
                if code is None:
                    good[name] = (value, str(((flags or {}).get(name) or {}).get("defaultVariant") or ""))
                else:
                    bad[name] = code
                    if code != "FLAG_DISABLED":
                        self._log(engine, proc.inst, name, error or code, now)
            if client.traces_hook is not None:
                self.evaluated[proc.inst.key], self.failed[proc.inst.key] = good, bad

    def span_events(self, inst: ProgramInstance, op_key: str, at_us: int) -> list[tuple[int, str, dict[str, Any]]]:
        """The flag-evaluation events of a handler's server span (exemplar traces)."""
        client = inst.spec.flags
        if client is None or client.traces_hook is None:
            return []
        return server_span_events(client.traces_hook, op_key, self.evaluated.get(inst.key, {}), at_us,
                                  self.failed.get(inst.key))

    def _reach(self, engine: Any, proc: Any, client: FlagClient) -> tuple[dict[str, Any] | None, str]:
        dep = proc.inst.deps.get(client.dependency)
        if dep is None:
            return None, f"no address configured for {client.dependency}"
        pod = engine.twin.store.peek("pods", proc.inst.namespace, proc.inst.pod)
        route = engine.route(pod, dep.host, dep.port, connect_timeout_ms=dep.timeout_ms)
        message = ""
        for leg in route.legs:
            if not leg.result.ok:
                message = message or leg.result.message
                continue
            target = engine.proc_at(leg.result.dst_ip, leg.result.target_port)
            state = self.flagd.state_of(target.inst.key) if target is not None else None
            if state is not None:
                return state.flags, ""
            message = message or f"dial tcp {leg.result.dst_ip}:{dep.port}: connect: connection refused"
        error = message or f"dial tcp: lookup {dep.host}: no such host"
        return None, f'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while ' \
                     f'dialing: {error}"'

    def _log(self, engine: Any, inst: ProgramInstance, flag: str, error: str, now: float) -> None:
        if inst.spec.flags is not None and not inst.spec.flags.error_log:
            return  # a client that logs nothing (a browser's SDK: its console is not the pod's)
        key = (inst.key, flag)
        last = self.logged.get(key)
        if last is not None and now - last < ERROR_EVERY_S:
            return
        self.logged[key] = now
        client = inst.spec.flags
        message = (client.error_log if client else "{error}").replace("{flag}", flag).replace("{error}", error)
        spec = inst.spec
        log_channel.write(engine.twin, inst, engine.twin.clock.now,
                          format_log(spec.log.style, now, "error", spec.log.handler_caller, message),
                          message=message, level="error")


def _append(engine: Any, inst: ProgramInstance, line: str) -> None:
    log_channel.write(engine.twin, inst, engine.twin.clock.now, line)


__all__ = ["ERROR_EVERY_S", "FlagClient", "FlagRuntime", "resolve"]
