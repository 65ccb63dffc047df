"""Decode the Kubernetes protobuf request bodies that kubectl's typed clients send.

Since client-go 1.32, kubectl sends built-in objects as `application/vnd.kubernetes.protobuf`
from its typed clients: `kubectl create configmap|secret|namespace|deployment|job|...`,
`kubectl auth can-i` (SelfSubjectAccessReview), `kubectl drain` (Eviction), `kubectl autoscale`,
`kubectl create token`. The server still answers in JSON (kubectl accepts it), so only decoding is
needed, and only for the messages those commands build.

The format is `k8s\\x00` followed by a `runtime.Unknown` envelope (type meta + the raw message).
Messages are proto2; a field absent on the wire is absent in JSON, which matches the API's
`omitempty` conventions. The schema below lists, per message, field number → (JSON name, type),
for the fields these commands set; a field we do not know makes the request fail with 415 and a
hint to send JSON, rather than silently losing data.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from sregym.errors import ApiError, BadRequest

MAGIC = b"k8s\x00"

# Type grammar: scalar names, a message name, "[]T" (repeated), "map:T" (map<string,T>),
# "inline:T" (a Go embedded struct: its fields merge into the parent object), "Ignore" (dropped).
# Go's protobuf marshaller always writes non-pointer scalars, so a zero string/number/bool is
# dropped (JSON `omitempty`) unless the type is marked "*" (a Go pointer: zero is meaningful).
_SCALARS = {"string", "bytes", "int32", "int64", "bool", "double", "Time", "MicroTime", "Quantity",
            "IntOrString", "RawJSON", "Duration"}

_META = {1: ("name", "string"), 2: ("generateName", "string"), 3: ("namespace", "string"),
         4: ("selfLink", "string"), 5: ("uid", "string"), 6: ("resourceVersion", "string"),
         7: ("generation", "int64"), 8: ("creationTimestamp", "Time"),
         9: ("deletionTimestamp", "Time"), 10: ("deletionGracePeriodSeconds", "*int64"),
         11: ("labels", "map:string"), 12: ("annotations", "map:string"),
         13: ("ownerReferences", "[]OwnerReference"), 14: ("finalizers", "[]string")}


def obj(spec: str | None = None) -> dict[int, tuple[str, str]]:
    """metadata/spec/status; the status a client sends on create is dropped, as the API server
    resets it for these kinds."""
    fields: dict[int, tuple[str, str]] = {1: ("metadata", "ObjectMeta"), 3: ("status", "Ignore")}
    if spec:
        fields[2] = ("spec", spec)
    return fields


SCHEMA: dict[str, dict[int, tuple[str, str]]] = {
    # apimachinery
    "Unknown": {1: ("typeMeta", "TypeMeta"), 2: ("raw", "bytes"), 3: ("contentEncoding", "string"),
                4: ("contentType", "string")},
    "TypeMeta": {1: ("apiVersion", "string"), 2: ("kind", "string")},
    "ObjectMeta": _META,
    "OwnerReference": {1: ("kind", "string"), 3: ("name", "string"), 4: ("uid", "string"),
                       5: ("apiVersion", "string"), 6: ("controller", "*bool"),
                       7: ("blockOwnerDeletion", "*bool")},
    "LabelSelector": {1: ("matchLabels", "map:string"),
                      2: ("matchExpressions", "[]LabelSelectorRequirement")},
    "LabelSelectorRequirement": {1: ("key", "string"), 2: ("operator", "string"),
                                 3: ("values", "[]string")},
    "DeleteOptions": {1: ("gracePeriodSeconds", "*int64"), 2: ("preconditions", "Preconditions"),
                      3: ("orphanDependents", "*bool"), 4: ("propagationPolicy", "*string"),
                      5: ("dryRun", "[]string")},
    "Preconditions": {1: ("uid", "*string"), 2: ("resourceVersion", "*string")},
    # core/v1
    "ConfigMap": {1: ("metadata", "ObjectMeta"), 2: ("data", "map:string"),
                  3: ("binaryData", "map:bytes"), 4: ("immutable", "*bool")},
    "Secret": {1: ("metadata", "ObjectMeta"), 2: ("data", "map:bytes"), 3: ("type", "string"),
               4: ("stringData", "map:string"), 5: ("immutable", "*bool")},
    "Namespace": obj("NamespaceSpec"),
    "NamespaceSpec": {1: ("finalizers", "[]string")},
    "ServiceAccount": {1: ("metadata", "ObjectMeta"), 2: ("secrets", "[]ObjectReference"),
                       3: ("imagePullSecrets", "[]LocalObjectReference"),
                       4: ("automountServiceAccountToken", "*bool")},
    "ObjectReference": {1: ("kind", "string"), 2: ("namespace", "string"), 3: ("name", "string"),
                        4: ("uid", "string"), 5: ("apiVersion", "string"),
                        6: ("resourceVersion", "string"), 7: ("fieldPath", "string")},
    "LocalObjectReference": {1: ("name", "string")},
    "ResourceQuota": obj("ResourceQuotaSpec"),
    "ResourceQuotaSpec": {1: ("hard", "map:Quantity"), 2: ("scopes", "[]string")},
    "Service": obj("ServiceSpec"),
    "ServiceSpec": {1: ("ports", "[]ServicePort"), 2: ("selector", "map:string"),
                    3: ("clusterIP", "string"), 4: ("type", "string"), 5: ("externalIPs", "[]string"),
                    7: ("sessionAffinity", "string"), 8: ("loadBalancerIP", "string"),
                    10: ("externalName", "string"), 11: ("externalTrafficPolicy", "string"),
                    13: ("publishNotReadyAddresses", "bool"), 18: ("clusterIPs", "[]string")},
    "ServicePort": {1: ("name", "string"), 2: ("protocol", "string"), 3: ("port", "int32"),
                    4: ("targetPort", "IntOrString"), 5: ("nodePort", "int32"),
                    6: ("appProtocol", "*string")},
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec")},
    "PodSpec": {1: ("volumes", "[]Volume"), 2: ("containers", "[]Container"),
                3: ("restartPolicy", "string"), 4: ("terminationGracePeriodSeconds", "*int64"),
                5: ("activeDeadlineSeconds", "*int64"), 6: ("dnsPolicy", "string"),
                7: ("nodeSelector", "map:string"), 8: ("serviceAccountName", "string"),
                9: ("serviceAccount", "string"), 10: ("nodeName", "string"),
                11: ("hostNetwork", "bool"), 16: ("hostname", "string"), 17: ("subdomain", "string"),
                19: ("schedulerName", "string"), 20: ("initContainers", "[]Container"),
                24: ("priorityClassName", "string"), 25: ("priority", "*int32")},
    "Volume": {1: ("name", "string")},
    "Container": {1: ("name", "string"), 2: ("image", "string"), 3: ("command", "[]string"),
                  4: ("args", "[]string"), 5: ("workingDir", "string"), 6: ("ports", "[]ContainerPort"),
                  7: ("env", "[]EnvVar"), 8: ("resources", "ResourceRequirements"),
                  13: ("terminationMessagePath", "string"), 14: ("imagePullPolicy", "string"),
                  16: ("stdin", "bool"), 17: ("stdinOnce", "bool"), 18: ("tty", "bool"),
                  20: ("terminationMessagePolicy", "string")},
    "ContainerPort": {1: ("name", "string"), 2: ("hostPort", "int32"), 3: ("containerPort", "int32"),
                      4: ("protocol", "string"), 5: ("hostIP", "string")},
    "EnvVar": {1: ("name", "string"), 2: ("value", "string")},
    "ResourceRequirements": {1: ("limits", "map:Quantity"), 2: ("requests", "map:Quantity")},
    # apps/v1
    "Deployment": obj("DeploymentSpec"),
    "DeploymentSpec": {1: ("replicas", "*int32"), 2: ("selector", "LabelSelector"),
                       3: ("template", "PodTemplateSpec"), 4: ("strategy", "DeploymentStrategy"),
                       5: ("minReadySeconds", "int32"), 6: ("revisionHistoryLimit", "*int32"),
                       7: ("paused", "bool"), 9: ("progressDeadlineSeconds", "*int32")},
    "DeploymentStrategy": {1: ("type", "string")},
    # batch/v1
    "Job": obj("JobSpec"),
    "JobSpec": {1: ("parallelism", "*int32"), 2: ("completions", "*int32"),
                3: ("activeDeadlineSeconds", "*int64"), 4: ("selector", "LabelSelector"),
                5: ("manualSelector", "*bool"), 6: ("template", "PodTemplateSpec"),
                7: ("backoffLimit", "*int32"), 8: ("ttlSecondsAfterFinished", "*int32"),
                9: ("completionMode", "*string"), 10: ("suspend", "*bool")},
    "CronJob": obj("CronJobSpec"),
    "CronJobSpec": {1: ("schedule", "string"), 2: ("startingDeadlineSeconds", "*int64"),
                    3: ("concurrencyPolicy", "string"), 4: ("suspend", "*bool"),
                    5: ("jobTemplate", "JobTemplateSpec"), 6: ("successfulJobsHistoryLimit", "*int32"),
                    7: ("failedJobsHistoryLimit", "*int32"), 8: ("timeZone", "*string")},
    "JobTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec")},
    # rbac.authorization.k8s.io/v1
    "Role": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[]PolicyRule")},
    "ClusterRole": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[]PolicyRule"),
                    3: ("aggregationRule", "AggregationRule")},
    "AggregationRule": {1: ("clusterRoleSelectors", "[]LabelSelector")},
    "PolicyRule": {1: ("verbs", "[]string"), 2: ("apiGroups", "[]string"), 3: ("resources", "[]string"),
                   4: ("resourceNames", "[]string"), 5: ("nonResourceURLs", "[]string")},
    "RoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[]Subject"),
                    3: ("roleRef", "RoleRef")},
    "ClusterRoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[]Subject"),
                           3: ("roleRef", "RoleRef")},
    "Subject": {1: ("kind", "string"), 2: ("apiGroup", "string"), 3: ("name", "string"),
                4: ("namespace", "string")},
    "RoleRef": {1: ("apiGroup", "string"), 2: ("kind", "string"), 3: ("name", "string")},
    # scheduling, policy
    "PriorityClass": {1: ("metadata", "ObjectMeta"), 2: ("value", "*int32"),
                      3: ("globalDefault", "bool"), 4: ("description", "string"),
                      5: ("preemptionPolicy", "*string")},
    "PodDisruptionBudget": obj("PodDisruptionBudgetSpec"),
    "PodDisruptionBudgetSpec": {1: ("minAvailable", "*IntOrString"), 2: ("selector", "LabelSelector"),
                                3: ("maxUnavailable", "*IntOrString"),
                                4: ("unhealthyPodEvictionPolicy", "*string")},
    "Eviction": {1: ("metadata", "ObjectMeta"), 2: ("deleteOptions", "DeleteOptions")},
    # authorization / authentication
    "SelfSubjectAccessReview": obj("SelfSubjectAccessReviewSpec"),
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "ResourceAttributes"),
                                    2: ("nonResourceAttributes", "NonResourceAttributes")},
    "ResourceAttributes": {1: ("namespace", "string"), 2: ("verb", "string"), 3: ("group", "string"),
                           4: ("version", "string"), 5: ("resource", "string"),
                           6: ("subresource", "string"), 7: ("name", "string")},
    "NonResourceAttributes": {1: ("path", "string"), 2: ("verb", "string")},
    "SelfSubjectRulesReview": obj("SelfSubjectRulesReviewSpec"),
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "string")},
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta"), 2: ("status", "Ignore")},
    "TokenRequest": obj("TokenRequestSpec"),
    "TokenRequestSpec": {1: ("audiences", "[]string"), 4: ("expirationSeconds", "*int64"),
                         3: ("boundObjectRef", "BoundObjectReference")},
    "BoundObjectReference": {1: ("kind", "string"), 2: ("apiVersion", "string"), 3: ("name", "string"),
                             4: ("uid", "*string")},
    # networking.k8s.io/v1
    "Ingress": obj("IngressSpec"),
    "IngressSpec": {1: ("defaultBackend", "IngressBackend"), 2: ("tls", "[]IngressTLS"),
                    3: ("rules", "[]IngressRule"), 4: ("ingressClassName", "*string")},
    "IngressTLS": {1: ("hosts", "[]string"), 2: ("secretName", "string")},
    "IngressRule": {1: ("host", "string"), 2: ("", "inline:IngressRuleValue")},
    "IngressRuleValue": {1: ("http", "HTTPIngressRuleValue")},
    "HTTPIngressRuleValue": {1: ("paths", "[]HTTPIngressPath")},
    "HTTPIngressPath": {1: ("path", "string"), 2: ("backend", "IngressBackend"),
                        3: ("pathType", "string")},
    "IngressBackend": {4: ("service", "IngressServiceBackend")},
    "IngressServiceBackend": {1: ("name", "string"), 2: ("port", "ServiceBackendPort")},
    "ServiceBackendPort": {1: ("name", "string"), 2: ("number", "int32")},
    # autoscaling/v2 and v1
    "HorizontalPodAutoscaler": obj("HorizontalPodAutoscalerSpec"),
    "HorizontalPodAutoscalerSpec": {1: ("scaleTargetRef", "CrossVersionObjectReference"),
                                    2: ("minReplicas", "*int32"), 3: ("maxReplicas", "int32"),
                                    4: ("metrics", "[]MetricSpec")},
    "HorizontalPodAutoscalerSpecV1": {1: ("scaleTargetRef", "CrossVersionObjectReference"),
                                      2: ("minReplicas", "*int32"), 3: ("maxReplicas", "int32"),
                                      4: ("targetCPUUtilizationPercentage", "*int32")},
    "CrossVersionObjectReference": {1: ("kind", "string"), 2: ("name", "string"),
                                    3: ("apiVersion", "string")},
    "MetricSpec": {1: ("type", "string"), 4: ("resource", "ResourceMetricSource")},
    "ResourceMetricSource": {1: ("name", "string"), 2: ("target", "MetricTarget")},
    "MetricTarget": {1: ("type", "string"), 2: ("value", "Quantity"), 3: ("averageValue", "Quantity"),
                     4: ("averageUtilization", "*int32")},
}

# (apiVersion, kind) → message name, where the name differs from the kind.
_MESSAGE_FOR = {("autoscaling/v1", "HorizontalPodAutoscaler"): "HorizontalPodAutoscalerV1"}
SCHEMA["HorizontalPodAutoscalerV1"] = obj("HorizontalPodAutoscalerSpecV1")


class UnsupportedProtobuf(ApiError):
    code = 415
    reason = "UnsupportedMediaType"


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise BadRequest("malformed protobuf body: truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise BadRequest("malformed protobuf body: varint too long")


def fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) of one message, in wire order."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if pos + length > len(buf):
                raise BadRequest("malformed protobuf body: truncated field")
            value, pos = buf[pos:pos + length], pos + length
        elif wire == 1:
            value, pos = int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
        elif wire == 5:
            value, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        else:
            raise BadRequest(f"malformed protobuf body: unsupported wire type {wire}")
        yield number, wire, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(kind: str, wire: int, value: Any, where: str) -> Any:
    if kind in ("int32", "int64"):
        return _signed(value)
    if kind == "bool":
        return bool(value)
    if kind == "double":
        import struct

        return struct.unpack("<d", value.to_bytes(8, "little"))[0]
    if not isinstance(value, bytes):
        raise BadRequest(f"malformed protobuf body: {where} is not length-delimited")
    if kind == "string":
        return value.decode("utf-8", errors="replace")
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind == "RawJSON":
        return json.loads(value) if value else None
    sub = {n: v for n, _w, v in fields(value)}
    if kind in ("Time", "MicroTime"):
        moment = datetime.fromtimestamp(_signed(sub.get(1, 0)) + sub.get(2, 0) / 1e9, tz=UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ" if kind == "Time" else "%Y-%m-%dT%H:%M:%S.%fZ")
    if kind == "Duration":
        return f"{_signed(sub.get(1, 0))}s"
    if kind == "Quantity":
        return (sub.get(1) or b"").decode()
    if kind == "IntOrString":
        if sub.get(1) == 1:
            return (sub.get(3) or b"").decode()
        return _to_int32(sub.get(2, 0))
    raise BadRequest(f"malformed protobuf body: unknown scalar {kind}")


def _to_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def decode_message(buf: bytes, message: str, where: str = "") -> dict[str, Any]:
    schema = SCHEMA.get(message)
    if schema is None:
        raise UnsupportedProtobuf(f"protobuf bodies of {message} are not supported by this server; "
                                  "send application/json")
    out: dict[str, Any] = {}
    for number, wire, value in fields(buf):
        entry = schema.get(number)
        if entry is None:
            if _is_zero(wire, value):
                continue
            raise UnsupportedProtobuf(
                f"protobuf field {number} of {message} ({where or 'object'}) is not supported by this "
                "server; send the object as application/json (e.g. kubectl apply -f)")
        name, kind = entry
        path = f"{where}.{name}" if where else name
        pointer = kind.startswith("*")
        kind = kind.lstrip("*")
        if kind == "Ignore":
            continue
        if kind.startswith("inline:"):
            out.update(decode_message(value, kind[len("inline:"):], where))
        elif kind.startswith("[]"):
            item = kind[2:]
            out.setdefault(name, []).append(_value(item, wire, value, path))
        elif kind.startswith("map:"):
            entry_fields = {n: (w, v) for n, w, v in fields(value)}
            key = entry_fields.get(1, (2, b""))[1]
            val_wire, val = entry_fields.get(2, (2, b""))
            key_text = key.decode("utf-8", errors="replace") if isinstance(key, bytes) else str(key)
            out.setdefault(name, {})[key_text] = _value(kind[4:], val_wire, val, path)
        else:
            decoded = _value(kind, wire, value, path)
            if not pointer and kind in _SCALARS and decoded in ("", 0, False, None, _EPOCH):
                continue
            out[name] = decoded
    return out


_EPOCH = "1970-01-01T00:00:00Z"


def _is_zero(wire: int, value: Any, depth: int = 0) -> bool:
    """Whether an unknown field holds only Go zero values (always marshalled; safe to drop)."""
    if wire != 2:
        return value == 0
    if not value:
        return True
    if depth > 8:
        return False
    try:
        return all(_is_zero(w, v, depth + 1) for _n, w, v in fields(value))
    except BadRequest:
        return False


def _value(kind: str, wire: int, value: Any, where: str) -> Any:
    if kind in _SCALARS:
        return _scalar(kind, wire, value, where)
    if not isinstance(value, bytes):
        raise BadRequest(f"malformed protobuf body: {where} is not a message")
    return decode_message(value, kind, where)


def decode(body: bytes) -> dict[str, Any]:
    """Decode a `k8s\\x00`-framed protobuf body into the JSON-shaped object."""
    if not body.startswith(MAGIC):
        raise BadRequest("malformed protobuf body: missing the k8s protobuf prefix")
    envelope = decode_message(body[len(MAGIC):], "Unknown")
    type_meta = envelope.get("typeMeta") or {}
    api_version = type_meta.get("apiVersion", "")
    kind = type_meta.get("kind", "")
    raw = base64.b64decode(envelope.get("raw", ""))
    message = _MESSAGE_FOR.get((api_version, kind), kind)
    obj = decode_message(raw, message)
    return {"apiVersion": api_version, "kind": kind, **obj}


__all__ = ["MAGIC", "SCHEMA", "UnsupportedProtobuf", "decode", "decode_message", "fields"]
