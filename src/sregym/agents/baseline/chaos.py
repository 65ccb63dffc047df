"""Recent changes, Chaos Mesh edition: a team's chaos experiment or `Schedule` left running in the
app's namespace.

Chaos engineering is a change like any other: an experiment (`PodChaos`, `NetworkChaos`,
`StressChaos`, `HTTPChaos`, `JVMChaos` ...) or a `Schedule` that spawns one every so often acts
on the pods its selector picks. When such an object is active and its selector picks a workload
the incident touches, it is the cause an on-call engineer ends first: delete (or pause) the
Schedule or the experiment; restarting the victim only lasts until the next run.

Selector semantics follow Chaos Mesh's `PodSelectorSpec`: `namespaces` (the object's own when
absent), `labelSelectors`, `expressionSelectors`, `pods` (namespace -> pod names) and
`annotationSelectors` all have to hold; `mode` only says how many of the picked pods are hit,
so a workload is hit whenever the selector picks any of its pods. A NetworkChaos `target` picks
the other end of the traffic, which suffers too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sregym.agents.baseline.context import IMPACT, Ctx, Finding, callers, columns, containers, load_json

# Chaos Mesh kinds by their resource names (the experiment kinds, then the orchestration one).
EXPERIMENT_KINDS = ("PodChaos", "NetworkChaos", "StressChaos", "HTTPChaos", "JVMChaos", "IOChaos", "TimeChaos",
                    "DNSChaos", "KernelChaos")
# A Schedule embeds its experiment under the kind's name with a lower-case first letter.
EMBEDDED = {kind: kind[0].lower() + kind[1:] for kind in EXPERIMENT_KINDS}
EMBEDDED.update({"IOChaos": "ioChaos", "HTTPChaos": "httpChaos", "JVMChaos": "jvmChaos", "DNSChaos": "dnsChaos"})
PAUSE_ANNOTATION = "experiment.chaos-mesh.org/pause"
_LIST = ("get " + ",".join(k.lower() for k in ("Schedule", *EXPERIMENT_KINDS)) + " -n {ns} -o jsonpath="
         """'{{range .items[*]}}{{.kind}}{{"\\t"}}{{.metadata.name}}{{"\\t"}}{{.metadata.ownerReferences}}"""
         """{{"\\t"}}{{.metadata.annotations}}{{"\\t"}}{{.status.experiment.desiredPhase}}{{"\\t"}}{{.spec}}"""
         """{{"\\n"}}{{end}}'""")


@dataclass(frozen=True)
class Workload:
    """What a selector is matched against: a Deployment, its pod template labels/annotations and
    the names of its current pods."""

    name: str
    labels: dict[str, str]
    annotations: dict[str, str] = field(default_factory=dict)
    pods: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChaosObject:
    kind: str
    name: str
    owner: str  # the Schedule that spawned it, or ""
    paused: bool
    stopped: bool  # the experiment was told to stop (its duration ran out)
    spec: dict[str, Any]

    @property
    def experiment_kind(self) -> str:
        return str(self.spec.get("type") or "") if self.kind == "Schedule" else self.kind

    @property
    def experiment(self) -> dict[str, Any]:
        """The experiment block: the object's spec, or the block a Schedule embeds."""
        if self.kind == "Schedule":
            block = self.spec.get(EMBEDDED.get(self.experiment_kind, ""))
            return block if isinstance(block, dict) else {}
        return self.spec


def parse_objects(text: str) -> list[ChaosObject]:
    """Rows of the jsonpath listing (kind, name, owners, annotations, desired phase, spec)."""
    out = []
    for line in text.splitlines():
        kind, name, owners, annotations, phase, spec = columns(line, 6)
        if not kind or not name:
            continue
        owner_refs = load_json(owners) or []
        owner = next((o.get("name", "") for o in owner_refs if isinstance(o, dict) and o.get("kind") == "Schedule"), "")
        notes = load_json(annotations) or {}
        paused = isinstance(notes, dict) and str(notes.get(PAUSE_ANNOTATION, "")).lower() == "true"
        body = load_json(spec)
        out.append(ChaosObject(kind, name, owner, paused, phase.strip() == "Stop",
                               body if isinstance(body, dict) else {}))
    return out


