"""Hypotheses: one small test per fault mechanism, from the evidence to a `Finding` with a fix.

Each function looks at the shared `Facts` (and may run a few more read-only kubectl commands
through the `Ctx` cache) and returns a Finding only when the evidence is specific to its
mechanism. Mechanism words are the public submission vocabulary (copied, not imported).
This module holds the tests and their order (`HYPOTHESES`); tests about Jobs and volumes live in
`workloads`, runtime flags in `flags`, database logins draw on `databases`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from sregym.agents.baseline import databases
from sregym.agents.baseline import remedies as fix
from sregym.agents.baseline.addresses import missing_service
from sregym.agents.baseline.chaos import chaos_experiment, chaos_experiment_any
from sregym.agents.baseline.context import (
    IMPACT,
    Ctx,
    Finding,
    callers,
    containers,
    events_like,
    load_json,
    workloads_of_events,
)
from sregym.agents.baseline.flags import feature_flag, flag_file
from sregym.agents.baseline.nodes import node_trouble
from sregym.agents.baseline.placement import unschedulable
from sregym.agents.baseline.rollouts import recent_rollout
from sregym.agents.baseline.workloads import job_sidecar, missing_volume_source, volume_attach


# ------------------------------------------------------------------ images
def _undo_image(ctx: Ctx, deployment: str) -> list[fix.Command]:
    """Roll back to the newest revision whose images differ from the current ones.

    A plain `rollout undo` goes one revision back, which is the same bad image when a restart
    happened after the image change; the ReplicaSets keep every revision's template.
    """
    dep = ctx.deployment(deployment)
    current = sorted(c.get("image", "") for c in containers(dep))
    labels = ((dep.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    if not labels:
        return fix.rollout_undo(ctx.ns, deployment)
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    text = ctx.get(f"get replicasets -n {ctx.ns} -l {selector} -o jsonpath="
                   """'{range .items[*]}{.metadata.annotations.deployment\\.kubernetes\\.io/revision}"""
                   """{"\\t"}{.spec.template.spec.containers[*].image}{"\\n"}{end}'""")
    revisions = []
    for line in text.splitlines():
        revision, _, images = line.partition("\t")
        if revision.isdigit() and sorted(images.split()) != current:
            revisions.append(int(revision))
    if not revisions:
        return fix.rollout_undo(ctx.ns, deployment)
    return [(f"rollout undo deployment/{deployment} -n {ctx.ns} --to-revision={max(revisions)}", None)]


def image_pull(ctx: Ctx) -> Finding | None:
    events = events_like(ctx, "Failed to pull image", "ErrImagePull", "ImagePullBackOff")
    deps = workloads_of_events(ctx, events)
    if not deps:
        return None
    images = sorted({m.group(1) for e in events for m in [re.search(r'image "([^"]+)"', e.message)] if m})
    cmds = [c for d in deps for c in _undo_image(ctx, d)]
    return Finding([ctx.dep(d) for d in deps], "bad image: ImagePullBackOff, the image tag cannot be pulled",
                   f"{', '.join(deps)} pods cannot pull image {', '.join(images)} (ErrImagePull / "
                   f"ImagePullBackOff, tag not found); the rollout is stuck. {IMPACT}", cmds)


def crashing_image(ctx: Ctx) -> Finding | None:
    crashing = ctx.facts.crashing()
    if not crashing or _oom_evidence(ctx, crashing):
        return None
    changed, images = [], []
    for d in crashing:
        dep = ctx.deployment(d)
        revision = (dep.get("metadata") or {}).get("annotations", {}).get("deployment.kubernetes.io/revision", "1")
        if revision != "1":
            changed.append(d)
            images += [c.get("image", "") for c in containers(dep)]
    if not changed:
        return None
    cmds = [c for d in changed for c in _undo_image(ctx, d)]
    return Finding([ctx.dep(d) for d in changed], "crashing image: CrashLoopBackOff after an image update",
                   f"{', '.join(changed)} crash-loop (CrashLoopBackOff) since a new revision with image "
                   f"{', '.join(sorted(set(images)))} was rolled out. {IMPACT}", cmds)


# ------------------------------------------------------------------ admission
def admission_webhook(ctx: Ctx) -> Finding | None:
    events = events_like(ctx, "failed calling webhook")
    if not events:
        return None
    validating = [n for k, n in ctx.facts.webhooks if k == "ValidatingWebhookConfiguration"]
    hook = re.search(r'failed calling webhook "([^"]+)"', events[-1].message)
    hook_name = hook.group(1) if hook else ""
    target = [n for n in validating if n.split("-")[0] in hook_name] or validating[-1:]
    if not target:
        return None
    deps = workloads_of_events(ctx, events)
    return Finding([f"ValidatingWebhookConfiguration/{target[0]}"],
                   "admission webhook failing (failurePolicy Fail)",
                   f"ValidatingWebhookConfiguration {target[0]} calls webhook {hook_name}, whose backend is "
                   f"unreachable: {events[-1].message[:240]}. Pod creation is rejected, so {', '.join(deps)} "
                   f"get no pods. {IMPACT}",
                   fix.delete("validatingwebhookconfiguration", target[0]),
                   affected=[ctx.dep(d) for d in deps])


