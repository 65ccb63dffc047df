"""The API server's defaulting, applied to every CREATE and UPDATE before validation.

A real cluster never stores a Deployment without `strategy` or a Pod without `dnsPolicy`: the
defaulting functions of each API group (plus a few admission plugins that behave like defaulting:
ServiceAccount, DefaultTolerationSeconds, Priority, DefaultStorageClass) fill them in. Agents read
those fields (`kubectl get -o yaml`, `describe`), controllers branch on them, and the hash of a
Deployment's pod template depends on them, so the twin must default exactly the same fields.

Defaulting is idempotent, so running it again on UPDATE changes nothing that was already defaulted.
Status-subresource writes are skipped (their spec is the stored, already-defaulted one).
"""

from __future__ import annotations

from typing import Any

from sregym.twin.admission.base import AdmissionPlugin, admission_plugin
from sregym.twin.machinery.quantity import parse_quantity
from sregym.twin.machinery.store import Operation

DEFAULT_STORAGE_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
# Added by the DefaultTolerationSeconds admission plugin to every pod.
DEFAULT_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
)


# ------------------------------------------------------------------ pod specs
def default_probe(probe: dict[str, Any] | None) -> None:
    if not isinstance(probe, dict):
        return
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    http = probe.get("httpGet")
    if isinstance(http, dict):
        http.setdefault("path", "/")
        http.setdefault("scheme", "HTTP")
    grpc = probe.get("grpc")
    if isinstance(grpc, dict):
        grpc.setdefault("service", "")


def _pull_policy(image: str) -> str:
    """`Always` for `:latest` or an untagged reference, else `IfNotPresent` (digests included)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "Always"
    return "Always" if last.rsplit(":", 1)[1] == "latest" else "IfNotPresent"


def default_container(container: dict[str, Any]) -> None:
    if not isinstance(container, dict):
        return
    image = container.get("image")
    if isinstance(image, str) and image and not container.get("imagePullPolicy"):
        container["imagePullPolicy"] = _pull_policy(image)
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    if container.get("resources") is None:
        container["resources"] = {}
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    for env in container.get("env") or []:
        field_ref = ((env or {}).get("valueFrom") or {}).get("fieldRef")
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")
    for probe_name in ("livenessProbe", "readinessProbe", "startupProbe"):
        default_probe(container.get(probe_name))


def _default_volume(volume: dict[str, Any]) -> None:
    if not isinstance(volume, dict):
        return
    sources = [k for k in volume if k != "name"]
    if not sources:
        volume["emptyDir"] = {}
    for key in ("configMap", "secret", "projected", "downwardAPI"):
        src = volume.get(key)
        if isinstance(src, dict):
            src.setdefault("defaultMode", 420)
    for item in ((volume.get("downwardAPI") or {}).get("items") or []):
        field_ref = (item or {}).get("fieldRef")
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")


def default_pod_spec(spec: dict[str, Any]) -> None:
    """SetDefaults_PodSpec plus container/volume defaults: applies to pods and pod templates."""
    if not isinstance(spec, dict):
        return
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(group) or []:
            default_container(container)
    for volume in spec.get("volumes") or []:
        _default_volume(volume)
    if spec.get("hostNetwork"):
        # With hostNetwork the host port is the container port.
        for group in ("initContainers", "containers"):
            for container in spec.get(group) or []:
                for port in (container or {}).get("ports") or []:
                    if isinstance(port, dict) and "containerPort" in port:
                        port.setdefault("hostPort", port["containerPort"])


def _default_template(template: dict[str, Any] | None) -> None:
    if isinstance(template, dict):
        default_pod_spec(template.setdefault("spec", {}))


def _requests_from_limits(spec: dict[str, Any]) -> None:
    """Pods only (not templates): a container with limits but no request for a resource gets the
    limit as its request."""
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or []:
            resources = (container or {}).get("resources")
            if not isinstance(resources, dict) or not resources.get("limits"):
                continue
            requests = resources.setdefault("requests", {})
            for resource, value in resources["limits"].items():
                requests.setdefault(resource, value)


def qos_class(spec: dict[str, Any]) -> str:
    """The pod's QoS class, computed the way `qos.GetPodQOS` does."""
    containers = [c for g in ("initContainers", "containers") for c in spec.get(g) or []
                  if isinstance(c, dict)]
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = True
    for container in containers:
        resources = container.get("resources") or {}
        req = {k: v for k, v in (resources.get("requests") or {}).items() if k in ("cpu", "memory")}
        lim = {k: v for k, v in (resources.get("limits") or {}).items() if k in ("cpu", "memory")}
        for key, value in req.items():
            if _nonzero(value):
                requests[key] = value
        for key, value in lim.items():
            if _nonzero(value):
                limits[key] = value
        if set(lim) != {"cpu", "memory"}:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed:
        for container in containers:
            resources = container.get("resources") or {}
            req = resources.get("requests") or {}
            lim = resources.get("limits") or {}
            for key in ("cpu", "memory"):
                if key in req and _quantity(req[key]) != _quantity(lim.get(key)):
                    return "Burstable"
        return "Guaranteed"
    return "Burstable"