def _expression_holds(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
    if op == "In":
        return labels.get(key) in values
    if op == "NotIn":
        return labels.get(key) not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    return False


def selects(selector: dict[str, Any], own_namespace: str, namespace: str, workload: Workload) -> bool:
    """Whether a Chaos Mesh pod selector picks any pod of `workload` (in `namespace`)."""
    if not isinstance(selector, dict):
        return False
    if namespace not in (selector.get("namespaces") or [own_namespace]):
        return False
    labels = selector.get("labelSelectors") or {}
    if any(workload.labels.get(k) != v for k, v in labels.items()):
        return False
    if not all(_expression_holds(e, workload.labels) for e in selector.get("expressionSelectors") or []):
        return False
    notes = selector.get("annotationSelectors") or {}
    if any(workload.annotations.get(k) != v for k, v in notes.items()):
        return False
    pods = selector.get("pods")
    if pods:
        named = set((pods or {}).get(namespace) or [])
        if not named & set(workload.pods):
            return False
    # An empty selector picks every pod of its namespaces; Chaos Mesh refuses that only for
    # cluster-wide scope, so it still counts.
    return True


def hit_workloads(obj: ChaosObject, namespace: str, workloads: list[Workload]) -> tuple[list[str], list[str]]:
    """(workloads the experiment acts on, workloads at the other end of a NetworkChaos target)."""
    block = obj.experiment
    victims = [w.name for w in workloads if selects(block.get("selector") or {}, namespace, namespace, w)]
    target = block.get("target")
    target = target.get("selector") if isinstance(target, dict) else None
    peers = [w.name for w in workloads if target and selects(target, namespace, namespace, w)]
    return victims, [p for p in peers if p not in victims]


def active(objects: list[ChaosObject]) -> list[ChaosObject]:
    """Experiments and Schedules that still act, each standing for itself: a spawned experiment
    is represented by its Schedule when that is listed; paused and stopped ones are left out."""
    schedules = {o.name for o in objects if o.kind == "Schedule"}
    return [o for o in objects if not o.paused and not o.stopped and not (o.owner and o.owner in schedules)]


def effect(obj: ChaosObject) -> str:
    """What one run of the experiment does, in Chaos Mesh's own terms (kind, action, parameters)."""
    block = obj.experiment
    kind = obj.experiment_kind
    action = block.get("action")
    parts = [kind] + ([str(action)] if action else [])
    if kind == "StressChaos":
        parts += [f"{name} stress {json.dumps(spec, sort_keys=True)}" for name, spec in
                  sorted((block.get("stressors") or {}).items())]
    for key in ("delay", "loss", "duplicate", "corrupt", "bandwidth", "direction", "abort", "port", "method",
                "timeOffset", "memType", "duration", "mode"):
        if key in block:
            parts.append(f"{key} {json.dumps(block[key], sort_keys=True)}")
    return " ".join(parts)


def _workloads(ctx: Ctx) -> list[Workload]:
    text = ctx.get(f"get deployments -n {ctx.ns} -o jsonpath="
                   """'{range .items[*]}{.metadata.name}{"\\t"}{.spec.template.metadata.labels}{"\\t"}"""
                   """{.spec.template.metadata.annotations}{"\\n"}{end}'""")
    out = []
    for line in text.splitlines():
        name, _, rest = line.partition("\t")
        labels, _, notes = rest.partition("\t")
        pods = tuple(p.name for p in ctx.facts.pods if ctx.facts.owner(p.name) == name)
        out.append(Workload(name, load_json(labels) or {}, load_json(notes) or {}, pods))
    return out


def troubled(ctx: Ctx) -> set[str]:
    """Workloads the incident visibly touches: unready or restarting pods, crash loops, alerts,
    error logs, Warning events about their pods, or a failing caller."""
    facts = ctx.facts
    names = set(facts.crashing()) | set(facts.failing_services())
    for pod in facts.pods:
        if not pod.healthy or not pod.restarts.startswith("0"):
            names.add(facts.owner(pod.name) or "")
    names |= {facts.owner(a.labels.get("pod", "")) or "" for a in facts.alerts}
    names |= {facts.owner(e.obj.split("/", 1)[-1]) or "" for e in facts.events}
    failing = set(facts.failing_services())
    names |= {c for p, c in facts.edges if p in failing}
    names.discard("")
    return names


def _changed_resources(ctx: Ctx, deployment: str) -> bool:
    """Whether the Deployment's resource settings differ from its previous revision's (a safeguard
    such as a memory limit removed or changed by a recent rollout)."""
    dep = ctx.deployment(deployment)
    revision = ((dep.get("metadata") or {}).get("annotations") or {}).get("deployment.kubernetes.io/revision", "1")
    labels = ((dep.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    if revision == "1" or not labels:
        return False
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    text = ctx.get(f"get replicasets -n {ctx.ns} -l {selector} -o jsonpath="
                   """'{range .items[*]}{.metadata.annotations.deployment\\.kubernetes\\.io/revision}{"\\t"}"""
                   """{.spec.template.spec.containers[*].resources}{"\\n"}{end}'""")
    current = json.dumps([c.get("resources") or {} for c in containers(dep)], sort_keys=True)
    for line in text.splitlines():
        rev, _, resources = line.partition("\t")
        if rev.isdigit() and int(rev) < int(revision):
            before = [load_json(r) or {} for r in resources.split()] if resources.strip() else [{}]
            if json.dumps(before, sort_keys=True) != current:
                return True
    return False


def chaos_experiment(ctx: Ctx) -> Finding | None:
    """An active Chaos Mesh experiment or Schedule in the namespace whose selector picks a
    workload the incident touches."""
    return _chaos(ctx, need_trouble=True)


def chaos_experiment_any(ctx: Ctx) -> Finding | None:
    """The last resort: an active experiment picking any app workload, when nothing else explains
    the incident (its victim may show no symptom the first look caught)."""
    return _chaos(ctx, need_trouble=False)


def _chaos(ctx: Ctx, need_trouble: bool) -> Finding | None:
    objects = active(parse_objects(ctx.get(_LIST.format(ns=ctx.ns))))
    if not objects:
        return None
    workloads = _workloads(ctx)
    hot = troubled(ctx)
    hits = []
    for obj in objects:
        victims, peers = hit_workloads(obj, ctx.ns, workloads)
        if victims or peers:
            hits.append((obj, victims, peers))
    strong = [h for h in hits if set(h[1]) & hot or set(h[2]) & hot]
    chosen = strong or ([] if need_trouble else hits)
    if not chosen:
        return None
    roots, affected, fixes, lines = [], [], [], []
    for obj, victims, peers in chosen:
        roots.append(ctx.obj(obj.kind, obj.name))
        what = "Schedule" if obj.kind == "Schedule" else obj.kind
        picked = ", ".join(victims) or "no pod directly"
        line = (f"{what} {obj.name} runs Chaos Mesh {effect(obj)} on {picked}"
                + (f" (target: {', '.join(peers)})" if peers else ""))
        if obj.kind == "Schedule":
            line += f" on the cron schedule {obj.spec.get('schedule', '')!r}, so every run strikes again"
        lines.append(line)
        fixes.append((f"delete {obj.kind.lower()} {obj.name} -n {ctx.ns} --ignore-not-found", None))
        affected += [ctx.dep(v) for v in [*victims, *peers]]
    # Spawned experiments still running are ended with their Schedule (garbage collection does it
    # too, later): their finalizers restore the pods.
    spawned = [o for o in parse_objects(ctx.get(_LIST.format(ns=ctx.ns)))
               if o.owner and ctx.obj("Schedule", o.owner) in roots]
    fixes += [(f"delete {o.kind.lower()} {o.name} -n {ctx.ns} --ignore-not-found", None) for o in spawned]
    victims_all = list(dict.fromkeys(v for _, vs, _ in chosen for v in vs))
    for victim in victims_all:
        if _changed_resources(ctx, victim):
            roots.append(ctx.dep(victim))
            lines.append(f"{victim}'s resource limits were changed by its latest rollout, so the experiment's "
                         "load is no longer contained; the previous revision is restored")
            fixes.append((f"rollout undo deployment/{victim} -n {ctx.ns}", None))
    affected += callers(ctx, victims_all)
    kinds = sorted({o.experiment_kind for o, _, _ in chosen})
    scheduled = any(o.kind == "Schedule" for o, _, _ in chosen)
    mechanism = (f"chaos experiment: a Chaos Mesh {'Schedule spawning ' if scheduled else ''}"
                 f"{'/'.join(kinds)} left running against the app")
    return Finding(list(dict.fromkeys(roots)), mechanism,
                   "; ".join(lines) + ". Ending the experiment (deleting the Schedule/experiment) stops it; "
                   f"restarting the victims only lasts until the next run. {IMPACT}",
                   fixes, affected=[a for a in dict.fromkeys(affected) if a not in roots], strong=bool(strong))


__all__ = ["ChaosObject", "Workload", "active", "chaos_experiment", "chaos_experiment_any", "effect", "hit_workloads", "parse_objects",
           "selects", "troubled"]
