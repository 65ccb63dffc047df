"""The deepest component is sometimes a node: its conditions, its clock or its kernel tables.

Evidence an on-call engineer reads for a node, generic to any cluster:

- node conditions (`Ready` False/Unknown, `MemoryPressure`, `DiskPressure`, `PIDPressure`,
  `NetworkUnavailable` True) and the taints the node lifecycle controller adds for them;
- clock evidence: a `NodeClockSkew` alert, or x509 errors whose "current time" is far from the
  time the log line was received (`certificate has expired or is not yet valid: current time X
  is after Y` with X a month ahead is a clock problem, not an expired certificate);
- kernel messages about a full table (`nf_conntrack: table full, dropping packet`).

The node itself changed because something ran on it. The recent change is the newest workload
(Deployment or DaemonSet, any namespace the agent sees) with pods on that node that was created
after the application was deployed (the last change first; ties go to host access, privileged,
hostPID or hostNetwork, then to the one with most pods there). The fix deletes it and, for a clock, sets the node's
system clock back from its hardware clock (`hwclock --hctosys`) with a privileged pod pinned to
that node, as a node team would.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime

from sregym.agents.baseline.changes import SETTLED_S
from sregym.agents.baseline.context import IMPACT, Ctx, Finding, columns, load_json

_X509_TIME = re.compile(r"current time (\S+?) is (?:after|before) (\S+)")
SKEW_S = 300.0  # a clock further off than this is skewed (NTP keeps nodes within a second)
CONDITIONS = {"MemoryPressure": "memory pressure (MemoryPressure, evictions)",
              "DiskPressure": "DiskPressure on the node (disk full, evictions)",
              "PIDPressure": "PIDPressure on the node (pid exhaustion)",
              "NetworkUnavailable": "NetworkUnavailable on the node"}
RESTORE_IMAGE = "busybox:1.36"
HOST_ENTER = "nsenter -t 1 -m -u -i -n -p --"


@dataclass(frozen=True)
class NodeSignal:
    node: str
    mechanism: str
    evidence: str
    clock: bool = False


@dataclass(frozen=True)
class Workload:
    kind: str
    namespace: str
    name: str
    created: str
    host_access: bool


def _time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None


def condition_signals(rows: str) -> list[NodeSignal]:
    """Signals from `name<TAB>conditions-json` rows."""
    out = []
    for line in rows.splitlines():
        name, _, conditions = line.partition("\t")
        for c in load_json(conditions) or []:
            kind, status = c.get("type"), c.get("status")
            if kind == "Ready" and status != "True":
                out.append(NodeSignal(name, "node failure: the node is NotReady (kubelet stopped posting status)",
                                      f"node {name} Ready={status}: {c.get('message', '')[:160]}"))
            elif kind in CONDITIONS and status == "True":
                out.append(NodeSignal(name, CONDITIONS[kind], f"node {name} {kind}: {c.get('message', '')[:160]}"))
    return out


def clock_signals(alerts: list, log_lines: str, pod_nodes: dict[str, str]) -> list[NodeSignal]:
    """Clock skew from alerts (a node label) and from x509 times far from the receive time."""
    out = [NodeSignal(a.labels["node"], "clock skew: the node's system clock is off (time drift)",
                      f"alert {a.name} on node {a.labels['node']}", clock=True)
           for a in alerts if "Clock" in a.name and a.labels.get("node")]
    for line in log_lines.splitlines():
        match = _X509_TIME.search(line)
        received = _time(line.split(" ", 1)[0])
        claimed = _time(match.group(1)) if match else None
        if not match or received is None or claimed is None:
            continue
        offset = (claimed - received).total_seconds()
        pod = line.split(" ", 2)[1].split("/")[1] if line.count("/") >= 2 else ""
        node = pod_nodes.get(pod, "")
        if abs(offset) > SKEW_S and node:
            out.append(NodeSignal(node, "clock skew: the node's system clock is off (time drift)",
                                  f"x509 on {pod}: current time {match.group(1)} while the log line was received "
                                  f"at {line.split(' ', 1)[0]} ({offset / 86400:+.1f} days): the certificate is "
                                  "judged by a wrong clock", clock=True))
    return out


def kernel_signals(kernel_logs: list[str]) -> list[NodeSignal]:
    out = []
    for line in kernel_logs:
        node = re.search(r'node="([\w.-]+)"', line)
        if node and "table full" in line:
            out.append(NodeSignal(node.group(1), "conntrack table full (nf_conntrack: table full, dropping packet)",
                                  line[-160:]))
    return out


def _workloads(ctx: Ctx) -> list[Workload]:
    text = ctx.get("get deployments,daemonsets -A -o jsonpath="
                   """'{range .items[*]}{.kind}{"\\t"}{.metadata.namespace}{"\\t"}{.metadata.name}{"\\t"}"""
                   """{.metadata.creationTimestamp}{"\\t"}{.spec.template.spec.hostPID}{.spec.template.spec.hostNetwork}"""
                   """{.spec.template.spec.containers[*].securityContext.privileged}{"\\n"}{end}'""")
    out = []
    for line in text.splitlines():
        cols = columns(line, 5)
        if cols[2]:
            out.append(Workload(cols[0], cols[1], cols[2], cols[3], "true" in cols[4]))
    return out


