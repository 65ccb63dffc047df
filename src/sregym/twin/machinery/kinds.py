"""The resource kinds the twin serves, and how names resolve to them.

One table answers every question about a kind: its group/version, plural, short names, whether it
is namespaced, its subresources, whether it carries `metadata.generation`, whether the agent
credential may see it and what it may do to it, how `kubectl get` prints it. The store, the agent's
RBAC rules (twin/machinery/authz.py), the API server's discovery documents and kubectl-style name
resolution all read this table, so they can never disagree. CRDs created at run time add rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sregym.errors import NotFound
from sregym.twin.machinery import cluster_printers as CP
from sregym.twin.machinery import printers as P

CHAOS_GROUP = "chaos-mesh.org"
# Chaos Mesh's experiment kinds, then its orchestration kinds (twin/chaos/schedule.py, workflow.py).
CHAOS_KINDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    *((kind, kind.lower(), ()) for kind in ("NetworkChaos", "PodChaos", "StressChaos", "IOChaos", "TimeChaos",
                                             "DNSChaos", "HTTPChaos", "JVMChaos", "KernelChaos")),
    ("Schedule", "schedules", ()), ("Workflow", "workflows", ("wf",)), ("WorkflowNode", "workflownodes", ("wfn",)),
)

# The agent's RBAC verbs, in the order its ClusterRole lists them.
READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete", "deletecollection")
ALL_VERBS = (*READ, *WRITE)
# On action subresources (exec, eviction, scale, ...).
ACT = ("get", "create", "update", "patch")


@dataclass(frozen=True)
class AgentGrant:
    """Verbs the agent credential holds on a kind (or one `subresource` of it), beyond the read
    access it has to everything visible.

    The agent reads its permissions through SelfSubjectRulesReview (`kubectl auth can-i --list`),
    whose rule list, order and grouping are part of what it sees; `(rule, at)` places the grant in
    that list: grants with the same `rule` number form one PolicyRule (same group and verbs), `at`
    orders its resources. tests/twin/api/test_rules_review_pinned.py pins the result.
    """

    rule: int
    at: int
    verbs: tuple[str, ...]
    subresource: str = ""


@dataclass(frozen=True)
class ResourceKind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    generation: bool = False
    hidden_from_agent: bool = False
    verbs: tuple[str, ...] = ("create", "delete", "deletecollection", "get", "list", "patch",
                              "update", "watch")
    custom: bool = False
    list_kind: str = ""
    # Resources served by code rather than stored (metrics.k8s.io, access reviews).
    virtual: bool = False
    # How the API server prints it for `kubectl get` (machinery/printers.py); None: the generic
    # `NAME CREATED AT` table.
    printer: P.Printer | None = field(default=None, compare=False)
    # Whether create drops the client's status (the kind's controller owns and fills it).
    reset_status_on_create: bool = False
    # What the agent may change (machinery/authz.py builds its rules from these); every builtin row
    # declares it, `()` meaning read-only. None: undeclared (CRDs created at run time, whose rights
    # authz grants by group).
    agent_grants: tuple[AgentGrant, ...] | None = None
    # The `Warning` header the API server adds to every request for a deprecated resource.
    warning: str = ""
    # Stored in another group (events.k8s.io Events are core Events); None: its own group.
    storage_group: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        """Storage key: all versions of one group/kind share storage (and a kind served by two
        groups, the storage group's)."""
        return (self.group if self.storage_group is None else self.storage_group, self.kind)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def resource(self) -> str:
        """`deployments.apps`-style qualified resource name used in error messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


_ALL = ("all",)
_RW = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def _agent(rule: int, at: int, verbs: tuple[str, ...] = ALL_VERBS, subresource: str = "") -> AgentGrant:
    return AgentGrant(rule, at, verbs, subresource)


def _k(group: str, version: str, kind: str, plural: str, **kw: object) -> ResourceKind:
    return ResourceKind(group, version, kind, plural, **kw)  # type: ignore[arg-type]


BUILTIN_KINDS: tuple[ResourceKind, ...] = (
    # core/v1
    _k("", "v1", "Pod", "pods", short_names=("po",), categories=_ALL,
       subresources=("status", "log", "exec", "attach", "eviction", "binding", "ephemeralcontainers",
                     "portforward", "proxy"), printer=P.POD,
       agent_grants=(_agent(1, 0), _agent(2, 0, ACT, "eviction"), _agent(2, 1, ACT, "exec"),
                     _agent(2, 2, ACT, "attach"), _agent(2, 3, ACT, "portforward"),
                     _agent(2, 5, ACT, "ephemeralcontainers"))),
    _k("", "v1", "Service", "services", short_names=("svc",), categories=_ALL,
       subresources=("status", "proxy"), printer=P.SERVICE,
       agent_grants=(_agent(1, 1),)),
    _k("", "v1", "Endpoints", "endpoints", short_names=("ep",), printer=P.ENDPOINTS,
       agent_grants=(_agent(1, 2),)),
    _k("", "v1", "ConfigMap", "configmaps", short_names=("cm",), printer=P.CONFIG_MAP,
       agent_grants=(_agent(1, 3),)),
    _k("", "v1", "Secret", "secrets", printer=P.SECRET,
       agent_grants=(_agent(1, 4),)),
    _k("", "v1", "Namespace", "namespaces", namespaced=False, short_names=("ns",),
       subresources=("status", "finalize"), verbs=("create", "delete", "get", "list", "patch",
                                                     "update", "watch"), printer=P.NAMESPACE,
       agent_grants=(_agent(4, 0, ("create", "update", "patch")),)),
    _k("", "v1", "Node", "nodes", namespaced=False, short_names=("no",),
       subresources=("status", "proxy"), printer=P.NODE,
       agent_grants=(_agent(5, 0, ("update", "patch")),)),
    _k("", "v1", "Event", "events", short_names=("ev",), printer=P.EVENT,
       agent_grants=()),
    _k("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", short_names=("pvc",),
       subresources=("status",), printer=P.PERSISTENT_VOLUME_CLAIM, reset_status_on_create=True,
       agent_grants=(_agent(1, 6),)),
    _k("", "v1", "PersistentVolume", "persistentvolumes", namespaced=False, short_names=("pv",),
       subresources=("status",), printer=P.PERSISTENT_VOLUME,
       agent_grants=(_agent(1, 7),)),
    _k("", "v1", "ServiceAccount", "serviceaccounts", short_names=("sa",), subresources=("token",),
       printer=P.SERVICE_ACCOUNT,
       agent_grants=(_agent(1, 5), _agent(3, 0, ("create",), "token"))),
    _k("", "v1", "ResourceQuota", "resourcequotas", short_names=("quota",), subresources=("status",),
       printer=P.RESOURCE_QUOTA,
       agent_grants=(_agent(1, 8),)),
    _k("", "v1", "LimitRange", "limitranges", short_names=("limits",), printer=P.DEFAULT,
       agent_grants=(_agent(1, 9),)),
    _k("", "v1", "ReplicationController", "replicationcontrollers", short_names=("rc",),
       categories=_ALL, subresources=("status", "scale"), generation=True,
       printer=P.REPLICATION_CONTROLLER,
       agent_grants=(_agent(1, 10), _agent(2, 4, ACT, "scale"))),
    _k("", "v1", "PodTemplate", "podtemplates", printer=P.POD_TEMPLATE,
       agent_grants=(_agent(1, 11),)),
    _k("", "v1", "Binding", "bindings", verbs=("create",), virtual=True, agent_grants=()),
    _k("", "v1", "ComponentStatus", "componentstatuses", namespaced=False, short_names=("cs",),
       verbs=("get", "list"), printer=CP.COMPONENT_STATUS, agent_grants=(),
       warning="v1 ComponentStatus is deprecated in v1.19+"),
    # apps/v1
    _k("apps", "v1", "Deployment", "deployments", short_names=("deploy",), categories=_ALL,
       subresources=("status", "scale"), generation=True,
       printer=P.DEPLOYMENT, reset_status_on_create=True,
       agent_grants=(_agent(6, 0), _agent(7, 0, ACT, "scale"),
                     _agent(7, 3, ACT, "rollback"))),
    _k("apps", "v1", "ReplicaSet", "replicasets", short_names=("rs",), categories=_ALL,
       subresources=("status", "scale"), generation=True,
       printer=P.REPLICA_SET, reset_status_on_create=True,
       agent_grants=(_agent(6, 1), _agent(7, 1, ACT, "scale"))),
    _k("apps", "v1", "StatefulSet", "statefulsets", short_names=("sts",), categories=_ALL,
       subresources=("status", "scale"), generation=True,
       printer=P.STATEFUL_SET, reset_status_on_create=True,
       agent_grants=(_agent(6, 2), _agent(7, 2, ACT, "scale"))),
    _k("apps", "v1", "DaemonSet", "daemonsets", short_names=("ds",), categories=_ALL,
       subresources=("status",), generation=True, printer=P.DAEMON_SET, reset_status_on_create=True,
       agent_grants=(_agent(6, 3),)),
    _k("apps", "v1", "ControllerRevision", "controllerrevisions", printer=P.CONTROLLER_REVISION,
       agent_grants=()),
    # batch/v1
    _k("batch", "v1", "Job", "jobs", categories=_ALL, subresources=("status",), generation=True,
       printer=P.JOB, reset_status_on_create=True,
       agent_grants=(_agent(8, 0),)),
    _k("batch", "v1", "CronJob", "cronjobs", short_names=("cj",), categories=_ALL,
       subresources=("status",), generation=True, printer=P.CRON_JOB, reset_status_on_create=True,
       agent_grants=(_agent(8, 1),)),
    # autoscaling/v2
    _k("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
       short_names=("hpa",), categories=_ALL, subresources=("status",), generation=True,
       printer=P.HORIZONTAL_POD_AUTOSCALER, reset_status_on_create=True,
       agent_grants=(_agent(9, 0),)),
    # autoscaling/v1: served too (`kubectl autoscale` speaks it), stored as v2 (twin/machinery/conversion.py).
    _k("autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
       short_names=("hpa",), categories=_ALL, subresources=("status",), generation=True,
       printer=P.HORIZONTAL_POD_AUTOSCALER, reset_status_on_create=True,
       agent_grants=(_agent(9, 0),)),
    # networking.k8s.io/v1
    _k("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", short_names=("netpol",),
       generation=True, printer=P.NETWORK_POLICY,
       agent_grants=(_agent(11, 0),)),
    _k("networking.k8s.io", "v1", "Ingress", "ingresses", short_names=("ing",),
       subresources=("status",), generation=True, printer=P.INGRESS,
       agent_grants=(_agent(11, 1),)),
    _k("networking.k8s.io", "v1", "IngressClass", "ingressclasses", namespaced=False, printer=P.INGRESS_CLASS,
       agent_grants=(_agent(11, 2),)),
    # events.k8s.io/v1: the core Events under the new field names (machinery/event_conversion.py)
    _k("events.k8s.io", "v1", "Event", "events", short_names=("ev",), printer=P.EVENT,
       storage_group="", agent_grants=()),
    # discovery.k8s.io/v1
    _k("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", printer=P.ENDPOINT_SLICE,
       agent_grants=(_agent(12, 0),)),
    # policy/v1
    _k("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", short_names=("pdb",),
       subresources=("status",), generation=True,
       printer=P.POD_DISRUPTION_BUDGET, reset_status_on_create=True,
       agent_grants=(_agent(10, 0),)),
    # rbac.authorization.k8s.io/v1
    _k("rbac.authorization.k8s.io", "v1", "Role", "roles", printer=P.DEFAULT,
       agent_grants=(_agent(13, 0),)),
    _k("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", printer=P.ROLE_BINDING,
       agent_grants=(_agent(13, 1),)),
    _k("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", namespaced=False, printer=P.DEFAULT,
       agent_grants=()),
    _k("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings",
       namespaced=False, printer=P.CLUSTER_ROLE_BINDING,
       agent_grants=()),
    # storage.k8s.io/v1
    _k("storage.k8s.io", "v1", "StorageClass", "storageclasses", namespaced=False,
       short_names=("sc",), printer=P.STORAGE_CLASS,
       agent_grants=(_agent(14, 0),)),
    _k("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", namespaced=False,
       subresources=("status",), printer=P.VOLUME_ATTACHMENT,
       agent_grants=()),
    _k("storage.k8s.io", "v1", "CSIDriver", "csidrivers", namespaced=False, printer=P.CSI_DRIVER,
       agent_grants=()),
    _k("storage.k8s.io", "v1", "CSINode", "csinodes", namespaced=False, printer=CP.CSI_NODE,
       agent_grants=()),
    _k("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities",
       printer=CP.CSI_STORAGE_CAPACITY, agent_grants=()),
    # scheduling.k8s.io/v1
    _k("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", namespaced=False,
       short_names=("pc",), printer=P.PRIORITY_CLASS,
       agent_grants=(_agent(15, 0),)),
    # coordination.k8s.io/v1
    _k("coordination.k8s.io", "v1", "Lease", "leases", printer=P.LEASE,
       agent_grants=()),
    # admissionregistration.k8s.io/v1
    _k("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
       "validatingwebhookconfigurations", namespaced=False, generation=True,
       printer=P.VALIDATING_WEBHOOK_CONFIGURATION,
       agent_grants=(_agent(16, 0),)),
    _k("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
       "mutatingwebhookconfigurations", namespaced=False, generation=True,
       printer=P.MUTATING_WEBHOOK_CONFIGURATION,
       agent_grants=(_agent(16, 1),)),
    _k("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy",
       "validatingadmissionpolicies", namespaced=False, subresources=("status",), generation=True,
       printer=CP.VALIDATING_ADMISSION_POLICY, agent_grants=()),
    _k("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding",
       "validatingadmissionpolicybindings", namespaced=False, generation=True,
       printer=CP.VALIDATING_ADMISSION_POLICY_BINDING, agent_grants=()),
    # apiregistration.k8s.io/v1 (the aggregator)
    _k("apiregistration.k8s.io", "v1", "APIService", "apiservices", namespaced=False,
       subresources=("status",), categories=("api-extensions",), printer=CP.API_SERVICE,
       agent_grants=()),
    # certificates.k8s.io/v1
    _k("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests",
       namespaced=False, short_names=("csr",), subresources=("approval", "status"),
       printer=CP.CERTIFICATE_SIGNING_REQUEST, agent_grants=()),
    # flowcontrol.apiserver.k8s.io/v1 (API Priority and Fairness)
    _k("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", "flowschemas", namespaced=False,
       subresources=("status",), generation=True, printer=CP.FLOW_SCHEMA, agent_grants=()),
    _k("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration",
       "prioritylevelconfigurations", namespaced=False, subresources=("status",), generation=True,
       printer=CP.PRIORITY_LEVEL_CONFIGURATION, agent_grants=()),
    # node.k8s.io/v1
    _k("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", namespaced=False,
       printer=CP.RUNTIME_CLASS, agent_grants=()),
    # apiextensions.k8s.io/v1
    _k("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
       namespaced=False, short_names=("crd", "crds"), subresources=("status",), generation=True,
       printer=P.DEFAULT,
       agent_grants=()),
    # Virtual resources answered by code.
    _k("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
       namespaced=False, verbs=("create",), virtual=True,
       agent_grants=(_agent(17, 0, ("create",)),)),
    _k("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews",
       namespaced=False, verbs=("create",), virtual=True,
       agent_grants=(_agent(17, 1, ("create",)),)),
    _k("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews",
       namespaced=False, verbs=("create",), virtual=True,
       agent_grants=(_agent(18, 0, ("create",)),)),
    _k("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", namespaced=False,
       verbs=("create",), virtual=True, agent_grants=()),
    _k("authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews",
       verbs=("create",), virtual=True, agent_grants=()),
    _k("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews",
       namespaced=False, verbs=("create",), virtual=True, agent_grants=()),
    _k("metrics.k8s.io", "v1beta1", "PodMetrics", "pods", verbs=("get", "list"), virtual=True,
       agent_grants=()),
    _k("metrics.k8s.io", "v1beta1", "NodeMetrics", "nodes", namespaced=False,
       verbs=("get", "list"), virtual=True,
       agent_grants=()),
    # Chaos Mesh, executed by twin/chaos: a platform add-on every cluster shows. The agent reads and
    # changes experiments in the namespaces it sees (a team's own chaos runs, which an on-call
    # engineer pauses or deletes); the benchmark's own live in the hidden `chaos-mesh` namespace.
    *(
        _k(CHAOS_GROUP, "v1alpha1", kind, plural, short_names=short, subresources=("status",),
           generation=True, categories=("chaos-mesh",), printer=P.CUSTOM_RESOURCE,
           agent_grants=(_agent(19, at),))
        for at, (kind, plural, short) in enumerate(CHAOS_KINDS)
    ),
)


@dataclass
class KindRegistry:
    """Known kinds of one twin: the builtins plus CRDs created at run time."""

    kinds: list[ResourceKind] = field(default_factory=lambda: list(BUILTIN_KINDS))
    # Lookups happen on every store call; memoise them per version of the kind list (its identity
    # and length change whenever a kind is added or removed).
    _memo: dict[tuple[str, ...], ResourceKind] = field(default_factory=dict, repr=False, compare=False)
    _memo_version: tuple[int, int] = field(default=(0, 0), repr=False, compare=False)

    def _cached(self, key: tuple[str, ...]) -> ResourceKind | None:
        version = (id(self.kinds), len(self.kinds))
        if version != self._memo_version:
            self._memo = {}
            self._memo_version = version
        return self._memo.get(key)

    def add(self, kind: ResourceKind) -> None:
        self.kinds = [k for k in self.kinds if not (k.group == kind.group and k.kind == kind.kind
                                                    and k.version == kind.version)]
        self.kinds.append(kind)

    def remove_group_kind(self, group: str, kind: str) -> None:
        self.kinds = [k for k in self.kinds if not (k.group == group and k.kind == kind)]

    def by_kind(self, api_version: str, kind: str) -> ResourceKind:
        """Resolve `apiVersion` + `kind` as written in a manifest."""
        key = ("by_kind", api_version, kind)
        hit = self._cached(key)
        if hit is None:
            hit = self._memo[key] = self._by_kind(api_version, kind)
        return hit

    def _by_kind(self, api_version: str, kind: str) -> ResourceKind:
        group, _, version = api_version.rpartition("/")
        for k in self.kinds:
            if k.kind == kind and k.group == group and not k.virtual:
                if k.version == version:
                    return k
        for k in self.kinds:
            if k.kind == kind and k.group == group and not k.virtual:
                return k
        raise NotFound(f'no matches for kind "{kind}" in version "{api_version}"',
                       details={"kind": kind, "group": group})

    def by_resource(self, group: str, version: str, plural: str) -> ResourceKind:
        """Resolve a REST path segment (`/apis/<group>/<version>/<plural>`)."""
        for k in self.kinds:
            if k.group == group and k.plural == plural and k.version == version:
                return k
        raise NotFound(f"the server could not find the requested resource ({plural})")

    def resolve(self, name: str) -> ResourceKind:
        """Resolve what a human types: `Deployment`, `deployments`, `deploy`, `deployments.apps`,
        `apps/v1/Deployment` or `v1/Pod`."""
        key = ("resolve", name)
        hit = self._cached(key)
        if hit is None:
            hit = self._memo[key] = self._resolve(name)
        return hit

    def _resolve(self, name: str) -> ResourceKind:
        text = name.strip()
        if text.count("/") >= 1:
            api_version, _, kind = text.rpartition("/")
            return self.by_kind(api_version, kind)
        base, _, group = text.partition(".")
        lowered = base.lower()
        candidates = [k for k in self.kinds if not k.virtual] + [k for k in self.kinds if k.virtual]
        for k in candidates:
            if group and k.group != group and not k.group.startswith(group):
                continue
            if lowered in (k.kind.lower(), k.plural, k.singular) or lowered in k.short_names:
                return k
        raise NotFound(f'the server doesn\'t have a resource type "{name}"')

    def groups(self) -> list[str]:
        seen: list[str] = []
        for k in self.kinds:
            if k.group not in seen:
                seen.append(k.group)
        return seen