def resource_quota(ctx: Ctx) -> Finding | None:
    events = events_like(ctx, "exceeded quota", "failed quota")
    if not events:
        return None
    match = re.search(r"(?:failed|exceeded) quota: ([\w.-]+)", events[-1].message)
    if not match:
        return None
    deps = workloads_of_events(ctx, events)
    return Finding([f"{ctx.ns}/ResourceQuota/{match.group(1)}"], "resource quota rejects pod creation",
                   f"ResourceQuota {match.group(1)} forbids the pods of {', '.join(deps)}: "
                   f"{events[-1].message[:240]}. {IMPACT}",
                   fix.delete("resourcequota", match.group(1), ctx.ns), affected=[ctx.dep(d) for d in deps])


# ------------------------------------------------------------------ scheduling
def node_selector(ctx: Ctx) -> Finding | None:
    events = [e for e in events_like(ctx, "FailedScheduling") if "affinity/selector" in e.message]
    deps = workloads_of_events(ctx, events)
    if not deps:
        return None
    cmds, details = [], []
    for d in deps:
        spec = ctx.deployment(d).get("spec", {}).get("template", {}).get("spec", {})
        details.append(f"{d} nodeSelector {json.dumps(spec.get('nodeSelector') or {})}")
        cmds += fix.json_patch("deployment", d, ctx.ns, [{"op": "remove", "path": "/spec/template/spec/nodeSelector"}])
    return Finding([ctx.dep(d) for d in deps], "nodeSelector matches no node: pods unschedulable",
                   f"{'; '.join(details)} matches no node, so the pods stay Pending "
                   f"(FailedScheduling: {events[-1].message[:160]}). {IMPACT}", cmds)


# ------------------------------------------------------------------ resources
def _oom_evidence(ctx: Ctx, deps: list[str]) -> bool:
    if any("out of memory" in line and any(f"({d})" in line for d in deps) for line in ctx.facts.kernel_logs):
        return True
    return any("OOMKilled" in ctx.get(f"get pod {p.name} -n {ctx.ns} -o jsonpath={{.status.containerStatuses[*].lastState}}")
               for p in ctx.facts.pods if ctx.facts.owner(p.name) in deps and not p.healthy)


def oom(ctx: Ctx) -> Finding | None:
    crashing = ctx.facts.crashing()
    if not crashing or not _oom_evidence(ctx, crashing):
        return None
    restarts = [fix.restart(ctx.ns, d) for d in crashing]
    affected = [ctx.dep(d) for d in crashing]
    limit_ranges = re.findall(r"limitrange[\w.]*/([\w.-]+)", ctx.facts.policies)
    own_limits = {d: [((c.get("resources") or {}).get("limits") or {}).get("memory") for c in containers(ctx.deployment(d))]
                  for d in crashing}
    injected = all(not any(v) for v in own_limits.values())
    if injected and limit_ranges:
        lr = limit_ranges[0]
        detail = ctx.get(f"get limitrange {lr} -n {ctx.ns} -o jsonpath={{.spec.limits}}")
        return Finding([f"{ctx.ns}/LimitRange/{lr}"], "oom: memory limit too low (OOMKilled)",
                       f"LimitRange {lr} injects a default memory limit ({detail[:200]}) into new pods of "
                       f"{', '.join(crashing)}, which are OOMKilled (out of memory) and crash-loop. {IMPACT}",
                       fix.delete("limitrange", lr, ctx.ns) + restarts, affected=affected)
    mutating = [n for k, n in ctx.facts.webhooks if k == "MutatingWebhookConfiguration"]
    pod_hooks = [n for n in mutating if "pods" in ctx.get(
        f"get mutatingwebhookconfiguration {n} -o jsonpath={{.webhooks[*].rules[*].resources}}")]
    if injected and pod_hooks:
        hook = pod_hooks[0]
        return Finding([f"MutatingWebhookConfiguration/{hook}"], "admission webhook mutates pod resources",
                       f"MutatingWebhookConfiguration {hook} mutates pods and injects a small memory limit into "
                       f"{', '.join(crashing)}; the containers are OOMKilled and crash-loop. {IMPACT}",
                       fix.delete("mutatingwebhookconfiguration", hook) + restarts, affected=affected)
    cmds: list[fix.Command] = []
    for d in crashing:
        for c in containers(ctx.deployment(d)):
            cmds += fix.container_patch(ctx.ns, d, c["name"], {"resources": {"limits": {"memory": "1Gi"}}})
    return Finding([ctx.dep(d) for d in crashing], "oom: memory limit too low (OOMKilled)",
                   f"{', '.join(crashing)} containers exceed their memory limit "
                   f"{json.dumps(own_limits)} and are OOMKilled. {IMPACT}", cmds)


def cpu_throttling(ctx: Ctx) -> Finding | None:
    pods = [a.labels.get("pod", "") for a in ctx.facts.alerts if a.name == "ContainerCPUThrottling"]
    deps = sorted({d for p in pods for d in [ctx.facts.owner(p)] if d})
    if not deps:
        return None
    cmds, details = [], []
    for d in deps:
        for c in containers(ctx.deployment(d)):
            limit = ((c.get("resources") or {}).get("limits") or {}).get("cpu")
            details.append(f"{d}/{c['name']} cpu limit {limit}")
            cmds += fix.container_patch(ctx.ns, d, c["name"], {"resources": {"limits": {"cpu": "2"}}})
    return Finding([ctx.dep(d) for d in deps], "cpu throttling (CFS throttled, low cpu limit)",
                   f"{'; '.join(details)}: the container is CFS-throttled, so its requests are slow and "
                   f"callers time out. {IMPACT}", cmds, affected=callers(ctx, deps))


