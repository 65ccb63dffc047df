"""Hypotheses about how workloads are put together: Job pods that cannot finish, volumes that cannot
follow their pods, and volume sources that no longer exist.

Each test starts from a symptom the cluster reports by itself (a Job pod `NotReady` with one
container done and another still running, `Multi-Attach` / anti-affinity scheduling failures,
`FailedMount ... not found`) and only then reads the specs that explain it.
"""

from __future__ import annotations

import json
import re

from sregym.agents.baseline import remedies as fix
from sregym.agents.baseline.context import (
    IMPACT,
    Ctx,
    Finding,
    callers,
    columns,
    events_like,
    load_json,
    pod_spec,
    workloads_of_events,
)

_JOB_POD_STATUSES = ("jsonpath='{range .items[*]}{.metadata.name}{\"\\t\"}{.metadata.ownerReferences[0].name}"
                     "{\"\\t\"}{.status.containerStatuses}{\"\\n\"}{end}'")
_JOB_OWNERS = ("jsonpath='{range .items[*]}{.metadata.name}{\"\\t\"}{.metadata.ownerReferences[0].kind}/"
               "{.metadata.ownerReferences[0].name}{\"\\t\"}{.status.active}{\"\\t\"}{.status.succeeded}{\"\\n\"}{end}'")


# ------------------------------------------------------------------ Jobs with regular sidecars
def job_sidecar(ctx: Ctx) -> Finding | None:
    """A Job pod whose main container has exited successfully while another container keeps
    running: a helper (log shipper, proxy) declared as a regular container never exits, so the
    pod never terminates and the Job never completes. Kubernetes' answer is a native sidecar: an
    init container with `restartPolicy: Always`, which the kubelet stops once the main
    containers are done."""
    if not any(p.status == "NotReady" or (not p.healthy and ctx.facts.owner(p.name) is None)
               for p in ctx.facts.pods):
        return None
    stuck: dict[str, set[str]] = {}  # Job -> containers still running after the main one finished
    for line in ctx.get(f"get pods -n {ctx.ns} -l job-name -o {_JOB_POD_STATUSES}").splitlines():
        _, job, statuses = columns(line, 3)
        states = load_json(statuses) or []
        done = [s for s in states if ((s.get("state") or {}).get("terminated") or {}).get("exitCode") == 0]
        running = {s.get("name", "") for s in states if "running" in (s.get("state") or {})}
        if job and done and running:
            stuck.setdefault(job, set()).update(running)
    if not stuck:
        return None
    owners: dict[str, str] = {}
    for line in ctx.get(f"get jobs -n {ctx.ns} -o {_JOB_OWNERS}").splitlines():
        name, owner = columns(line, 2)
        owners[name] = owner
    by_cronjob: dict[str, list[str]] = {}
    for job in sorted(stuck):
        kind, _, owner = owners.get(job, "").partition("/")
        by_cronjob.setdefault(owner if kind == "CronJob" else "", []).append(job)
    cronjob = next((c for c in sorted(by_cronjob) if c), "")
    jobs = by_cronjob[cronjob]
    sidecars = sorted({c for j in jobs for c in stuck[j]})
    if not cronjob:  # a bare Job's pod template is immutable: report it, the owner must recreate it
        return Finding([ctx.obj("Job", j) for j in jobs], "sidecar lifecycle: a regular sidecar never exits",
                       f"Job {', '.join(jobs)}: container(s) {', '.join(sidecars)} keep running after the main "
                       f"container exited, so the Job never completes. Recreate it with them as native "
                       f"sidecars (initContainers with restartPolicy: Always). {IMPACT}", [])
    template = pod_spec((ctx.json(f"get cronjob {cronjob} -n {ctx.ns}").get("spec") or {}).get("jobTemplate") or {})
    regular = template.get("containers") or []
    moved = [(i, c) for i, c in enumerate(regular) if c.get("name") in sidecars]
    if not moved or len(moved) == len(regular):
        return None
    base = "/spec/jobTemplate/spec/template/spec"
    ops: list[dict] = [{"op": "remove", "path": f"{base}/containers/{i}"} for i, _ in reversed(moved)]
    natives = [{**c, "restartPolicy": "Always"} for _, c in moved]
    if template.get("initContainers"):
        ops += [{"op": "add", "path": f"{base}/initContainers/-", "value": c} for c in natives]
    else:
        ops.append({"op": "add", "path": f"{base}/initContainers", "value": natives})
    # Jobs started from the old template would run forever: end them (the schedule starts new ones).
    cmds = [*fix.json_patch("cronjob", cronjob, ctx.ns, ops), (f"delete job {' '.join(jobs)} -n {ctx.ns}", None)]
    main = [c.get("name", "") for c in regular if c.get("name") not in sidecars]
    return Finding([ctx.obj("CronJob", cronjob)],
                   "sidecar lifecycle: a regular sidecar container never exits, so Jobs never complete",
                   f"CronJob {cronjob} runs {', '.join(sidecars)} as a regular container next to "
                   f"{', '.join(main)}: the main container finishes (exit 0) but the sidecar keeps running, so "
                   f"its pods stay NotReady and Jobs {', '.join(jobs)} never complete and pile up. Fix: make it a "
                   f"native sidecar (initContainers with restartPolicy: Always), which the kubelet stops when "
                   f"the main container is done. {IMPACT}", cmds)


