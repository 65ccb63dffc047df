"""Recent changes, rollout edition: the troubled workload's latest revision changed how its
process starts (command, arguments) or mounted new configuration files, and the incident followed.

A Deployment keeps every revision's pod template in its ReplicaSets, so "what did the last
rollout change?" has an exact answer: the difference between the newest template and the one
before it. Changes other hypotheses own (image tags, environment, probes, scheduling) are left to
them; this step looks at the command line and at configuration files mounted from ConfigMaps.

The mechanism is classified from generic evidence, not from the change alone: the component's own
error log (`too many open files` is a descriptor limit), the new command line (`ulimit -n`), and
the settings the mounted file introduces that an SRE recognises in a proxy configuration
(a route `timeout` far below a request's duration, an HTTP request filter whose pattern is run
on every request). The fix reverts the rollout (`rollout undo --to-revision=<previous>`), which
restores the previous command and files and restarts the pods.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sregym.agents.baseline.chaos import troubled
from sregym.agents.baseline.context import IMPACT, Ctx, Finding, callers, load_json

_FD_LOG = re.compile(r"(?i)too many open files|EMFILE")
_ULIMIT = re.compile(r"ulimit\s+(?:-\w*n\w*|--nofile)\s+(\d+)")
_TIMEOUT = re.compile(r"\btimeout:\s*\"?([\d.]+)(ms|s)\b")
_HTTP_FILTER = re.compile(r"envoy\.filters\.http\.(\w+)")
# A quoted pattern with two or more repeated classes in a row (`[a-z]*x*[a-z_]*`): the shape that
# backtracks when an input almost matches.
_REPEATS = re.compile(r"""["']([^"'\n]*?(?:\]|%\w|\\\w|\.|\))[*+][^"'\n]*?(?:\]|%\w|\\\w|\.|\))[*+][^"'\n]*)["']""")
# Envoy's own filters every proxy config carries: not a sign of an added request rule.
_ROUTING_FILTERS = {"router", "cors", "fault", "grpc_web", "health_check", "buffer", "compressor"}
SHORT_TIMEOUT_S = 1.0


@dataclass(frozen=True)
class Revision:
    number: int
    spec: dict


@dataclass
class Change:
    """What the newest revision changed against the one before, for one container-level view."""

    deployment: str
    current: int
    previous: int
    commands: list[str]  # "container: old -> new" descriptions
    new_configmaps: list[str]
    new_command_line: str


def _revisions(ctx: Ctx, deployment: str) -> list[Revision]:
    dep = ctx.deployment(deployment)
    labels = ((dep.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    if not labels:
        return []
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    text = ctx.get(f"get replicasets -n {ctx.ns} -l {selector} -o jsonpath="
                   """'{range .items[*]}{.metadata.annotations.deployment\\.kubernetes\\.io/revision}{"\\t"}"""
                   """{.spec.template.spec}{"\\n"}{end}'""")
    out = []
    for line in text.splitlines():
        number, _, spec = line.partition("\t")
        body = load_json(spec)
        if number.strip().isdigit() and isinstance(body, dict):
            out.append(Revision(int(number), body))
    return sorted(out, key=lambda r: r.number)


def _command_line(container: dict) -> str:
    return " ".join([*(container.get("command") or []), *(container.get("args") or [])])


def _configmaps(spec: dict) -> set[str]:
    return {(v.get("configMap") or {}).get("name", "") for v in spec.get("volumes") or [] if v.get("configMap")}


def last_change(ctx: Ctx, deployment: str) -> Change | None:
    """The newest rollout's change of command lines and mounted ConfigMaps, or None."""
    revisions = _revisions(ctx, deployment)
    if len(revisions) < 2:
        return None
    new, old = revisions[-1], revisions[-2]
    old_containers = {c.get("name"): c for c in old.spec.get("containers") or []}
    commands, line = [], ""
    for c in new.spec.get("containers") or []:
        before = old_containers.get(c.get("name"))
        if before is not None and _command_line(before) != _command_line(c):
            commands.append(f"{c.get('name')}: {_command_line(before) or '(image default)'!r} -> "
                            f"{_command_line(c) or '(image default)'!r}")
            line = line or _command_line(c)
    mounted = sorted(_configmaps(new.spec) - _configmaps(old.spec) - {""})
    if not commands and not mounted:
        return None
    return Change(deployment, new.number, old.number, commands, mounted, line)


def _config_text(ctx: Ctx, names: list[str]) -> str:
    return "\n".join(v for n in names for v in (ctx.json(f"get configmap {n} -n {ctx.ns}").get("data") or {}).values()
                     if isinstance(v, str))


def _seconds(value: str, unit: str) -> float:
    return float(value) / (1000.0 if unit == "ms" else 1.0)


def route_timeouts(config: str) -> list[float]:
    """Route timeouts (seconds) a proxy configuration sets: a `timeout:` on a `route:` line or in
    the block right under one (other timeouts, such as a gRPC service's, bound other calls)."""
    lines = config.splitlines()
    out = []
    for i, line in enumerate(lines):
        match = _TIMEOUT.search(line)
        if not match:
            continue
        indent = len(line) - len(line.lstrip())
        above = next((ln for ln in reversed(lines[max(0, i - 4):i])
                      if ln.strip() and len(ln) - len(ln.lstrip()) < indent), "")
        if "route:" in line or above.strip().startswith(("route:", "- route:")):
            out.append(_seconds(match.group(1), match.group(2)))
    return out


def classify(change: Change, logs: str, config: str, throttled: bool,
             crashing: bool = False) -> tuple[str, str] | None:
    """(mechanism, evidence) from the component's logs, its new command line and new config, or
    None when nothing ties the change to the incident."""
    fd_line = next((ln for ln in logs.splitlines() if _FD_LOG.search(ln)), "")
    limit = _ULIMIT.search(change.new_command_line)
    if fd_line or limit:
        detail = (f"the new command line {change.new_command_line!r} sets ulimit -n {limit.group(1)} "
                  "(RLIMIT_NOFILE)" if limit else "the process hits its open-file limit")
        return ("file descriptors: too many open files (EMFILE), the per-process open-file limit (nofile) is "
                "too low", f"{detail}; log: {fd_line.strip()[-200:]}")
    filters = sorted({f for f in _HTTP_FILTER.findall(config)} - _ROUTING_FILTERS)
    if filters:
        patterns = _REPEATS.findall(config)
        cost = " that costs CPU on every request (the proxy is CPU-throttled at its limit)" if throttled else ""
        shape = (f"; its pattern {patterns[0]!r} repeats overlapping classes, so it backtracks catastrophically "
                 "on a long near-matching input" if patterns else "")
        return (f"request filter: an HTTP request filter (envoy.filters.http.{filters[0]}) rule{cost}"
                f"{'; regex backtracking' if patterns else ''}",
                f"the mounted configuration adds envoy.filters.http.{filters[0]}{shape}")
    short = sorted(t for t in route_timeouts(config) if 0 < t < SHORT_TIMEOUT_S)
    if short:
        return ("route timeout too short: the proxy's route timeout cuts requests off (upstream request timeout, "
                "504)", f"the mounted configuration sets a route timeout of {short[0]:g}s, shorter than the "
                "slowest requests take")
    if change.commands and crashing:
        return ("wrong command: the container command/entrypoint was changed by the latest rollout and the "
                "container crashes", "; ".join(change.commands))
    return None  # a change with no evidence tying it to the incident: other steps look further


def recent_rollout(ctx: Ctx) -> Finding | None:
    """A troubled workload (or the entry point) whose latest rollout changed its command line or
    mounted new config."""
    hot = troubled(ctx)
    deepest = ctx.facts.deepest_failing()
    # The entry point (a caller nobody calls) is where users meet the incident: its own changes count.
    entries = sorted({p for p, _ in ctx.facts.edges} - {c for _, c in ctx.facts.edges})
    order = [d for d in [deepest, *sorted(hot), *entries] if d and d in ctx.facts.deployments]
    throttled = {ctx.facts.owner(a.labels.get("pod", "")) for a in ctx.facts.alerts if "Throttl" in a.name}
    for deployment in dict.fromkeys(order):
        dep = ctx.deployment(deployment)
        revision = ((dep.get("metadata") or {}).get("annotations") or {}).get("deployment.kubernetes.io/revision", "1")
        if revision == "1":
            continue
        change = last_change(ctx, deployment)
        if change is None:
            continue
        logs = "\n".join(m for w, m in ctx.facts.error_logs if w == deployment)
        if not logs:
            logs = ctx.get(f"logs deployment/{deployment} -n {ctx.ns} --tail=30")
        reading = classify(change, logs, _config_text(ctx, change.new_configmaps), deployment in throttled,
                           deployment in ctx.facts.crashing())
        if reading is None:
            continue
        mechanism, evidence = reading
        what = "; ".join([*change.commands, *(f"mounts ConfigMap {n}" for n in change.new_configmaps)])
        return Finding([ctx.dep(deployment)], mechanism,
                       f"{deployment}'s latest rollout (revision {change.current}) changed it: {what}. {evidence}. "
                       f"The incident started with that rollout; rolling back to revision {change.previous} "
                       f"restores the previous settings. {IMPACT}",
                       [(f"rollout undo deployment/{deployment} -n {ctx.ns} --to-revision={change.previous}", None)],
                       affected=callers(ctx, [deployment]))
    return None


__all__ = ["Change", "classify", "last_change", "recent_rollout", "route_timeouts"]