def retry_storm(ctx: Ctx) -> Finding | None:
    """A caller whose client retry/timeout settings amplify load onto a throttled callee."""
    hot = {d for a in ctx.facts.alerts if a.name == "ContainerCPUThrottling"
           for d in [ctx.facts.owner(a.labels.get("pod", ""))] if d}
    if not hot:
        return None
    for caller in sorted({p for p, c in ctx.facts.edges if c in hot}):
        if caller not in ctx.facts.deployments:
            continue
        for c in containers(ctx.deployment(caller)):
            env = {e.get("name"): e.get("value") for e in c.get("env") or [] if "value" in e}
            knobs = {k: v for k, v in env.items() if re.search(r"RETR|TIMEOUT|BACKOFF", k or "")}
            retries = [v for k, v in knobs.items() if "RETR" in k and str(v).isdigit() and int(v) > 2]
            if not retries:
                continue
            fixed = [{"name": k, "value": ("1" if "RETR" in k else "1s" if "TIMEOUT" in k else v)}
                     for k, v in sorted(knobs.items())]
            cmds = fix.container_patch(ctx.ns, caller, c["name"], {"env": fixed})
            cmds += [fix.restart(ctx.ns, h) for h in sorted(hot)]
            return Finding([ctx.dep(caller)], "retry storm (retry amplification, metastable)",
                           f"{caller} client settings {json.dumps(knobs)} retry aggressively; the retries keep "
                           f"{', '.join(sorted(hot))} overloaded after the spike (metastable queue). {IMPACT}",
                           cmds, affected=[ctx.dep(h) for h in sorted(hot)] + callers(ctx, [caller]))
    return None


# ------------------------------------------------------------------ probes and rollouts
_PROBE_TIMEOUT = re.compile(r"(?i)deadline exceeded|timeout|timed out")


def probe(ctx: Ctx) -> Finding | None:
    unready = {p.name for p in ctx.facts.pods if not p.healthy}
    # Probes fail now and then on loaded pods; only probes that keep a pod unready count.
    events = [e for e in events_like(ctx, "probe failed") if e.obj.split("/", 1)[-1] in unready]
    deps = workloads_of_events(ctx, events)
    if not deps:
        return None
    cmds, details = [], []
    for d in deps:
        for c in containers(ctx.deployment(d)):
            ports = [p.get("containerPort") for p in c.get("ports") or []]
            for kind in ("readinessProbe", "livenessProbe", "startupProbe"):
                pr = c.get(kind) or {}
                for handler in ("tcpSocket", "httpGet", "grpc"):
                    port = (pr.get(handler) or {}).get("port")
                    if port is not None and ports and port not in ports:
                        details.append(f"{d} {kind} {handler} port {port} but the container listens on {ports[0]}")
                        cmds += fix.container_patch(ctx.ns, d, c["name"], {kind: {handler: {"port": ports[0]}}})
    liveness = all(e.message.startswith("Liveness probe failed") for e in events)
    if not cmds and liveness:
        slow = _liveness_too_tight(ctx, [e for e in events if _PROBE_TIMEOUT.search(e.message)])
        if slow:
            return slow
    if not cmds:
        cmds = [c for d in deps for c in fix.rollout_undo(ctx.ns, d)]
    kind = "liveness" if liveness else "readiness"
    return Finding([ctx.dep(d) for d in deps], f"{kind} probe misconfigured",
                   f"{'; '.join(details) or events[-1].message[:200]}. The pods never become ready and the "
                   f"rollout cannot finish. {IMPACT}", cmds, affected=[f"{ctx.ns}/Service/{d}" for d in deps])


def _liveness_too_tight(ctx: Ctx, events: list) -> Finding | None:
    """Liveness probes that time out on a slow, busy container which the kubelet then restarts:
    an overload turned into an outage by a probe with no slack (short timeout, one failure).

    Fix both halves: give the probe slack, and give the workload the capacity the load needs
    (twice the replicas), since a restarted pod is just as overloaded as the one it replaces.
    """
    crashing = set(ctx.facts.crashing())
    deps = [d for d in workloads_of_events(ctx, events) if d in crashing]
    cmds: list[fix.Command] = []
    details = []
    for d in deps:
        dep = ctx.deployment(d)
        for c in containers(dep):
            lp = c.get("livenessProbe") or {}
            if not lp:
                continue
            period, timeout, failures = (lp.get("periodSeconds", 10), lp.get("timeoutSeconds", 1),
                                         lp.get("failureThreshold", 3))
            details.append(f"{d} livenessProbe periodSeconds {period}, timeoutSeconds {timeout}, "
                           f"failureThreshold {failures}")
            cmds += fix.container_patch(ctx.ns, d, c["name"], {"livenessProbe": {
                "periodSeconds": max(period, 10), "timeoutSeconds": max(timeout, 5),
                "failureThreshold": max(failures, 3)}})
        replicas = int((dep.get("spec") or {}).get("replicas") or 1)
        cmds.append((f"scale deployment {d} -n {ctx.ns} --replicas={max(2, replicas * 2)}", None))
    if not details:
        return None
    return Finding([ctx.dep(d) for d in deps], "liveness probe too aggressive (restarts a slow container under load)",
                   f"{'; '.join(details)}: under load the container answers slower than the probe allows "
                   f"({events[-1].message[:160]}), and the kubelet kills it after one missed probe, again and "
                   f"again (CrashLoopBackOff), turning slowness into an outage. {IMPACT}", cmds,
                   affected=[ctx.obj("Service", d) for d in deps])