def _quantity(value: Any) -> Any:
    try:
        return parse_quantity(value)
    except (ValueError, TypeError, ArithmeticError):
        return value


def _nonzero(value: Any) -> bool:
    q = _quantity(value)
    return q != 0 if not isinstance(q, str) else True


# ------------------------------------------------------------------ the plugin
@admission_plugin
class Defaulting(AdmissionPlugin):
    """Fills the fields the real API server defaults, per kind."""

    name = "defaulting"
    order = 10

    def mutate(self, op: Operation) -> None:
        if op.obj is None or op.subresource or op.verb not in ("CREATE", "UPDATE"):
            return
        handler = _HANDLERS.get(op.kind.key)
        if handler is not None:
            handler(self, op, op.obj)

    # -- core/v1
    def _pod(self, op: Operation, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        default_pod_spec(spec)
        _requests_from_limits(spec)
        if spec.get("enableServiceLinks") is None:
            spec["enableServiceLinks"] = True
        old_spec = (op.old or {}).get("spec") or {}
        if op.verb == "CREATE":
            # ServiceAccount admission.
            account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
            spec["serviceAccountName"] = account
            spec["serviceAccount"] = account
            # Priority admission (a named class is resolved by the priority plugin).
            if not spec.get("priorityClassName") and spec.get("priority") is None:
                spec["priority"] = 0
            spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
            # DefaultTolerationSeconds admission.
            tolerations = list(spec.get("tolerations") or [])
            for default in DEFAULT_TOLERATIONS:
                if not any((t or {}).get("key") in (default["key"], None, "")
                           and (t or {}).get("effect") in (None, "", "NoExecute") for t in tolerations):
                    tolerations.append(dict(default))
            spec["tolerations"] = tolerations
            status = obj.get("status")
            if not isinstance(status, dict):
                status = {}
                obj["status"] = status
            status.setdefault("phase", "Pending")
            status.setdefault("qosClass", qos_class(spec))
        else:
            # Fields set by admission on create are immutable: keep them when an update omits them.
            for key in ("serviceAccountName", "serviceAccount", "priority", "preemptionPolicy",
                        "tolerations"):
                if key not in spec and key in old_spec:
                    spec[key] = old_spec[key]

    def _service(self, op: Operation, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        svc_type = spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for port in spec.get("ports") or []:
            if not isinstance(port, dict):
                continue
            port.setdefault("protocol", "TCP")
            if port.get("targetPort") in (None, "", 0) and "port" in port:
                port["targetPort"] = port["port"]
        if svc_type == "ExternalName":
            return
        spec.setdefault("internalTrafficPolicy", "Cluster")
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        if svc_type in ("NodePort", "LoadBalancer"):
            spec.setdefault("externalTrafficPolicy", "Cluster")
        if svc_type == "LoadBalancer":
            spec.setdefault("allocateLoadBalancerNodePorts", True)

    def _pvc(self, op: Operation, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("volumeMode", "Filesystem")
        if "storageClassName" in spec:
            return
        old_spec = (op.old or {}).get("spec") or {}
        if op.verb == "UPDATE":
            if "storageClassName" in old_spec:
                spec["storageClassName"] = old_spec["storageClassName"]
            return
        if spec.get("volumeName"):
            return  # pre-bound claims keep an empty class, as the admission plugin does
        default = self._default_storage_class()
        if default:
            spec["storageClassName"] = default

    def _default_storage_class(self) -> str | None:
        """The newest class annotated as default (the real plugin's tie-break)."""
        best: tuple[str, str] | None = None
        for sc in self.twin.store.scan("StorageClass"):
            meta = sc.get("metadata") or {}
            if (meta.get("annotations") or {}).get(DEFAULT_STORAGE_CLASS_ANNOTATION) != "true":
                continue
            key = (meta.get("creationTimestamp") or "", meta.get("name", ""))
            if best is None or key > best:
                best = key
        return best[1] if best else None

    def _namespace(self, op: Operation, obj: dict[str, Any]) -> None:
        meta = obj.setdefault("metadata", {})
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = {}
            meta["labels"] = labels
        labels["kubernetes.io/metadata.name"] = meta.get("name", op.name)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            spec = {}
            obj["spec"] = spec
        if "finalizers" not in spec:
            old_spec = (op.old or {}).get("spec") or {}
            spec["finalizers"] = list(old_spec.get("finalizers", ["kubernetes"])) \
                if op.verb == "UPDATE" else ["kubernetes"]
        if op.verb == "CREATE":
            obj["status"] = {"phase": "Active"}

    def _secret(self, op: Operation, obj: dict[str, Any]) -> None:
        if not obj.get("type"):
            obj["type"] = "Opaque"
        # The API server folds write-only `stringData` into `data` (base64), stringData winning.
        string_data = obj.get("stringData")
        data = obj.get("data") if obj.get("data") is not None else {}
        if isinstance(string_data, dict) and isinstance(data, dict) and \
                all(isinstance(v, str) for v in string_data.values()):
            import base64

            merged = dict(data)
            for key, value in string_data.items():
                merged[key] = base64.b64encode(value.encode()).decode()
            obj["data"] = merged
            del obj["stringData"]

    # -- apps/v1
    def _deployment(self, op: Operation, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        _rolling_update(spec, "strategy", maxUnavailable="25%", maxSurge="25%")
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        if spec.get("progressDeadlineSeconds") is None:
            spec["progressDeadlineSeconds"] = 600
        _default_template(spec.get("template"))

    def _replicaset(self, op: Operation, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        _default_template(spec.get("template"))

    def _statefulset(self, op: Operation, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        if not spec.get("podManagementPolicy"):
            spec["podManagementPolicy"] = "OrderedReady"
        _rolling_update(spec, "updateStrategy", partition=0)
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        policy = spec.get("persistentVolumeClaimRetentionPolicy")
        if not isinstance(policy, dict):
            policy = {}
            spec["persistentVolumeClaimRetentionPolicy"] = policy
        policy.setdefault("whenDeleted", "Retain")
        policy.setdefault("whenScaled", "Retain")
        for claim in spec.get("volumeClaimTemplates") or []:
            if isinstance(claim, dict):
                claim.setdefault("apiVersion", "v1")
                claim.setdefault("kind", "PersistentVolumeClaim")
                claim.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
                claim.setdefault("status", {"phase": "Pending"})
        _default_template(spec.get("template"))

    def _daemonset(self, op: Operation, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        _rolling_update(spec, "updateStrategy", maxUnavailable=1, maxSurge=0)
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        _default_template(spec.get("template"))

    # -- batch/v1
    def _job(self, op: Operation, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("completions") is None and spec.get("parallelism") is None:
            spec["completions"] = 1
        if spec.get("parallelism") is None:
            spec["parallelism"] = 1
        if spec.get("backoffLimit") is None:
            spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
        if not spec.get("completionMode"):
            spec["completionMode"] = "NonIndexed"
        if spec.get("suspend") is None:
            spec["suspend"] = False
        if not spec.get("podReplacementPolicy") and not spec.get("podFailurePolicy"):
            spec["podReplacementPolicy"] = "TerminatingOrFailed"
        _default_template(spec.get("template"))
        if op.verb == "CREATE" and not spec.get("manualSelector"):
            self._job_selector(obj, spec)
        elif op.verb == "UPDATE" and op.old is not None:
            old_spec = op.old.get("spec") or {}
            if "selector" not in spec and "selector" in old_spec:
                spec["selector"] = old_spec["selector"]

    def _job_selector(self, obj: dict[str, Any], spec: dict[str, Any]) -> None:
        """The selector and template labels the job strategy generates from the Job's uid. The uid
        is drawn here (the store keeps a uid set by the admission chain) because the real API
        server has assigned it before it generates the selector."""
        meta = obj.setdefault("metadata", {})
        uid = meta.get("uid") or self.twin.rng.uuid("uid")
        meta["uid"] = uid
        name = meta.get("name", "")
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        template = spec.setdefault("template", {})
        tmeta = template.setdefault("metadata", {})
        labels = tmeta.get("labels")
        if not isinstance(labels, dict):
            labels = {}
            tmeta["labels"] = labels
        labels.update({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                       "controller-uid": uid, "job-name": name})

    def _cronjob(self, op: Operation, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        if not spec.get("concurrencyPolicy"):
            spec["concurrencyPolicy"] = "Allow"
        if spec.get("suspend") is None:
            spec["suspend"] = False
        if spec.get("successfulJobsHistoryLimit") is None:
            spec["successfulJobsHistoryLimit"] = 3
        if spec.get("failedJobsHistoryLimit") is None:
            spec["failedJobsHistoryLimit"] = 1
        job_spec = (spec.get("jobTemplate") or {}).get("spec")
        if isinstance(job_spec, dict):
            _default_template(job_spec.get("template"))


_HANDLERS: dict[tuple[str, str], Any] = {
    ("", "Pod"): Defaulting._pod,
    ("", "Service"): Defaulting._service,
    ("", "PersistentVolumeClaim"): Defaulting._pvc,
    ("", "Namespace"): Defaulting._namespace,
    ("", "Secret"): Defaulting._secret,
    ("", "ReplicationController"): Defaulting._replicaset,
    ("", "PodTemplate"): lambda self, op, obj: _default_template(obj.get("template")),
    ("apps", "Deployment"): Defaulting._deployment,
    ("apps", "ReplicaSet"): Defaulting._replicaset,
    ("apps", "StatefulSet"): Defaulting._statefulset,
    ("apps", "DaemonSet"): Defaulting._daemonset,
    ("batch", "Job"): Defaulting._job,
    ("batch", "CronJob"): Defaulting._cronjob,
}


def _rolling_update(spec: dict[str, Any], field_name: str, **defaults: Any) -> None:
    """Default a workload's update strategy to RollingUpdate with the kind's own parameters
    (a non-dict value is replaced, so validation later sees a well-formed strategy)."""
    strategy = spec.get(field_name)
    if not isinstance(strategy, dict):
        strategy = {}
        spec[field_name] = strategy
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] != "RollingUpdate":
        return
    rolling = strategy.get("rollingUpdate")
    if not isinstance(rolling, dict):
        rolling = {}
        strategy["rollingUpdate"] = rolling
    for key, value in defaults.items():
        if rolling.get(key) is None:
            rolling[key] = value
