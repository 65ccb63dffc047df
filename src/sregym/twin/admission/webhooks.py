"""Dynamic admission: MutatingWebhookConfiguration and ValidatingWebhookConfiguration.

A webhook is a cluster-wide single point of failure that lives in someone's namespace: when its
backing pods are gone or not Ready, every matching write fails with `failed calling webhook ...
no endpoints available for service ...`, and all the operator sees is Deployments that stopped
creating pods. The twin calls webhooks the way the API server does: it matches rules, namespace
and object selectors, resolves `clientConfig` to a Service with ready endpoints (or a URL), reaches
the serving pod, and runs the decision logic of that pod's image
(`ImageSpec.extras["admission_webhook"]`, a callable `(twin, pod, request) -> response`). Call
failures obey `failurePolicy`; denials and JSONPatch mutations come back as real responses.

Two webhook server images are registered at the bottom of this module, configured like real
policy servers: from a file in a mounted ConfigMap/Secret and from the pod's env.
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sregym.errors import ApiError, BadRequest, InternalError, Timeout
from sregym.twin.admission.base import AdmissionPlugin, admission_plugin
from sregym.twin.admission.webhook_tls import served_certificate
from sregym.twin.admission.webhook_tls import verify as verify_tls
from sregym.twin.controllers.endpoints import ready_backends, resolve_target_port
from sregym.twin.dataplane.netpolicy import allowed as network_allows
from sregym.twin.machinery.objects import clone
from sregym.twin.machinery.selectors import selector_from_spec
from sregym.twin.machinery.store import Operation
from sregym.twin.node.images import lookup
from sregym.twin.topology import HIDDEN_NAMESPACES

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

WEBHOOK_EXTRA = "admission_webhook"
DEFAULT_TIMEOUT = 10  # timeoutSeconds when unset (admissionregistration/v1); validation caps it at 30
# The API server's budget for one write, webhooks included: create/update/delete handlers cut the
# request context to `requestTimeoutUpperBound` (34 s), below the `--request-timeout` default of
# 60 s. Mutating webhooks run one after another and each may use its whole timeout, so several
# slow ones exhaust the budget together even when every one has `failurePolicy: Ignore`;
# validating webhooks run in parallel and cost the slowest one.
REQUEST_TIMEOUT = 60.0
WRITE_DEADLINE = min(34.0, REQUEST_TIMEOUT)
# Never sent to webhooks, so a broken webhook can always be deleted or fixed.
_EXEMPT = {("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
           ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
           ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
           ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding")}

WebhookServer = Callable[["Twin", dict[str, Any], dict[str, Any]], dict[str, Any]]


class CallFailed(Exception):
    """The webhook could not be called (the text after `failed to call webhook: `); `elapsed` is
    how long the API server waited before giving up (the timeout for a silent backend)."""

    def __init__(self, text: str, elapsed: float = 0.0) -> None:
        super().__init__(text)
        self.elapsed = elapsed


def _apiserver_address(twin: Twin) -> str:
    """The source address of the API server's calls: it runs host-network on the control plane."""
    for node in twin.store.scan("Node"):
        if "node-role.kubernetes.io/control-plane" in ((node.get("metadata") or {}).get("labels") or {}):
            for address in (node.get("status") or {}).get("addresses") or []:
                if address.get("type") == "InternalIP":
                    return str(address.get("address", ""))
    return ""


# ------------------------------------------------------------------ matching
def _resource_matches(patterns: list[str], resource: str, subresource: str) -> bool:
    for pattern in patterns:
        if pattern == "*/*":
            return True
        base, _, sub = pattern.partition("/")
        if not sub:
            if not subresource and base in ("*", resource):
                return True
        elif subresource and base in ("*", resource) and sub in ("*", subresource):
            return True
    return False


def rule_matches(rule: dict[str, Any], op: Operation, match_policy: str) -> bool:
    """Does one `rules[]` entry cover this request?"""
    operations = rule.get("operations") or []
    if "*" not in operations and op.verb not in operations:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and op.kind.group not in groups:
        return False
    versions = rule.get("apiVersions") or []
    # With matchPolicy Equivalent a rule for another version of the resource still applies
    # (the request is converted); the twin serves one version per resource.
    if match_policy == "Exact" and "*" not in versions and op.kind.version not in versions:
        return False
    if not _resource_matches(rule.get("resources") or [], op.kind.plural, op.subresource or ""):
        return False
    scope = rule.get("scope") or "*"
    if scope == "Cluster" and op.kind.namespaced:
        return False
    if scope == "Namespaced" and not op.kind.namespaced:
        return False
    return True