def rollout_strategy(ctx: Ctx) -> Finding | None:
    stuck = sorted({d for p in ctx.facts.pods if p.status.startswith("Init:")
                    for d in [ctx.facts.owner(p.name)] if d})
    if not stuck:
        return None
    cmds, details = [], []
    for d in stuck:
        spec = ctx.deployment(d).get("spec", {})
        strategy = spec.get("strategy") or {}
        inits = [c.get("name") for c in spec.get("template", {}).get("spec", {}).get("initContainers") or []]
        details.append(f"{d} strategy {json.dumps(strategy)}, init containers {inits}")
        ops = [{"op": "replace", "path": "/spec/strategy",
                "value": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}}]
        if inits:
            ops.insert(0, {"op": "remove", "path": "/spec/template/spec/initContainers"})
        cmds += fix.json_patch("deployment", d, ctx.ns, ops)
    return Finding([ctx.dep(d) for d in stuck], "rollout strategy maxUnavailable with a hanging init container",
                   f"{'; '.join(details)}. The rolling update removed the old pods at once (maxUnavailable) and "
                   f"the new pod hangs in its init container (Init:0/1). {IMPACT}", cmds,
                   affected=[f"{ctx.ns}/Service/{d}" for d in stuck] + callers(ctx, stuck))


# ------------------------------------------------------------------ services
def _services(ctx: Ctx) -> list[dict]:
    """Services as small dicts (name, selector, ports) from one jsonpath call (full JSON is too long)."""
    text = ctx.get(f"get services -n {ctx.ns} -o jsonpath="
                   """'{range .items[*]}{.metadata.name}{"\\t"}{.spec.selector}{"\\t"}{.spec.ports}{"\\n"}{end}'""")
    out = []
    for line in text.splitlines():
        name, _, rest = line.partition("\t")
        selector, _, ports = rest.partition("\t")
        out.append({"metadata": {"name": name}, "spec": {"selector": load_json(selector) or {}, "ports": load_json(ports) or []}})
    return out


def _workload_shapes(ctx: Ctx) -> dict[str, tuple[dict, list[int]]]:
    """Deployment name -> (pod template labels, container ports), from one jsonpath call."""
    text = ctx.get(f"get deployments -n {ctx.ns} -o jsonpath="
                   """'{range .items[*]}{.metadata.name}{"\\t"}{.spec.template.metadata.labels}{"\\t"}"""
                   """{.spec.template.spec.containers[*].ports[*].containerPort}{"\\n"}{end}'""")
    out = {}
    for line in text.splitlines():
        name, _, rest = line.partition("\t")
        labels, _, ports = rest.partition("\t")
        out[name] = (load_json(labels) or {}, [int(p) for p in ports.split() if p.isdigit()])
    return out


def service_selector(ctx: Ctx) -> Finding | None:
    for svc in _services(ctx):
        name = svc["metadata"]["name"]
        selector = (svc.get("spec") or {}).get("selector") or {}
        if name not in ctx.facts.deployments or not selector:
            continue
        labels = _workload_shapes(ctx).get(name, ({}, []))[0]
        if labels and any(labels.get(k) != v for k, v in selector.items()):
            wanted = {k: labels.get(k, v) for k, v in selector.items() if k in labels} or labels
            return Finding([f"{ctx.ns}/Service/{name}"], "service selector matches no pods (no endpoints)",
                           f"Service {name} selector {json.dumps(selector)} matches no pod (the {name} pods are "
                           f"labelled {json.dumps(labels)}), so it has no endpoints. {IMPACT}",
                           fix.json_patch("service", name, ctx.ns,
                                          [{"op": "replace", "path": "/spec/selector", "value": wanted}]),
                           affected=callers(ctx, [name]))
    return None


def service_extra_pods(ctx: Ctx) -> Finding | None:
    """A Service whose selector also matches the pods of another workload that does not listen on
    its target port: the endpoints mix the right pods with wrong ones, so a share of the
    connections is refused while every pod looks healthy.

    Workloads that all serve the port (a canary next to the stable release) are left alone.
    """
    shapes = _workload_shapes(ctx)
    for svc in _services(ctx):
        name = svc["metadata"]["name"]
        selector = svc["spec"]["selector"]
        if not selector:
            continue
        matched = sorted(d for d, (labels, _) in shapes.items()
                         if labels and all(labels.get(k) == v for k, v in selector.items()))
        targets = {sp.get("targetPort", sp.get("port")) for sp in svc["spec"]["ports"]
                   if sp.get("protocol", "TCP") == "TCP"}
        wanted_ports = {t for t in targets if isinstance(t, int)}
        if len(matched) < 2 or not wanted_ports:
            continue
        serving = [d for d in matched if wanted_ports <= set(shapes[d][1])]
        strays = [d for d in matched if d not in serving]
        intended = name if name in serving else (serving[0] if len(serving) == 1 else None)
        if not strays or intended is None:
            continue
        own = shapes[intended][0]
        narrow = {k: v for k, v in sorted(own.items())
                  if all(shapes[s][0].get(k) != v for s in strays)}
        still = [d for d, (labels, _) in shapes.items() if all(labels.get(k) == v for k, v in narrow.items())]
        if not narrow or any(d not in serving for d in still):
            continue
        return Finding([ctx.obj("Service", name)], "service selector matches pods of another workload (wrong endpoints)",
                       f"Service {name} selector {json.dumps(selector)} also matches the pods of "
                       f"{', '.join(strays)}, which do not listen on port {sorted(wanted_ports)[0]}; its endpoints "
                       f"include those wrong pods, so part of the connections to {name} are refused. "
                       f"The selector should be {json.dumps(narrow)}. {IMPACT}",
                       fix.json_patch("service", name, ctx.ns, [{"op": "replace", "path": "/spec/selector",
                                                                  "value": narrow}]),
                       affected=[ctx.dep(d) for d in [*strays, intended]] + callers(ctx, [intended]))
    return None


