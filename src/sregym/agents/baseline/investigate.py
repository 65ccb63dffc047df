"""Signal collection: what an on-call engineer looks at first, parsed into plain Python values.

Everything goes through `session.call(...)`; outputs are tables and text, so the parsers here are
deliberately forgiving (a missing column or an error observation yields an empty value).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sregym.tools.session import ToolSession

_ALERT = re.compile(r"^\[(FIRING|PENDING)\] (\S+) \((.*)\) since")
_LOG = re.compile(r"^\S+ ([\w.-]+)/([\w.-]+)/([\w.-]+) (.*)$")
ERROR_PATTERN = "(?i)(error|fail|denied|refused|unauthori|no such host|exceeded)"
_DEP = re.compile(r"^(\S+) -> (\S+) \((\d+)\)$")


@dataclass
class Pod:
    name: str
    ready: str
    status: str
    restarts: str
    node: str

    @property
    def healthy(self) -> bool:
        have, _, want = self.ready.partition("/")
        return self.status in ("Running", "Completed") and have == want


@dataclass
class Event:
    reason: str
    obj: str
    message: str


@dataclass
class Alert:
    state: str
    name: str
    labels: dict[str, str]


@dataclass
class Facts:
    """The first look at the incident, shared by every hypothesis."""

    namespace: str
    pods: list[Pod] = field(default_factory=list)
    deployments: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    error_logs: list[tuple[str, str]] = field(default_factory=list)  # (workload, message)
    kernel_logs: list[str] = field(default_factory=list)
    policies: str = ""
    webhooks: list[tuple[str, str]] = field(default_factory=list)  # (kind, name)

    def owner(self, pod_or_rs: str) -> str | None:
        """The Deployment that owns a pod or ReplicaSet name (longest matching prefix)."""
        best = None
        for dep in self.deployments:
            if pod_or_rs.startswith(dep + "-") and (best is None or len(dep) > len(best)):
                best = dep
        return best

    def crashing(self) -> list[str]:
        """Deployments whose pods crash-loop: pod status, BackOff events or crash-loop alerts
        (a crash-looping pod reads `Running` between restarts, so status alone misses it)."""
        pods = {p.name for p in self.pods if p.status in ("CrashLoopBackOff", "Error", "OOMKilled")}
        pods |= {e.obj.split("/", 1)[-1] for e in self.events
                 if e.reason == "BackOff" and "restarting failed container" in e.message}
        pods |= {a.labels.get("pod", "") for a in self.alerts if a.name == "KubePodCrashLooping"}
        return sorted({d for p in pods for d in [self.owner(p)] if d})

    def failing_services(self) -> list[str]:
        """Workloads that alert on errors/latency or log errors, sorted."""
        names = {a.labels.get("service_name", "") for a in self.alerts
                 if a.name.startswith("HighRequest")}
        names |= {w for w, _ in self.error_logs}
        return sorted(n for n in names if n in self.deployments)

    def deepest_failing(self) -> str | None:
        """Walk the call graph toward the failing callee that has no failing callee itself."""
        failing = set(self.failing_services())
        leaves = [s for s in sorted(failing)
                  if not any(p == s and c in failing for p, c in self.edges)]
        callees = [s for s in leaves if any(c == s for _, c in self.edges)]
        return (callees or leaves or [None])[0]


def _text(session: ToolSession, tool: str, args: dict) -> str:
    result = session.call(tool, args)
    return "" if result.is_error else result.text


def kubectl(session: ToolSession, command: str) -> str:
    return _text(session, "kubectl", {"command": command})


def parse_pods(text: str) -> list[Pod]:
    pods = []
    for line in text.splitlines()[1:]:
        cols = line.split()
        if len(cols) < 5:
            continue
        # RESTARTS may read "3 (28s ago)": the node is then further right.
        restarts = cols[3]
        rest = cols[4:]
        if rest and rest[0].startswith("("):
            restarts += " " + " ".join(rest[:2])
            rest = rest[2:]
        node = rest[2] if len(rest) > 2 else ""
        pods.append(Pod(cols[0], cols[1], cols[2], restarts, node))
    return pods


def parse_events(text: str) -> list[Event]:
    events = []
    for line in text.splitlines()[1:]:
        cols = line.split(None, 4)
        if len(cols) == 5:
            events.append(Event(cols[2], cols[3], cols[4]))
    return events


def parse_alerts(text: str) -> list[Alert]:
    alerts = []
    for line in text.splitlines():
        match = _ALERT.match(line)
        if match:
            labels = dict(p.split("=", 1) for p in match.group(3).split(", ") if "=" in p)
            alerts.append(Alert(match.group(1), match.group(2), labels))
    return alerts


def warning_events(session: ToolSession, namespace: str) -> list[Event]:
    return parse_events(kubectl(session, f"get events -n {namespace} --field-selector type=Warning "
                                         "--sort-by=.lastTimestamp"))


def collect(session: ToolSession, namespace: str) -> Facts:
    """One pass over alerts, workloads, events, policies, the call graph and recent logs."""
    facts = Facts(namespace)
    facts.alerts = parse_alerts(_text(session, "get_alerts", {}))
    facts.pods = parse_pods(kubectl(session, f"get pods -n {namespace} -o wide"))
    deps = kubectl(session, f"get deployments -n {namespace} -o name")
    facts.deployments = sorted(line.split("/", 1)[1] for line in deps.splitlines() if "/" in line)
    facts.events = warning_events(session, namespace)
    facts.policies = kubectl(session, f"get networkpolicy,resourcequota,limitrange -n {namespace}")
    hooks = kubectl(session, "get validatingwebhookconfigurations,mutatingwebhookconfigurations -o name")
    for line in hooks.splitlines():
        kind, _, name = line.partition("/")
        if name:
            kind = "ValidatingWebhookConfiguration" if kind.startswith("validating") \
                else "MutatingWebhookConfiguration"
            facts.webhooks.append((kind, name))
    for line in _text(session, "get_dependency_graph", {"since": "15m"}).splitlines():
        match = _DEP.match(line.strip())
        if match:
            facts.edges.append((match.group(1), match.group(2)))
    logs = _text(session, "get_logs", {
        "query": f'{{namespace="{namespace}"}} |~ "{ERROR_PATTERN}"', "since": "5m", "limit": 300})
    for line in logs.splitlines():
        match = _LOG.match(line)
        if match and " WRN " not in match.group(4):
            owner = facts.owner(match.group(2))
            if owner:
                facts.error_logs.append((owner, match.group(4)))
    kernel = _text(session, "get_logs", {"query": '{source="kernel"}', "since": "10m", "limit": 50})
    facts.kernel_logs = [line for line in kernel.splitlines()[1:] if line.strip()]
    return facts


__all__ = ["Alert", "Event", "Facts", "Pod", "collect", "kubectl", "parse_alerts", "parse_events",
           "parse_pods", "warning_events"]