def _labels(obj: dict[str, Any] | None) -> dict[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def webhook_matches(twin: Twin, webhook: dict[str, Any], op: Operation) -> bool:
    # The benchmark's own namespaces (load generator, chaos experiments) are outside every
    # problem's blast radius. A twin extension: on a real cluster an injected webhook would list
    # them in its namespaceSelector, which would tell the agent they exist.
    if op.namespace in HIDDEN_NAMESPACES or (op.kind.key == ("", "Namespace") and op.name in HIDDEN_NAMESPACES):
        return False
    policy = webhook.get("matchPolicy") or "Equivalent"
    if not any(rule_matches(rule, op, policy) for rule in webhook.get("rules") or []):
        return False
    ns_selector = selector_from_spec(webhook.get("namespaceSelector") or {})
    if op.kind.key == ("", "Namespace"):
        if not (ns_selector.matches(_labels(op.obj)) or ns_selector.matches(_labels(op.old))):
            return False
    elif op.kind.namespaced and not ns_selector.empty:
        ns = twin.store.peek("Namespace", None, op.namespace)
        if ns is None or not ns_selector.matches(_labels(ns)):
            return False
    obj_selector = selector_from_spec(webhook.get("objectSelector") or {})
    if not obj_selector.empty and not (
            (op.obj is not None and obj_selector.matches(_labels(op.obj)))
            or (op.old is not None and obj_selector.matches(_labels(op.old)))):
        return False
    return True


# ------------------------------------------------------------------- request
def _user_info(op: Operation) -> dict[str, Any]:
    user = op.user
    groups = ["system:authenticated"]
    if user.startswith("system:serviceaccount:"):
        ns = user.split(":")[2]
        groups = ["system:serviceaccounts", f"system:serviceaccounts:{ns}", *groups]
    elif user in ("system:admin", "admin"):
        groups = ["system:masters", *groups]
    return {"username": user, "groups": groups}


def admission_request(twin: Twin, op: Operation) -> dict[str, Any]:
    """The `request` of the AdmissionReview sent to a webhook."""
    kind = op.kind
    gvk = {"group": kind.group, "version": kind.version, "kind": kind.kind}
    gvr = {"group": kind.group, "version": kind.version, "resource": kind.plural}
    request: dict[str, Any] = {
        "uid": twin.rng.uuid("admission-review"),
        "kind": gvk, "resource": gvr,
        "requestKind": gvk, "requestResource": gvr,
        "name": op.name,
        "operation": op.verb,
        "userInfo": _user_info(op),
        "object": clone(op.obj),
        "oldObject": clone(op.old),
        "dryRun": op.dry_run,
        "options": {"apiVersion": "meta.k8s.io/v1",
                    "kind": {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions",
                             "DELETE": "DeleteOptions"}.get(op.verb, "CreateOptions")},
    }
    if kind.namespaced:
        request["namespace"] = op.namespace
    if op.subresource:
        request["subResource"] = op.subresource
    return request


# -------------------------------------------------------------------- calling
def _with_timeout(url: str, timeout: int) -> str:
    return f"{url}{'&' if '?' in url else '?'}timeout={timeout}s"


def _service_url(ref: dict[str, Any], timeout: int) -> str:
    port = int(ref.get("port") or 443)
    path = ref.get("path") or ""
    return _with_timeout(f"https://{ref.get('name')}.{ref.get('namespace')}.svc:{port}{path}", timeout)


def _serving_container(pod: dict[str, Any], port: int) -> tuple[dict[str, Any] | None, Any]:
    """The container of `pod` that listens on `port`, with its image spec (None if none does)."""
    containers = (pod.get("spec") or {}).get("containers") or []
    declared = [c for c in containers if any(p.get("containerPort") == port for p in c.get("ports") or [])]
    for container in declared + [c for c in containers if c not in declared]:
        spec, _ref = lookup(str(container.get("image", "")))
        if spec is None:
            continue
        if port in spec.ports or (not spec.ports and WEBHOOK_EXTRA in spec.extras):
            return container, spec
    return None, None


def call_service(twin: Twin, ref: dict[str, Any], request: dict[str, Any], timeout: int,
                 url: str, ca_bundle: str | None = None) -> tuple[dict[str, Any], float]:
    """Reach the webhook Service like the API server does: (response, seconds it took); raise
    CallFailed on any failure."""
    ns, name = ref.get("namespace", ""), ref.get("name", "")
    port = int(ref.get("port") or 443)
    service = twin.store.peek("Service", ns, name)
    if service is None:
        raise CallFailed(f'Post "{url}": service "{name}" not found')
    svc_port = next((p for p in (service.get("spec") or {}).get("ports") or []
                     if int(p.get("port") or 0) == port), None)
    if svc_port is None:
        raise CallFailed(f'Post "{url}": no service port {port} found for service "{name}"')
    candidates = []
    for backend in ready_backends(twin, service):
        target = resolve_target_port(backend.pod, svc_port) if service.get("spec", {}).get("selector") \
            else (backend.ports[0][1] if backend.ports else None)
        if target is not None:
            candidates.append((backend, int(target)))
    if not candidates:
        raise CallFailed(f'Post "{url}": no endpoints available for service "{name}"')
    backend, target = candidates[0]
    if not network_allows(twin, None, _apiserver_address(twin), backend.pod, target):
        # A NetworkPolicy drops the SYNs: the call hangs until its timeout.
        raise CallFailed(f'Post "{url}": context deadline exceeded', elapsed=float(timeout))
    container, spec = _serving_container(backend.pod, target)
    if container is None:
        raise CallFailed(f'Post "{url}": dial tcp {backend.ip}:{target}: connect: connection refused')
    server: WebhookServer | None = spec.extras.get(WEBHOOK_EXTRA)
    if server is None:
        raise CallFailed(f'Post "{url}": http: server gave HTTP response to HTTPS client')
    served = served_certificate(twin, backend.pod, container) if ca_bundle else None
    if served is not None:
        refused = verify_tls(str(ca_bundle), served, f"{name}.{ns}.svc", twin.clock.now)
        if refused:
            raise CallFailed(f'Post "{url}": {refused}')
    response = server(twin, backend.pod, request)
    delay = float(response.pop("_delaySeconds", 0) or 0) if isinstance(response, dict) else 0
    if delay >= timeout:
        raise CallFailed(f'Post "{url}": context deadline exceeded', elapsed=float(timeout))
    return response, delay


def call_webhook(twin: Twin, webhook: dict[str, Any],
                 request: dict[str, Any]) -> tuple[dict[str, Any], float]:
    timeout = int(webhook.get("timeoutSeconds") or DEFAULT_TIMEOUT)
    client = webhook.get("clientConfig") or {}
    if client.get("service"):
        ref = client["service"]
        return call_service(twin, ref, request, timeout, _service_url(ref, timeout), client.get("caBundle"))
    raw = client.get("url") or ""
    url = _with_timeout(raw, timeout)
    parts = urlsplit(raw)
    host = parts.hostname or ""
    labels = host.split(".")
    # In-cluster names resolve when the API server can see cluster DNS; anything else is unknown.
    if len(labels) >= 3 and labels[2] == "svc":
        ref = {"name": labels[0], "namespace": labels[1], "port": parts.port or 443,
               "path": parts.path}
        return call_service(twin, ref, request, timeout, url, client.get("caBundle"))
    raise CallFailed(f'Post "{url}": dial tcp: lookup {host}: no such host')


def request_timeout() -> Timeout:
    """What the API server answers when the write's deadline passes during admission."""
    return Timeout("Timeout: request did not complete within requested timeout - context deadline exceeded",
                   details={"retryAfterSeconds": 0})


def _decode_patch(response: dict[str, Any]) -> list[dict[str, Any]] | None:
    patch = response.get("patch")
    if patch is None:
        return None
    if isinstance(patch, list):
        return patch
    if isinstance(patch, (bytes, str)):
        return json.loads(base64.b64decode(patch))
    raise ValueError("patch is neither base64 text nor a list")


def denied(name: str, status: dict[str, Any] | None) -> ApiError:
    """`admission webhook "x" denied the request: <message>` with the response's code (>= 400)."""
    status = status or {}
    prefix = f'admission webhook "{name}" denied the request'
    if status.get("message"):
        message = f"{prefix}: {status['message']}"
    elif status.get("reason"):
        message = f"{prefix}: {status['reason']}"
    else:
        message = f"{prefix} without explanation"
    code = int(status.get("code") or 400)
    return ApiError(message, code=max(code, 400), reason=status.get("reason") or "",
                    details=status.get("details"))


def call_failed(name: str, text: str) -> InternalError:
    cause = f'failed calling webhook "{name}": failed to call webhook: {text}'
    return InternalError(f"Internal error occurred: {cause}", details={"causes": [{"message": cause}]})


class _WebhookPlugin(AdmissionPlugin):
    config_kind: str = ""
    mutating: bool = False

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._config_kind = twin.kinds.by_kind("admissionregistration.k8s.io/v1", self.config_kind)

    def _webhooks(self, op: Operation) -> list[dict[str, Any]]:
        if op.kind.key in _EXEMPT or op.kind.virtual:
            return []
        if self.twin.store.count(self._config_kind) == 0:
            return []
        out = []
        for config in self.twin.store.scan(self._config_kind):
            for webhook in config.get("webhooks") or []:
                if webhook_matches(self.twin, webhook, op):
                    out.append(webhook)
        return out

    def _call(self, op: Operation, webhook: dict[str, Any]) -> tuple[dict[str, Any] | ApiError | None, float]:
        """One call: the response, the error it ends the request with, or None (ignored failure);
        and the seconds it took."""
        name = webhook.get("name", "")
        if op.dry_run and (webhook.get("sideEffects") or "Unknown") not in ("None", "NoneOnDryRun"):
            return BadRequest(f'admission webhook "{name}" does not support dry run'), 0.0
        request = admission_request(self.twin, op)
        try:
            response, spent = call_webhook(self.twin, webhook, request)
            if not isinstance(response, dict) or "allowed" not in response:
                raise CallFailed("received invalid webhook response: missing \"allowed\"", spent)
        except CallFailed as exc:
            if (webhook.get("failurePolicy") or "Fail") == "Ignore":
                return None, exc.elapsed
            return call_failed(name, str(exc)), exc.elapsed
        if not response.get("allowed"):
            return denied(name, response.get("status")), spent
        return response, spent

    def _run(self, op: Operation) -> None:
        webhooks = self._webhooks(op)
        if not webhooks:
            return
        if self.mutating:
            for webhook in webhooks:  # in order, each on what the previous one returned
                outcome, spent = self._call(op, webhook)
                self._spend(op, spent)
                if isinstance(outcome, ApiError):
                    raise outcome
                if outcome is not None and op.obj is not None:
                    self._apply(op, webhook.get("name", ""), outcome)
            return
        outcomes = [self._call(op, webhook) for webhook in webhooks]  # concurrently: the slowest counts
        self._spend(op, max(spent for _outcome, spent in outcomes))
        for outcome, _spent in outcomes:
            if isinstance(outcome, ApiError):
                raise outcome

    @staticmethod
    def _spend(op: Operation, seconds: float) -> None:
        """Charge admission time to the write; past the deadline the whole request times out."""
        op.admission_seconds += seconds
        if op.admission_seconds >= WRITE_DEADLINE:
            raise request_timeout()

    @staticmethod
    def _apply(op: Operation, name: str, response: dict[str, Any]) -> None:
        from sregym.twin.machinery.patch import json_patch

        try:
            patch = _decode_patch(response)
        except (ValueError, TypeError) as exc:
            raise InternalError(f'Internal error occurred: admission webhook "{name}" returned an '
                                f"invalid patch: {exc}") from None
        if not patch:
            return
        try:
            patched = json_patch(op.obj, patch)
        except ApiError as exc:
            raise InternalError(f"Internal error occurred: {exc.message}") from None
        op.obj.clear()
        op.obj.update(patched)


@admission_plugin
class MutatingAdmissionWebhook(_WebhookPlugin):
    name = "MutatingAdmissionWebhook"
    order = 150
    config_kind = "MutatingWebhookConfiguration"
    mutating = True

    def mutate(self, op: Operation) -> None:
        self._run(op)


@admission_plugin
class ValidatingAdmissionWebhook(_WebhookPlugin):
    name = "ValidatingAdmissionWebhook"
    order = 180
    config_kind = "ValidatingWebhookConfiguration"

    def validate(self, op: Operation) -> None:
        self._run(op)


# =========================================================== webhook server images
# What a webhook pod reads its configuration from: its env (values, ConfigMap/Secret refs) and
# files of mounted ConfigMaps/Secrets. Read at call time, like a server watching its config.
def _config_data(twin: Twin, kind: str, namespace: str, name: str) -> dict[str, str] | None:
    obj = twin.store.peek(kind, namespace, name)
    if obj is None:
        return None
    if kind == "Secret":
        out = {}
        for key, value in (obj.get("data") or {}).items():
            try:
                out[key] = base64.b64decode(value).decode()
            except (ValueError, UnicodeDecodeError):
                continue
        out.update(obj.get("stringData") or {})
        return out
    return dict(obj.get("data") or {})


def container_env(twin: Twin, pod: dict[str, Any], container: dict[str, Any]) -> dict[str, str]:
    """The environment a container was started with (unresolvable references are skipped)."""
    namespace = pod["metadata"].get("namespace", "")
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix") or ""
        if source.get("configMapRef"):
            data = _config_data(twin, "ConfigMap", namespace, source["configMapRef"].get("name", ""))
        elif source.get("secretRef"):
            data = _config_data(twin, "Secret", namespace, source["secretRef"].get("name", ""))
        else:
            data = None
        for key, value in sorted((data or {}).items()):
            env[prefix + key] = value
    for item in container.get("env") or []:
        name = item.get("name", "")
        if "value" in item:
            env[name] = str(item.get("value") or "")
            continue
        source = item.get("valueFrom") or {}
        for ref_key, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
            ref = source.get(ref_key)
            if ref:
                data = _config_data(twin, kind, namespace, ref.get("name", "")) or {}
                if ref.get("key") in data:
                    env[name] = data[ref["key"]]
        field = (source.get("fieldRef") or {}).get("fieldPath")
        if field in ("metadata.name", "metadata.namespace"):
            env[name] = pod["metadata"].get(field.split(".")[1], "")
    return env


def mounted_file(twin: Twin, pod: dict[str, Any], container: dict[str, Any], path: str) -> str | None:
    """Content of a file under a ConfigMap/Secret volume mount of `container` (None if absent)."""
    namespace = pod["metadata"].get("namespace", "")
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    mounts = sorted(container.get("volumeMounts") or [], key=lambda m: -len(m.get("mountPath", "")))
    for mount in mounts:
        base = str(mount.get("mountPath", "")).rstrip("/")
        volume = volumes.get(mount.get("name"))
        if volume is None:
            continue
        if mount.get("subPath"):
            if path != base:
                continue
            relative = mount["subPath"]
        elif path.startswith(base + "/"):
            relative = path[len(base) + 1:]
        else:
            continue
        if volume.get("configMap"):
            source, kind = volume["configMap"], "ConfigMap"
        elif volume.get("secret"):
            source, kind = volume["secret"], "Secret"
            source = {**source, "name": source.get("secretName", "")}
        else:
            return None
        data = _config_data(twin, kind, namespace, source.get("name", "")) or {}
        items = source.get("items")
        if items:
            by_path = {i.get("path"): i.get("key") for i in items}
            key = by_path.get(relative)
            return data.get(key) if key else None
        return data.get(relative)
    return None


def _own_container(pod: dict[str, Any], repository: str) -> dict[str, Any]:
    for container in (pod.get("spec") or {}).get("containers") or []:
        spec, _ref = lookup(str(container.get("image", "")))
        if spec is not None and spec.repository == repository:
            return container
    return {}


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _csv(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [part.strip() for part in str(value or "").split(",") if part.strip()]


def _pod_template(obj: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(JSON pointer prefix, pod template-like dict) for pods and pod-owning workloads."""
    if obj.get("kind") == "Pod":
        return "", obj
    spec = obj.get("spec") or {}
    if isinstance(spec.get("template"), dict):
        return "/spec/template", spec["template"]
    job = (spec.get("jobTemplate") or {}).get("spec") or {}
    if isinstance(job.get("template"), dict):
        return "/spec/jobTemplate/spec/template", job["template"]
    return None


def _load_config(twin: Twin, pod: dict[str, Any], container: dict[str, Any], env: dict[str, str],
                 default_path: str, path_var: str) -> dict[str, Any]:
    import yaml

    text = mounted_file(twin, pod, container, env.get(path_var) or default_path)
    if not text:
        return {}
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


POLICY_REPOSITORY = "ghcr.io/kube-policy/pod-policy-webhook"
POLICY_FILE = "/etc/pod-policy/policy.yaml"


def policy_webhook(twin: Twin, pod: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """A validating policy server. Policy comes from `policy.yaml` (path `POLICY_FILE`, usually a
    mounted ConfigMap) with env overrides: `REQUIRED_LABELS`, `ALLOWED_REGISTRIES`,
    `DENY_PRIVILEGED`, `REQUIRE_LIMITS` (e.g. `memory,cpu`), `DENY_LATEST_TAG`,
    `RESPONSE_DELAY_SECONDS` (how slow the server answers) and `ENFORCE=false` (audit only)."""
    container = _own_container(pod, POLICY_REPOSITORY)
    env = container_env(twin, pod, container)
    policy = _load_config(twin, pod, container, env, POLICY_FILE, "POLICY_FILE")
    for var, key in (("REQUIRED_LABELS", "requiredLabels"), ("ALLOWED_REGISTRIES", "allowedRegistries"),
                     ("DENY_PRIVILEGED", "denyPrivileged"), ("REQUIRE_LIMITS", "requireLimits"),
                     ("DENY_LATEST_TAG", "denyLatestTag"), ("RESPONSE_DELAY_SECONDS", "responseDelaySeconds"),
                     ("ENFORCE", "enforce")):
        if var in env:
            policy[key] = env[var]
    response: dict[str, Any] = {"uid": request.get("uid"), "allowed": True}
    delay = policy.get("responseDelaySeconds")
    if delay:
        with contextlib.suppress(TypeError, ValueError):
            response["_delaySeconds"] = float(delay)
    obj = request.get("object")
    found = _pod_template(obj) if isinstance(obj, dict) else None
    if found is None:
        return response
    _prefix, template = found
    violations = []
    labels = (template.get("metadata") or {}).get("labels") or {}
    missing = [label for label in _csv(policy.get("requiredLabels")) if label not in labels]
    if missing:
        violations.append(f"missing required label(s): {', '.join(missing)}")
    registries = _csv(policy.get("allowedRegistries"))
    required_limits = _csv(policy.get("requireLimits"))
    spec = template.get("spec") or {}
    for container_spec in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        cname = container_spec.get("name", "")
        image = str(container_spec.get("image", ""))
        if registries:
            from sregym.twin.node.images import ImageRef

            registry = ImageRef.parse(image).registry
            if registry not in registries:
                violations.append(f'container "{cname}" image "{image}" comes from registry '
                                  f'"{registry}", which is not allowed (allowed: {", ".join(registries)})')
        if _truthy(policy.get("denyPrivileged", False)) and \
                (container_spec.get("securityContext") or {}).get("privileged"):
            violations.append(f'container "{cname}" must not run privileged')
        if _truthy(policy.get("denyLatestTag", False)):
            ref = image.rsplit("/", 1)[-1]
            if "@" not in ref and (":" not in ref or ref.endswith(":latest")):
                violations.append(f'container "{cname}" must use a pinned image tag, not "latest"')
        limits = (container_spec.get("resources") or {}).get("limits") or {}
        for resource in required_limits:
            if resource not in limits:
                violations.append(f'container "{cname}" must set resources.limits.{resource}')
    if violations and _truthy(policy.get("enforce", True)):
        response["allowed"] = False
        response["status"] = {"code": 403, "reason": "Forbidden",
                              "message": "; ".join(violations)}
    elif violations:
        response["warnings"] = violations
    return response


DEFAULTER_REPOSITORY = "ghcr.io/kube-policy/resource-defaulter"
DEFAULTER_FILE = "/etc/defaulter/config.yaml"
_DEFAULTER_KEYS = (("DEFAULT_MEMORY_LIMIT", "memoryLimit", "limits", "memory"),
                   ("DEFAULT_CPU_LIMIT", "cpuLimit", "limits", "cpu"),
                   ("DEFAULT_MEMORY_REQUEST", "memoryRequest", "requests", "memory"),
                   ("DEFAULT_CPU_REQUEST", "cpuRequest", "requests", "cpu"))


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def resource_defaulter(twin: Twin, pod: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """A mutating server that sets container resources and labels. Config from `config.yaml`
    (path `CONFIG_FILE`, keys memoryLimit/cpuLimit/memoryRequest/cpuRequest/override/labels) with
    env overrides `DEFAULT_MEMORY_LIMIT`, `DEFAULT_CPU_LIMIT`, `DEFAULT_MEMORY_REQUEST`,
    `DEFAULT_CPU_REQUEST`, `OVERRIDE=true` (replace values already set) and `ADD_LABELS=k=v,..`."""
    container = _own_container(pod, DEFAULTER_REPOSITORY)
    env = container_env(twin, pod, container)
    config = _load_config(twin, pod, container, env, DEFAULTER_FILE, "CONFIG_FILE")
    wanted: dict[str, dict[str, str]] = {"limits": {}, "requests": {}}
    for var, key, section, resource in _DEFAULTER_KEYS:
        value = env.get(var, config.get(key))
        if value:
            wanted[section][resource] = str(value)
    override = _truthy(env.get("OVERRIDE", config.get("override", False)))
    labels = dict(config.get("labels") or {})
    for pair in _csv(env.get("ADD_LABELS")):
        key, _, value = pair.partition("=")
        labels[key] = value
    response: dict[str, Any] = {"uid": request.get("uid"), "allowed": True}
    obj = request.get("object")
    found = _pod_template(obj) if isinstance(obj, dict) and request.get("operation") == "CREATE" \
        else None
    if found is None:
        return response
    prefix, template = found
    ops: list[dict[str, Any]] = []
    meta = template.get("metadata")
    if labels:
        if not isinstance(meta, dict):
            ops.append({"op": "add", "path": f"{prefix}/metadata", "value": {"labels": labels}})
        elif not meta.get("labels"):
            ops.append({"op": "add", "path": f"{prefix}/metadata/labels", "value": labels})
        else:
            for key, value in sorted(labels.items()):
                if override or key not in meta["labels"]:
                    ops.append({"op": "add", "path": f"{prefix}/metadata/labels/{_escape(key)}",
                                "value": value})
    for index, spec_container in enumerate((template.get("spec") or {}).get("containers") or []):
        base = f"{prefix}/spec/containers/{index}/resources"
        resources = spec_container.get("resources")
        if not isinstance(resources, dict):
            body = {s: dict(v) for s, v in wanted.items() if v}
            if body:
                ops.append({"op": "add", "path": base, "value": body})
            continue
        for section in ("limits", "requests"):
            values = wanted[section]
            if not values:
                continue
            current = resources.get(section)
            if not isinstance(current, dict):
                ops.append({"op": "add", "path": f"{base}/{section}", "value": dict(values)})
                continue
            for resource, value in sorted(values.items()):
                if resource not in current:
                    ops.append({"op": "add", "path": f"{base}/{section}/{resource}", "value": value})
                elif override and current[resource] != value:
                    ops.append({"op": "replace", "path": f"{base}/{section}/{resource}", "value": value})
    if ops:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
    return response


def _register_images() -> None:
    from sregym.twin.node.images import ImageSpec, register_image

    register_image(ImageSpec(
        repository=POLICY_REPOSITORY, tags=("v1.4.0", "v1.5.1"), size_mb=21.0,
        description="Validating admission webhook enforcing pod policies (labels, registries, "
                    "privileged, limits) read from a mounted policy.yaml and env.",
        ports=(8443,), startup_seconds=2.0, memory_mb=28.0, shell="",
        entrypoint=("/usr/local/bin/pod-policy-webhook",), cmd=("--port=8443",),
        startup_logs=('{"level":"info","msg":"loading policy","file":"/etc/pod-policy/policy.yaml"}',
                      '{"level":"info","msg":"serving admission webhook","addr":":8443",'
                      '"paths":["/validate","/healthz","/readyz"]}'),
        extras={WEBHOOK_EXTRA: policy_webhook}))
    register_image(ImageSpec(
        repository=DEFAULTER_REPOSITORY, tags=("v0.9.2", "v1.0.0"), size_mb=17.0,
        description="Mutating admission webhook that sets container requests/limits and labels.",
        ports=(8443,), startup_seconds=2.0, memory_mb=22.0, shell="",
        entrypoint=("/resource-defaulter",), cmd=("--listen=:8443",),
        startup_logs=('{"level":"info","msg":"resource defaulter starting","addr":":8443"}',
                      '{"level":"info","msg":"serving admission webhook","path":"/mutate"}'),
        extras={WEBHOOK_EXTRA: resource_defaulter}))
    # The entrypoint binaries run the declared server behaviour (ports, startup logs).
    for repository, binary in ((POLICY_REPOSITORY, "pod-policy-webhook"), (DEFAULTER_REPOSITORY, "resource-defaulter")):
        spec, _ref = lookup(f"{repository}:latest")
        if spec is not None:
            spec.commands.setdefault(binary, spec.main())


_register_images()