def service_port(ctx: Ctx) -> Finding | None:
    for svc in _services(ctx):
        name = svc["metadata"]["name"]
        if name not in ctx.facts.deployments:
            continue
        ports = _workload_shapes(ctx).get(name, ({}, []))[1]
        if not ports:
            continue
        called = any(c == name for _, c in ctx.facts.edges)
        for i, sp in enumerate((svc.get("spec") or {}).get("ports") or []):
            target = sp.get("targetPort", sp.get("port"))
            if sp.get("protocol", "TCP") != "TCP" or not called:
                continue  # only TCP ports of services that are actually called
            if isinstance(target, int) and target not in ports:
                good = sp.get("port") if sp.get("port") in ports else ports[0]
                return Finding([f"{ctx.ns}/Service/{name}"], "service targetPort mismatch",
                               f"Service {name} port {sp.get('port')} has targetPort {target}, but the {name} "
                               f"container listens on {good}: connections are refused. {IMPACT}",
                               fix.json_patch("service", name, ctx.ns, [{"op": "replace",
                                              "path": f"/spec/ports/{i}/targetPort", "value": good}]),
                               affected=callers(ctx, [name]))
    return None


def network_policy(ctx: Ctx) -> Finding | None:
    names = re.findall(r"networkpolicy[\w.]*/([\w.-]+)\s+(\S+)", ctx.facts.policies)
    if not names:
        return None
    roots, affected, cmds = [], [], []
    for name, selector in names:
        roots.append(f"{ctx.ns}/NetworkPolicy/{name}")
        target = selector.split("=", 1)[-1]
        if target in ctx.facts.deployments:
            affected += [ctx.dep(target), *callers(ctx, [target])]
        cmds += fix.delete("networkpolicy", name, ctx.ns)
    return Finding(roots, "network policy blocks ingress (deny all)",
                   f"NetworkPolicy {', '.join(n for n, _ in names)} selects {', '.join(s for _, s in names)} and "
                   f"allows no ingress, so callers time out. {IMPACT}", cmds, affected=affected,
                   strong=bool(ctx.facts.failing_services()))


# ------------------------------------------------------------------ DNS
def dns(ctx: Ctx) -> Finding | None:
    hits = [m for _, m in ctx.facts.error_logs if "no such host" in m or "NXDOMAIN" in m or "lookup " in m]
    if not hits:
        return None
    host = re.search(r"lookup ([\w.-]+)", hits[-1])
    cm = ctx.json("get configmap coredns -n kube-system")
    corefile = (cm.get("data") or {}).get("Corefile", "")
    cleaned = _strip_blocks(corefile, lambda header: header.startswith(("template", "rewrite", "hosts")))
    if cleaned != corefile:
        manifest = fix.configmap_manifest("kube-system", "coredns", {**cm["data"], "Corefile": cleaned})
        bad = [ln.strip() for ln in corefile.splitlines() if ln.strip() and ln not in cleaned.splitlines()]
        return Finding(["kube-system/ConfigMap/coredns"], "dns NXDOMAIN from coredns",
                       f"The CoreDNS Corefile has an override ({' '.join(bad)[:200]}) that answers NXDOMAIN for "
                       f"{host.group(1) if host else 'an app service'}; lookups fail with 'no such host'. {IMPACT}",
                       fix.apply_yaml(manifest), affected=_name_refs(ctx, host.group(1) if host else ""))
    for d in ctx.facts.deployments:
        policy = ctx.deployment(d).get("spec", {}).get("template", {}).get("spec", {}).get("dnsPolicy")
        if policy and policy not in ("ClusterFirst", "ClusterFirstWithHostNet"):
            return Finding([ctx.dep(d)], "dns: dnsPolicy misconfigured",
                           f"{d} has dnsPolicy {policy}, so cluster names do not resolve (no such host). {IMPACT}",
                           fix.strategic_patch("deployment", d, ctx.ns,
                                               {"spec": {"template": {"spec": {"dnsPolicy": "ClusterFirst"}}}}))
    return None