# ------------------------------------------------------------------ ReadWriteOnce volumes
def volume_attach(ctx: Ctx) -> Finding | None:
    """Replicas of one workload that share a ReadWriteOnce claim but land (or are forced, by a
    required pod anti-affinity) on different nodes: the volume attaches to one node only, so the
    other pods wait in ContainerCreating (`Multi-Attach error`) or stay Pending, and the rollout
    never completes. Fix: let the replicas share the volume's node (drop the anti-affinity) and
    replace pods without overlap (`Recreate`), since a surge pod elsewhere would wait forever."""
    attach = events_like(ctx, "Multi-Attach error", "FailedAttachVolume")
    spread = [e for e in events_like(ctx, "FailedScheduling") if "anti-affinity" in e.message]
    for d in workloads_of_events(ctx, attach + spread):
        dep = ctx.deployment(d)
        spec = dep.get("spec") or {}
        template = pod_spec(dep)
        claims = [v["persistentVolumeClaim"].get("claimName", "") for v in template.get("volumes") or []
                  if v.get("persistentVolumeClaim")]
        rwo = [c for c in claims if "ReadWriteOnce" in ctx.get(
            f"get pvc {c} -n {ctx.ns} -o jsonpath={{.spec.accessModes}}").replace("ReadWriteOncePod", "")]
        replicas = int(spec.get("replicas") or 1)
        if not rwo or replicas < 2:
            continue
        affinity = template.get("affinity") or {}
        ops: list[dict] = []
        if affinity.get("podAntiAffinity"):
            only = set(affinity) == {"podAntiAffinity"}
            ops.append({"op": "remove", "path": "/spec/template/spec/affinity" + ("" if only else "/podAntiAffinity")})
        hard_spread = [t for t in template.get("topologySpreadConstraints") or []
                       if t.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"]
        if hard_spread:
            ops.append({"op": "remove", "path": "/spec/template/spec/topologySpreadConstraints"})
        if (spec.get("strategy") or {}).get("type") != "Recreate":
            ops.append({"op": "replace", "path": "/spec/strategy", "value": {"type": "Recreate"}})
        evidence = (attach or spread)[-1].message
        constraint = " and a required pod anti-affinity spreads them over nodes" if affinity.get("podAntiAffinity") else ""
        return Finding([ctx.dep(d), *[ctx.obj("PersistentVolumeClaim", c) for c in rwo]],
                       "volume attach: ReadWriteOnce volume shared across nodes (Multi-Attach)",
                       f"{replicas} {d} replicas mount ReadWriteOnce PVC {', '.join(rwo)}{constraint}; the volume "
                       f"can attach to one node only, so the other pods cannot start (Multi-Attach error / "
                       f"{evidence[:160]}) and the rollout never completes. Fix: keep the replicas on the "
                       f"volume's node (no podAntiAffinity) with a Recreate strategy. {IMPACT}",
                       fix.json_patch("deployment", d, ctx.ns, ops) if ops else [],
                       affected=callers(ctx, [d]))
    return None


# ------------------------------------------------------------------ deleted volume sources
_NOT_FOUND = re.compile(r'(configmap|secret) "([\w.-]+)" not found')


def missing_volume_source(ctx: Ctx) -> Finding | None:
    """Pods stuck in ContainerCreating because a ConfigMap or Secret they mount was deleted
    (`FailedMount ... configmap "x" not found`).

    Fix: recreate the object. Its content is gone, but workloads stamped from one template
    (`db-a` mounting `a-script`, `db-b` mounting `b-script`) let a sibling's object, with the
    sibling's name swapped for this workload's, stand in for it; without a sibling the volume is
    made optional so the pod can start (what it loses is said in the explanation).
    """
    events = [e for e in events_like(ctx, "FailedMount") if _NOT_FOUND.search(e.message)]
    deps = workloads_of_events(ctx, events)
    if not deps:
        return None
    kind_word, name = _NOT_FOUND.search(events[-1].message).groups()
    kind = "ConfigMap" if kind_word == "configmap" else "Secret"
    d = deps[0]
    cmds = _sibling_copy(ctx, d, name) if kind == "ConfigMap" else []
    how = "recreated from a sibling workload's equivalent object"
    if not cmds:
        cmds = _optional_volume(ctx, d, kind, name)
        how = "made optional on the workload (recreate it from source control)"
    failing = [ctx.dep(w) for w in ctx.facts.failing_services() if w not in deps]
    return Finding([ctx.obj(kind, name)], f"missing {kind.lower()}: a mounted {kind} was deleted (FailedMount, not found)",
                   f"{kind} {name}, mounted as a volume by {', '.join(deps)}, no longer exists: "
                   f"{events[-1].message[:200]}. The pods stay in ContainerCreating, so {', '.join(deps)} is down "
                   f"and its callers fail. The {kind} is {how}. {IMPACT}", cmds,
                   affected=[ctx.dep(w) for w in deps] + failing)


def _sibling_copy(ctx: Ctx, workload: str, missing: str) -> list[fix.Command]:
    text = ctx.get(f"get deployments -n {ctx.ns} -o jsonpath="
                   """'{range .items[*]}{.metadata.name}{"\\t"}{.spec.template.spec.containers[*].image}"""
                   """{"\\t"}{.spec.template.spec.volumes[*].configMap.name}{"\\n"}{end}'""")
    rows = {}
    for line in text.splitlines():
        name, images, maps = columns(line, 3)
        rows[name] = (images.split(), maps.split())
    images = rows.get(workload, ([], []))[0]
    for sibling, (their_images, their_maps) in sorted(rows.items()):
        if sibling == workload or their_images != images:
            continue
        theirs, ours = _differing_token(sibling, workload)
        for cm in their_maps:
            if not theirs or cm.replace(theirs, ours) != missing:
                continue
            source = ctx.json(f"get configmap {cm} -n {ctx.ns}")
            data = {k.replace(theirs, ours): str(v).replace(theirs, ours)
                    for k, v in sorted((source.get("data") or {}).items())}
            if not data:
                continue
            labels = {k: str(v).replace(theirs, ours)
                      for k, v in ((source.get("metadata") or {}).get("labels") or {}).items()}
            manifest = {"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": missing, "namespace": ctx.ns, **({"labels": labels} if labels else {})},
                        "data": data}
            return fix.apply_yaml(json.dumps(manifest))
    return []


def _differing_token(a: str, b: str) -> tuple[str, str]:
    """The parts of two dash-separated names that differ once the common prefix and suffix are
    taken off (`mongodb-profile`, `mongodb-geo` -> `profile`, `geo`)."""
    x, y = a.split("-"), b.split("-")
    while x and y and x[0] == y[0]:
        x, y = x[1:], y[1:]
    while x and y and x[-1] == y[-1]:
        x, y = x[:-1], y[:-1]
    return "-".join(x), "-".join(y)


def _optional_volume(ctx: Ctx, workload: str, kind: str, name: str) -> list[fix.Command]:
    field = "configMap" if kind == "ConfigMap" else "secret"
    key = "name" if kind == "ConfigMap" else "secretName"
    ops = [{"op": "add", "path": f"/spec/template/spec/volumes/{i}/{field}/optional", "value": True}
           for i, v in enumerate(pod_spec(ctx.deployment(workload)).get("volumes") or [])
           if (v.get(field) or {}).get(key) == name]
    return fix.json_patch("deployment", workload, ctx.ns, ops) if ops else []


__all__ = ["job_sidecar", "missing_volume_source", "volume_attach"]
