"""Generate the templated part of the judge's labelled set (`tests/data/judge/generated.json`).

Each registered problem that has phrasings below gets a handful of diagnoses written the way agents
phrase them, one per category (correct verbose, correct terse, right entity / wrong mechanism,
symptom named as the cause, a healthy component blamed too, a symptomatic component blamed too,
affected components left out, right mechanism on the wrong entity, vague impact, impact denied,
only some of several root causes, plainly wrong). The expected answer to each checklist question
follows from what the variant says, by the question's meaning (see `LABELS` below and
`docs/judge.md`); the judge under test is never run here.

Run: `python scripts/judge_set.py` (rewrites the file; same registry, same output).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from sregym.problems import all_problem_ids, get_problem
from sregym.types import GroundTruth, RootCause

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "judge" / "generated.json"
QUESTION_IDS = ("L1", "L2", "L3", "C1", "C2", "C3", "S1", "S2", "S3")

# mechanism -> (how a verbose agent names it, how a terse agent names it, what dependants see).
# Written by hand as agents phrase them; several avoid the judge's cue words on purpose.
PHRASES: dict[str, tuple[str, str, str]] = {
    "bad_image": ("the pods cannot start because the image reference points to a tag that does not exist in "
                  "the registry (ErrImagePull, then ImagePullBackOff)", "nonexistent image tag",
                  "new pods never start, so the service has no ready replicas and its callers get errors"),
    "crashing_image": ("a bad build was rolled out: the new container panics right after start and the pod is "
                       "in CrashLoopBackOff", "buggy image crashes on startup",
                       "the workload has no ready pods and requests to it fail"),
    "service_selector": ("the Service's label selector does not match the labels of any pod, so it has no "
                         "endpoints", "selector matches no pods",
                         "callers of the Service get connection errors because nothing backs it"),
    "service_port": ("the Service forwards to a targetPort the container does not listen on, so every "
                     "connection is refused", "wrong targetPort on the Service",
                     "callers get connection refused and their requests fail"),
    "node_selector": ("the pod template has a nodeSelector for a node label no node carries, so the new pods "
                      "stay Pending with FailedScheduling", "nodeSelector matches no node",
                      "replacement pods cannot be scheduled and the workload loses capacity"),
    "missing_config": ("the container references a ConfigMap key that is missing, so the kubelet reports "
                       "CreateContainerConfigError", "missing configmap key",
                       "the new pods never start and requests to the service fail"),
    "resource_quota": ("a ResourceQuota in the namespace rejects the replacement pods (exceeded quota), so "
                       "the ReplicaSet cannot recreate them", "quota blocks pod creation",
                       "deleted pods are not replaced and the service becomes unavailable"),
    "admission_webhook": ("a validating admission webhook whose backend is down has failurePolicy Fail, so "
                          "every pod create is rejected", "failing admission webhook",
                          "pods cannot be recreated and the service goes down"),
    "network_policy": ("a NetworkPolicy denies all ingress to the pods, so peers' connections time out",
                       "deny-all network policy", "callers time out and user requests fail"),
    "dns": ("name resolution is broken: lookups of the service names return NXDOMAIN", "DNS resolution failure",
            "services cannot find their dependencies and requests fail"),
    "oom": ("the container's memory limit is below what the process needs, so it is OOMKilled again and again",
            "OOMKilled, memory limit too low", "the pods restart constantly and requests to them fail"),
    "cpu_throttling": ("the CPU limit is far below the service's demand: CFS throttles it, requests queue and "
                       "latency climbs", "CPU limit too low, throttled",
                       "requests become slow and time out upstream"),
    "db_auth": ("the service can no longer authenticate or is not authorized on its database: the database "
                "user's credentials or role were changed", "database authorization failure",
                "every query of the service fails, so the user requests that need it fail"),
    "probe": ("the probe is misconfigured, so the kubelet keeps marking the container unhealthy or not ready",
              "bad probe config", "pods are restarted or pulled from the endpoints and requests fail"),
    "scaled_to_zero": ("the Deployment was scaled to zero replicas, so nothing runs", "replicas set to 0",
                       "the service has no pods and every request to it fails"),
    "retry_storm": ("a retry storm: clients retry aggressively with short timeouts, the retries keep the "
                    "callee overloaded and the system stays in a metastable failure",
                    "retry amplification, metastable", "latency explodes and requests time out"),
    "disk": ("the disk under the database returns I/O errors (bad sectors), so its reads and writes fail",
             "failing disk, EIO", "queries that touch the disk fail or are very slow"),
    "rollout_strategy": ("the rolling update is misconfigured, so the rollout cannot make progress",
                         "broken rollout strategy", "the rollout stalls and the workload loses capacity"),
    "volume_attach": ("the new pod cannot attach its ReadWriteOnce volume because the old pod still holds it "
                      "(Multi-Attach error)", "volume multi-attach conflict",
                      "the replacement pod stays ContainerCreating and the service is unavailable"),
    "sidecar_lifecycle": ("the job's sidecar container never exits, so the job pod never completes",
                          "sidecar keeps the job running", "job runs never finish and later runs pile up"),
    "feature_flag": ("a feature flag was switched on and turns on a failure mode hidden behind it",
                     "bad feature flag", "requests through that code path fail"),
    "env_shadowing": ("an environment variable is defined twice in the container spec and the second "
                      "definition shadows the correct value", "duplicate env var shadows the value",
                      "the service uses the wrong setting and its requests fail"),
    "node_failure": ("the node's kubelet stopped, so the node went NotReady and its pods were lost",
                     "node down (kubelet stopped)", "pods on that node stop serving and requests fail"),
    "memory_pressure": ("the node is under memory pressure and the kubelet evicts pods from it",
                        "node memory pressure evictions", "evicted pods restart elsewhere and requests fail"),
    "clock_skew": ("the node's system clock was set back, so time-based checks fail on it", "clock skew on node",
                   "components on that node fail their time checks and requests fail"),
    "missing_service": ("the Service in front of the database was deleted, so its name no longer resolves",
                        "service deleted", "clients cannot reach the database and requests fail"),
    "service_deleted": ("the Service was deleted, so its name no longer resolves for its clients",
                        "missing service object", "clients cannot reach it and requests fail"),
    "unschedulable": ("the pod cannot be scheduled: it asks for more than any node can offer",
                      "unschedulable pod (request too big)", "the new pod stays Pending and capacity is lost"),
    "volume_claim": ("the pod references a PersistentVolumeClaim that does not exist, so it cannot start",
                     "wrong PVC name", "the pod never starts and requests to the service fail"),
    "wrong_command": ("the container's command runs the wrong binary, so the pod does not serve what its "
                      "Service expects", "wrong container command",
                      "the service does not answer its callers and requests fail"),
    "pod_security": ("the namespace enforces the restricted Pod Security level and the pods violate it, so "
                     "replacements are rejected", "Pod Security admission rejects pods",
                     "deleted pods are not replaced and the service becomes unavailable"),
    "autoscaling": ("the HorizontalPodAutoscaler cannot compute CPU utilization because the pods have no CPU "
                    "request, so it never scales", "HPA broken: no CPU request",
                    "the service does not scale out under load and latency rises"),
    "conntrack": ("the node's conntrack table is full, so the kernel drops new connections",
                  "conntrack table full", "new connections are dropped and requests fail"),
    "ephemeral_ports": ("the ephemeral (local) port range was narrowed to a handful of ports, so outgoing "
                        "connections cannot get a source port", "ephemeral port exhaustion", "outgoing calls fail and requests error"),
    "file_descriptors": ("the node's file-max was lowered, so processes hit too many open files",
                         "file descriptor limit exhausted", "services cannot open connections and fail"),
    "thread_exhaustion": ("the node's thread/pid limit was lowered, so processes cannot create new threads",
                          "thread limit exhausted", "services fail to handle requests"),
    "ephemeral_storage": ("a container fills its emptyDir beyond the size limit, so the kubelet evicts the pod",
                          "emptyDir over its size limit", "the pod is evicted repeatedly and requests fail"),
    "pod_anti_affinity": ("a required pod anti-affinity rule cannot be satisfied, so new pods stay Pending",
                          "anti-affinity unsatisfiable", "new pods never schedule and capacity is lost"),
    "init_container": ("an init container never succeeds, so the pod never starts its main container",
                       "init container stuck", "the pod never becomes ready and requests fail"),
    "image_architecture": ("the image was built for another CPU architecture: exec format error at start",
                           "wrong-architecture image", "the pods crash at start and requests fail"),
    "cert_expiry": ("the TLS certificate has expired, so handshakes fail", "expired certificate",
                    "clients fail their TLS handshake and requests fail"),
}

# Problems whose mechanism bucket is broader than the generic phrasing above: their own words.
PROBLEM_PHRASES: dict[str, tuple[str, str, str]] = {
    "astronomy-shop/checkout-catalog-address-v1": (
        "an address setting in the caller's environment points at a port the dependency does not serve, so "
        "its connections are refused", "dependency address on the wrong port",
        "the caller's requests to that dependency fail and checkouts error"),
    "astronomy-shop/shipping-quote-address-v1": (
        "an environment variable holding a dependency's address was overwritten with an invalid value, so "
        "calls to that dependency fail", "bad address in an env var", "shipping quotes fail and checkout errors"),
    "astronomy-shop/frontend-cart-address-missing-v1": (
        "a required setting (a dependency's address) was removed from the container's environment, so the "
        "service cannot reach that dependency", "required env setting missing",
        "cart operations fail and the storefront shows errors"),
    "astronomy-shop/valkey-cart-maxmemory-v1": (
        "the cache's maxmemory was set below the data it already holds, with no eviction, so every write is "
        "refused with an OOM error", "cache memory cap too small", "cart writes fail and the cart page errors"),
    "astronomy-shop/payment-pinned-node-cordoned-v1": (
        "the pod is pinned by a nodeSelector to one node that is cordoned, so its replacement stays Pending",
        "pinned to a cordoned node", "payment has no running pod, so checkouts fail"),
    "astronomy-shop/frontend-ingress-policy-v1": (
        "a NetworkPolicy on the pods admits ingress only on a port they do not serve, so peers' connections "
        "are dropped", "over-restrictive ingress NetworkPolicy", "the proxy cannot reach the pods and pages fail"),
    "hotel-reservation/slow-disk-geo-v1": (
        "the disk under the database is extremely slow: every I/O takes hundreds of milliseconds",
        "slow disk under the database", "queries crawl, so requests become slow and time out"),
    "hotel-reservation/init-container-dependency-hang-v1": (
        "an init container waits forever for a Service that does not exist, so the new pod never leaves Init "
        "and the rollout cannot finish", "init container hangs on a missing dependency",
        "the new pod never becomes ready and the rollout is stuck"),
    "hotel-reservation/rolling-update-misconfigured-v1": (
        "the rolling-update strategy lets every old pod go before a new one is ready, and the new pod never "
        "finishes initialising", "bad rolling update settings",
        "the service has no ready pods while the rollout is stuck, so requests fail"),
    "hotel-reservation/service-wrong-pods-v1": (
        "the Service's selector is too broad and also matches another service's pods, so part of its traffic "
        "lands on the wrong pods", "selector matches the wrong pods", "a share of user requests fail"),
    "hotel-reservation/duplicate-pvc-mounts-v1": (
        "several replicas on different nodes mount one ReadWriteOnce volume, so all but one cannot attach it",
        "RWO volume shared by replicas", "only one replica runs; the others never start"),
    "hotel-reservation/host-port-conflict-v1": (
        "the container asks for a hostPort already taken on every node, so the pod cannot be scheduled",
        "hostPort conflict", "the new pod stays Pending and the service loses its pod"),
    "hotel-reservation/mutating-webhook-memory-limits-v1": (
        "a mutating admission webhook rewrites the containers' memory limits to a tiny value, so the pods are "
        "OOMKilled", "mutating webhook sets bad memory limits", "pods restart constantly and requests fail"),
    "hotel-reservation/referenced-configmap-deleted-v1": (
        "a ConfigMap the database pod mounts as a volume was deleted, so the pod cannot start",
        "mounted ConfigMap deleted", "the database is down and the requests that need it fail"),
}
# Several independent faults at once: one generic phrasing cannot describe them.
SKIP = frozenset({"astronomy-shop/checkout-quota-and-homepage-flood-v1",
                  "hotel-reservation/concurrent-target-port-and-webhook-outage-v1",
                  "astronomy-shop/recommendation-init-and-checkout-arch-v1"})
# Problems whose story involves a wrong-story family even though their mechanism is another one.
FAMILY_OF_PROBLEM = {"hotel-reservation/init-container-dependency-hang-v1": "dns",
                     "astronomy-shop/email-init-hang-v1": "dns",
                     "hotel-reservation/mutating-webhook-memory-limits-v1": "memory",
                     "hotel-reservation/limitrange-oomkill-v1": "memory",
                     "astronomy-shop/frontend-ingress-policy-v1": "network"}

# Wrong stories, by the family of fault they describe: a diagnosis gets the first whose family
# differs from the truth's (families group mechanisms a careful grader would call the same kind).
WRONG: tuple[tuple[str, str, str], ...] = (
    ("dns", "DNS lookups for the peer services return NXDOMAIN", "the pods cannot resolve their peers"),
    ("memory", "the container is OOMKilled because it exceeds its memory limit", "it runs out of memory"),
    ("network", "a NetworkPolicy blocks all ingress to the pods", "traffic to it is blocked"),
    ("disk", "the volume is returning I/O errors from a failing disk", "its disk is failing"),
    ("image", "the image tag cannot be pulled (ImagePullBackOff)", "its image cannot be pulled"),
)
FAMILY: dict[str, str] = {
    "dns": "dns", "missing_service": "dns", "service_deleted": "dns",
    "oom": "memory", "memory_pressure": "memory", "unschedulable": "memory",
    "network_policy": "network", "conntrack": "network", "ephemeral_ports": "network",
    "disk": "disk", "ephemeral_storage": "disk", "volume_attach": "disk", "volume_claim": "disk",
    "bad_image": "image", "crashing_image": "image", "image_architecture": "image", "wrong_command": "image",
}

# Components that exist in each app (Deployments), to pick a healthy one to blame.
COMPONENTS: dict[str, tuple[str, ...]] = {
    "hotel-reservation": ("user", "profile", "recommendation", "reservation", "rate", "geo", "search",
                          "memcached-profile", "mongodb-user", "consul"),
    "astronomy-shop": ("email", "currency", "ad", "quote", "payment", "cart", "accounting", "recommendation",
                       "shipping", "product-catalog"),
    "demo-shop": ("frontend", "catalog", "cart", "checkout", "payments", "orders"),
}

VAGUE_IMPACT = "Not sure what users see; something may be off."
NO_IMPACT = "There is no user-facing impact: every request still succeeds."


def _labels(code: str) -> dict[str, bool]:
    """'YYN YNY YYY' -> the nine answers, in question order."""
    flags = code.replace(" ", "")
    assert len(flags) == 9 and set(flags) <= {"Y", "N"}, code
    return {q: f == "Y" for q, f in zip(QUESTION_IDS, flags, strict=True)}


def _pick(seq: list[Any] | tuple[Any, ...], key: str) -> Any:
    digest = int(hashlib.sha256(key.encode()).hexdigest(), 16)
    return seq[digest % len(seq)]


def _alias_text(cause: RootCause) -> str:
    """A Deployment named by one of its pods (as agents often do); other kinds as they are."""
    e = cause.entity
    if e.kind == "Deployment":
        return f"{e.namespace}/Pod/{e.name}-6d8f7c9b5d-x2k9q"
    return str(e)


def _healthy(truth: GroundTruth, app: str, namespace: str, key: str) -> str | None:
    from sregym.types import EntityRef

    free = [n for n in COMPONENTS.get(app, ())
            if not any(c.matches(EntityRef(kind="Deployment", namespace=namespace, name=n)) for c in truth.involved)]
    return f"{namespace}/Deployment/{_pick(free, key)}" if free else None


def _wrong_story(pid: str, mechanism: str) -> tuple[str, str]:
    family = FAMILY_OF_PROBLEM.get(pid) or FAMILY.get(mechanism, mechanism)
    for fam, text, short in WRONG:
        if fam != family:
            return text, short
    raise AssertionError("unreachable")


def _sub(roots: list[str], mechanism: str, affected: list[str], explanation: str) -> dict[str, Any]:
    return {"root_causes": roots, "mechanism": mechanism, "affected": affected, "explanation": explanation}


def variants(pid: str) -> list[dict[str, Any]]:
    """Every templated diagnosis for problem `pid`, with its labels and category."""
    problem = get_problem(pid)
    truth = problem.ground_truth
    phrases = PROBLEM_PHRASES.get(pid) or PHRASES.get(truth.mechanism)
    if phrases is None or pid in SKIP:
        return []
    verbose, terse, impact = phrases
    roots = [str(c.entity) for c in truth.root_causes]
    affected = [str(c.entity) for c in truth.affected]
    root_names = ", ".join(c.entity.name for c in truth.root_causes)
    detail = truth.detail.rstrip(".")
    wrong_text, wrong_short = _wrong_story(pid, truth.mechanism)
    healthy = _healthy(truth, problem.app, problem.namespace, pid)
    out: list[dict[str, Any]] = []

    def add(category: str, sub: dict[str, Any], code: str) -> None:
        out.append({"id": f"{pid}#{category}", "problem": pid, "category": category, "source": "template",
                    "submission": sub, "expected": _labels(code)})

    add("correct_verbose", _sub(roots, verbose, affected,
                                f"Root cause: {root_names}. {detail}. Because of that, {impact}."), "YYY YYY YYY")
    add("correct_terse", _sub([_alias_text(c) for c in truth.root_causes], terse, affected,
                              f"{detail}; {impact}"), "YYY YYY YYY")
    add("right_entity_wrong_mechanism", _sub(roots, wrong_text, affected,
                                             f"{root_names}: {wrong_short}. As a result {impact}."), "YYY NNN YYY")
    add("vague_impact", _sub(roots, verbose, affected, f"{detail}. {VAGUE_IMPACT}"), "YYY YYY YYN")
    if healthy:
        add("extra_healthy_blamed", _sub([*roots, healthy], verbose, affected,
                                         f"{detail}; {healthy.rsplit('/', 1)[1]} looks broken as well. "
                                         f"Impact: {impact}."), "YYN YYY NYY")
        add("right_mechanism_wrong_entity", _sub([healthy], verbose, affected,
                                                 f"{healthy.rsplit('/', 1)[1]} is the culprit: {verbose}. "
                                                 f"Impact: {impact}."), "NYN YNY NNY")
        add("wrong", _sub([healthy], wrong_text, [], f"{healthy.rsplit('/', 1)[1]}: {wrong_short}. "
                                                     f"{VAGUE_IMPACT}"), "NYN NNN NNN")
    if affected:
        victim = affected[0]
        victim_name = truth.affected[0].entity.name
        rest = affected[1:]
        add("symptom_as_cause", _sub([victim], f"{victim_name} is returning errors to its callers", rest,
                                     f"{victim_name} fails its requests. Impact: {impact}."), "NNN NNY YNY")
        add("blames_symptomatic_too", _sub([*roots, victim], verbose, rest,
                                           f"{detail}; {victim_name} is also at fault. Impact: {impact}."),
            "YNN YYY YYY")
        add("missing_affected", _sub(roots, verbose, [], f"{detail}. Impact: {impact}."), "YYY YYY YNY")
        add("impact_denied", _sub(roots, verbose, affected, f"{detail}. {NO_IMPACT}"), "YYY YYY YYN")
    if len(roots) > 1:
        add("partial_root_causes", _sub(roots[:1], verbose, affected,
                                        f"{detail}. Impact: {impact}."), "NYY YYY YNY")
    return out


def main() -> None:
    items = [item for pid in sorted(all_problem_ids()) for item in variants(pid)]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(items, indent=1) + "\n")
    print(f"{len(items)} items over {len({i['problem'] for i in items})} problems -> {OUT}")


if __name__ == "__main__":
    main()