def _strip_blocks(text: str, drop: Callable[[str], bool]) -> str:
    """Remove directives (and their `{...}` blocks) whose header `drop` selects."""
    out, depth, skipping = [], 0, False
    for line in text.splitlines():
        stripped = line.strip()
        if not skipping and depth == 1 and drop(stripped):
            skipping = stripped.endswith("{")
            if skipping:
                depth += 1
            continue
        if skipping:
            depth += stripped.count("{") - stripped.count("}")
            skipping = depth > 1
            continue
        depth += stripped.count("{") - stripped.count("}")
        out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _name_refs(ctx: Ctx, host: str) -> list[str]:
    name = host.split(".")[0]
    callers = sorted({w for w, m in ctx.facts.error_logs if name and f"lookup {name}" in m})
    out = [ctx.dep(c) for c in callers]
    return out + ([f"{ctx.ns}/Service/{name}"] if name else [])


# ------------------------------------------------------------------ databases and disks
def db_auth(ctx: Ctx) -> Finding | None:
    """Database logins that fail. Three mechanisms read alike in the client's log and are told
    apart by the database's side: a role revoked (`not authorized on <db>`: grant it back), a
    user that no longer exists (the database logs `UserNotFound`: recreate it with the
    credentials the client holds), or a client still using an old password after a rotation
    (restart the client so it reads the current Secret)."""
    revoked = [(w, m) for w, m in ctx.facts.error_logs if "not authorized on" in m]
    failed = [(w, m) for w, m in ctx.facts.error_logs if "Authentication failed" in m or "AuthenticationFailed" in m]
    if revoked:
        db = re.search(r"not authorized on ([\w-]+)", revoked[0][1]).group(1)
        app = ctx.facts.deepest_failing() or revoked[0][0]
        login = databases.client_login(ctx, app)
        mongo = databases.database_of(ctx, app, login.secret)
        if not mongo:
            return None
        user = login.user or "admin"
        admin = databases.admin_login(ctx, mongo, exclude=user)
        grant = f"db.getSiblingDB('{login.auth_db}').grantRolesToUser('{user}', [{{role: 'readWrite', db: '{db}'}}])"
        return Finding([ctx.dep(mongo)], "database authorization: role revoked (not authorized)",
                       f"{app} gets '(Unauthorized) not authorized on {db}' from {mongo}: the database user {user} "
                       f"lost its readWrite role on {db}. {IMPACT}", [(databases.mongo_eval(ctx, mongo, admin, grant), None)],
                       affected=[ctx.dep(app), *callers(ctx, [app])])
    if failed:
        app = sorted({w for w, m in failed if not w.startswith("mongodb")} or {failed[0][0]})
        client = ctx.facts.deepest_failing() if ctx.facts.deepest_failing() in app else app[0]
        missing = _user_removed(ctx, client)
        if missing:
            return missing
        return Finding([ctx.dep(client)], "database authentication failed: stale credentials (password)",
                       f"{client} fails to authenticate to its database (AuthenticationFailed): its pods still "
                       f"use the old password after a credentials rotation. {IMPACT}",
                       [fix.restart(ctx.ns, client)], affected=callers(ctx, [client]))
    return None


def _user_removed(ctx: Ctx, client: str) -> Finding | None:
    login = databases.client_login(ctx, client)
    database = databases.database_of(ctx, client, login.secret)
    line = databases.user_missing(ctx, database) if database else None
    if not database or not line or not login.user:
        return None
    cmds: list[fix.Command] = []
    how = "recreate the user with the credentials the client holds"
    if databases.is_mongo(ctx, database) and login.password:
        roles = ", ".join(f"{{role: '{r}', db: '{d}'}}" for r, d in databases.roles_for(ctx, database, login))
        create = (f"db.getSiblingDB('{login.auth_db}').createUser({{user: '{login.user}', pwd: '{login.password}', "
                  f"roles: [{roles}]}})")
        admin = databases.admin_login(ctx, database, exclude=login.user)
        cmds = [(databases.mongo_eval(ctx, database, admin, create), None)]
        how = (f"recreate user {login.user} (password from Secret {login.secret or 'the client env'}) with roles "
               f"[{roles}] via kubectl exec into {database}")
    return Finding([ctx.dep(database)], "database authentication failed: the user was removed from the database",
                   f"{client} cannot log in to {database} (AuthenticationFailed), and {database} itself logs that "
                   f"the user does not exist: {line}. The user {login.user} that {client} logs in "
                   f"as was removed (UserNotFound); the client's credentials are unchanged. Fix: {how}. {IMPACT}",
                   cmds, affected=[ctx.dep(client), *callers(ctx, [client])])


def disk(ctx: Ctx) -> Finding | None:
    bad = [ln for ln in ctx.facts.kernel_logs if "I/O error" in ln or "blk_update_request" in ln]
    if not bad:
        return None
    node = re.search(r'node="([\w.-]+)"', bad[-1])
    node_name = node.group(1) if node else ""
    on_node = {ctx.facts.owner(p.name) for p in ctx.facts.pods if p.node == node_name}
    for d in sorted(n for n in on_node if n):
        spec = ctx.deployment(d).get("spec", {}).get("template", {}).get("spec", {})
        claims = [(v["name"], v["persistentVolumeClaim"]["claimName"]) for v in spec.get("volumes") or []
                  if v.get("persistentVolumeClaim")]
        if not claims:
            continue
        volume, claim = claims[0]
        pvc = ctx.json(f"get pvc {claim} -n {ctx.ns}")
        new = f"{claim}-replacement"
        manifest = json.dumps({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                               "metadata": {"name": new, "namespace": ctx.ns},
                               "spec": {k: v for k, v in (pvc.get("spec") or {}).items()
                                        if k in ("accessModes", "resources", "storageClassName")}})
        cmds = fix.apply_yaml(manifest) + fix.strategic_patch("deployment", d, ctx.ns, {"spec": {"template": {"spec": {
            "volumes": [{"name": volume, "persistentVolumeClaim": {"claimName": new}}]}}}})
        users = [u for u in ctx.facts.deployments if u != d and u in d]
        cmds += [fix.restart(ctx.ns, u) for u in users]
        return Finding([f"{ctx.ns}/PersistentVolumeClaim/{claim}", ctx.dep(d)],
                       "disk I/O errors (bad sectors on the block device)",
                       f"Kernel log on {node_name}: {bad[-1][-160:]}. {d} stores its data on PVC {claim} on that "
                       f"disk and returns Input/output error. {IMPACT}", cmds,
                       affected=[ctx.dep(u) for u in users] + callers(ctx, users))
    return None


