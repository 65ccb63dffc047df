"""The vocabulary of fault mechanisms the diagnosis oracle recognises.

An agent writes a mechanism in its own words ("the image tag doesn't exist", "ImagePullBackOff
from a bad tag"); the deterministic judge maps the text to canonical mechanisms by their cue
phrases. A ground truth names one canonical mechanism; a submission "names the right mechanism"
when its text maps to it, and "names a wrong fault type" when it maps only to others.

`BUILTIN` is the vocabulary every problem is judged with. A third-party problem set may extend it
(`Vocabulary.extend`, through `sregym.problems.mechanisms`): the extension is a new `Vocabulary`
used for that set's problems only, so adding a mechanism never changes how other problems are
judged in the same process.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# canonical mechanism -> cue phrases (lower-case; matched as whole words/phrases)
MECHANISMS: dict[str, tuple[str, ...]] = {
    "bad_image": ("image", "imagepullbackoff", "errimagepull", "tag", "manifest unknown", "pull"),
    "crashing_image": ("crash", "crashloopbackoff", "exit code", "faulty image", "buggy build", "panic",
                       "segfault", "nil pointer", "crashes on startup", "crashes at startup", "crashes at start",
                       "crash on startup", "broken build", "bad build"),
    "service_selector": ("selector", "no endpoints", "endpoints", "label mismatch", "labels do not match",
                         "matches no pods", "matching nothing"),
    "service_port": ("targetport", "target port", "wrong port", "port mismatch", "not listening",
                     "does not listen", "doesn't listen"),
    "node_selector": ("nodeselector", "node selector", "no node", "non-existent node", "nonexistent node",
                      "unschedulable", "failedscheduling", "pending", "cordon"),
    "missing_config": ("configmap", "config key", "missing key", "createcontainerconfigerror",
                       "couldn't find key", "missing config", "missing setting", "setting missing",
                       "missing environment variable", "missing env var", "env var missing"),
    "resource_quota": ("resourcequota", "resource quota", "quota", "exceeded quota", "must specify"),
    "admission_webhook": ("webhook", "admission", "validatingwebhookconfiguration", "failurepolicy",
                          "failed calling webhook"),
    "network_policy": ("networkpolicy", "network policy", "deny-all", "deny all", "ingress blocked", "firewall"),
    "dns": ("dns", "nxdomain", "coredns", "no such host", "dnspolicy"),
    "oom": ("oom", "oomkilled", "out of memory", "memory limit", "out of ram", "maxmemory", "memory cap"),
    "cpu_throttling": ("throttl", "cfs", "cpu limit", "starved of cpu", "cpu starv", "cpu-starv"),
    "db_auth": ("authentication", "not authorized", "credentials", "password", "revoked", "role", "authoriz",
                "unauthorized", "permission", "access denied", "privilege", "auth error", "auth failure"),
    "probe": ("probe", "liveness", "readiness"),
    "scaled_to_zero": ("scaled to zero", "replicas 0", "replicas: 0", "zero replicas", "0 replicas", "replicas=0",
                       "replicas set to 0", "replicas to 0", "scaled down to zero", "scaled down to 0", "scaled to 0",
                       "scale to zero", "scale to 0"),
    "retry_storm": ("retry", "retries", "metastable", "queue", "timeout policy", "retry storm",
                    "retry amplification", "grpc_client_retries", "grpc_client_timeout", "client timeout"),
    "disk": ("disk", "sector", "i/o error", "ioerror", "eio", "input/output error", "blk_update_request",
             "block device", "bad block", "medium error"),
    "rollout_strategy": ("maxunavailable", "max unavailable", "maxsurge", "max surge", "rollout strategy",
                         "update strategy", "rollingupdate", "rolling update", "init container", "initcontainer",
                         "init:0"),
    "volume_attach": ("multi-attach", "multi attach", "readwriteonce", "rwo", "failedattachvolume",
                      "volume is already used", "failed to attach", "cannot attach", "can't attach",
                      "attach error"),
    "sidecar_lifecycle": ("sidecar", "restartpolicy: always", "restartpolicy always", "never complete",
                          "never finish", "never exits", "does not exit", "doesn't exit", "keeps running"),
    # Hotel Reservation's app-config problems.
    "feature_flag": ("feature flag", "flag", "search_backend_version", "latent bug", "code path", "unimplemented"),
    "env_shadowing": ("duplicate env", "duplicated env", "shadow", "defined twice", "duplicate definition",
                      "second definition", "env var", "environment variable"),
    # Node lifecycle problems.
    "node_failure": ("kubelet", "notready", "not ready", "node down", "node is down", "unreachable",
                     "nodestatusunknown", "stopped posting", "systemctl stop", "lost node", "node failure"),
    "memory_pressure": ("memorypressure", "memory pressure", "evicted", "eviction", "low on resource",
                        "memory-pressure", "insufficient memory", "memory hog"),
    "clock_skew": ("clock", "time drift", "clock drift", "clock skew", "ntp", "not yet valid", "date -s",
                   "system time", "wrong time"),
    # Hotel Reservation parity problems.
    "missing_service": ("service was deleted", "service deleted", "deleted service", "missing service",
                        "service is missing", "service does not exist"),
    "unschedulable": ("failedscheduling", "unschedulable", "cannot be scheduled", "can't be scheduled",
                      "request too large", "memory request", "larger than any node", "exceeds node",
                      "no node has enough", "free ports", "hostport", "host port"),
    "volume_claim": ("claimname", "claim name", "persistentvolumeclaim not found", "pvc not found",
                     "nonexistent claim", "non-existent claim", "missing pvc", "wrong pvc", "wrong claim",
                     "claim that does not exist", "pvc that does not exist", "pvc name"),
    "wrong_command": ("wrong binary", "container command", "entrypoint", "wrong command",
                      "wrong executable", "command: geo", "command geo"),
    "pod_security": ("podsecurity", "pod security", "pod-security", "restricted:latest", "enforce=restricted",
                     "restricted level", "restricted profile", "runasnonroot", "allowprivilegeescalation"),
    "autoscaling": ("hpa", "horizontalpodautoscaler", "autoscal", "missing request for cpu",
                    "failedgetresourcemetric", "no cpu request", "without a cpu request"),
    "port_conflict": ("address already in use", "eaddrinuse", "port conflict", "same port", "already bound",
                      "bind:", "binds the same port", "port clash"),
    "priority_preemption": ("preempt", "priorityclass", "priority class", "globaldefault", "global default",
                            "default priority", "higher priority", "lower priority", "priorityclassname"),
    # Metastable families sustained by a runtime or a client library instead of a retry policy.
    "gc_pressure": ("garbage collect", "garbage-collect", "gogc", "gomemlimit", "gc thrash", "gc pressure",
                    "heap limit", "soft memory limit", "gc cpu"),
    "connection_pool": ("connection pool", "pool exhaust", "maxpoolsize", "max pool size", "pool size",
                        "checking out a connection", "waitqueuetimeout", "connections in use", "pool wait"),
    "ip_exhaustion": ("ippool", "ip pool", "ipam", "no ips available", "ip exhaustion", "ip address exhaustion",
                      "out of ip", "pod cidr", "failedcreatepodsandbox", "ip addresses available"),
    "ingress_misroute": ("ingress rule", "ingress path", "ingress backend", "misroute", "mis-route",
                         "wrong backend", "routed to the wrong", "ingress points"),
    "certificate_expiry": ("certificate has expired", "expired certificate", "cert has expired",
                           "expired cert", "notafter", "not after", "tls secret"),
    "poison_record": ("poison", "malformed record", "malformed message", "unparseable", "unparsable",
                      "cannot deserialize", "can't deserialize", "failed to deserialize", "deserializ",
                      "invalidprotocolbufferexception", "invalid protobuf", "head-of-line", "head of line",
                      "skip the record", "skip the message", "skip the offset", "reset-offsets", "reset offsets"),
}


# Mechanisms that often accompany each other: naming one alongside the other is not a wrong type.
RELATED: dict[str, frozenset[str]] = {
    "bad_image": frozenset({"crashing_image"}),
    "crashing_image": frozenset({"bad_image"}),
    "service_selector": frozenset({"service_port"}),
    "service_port": frozenset({"service_selector"}),
    "resource_quota": frozenset({"admission_webhook", "oom"}),
    # A mutating webhook that rewrites memory limits shows as OOM kills.
    "admission_webhook": frozenset({"resource_quota", "oom"}),
    "node_selector": frozenset(),
    "missing_config": frozenset(),
    # A collapsed callee is overloaded and CPU-throttled; a hanging init container waits on DNS;
    # pods that cannot attach their volume are often described as pending.
    "retry_storm": frozenset({"cpu_throttling"}),
    "rollout_strategy": frozenset({"dns"}),
    "volume_attach": frozenset({"node_selector"}),
    # A node whose kubelet cannot reach the API server is NotReady; evicted pods wait Pending.
    "node_failure": frozenset({"clock_skew"}),
    "clock_skew": frozenset({"node_failure", "certificate_expiry"}),
    "memory_pressure": frozenset({"oom", "node_selector"}),
    # Parity: a pod that cannot be placed is described as pending or short of memory; a deleted
    # Service shows as DNS failures; a wrong binary listens on the wrong port; PSA is admission.
    "unschedulable": frozenset({"memory_pressure", "node_selector", "oom", "port_conflict", "ip_exhaustion"}),
    "missing_service": frozenset({"dns", "service_selector"}),
    "volume_claim": frozenset({"volume_attach", "unschedulable"}),
    "wrong_command": frozenset({"crashing_image", "service_port"}),
    "pod_security": frozenset({"admission_webhook", "resource_quota"}),
    "autoscaling": frozenset({"cpu_throttling"}),
    # A sidecar that cannot bind crash-loops and leaves its Service without endpoints.
    # A hostPort already held on every node is a port conflict that shows at scheduling.
    "port_conflict": frozenset({"sidecar_lifecycle", "service_port", "crashing_image", "unschedulable"}),
    # A preempted pod that cannot come back waits Pending with FailedScheduling.
    "priority_preemption": frozenset({"unschedulable", "memory_pressure"}),
    # A GC-bound or pool-starved service queues, times out, is retried and looks CPU-starved;
    # a heap at its limit reads as a memory problem.
    "gc_pressure": frozenset({"retry_storm", "cpu_throttling", "oom"}),
    "connection_pool": frozenset({"retry_storm"}),
    # A flag that switches on forced garbage collections (the demo's adManualGc) is GC pressure.
    "feature_flag": frozenset({"gc_pressure"}),
    # Pods that get no address wait like pods that get no node: a per-node resource ran out.
    "ip_exhaustion": frozenset({"unschedulable"}),
    # An Ingress path sent to the wrong Service looks like a Service without the right backends;
    # a certificate outside its validity window looks like a clock that is off.
    "ingress_misroute": frozenset({"service_selector", "missing_service", "service_port"}),
    "certificate_expiry": frozenset({"clock_skew"}),
    # A consumer stuck on a record it cannot read retries it forever and its queue backs up.
    "poison_record": frozenset({"retry_storm"}),
}


# Cue phrases that name what many kinds of failure look like (a pod state, an event reason, a
# generic noun) rather than one kind: "Pending" is how a bad nodeSelector, a full quota and a
# missing volume all show. A mechanism named only through these is a weak reading: it counts as the
# right mechanism when nothing names another one, and as a claim of a different kind only when the
# right mechanism is not named at all.
SHARED_SYMPTOMS: frozenset[str] = frozenset({
    "image", "pull", "pending", "not ready", "unschedulable", "failedscheduling", "cannot be scheduled",
    "can't be scheduled", "kubelet", "unreachable", "evicted", "eviction", "queue", "crash", "crashloopbackoff",
    "deleted", "does not exist", "init container", "initcontainer", "init:0", "never complete", "never finish",
    "env var", "environment variable", "endpoints",
})

# A cue right after a negation ("not DNS", "no OOM", "rather than a crash") is ruled out, not claimed.
_NEGATION = re.compile(r"(?:\b(?:not|no|nor|without|never)|n't|\bruled? out|\brather than|\binstead of)\s+"
                       r"(?:(?:a|an|the|any|obvious|real|actual|likely)\s+)?$")


def _cue(text: str, phrase: str) -> bool:
    """A phrase starting at a word boundary (so "throttl" finds "throttling"), not negated."""
    for match in re.finditer(rf"(?<![a-z0-9]){re.escape(phrase)}", text):
        if not _NEGATION.search(text[max(0, match.start() - 40):match.start()]):
            return True
    return False


@dataclass(frozen=True)
class Reading:
    """The mechanisms a text names: `strong` through a cue of their own, `weak` only through
    `SHARED_SYMPTOMS`."""

    strong: frozenset[str]
    weak: frozenset[str]

    @property
    def named(self) -> frozenset[str]:
        return self.strong | self.weak


@dataclass(frozen=True)
class Vocabulary:
    """Mechanisms (name -> cue phrases) and the related-mechanism links a diagnosis is judged with."""

    cues: Mapping[str, tuple[str, ...]]
    related: Mapping[str, frozenset[str]]

    def __contains__(self, name: object) -> bool:
        return name in self.cues

    def names(self) -> list[str]:
        return list(self.cues)

    def classify(self, text: str) -> set[str]:
        """Canonical mechanisms the text names (possibly several, possibly none)."""
        return set(self.read(text).named)

    def read(self, text: str) -> Reading:
        """The mechanisms the text names, strongly or only through shared symptoms."""
        lowered = text.lower()
        if not lowered.strip():
            return Reading(frozenset(), frozenset())
        exact = lowered.strip().replace("-", "_").replace(" ", "_")
        if exact in self.cues:
            return Reading(frozenset({exact}), frozenset())
        strong = {n for n, cues in self.cues.items()
                  if any(_cue(lowered, c) for c in cues if c not in SHARED_SYMPTOMS)}
        weak = {n for n, cues in self.cues.items()
                if n not in strong and any(_cue(lowered, c) for c in cues if c in SHARED_SYMPTOMS)}
        return Reading(frozenset(strong), frozenset(weak))

    def allowed(self, mechanism: str) -> set[str]:
        """What a submission may name alongside `mechanism` without claiming a wrong fault type."""
        return {mechanism, *self.related.get(mechanism, frozenset())}

    def extend(self, cues: Mapping[str, Iterable[str]],
               related: Mapping[str, Iterable[str]] | None = None) -> Vocabulary:
        """A new vocabulary with extra mechanisms and links; this one is left unchanged.

        New mechanisms may not reuse a name this vocabulary has (a built-in keeps its meaning);
        declaring the same mechanism with the same cues again is allowed (a file loaded twice).
        Links may join new mechanisms to each other or to existing ones (one direction each).
        """
        merged = dict(self.cues)
        for name, phrases in cues.items():
            words = tuple(str(p).lower() for p in phrases)
            if not words:
                raise ValueError(f"mechanism {name!r} needs at least one cue phrase")
            if name in merged and merged[name] != words:
                raise ValueError(f"mechanism {name!r} already exists with other cues; choose another name")
            merged[name] = words
        links = dict(self.related)
        for name, others in (related or {}).items():
            unknown = sorted({name, *others} - merged.keys())
            if unknown:
                raise ValueError(f"related mechanisms name unknown mechanisms: {', '.join(unknown)}")
            links[name] = frozenset({*links.get(name, frozenset()), *others})
        return Vocabulary(merged, links)


BUILTIN = Vocabulary(MECHANISMS, RELATED)


def classify(text: str) -> set[str]:
    """Canonical mechanisms the text names in the built-in vocabulary."""
    return BUILTIN.classify(text)