def _owner(pod: str, workloads: list[Workload], namespace: str) -> Workload | None:
    """The workload a pod name derives from (`<deployment>-<hash>-<id>`, `<daemonset>-<id>`)."""
    best = None
    for w in workloads:
        if w.namespace == namespace and pod.startswith(w.name + "-") and (best is None or len(w.name) > len(best.name)):
            best = w
    return best


def recent_on_node(ctx: Ctx, node: str) -> list[Workload]:
    """Workloads with pods on `node` created after the application was deployed, most likely first."""
    workloads = _workloads(ctx)
    app = [_time(w.created) for w in workloads if w.namespace == ctx.ns and _time(w.created)]
    if not app:
        return []
    deployed = min(app)
    text = ctx.get(f"get pods -A --field-selector spec.nodeName={node} -o jsonpath="
                   """'{range .items[*]}{.metadata.namespace}{"\\t"}{.metadata.name}{"\\n"}{end}'""")
    counts: dict[Workload, int] = {}
    for line in text.splitlines():
        namespace, _, pod = line.partition("\t")
        owner = _owner(pod, workloads, namespace)
        if owner is not None:
            counts[owner] = counts.get(owner, 0) + 1
    recent = [w for w in counts if (_time(w.created) - deployed).total_seconds() > SETTLED_S]
    # The app's own Deployments created with it are not changes; later ones (even in its namespace) are.
    return sorted(recent, key=lambda w: (w.created, w.host_access, counts[w]), reverse=True)


def _initiator(ctx: Ctx, suspects: list[Workload]) -> Workload:
    """Of workloads created together (one change), the one whose log names another as where it
    connects: the client drives the load, the server only answers it."""
    first = _time(suspects[0].created)
    together = [w for w in suspects if first and _time(w.created)
                and (first - _time(w.created)).total_seconds() <= SETTLED_S]
    if len(together) < 2:
        return suspects[0]
    for w in together:
        kind = "deployment" if w.kind == "Deployment" else "daemonset"
        logs = ctx.get(f"logs {kind}/{w.name} -n {w.namespace} --tail=5")
        if any(o.name in logs for o in together if o is not w):
            return w
    return suspects[0]


def _restore_clock(node: str) -> str:
    labels = {"app.kubernetes.io/name": "node-clock-restore"}
    return json.dumps({"apiVersion": "apps/v1", "kind": "DaemonSet",
                       "metadata": {"name": "node-clock-restore", "namespace": "kube-system", "labels": labels},
                       "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                           "hostPID": True, "hostNetwork": True, "tolerations": [{"operator": "Exists"}],
                           "nodeSelector": {"kubernetes.io/hostname": node},
                           "containers": [{"name": "restore", "image": RESTORE_IMAGE, "command": ["sh", "-c"],
                                           "args": [f"{HOST_ENTER} hwclock --hctosys; "
                                                    f"{HOST_ENTER} systemctl start systemd-timesyncd || true; "
                                                    "sleep infinity"],
                                           "securityContext": {"privileged": True}}]}}}})


def node_trouble(ctx: Ctx) -> Finding | None:
    """A node that is unwell (conditions, clock, kernel tables) and the recent workload on it."""
    rows = ctx.get("get nodes -o jsonpath='{range .items[*]}{.metadata.name}{\"\\t\"}{.status.conditions}{\"\\n\"}{end}'")
    signals = condition_signals(rows) + kernel_signals(ctx.facts.kernel_logs)
    if any(re.search(r"x509|certificate", m) for _, m in ctx.facts.error_logs) or \
            any("Clock" in a.name for a in ctx.facts.alerts):
        x509 = ctx.session.call("get_logs", {"query": f'{{namespace="{ctx.ns}"}} |~ "x509"', "since": "10m",
                                             "limit": 20})
        pod_nodes = {p.name: p.node for p in ctx.facts.pods}
        signals = clock_signals(ctx.facts.alerts, "" if x509.is_error else x509.text, pod_nodes) + signals
    for signal in signals:
        suspects = recent_on_node(ctx, signal.node)
        if not suspects:
            continue
        culprit = _initiator(ctx, suspects)
        fixes = [(f"delete {culprit.kind.lower()} {culprit.name} -n {culprit.namespace}", None)]
        if signal.clock:
            fixes.append(("apply -f -", _restore_clock(signal.node)))
        victims = sorted({ctx.facts.owner(p.name) for p in ctx.facts.pods if p.node == signal.node} - {None})
        hot = set(ctx.facts.failing_services()) | set(ctx.facts.crashing())
        affected = [ctx.dep(v) for v in victims if v in hot and v != culprit.name]
        access = " with host access (privileged/hostPID/hostNetwork)" if culprit.host_access else ""
        return Finding([f"{culprit.namespace}/{culprit.kind}/{culprit.name}"],
                       f"{signal.mechanism}",
                       f"{signal.evidence}. The newest workload on node {signal.node} is {culprit.kind} "
                       f"{culprit.namespace}/{culprit.name}{access}, created after the application (at "
                       f"{culprit.created}); it changed the node. It is removed"
                       + (" and the node's clock is set back from its hardware clock (hwclock --hctosys, time sync "
                          "restarted)" if signal.clock else "") + f". {IMPACT}",
                       fixes, affected=affected)
    return None


__all__ = ["NodeSignal", "clock_signals", "condition_signals", "kernel_signals", "node_trouble", "recent_on_node"]