# ------------------------------------------------------------------ configuration
def config_crash(ctx: Ctx) -> Finding | None:
    """A crash-looping workload whose mounted ConfigMap changed (missing key)."""
    for d in ctx.facts.crashing():
        spec = ctx.deployment(d).get("spec", {}).get("template", {}).get("spec", {})
        maps = [v["configMap"]["name"] for v in spec.get("volumes") or [] if v.get("configMap")]
        for name in maps:
            cm = ctx.json(f"get configmap {name} -n {ctx.ns}")
            applied = (cm.get("metadata") or {}).get("annotations", {}).get(
                "kubectl.kubernetes.io/last-applied-configuration")
            old = json.loads(applied).get("data") if applied else None
            if old and old != cm.get("data"):
                manifest = fix.configmap_manifest(ctx.ns, name, old)
                return Finding([f"{ctx.ns}/ConfigMap/{name}"], "missing config key in configmap",
                               f"ConfigMap {name} mounted by {d} lost configuration keys; {d} crash-loops on "
                               f"start. {IMPACT}", [*fix.apply_yaml(manifest), fix.restart(ctx.ns, d)],
                               affected=[ctx.dep(d), *callers(ctx, [d])])
            repaired = _fill_missing_key(ctx, d, cm.get("data") or {})
            if repaired:
                key, filename, text = repaired
                body = json.dumps({"data": {filename: text}})
                return Finding([f"{ctx.ns}/ConfigMap/{name}"], "missing config key in configmap",
                               f"ConfigMap {name} ({filename}) mounted by {d} lacks the key {key}, so {d} starts "
                               f"with an empty value and crash-loops (CrashLoopBackOff). {IMPACT}",
                               [(f"patch configmap {name} -n {ctx.ns} --type merge -p '{body}'", None),
                                fix.restart(ctx.ns, d)],
                               affected=[ctx.dep(d), *callers(ctx, [d])])
            if maps and not _oom_evidence(ctx, [d]):
                logs = ctx.get(f"logs deployment/{d} -n {ctx.ns} --tail=20")
                if re.search(r"(?i)config|key|json", logs):
                    return Finding([f"{ctx.ns}/ConfigMap/{name}"], "missing config key in configmap",
                                   f"{d} crash-loops reading ConfigMap {name}: {logs.strip()[-200:]}. {IMPACT}",
                                   [c for c in fix.rollout_undo(ctx.ns, d)],
                                   affected=[ctx.dep(d), *callers(ctx, [d])])
    return None


def _fill_missing_key(ctx: Ctx, workload: str, data: dict[str, str]) -> tuple[str, str, str] | None:
    """Infer a key the workload's JSON config lacks from its siblings' keys.

    Configs shared by several services name their settings `<Service><Setting>` (e.g.
    `ProfileMongoAddress: mongodb-profile:27017`); when the crashing service has no `<Workload>
    <Setting>` but a sibling has one whose value, with the sibling's name swapped for the workload's,
    names an existing object, that key is very likely the one that was dropped.
    """
    own = workload[:1].upper() + workload[1:]
    for filename, text in sorted(data.items()):
        try:
            config = json.loads(text)
        except ValueError:
            continue
        if not isinstance(config, dict):
            continue
        for key, value in sorted(config.items()):
            match = re.match(r"^([A-Z][a-z]+)(\w+)$", key)
            if not match or match.group(1).lower() == workload or not isinstance(value, str):
                continue
            sibling, setting = match.group(1).lower(), match.group(2)
            wanted = own + setting
            if wanted in config or sibling not in value:
                continue
            guess = value.replace(sibling, workload)
            host = guess.split(":", 1)[0]
            if host in ctx.facts.deployments and host != workload:
                fixed = {**config, wanted: guess}
                return wanted, filename, json.dumps(fixed, indent=2)
    return None


def env_shadowed(ctx: Ctx) -> Finding | None:
    """A container env list that sets one variable twice: the later value wins silently."""
    for d in ctx.facts.failing_services():
        for ci, c in enumerate(containers(ctx.deployment(d))):
            seen: dict[str, int] = {}
            for i, e in enumerate(c.get("env") or []):
                if e.get("name") in seen:
                    return Finding([ctx.dep(d)], "environment variable shadowed by a duplicate env entry",
                                   f"{d} container {c['name']} sets env {e['name']} twice; the later value "
                                   f"{e.get('value')!r} overrides the first. {IMPACT}",
                                   fix.json_patch("deployment", d, ctx.ns, [{"op": "remove",
                                                  "path": f"/spec/template/spec/containers/{ci}/env/{i}"}]))
                seen[e.get("name")] = i
    return None


def scaled_to_zero(ctx: Ctx) -> Finding | None:
    """A called workload whose Deployment asks for zero replicas."""
    text = ctx.get(f"get deployments -n {ctx.ns} -o jsonpath="
                   """'{range .items[*]}{.metadata.name}{"\\t"}{.spec.replicas}{"\\n"}{end}'""")
    called = {c for _, c in ctx.facts.edges}
    zero = sorted(n for line in text.splitlines() for n, _, r in [line.partition("\t")]
                  if r.strip() == "0" and (n in called or n in ctx.facts.failing_services()
                                           or any(f"{n}:" in m or f" {n} " in m for _, m in ctx.facts.error_logs)))
    if not zero:
        return None
    cmds = [(f"scale deployment {d} -n {ctx.ns} --replicas=1", None) for d in zero]
    return Finding([ctx.dep(d) for d in zero], "scaled to zero (replicas 0)",
                   f"{', '.join(zero)} is scaled to zero replicas (spec.replicas: 0), so its Service has no "
                   f"endpoints and callers fail. {IMPACT}", cmds,
                   affected=[f"{ctx.ns}/Service/{d}" for d in zero] + callers(ctx, zero))


def config_reference(ctx: Ctx) -> Finding | None:
    """Pods that cannot start because a referenced ConfigMap key is missing."""
    events = [e for e in ctx.facts.events if "couldn't find key" in e.message
              or e.reason == "CreateContainerConfigError"]
    deps = workloads_of_events(ctx, events)
    if not deps:
        return None
    match = re.search(r"couldn't find key (\S+) in ConfigMap ([\w.-]+)/([\w.-]+)", events[-1].message)
    if not match:
        return None
    key, name = match.group(1), match.group(3)
    cmds = [c for d in deps for c in _unblock_key_ref(ctx, d, name, key)]
    return Finding([f"{ctx.ns}/ConfigMap/{name}"], "missing config key in configmap (CreateContainerConfigError)",
                   f"{', '.join(deps)} reference key {key} of ConfigMap {name}, which does not exist: "
                   f"{events[-1].message[:200]}. {IMPACT}", cmds,
                   affected=[ctx.dep(d) for d in deps] + [ctx.obj("Service", d) for d in deps])


def _unblock_key_ref(ctx: Ctx, deployment: str, configmap: str, key: str) -> list[fix.Command]:
    """Undo a rollout that added the reference; with no earlier revision (the key was removed from
    the ConfigMap, and its old value is unknown) mark the reference optional, so containers start
    without the variable and the application falls back to its default."""
    dep = ctx.deployment(deployment)
    revision = ((dep.get("metadata") or {}).get("annotations") or {}).get("deployment.kubernetes.io/revision", "1")
    if revision != "1":
        return fix.rollout_undo(ctx.ns, deployment)
    ops = []
    for ci, c in enumerate(containers(dep)):
        for ei, e in enumerate(c.get("env") or []):
            ref = (e.get("valueFrom") or {}).get("configMapKeyRef") or {}
            if ref.get("name") == configmap and ref.get("key") == key:
                ops.append({"op": "add", "value": True,
                            "path": f"/spec/template/spec/containers/{ci}/env/{ei}/valueFrom/configMapKeyRef/optional"})
    return fix.json_patch("deployment", deployment, ctx.ns, ops) if ops else fix.rollout_undo(ctx.ns, deployment)


def dns_policy(ctx: Ctx) -> Finding | None:
    """A Deployment whose dnsPolicy bypasses cluster DNS."""
    text = ctx.get(f"get deployments -n {ctx.ns} -o jsonpath="
                   """'{range .items[*]}{.metadata.name}{"\\t"}{.spec.template.spec.dnsPolicy}{"\\n"}{end}'""")
    for line in text.splitlines():
        name, _, policy = line.partition("\t")
        if policy.strip() in ("Default", "None"):
            return Finding([ctx.dep(name)], "dns: dnsPolicy bypasses cluster DNS",
                           f"{name} has dnsPolicy {policy.strip()}, so cluster service names do not resolve "
                           f"(no such host). {IMPACT}",
                           fix.strategic_patch("deployment", name, ctx.ns,
                                               {"spec": {"template": {"spec": {"dnsPolicy": "ClusterFirst"}}}}),
                           affected=callers(ctx, [name]))
    return None


# Ordered from the most specific evidence (events naming the object) to the weakest.
# A team's chaos experiment acting on the failing workload is the recent change that explains the
# rest (its pods fail, pull the pause image, crash or time out), so it is looked for first.
HYPOTHESES: list[Callable[[Ctx], Finding | None]] = [
    chaos_experiment, service_port, service_selector, service_extra_pods, image_pull, admission_webhook, resource_quota,
    volume_attach, unschedulable, node_selector, missing_volume_source, config_reference, flag_file,
    missing_service, probe, job_sidecar, rollout_strategy,
    recent_rollout, oom, dns_policy, crashing_image, config_crash, disk, dns, db_auth, feature_flag, retry_storm, cpu_throttling,
    network_policy, env_shadowed, scaled_to_zero, node_trouble,
    chaos_experiment_any,
]

__all__ = ["HYPOTHESES", "IMPACT", "Ctx", "Finding"]
