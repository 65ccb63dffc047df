"""API validation: the 422 `Invalid` errors the real API server returns before anything is stored.

An agent that writes a bad manifest or a bad patch must get the answer a real cluster gives
(`Deployment.apps "web" is invalid: spec.template.spec.containers[0].image: Required value`), not a
twin that silently stores garbage and fails later in a way no real cluster would. The rules and the
wording follow `k8s.io/kubernetes/pkg/apis/core/validation` and `apimachinery/pkg/util/validation`
for the fields agents touch most: names, labels, pod specs, workload selectors, Services,
ConfigMap/Secret keys and the fields that are immutable on update. Status writes are not
validated (controllers own them), and each check is a few dict lookups so writes stay cheap.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from typing import Any

from sregym.errors import BadRequest, invalid
from sregym.twin.admission.base import AdmissionPlugin, admission_plugin
from sregym.twin.machinery.kinds import CHAOS_GROUP, ResourceKind
from sregym.twin.machinery.quantity import QuantityError, parse_quantity
from sregym.twin.machinery.store import Operation

Causes = list[tuple[str, str, str]]
Obj = dict[str, Any]


# ============================================================================ message builders
def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError: note the double space before each `or`, as the real one."""
    text = message + " (e.g. "
    for index, example in enumerate(examples):
        if index:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{fmt}')"


def go_value(value: Any) -> str:
    """A value as Go's field.Invalid prints it: strings quoted, numbers bare."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return go_string_map(value)
    return json.dumps(value, sort_keys=True)


def go_string_map(value: dict[str, Any] | None) -> str:
    if value is None:
        return "map[string]string(nil)"
    inner = ", ".join(f"{json.dumps(k)}:{json.dumps(str(v))}" for k, v in sorted(value.items()))
    return "map[string]string{" + inner + "}"


def go_selector(selector: Obj | None) -> str:
    """`%#v` of a *v1.LabelSelector, as immutability errors print it."""
    selector = selector or {}
    labels = go_string_map(selector.get("matchLabels")) if selector.get("matchLabels") is not None \
        else "map[string]string(nil)"
    exprs = selector.get("matchExpressions")
    if exprs is None:
        expr_text = "[]v1.LabelSelectorRequirement(nil)"
    else:
        parts = []
        for e in exprs:
            values = e.get("values")
            vals = "[]string(nil)" if values is None else \
                "[]string{" + ", ".join(json.dumps(str(v)) for v in values) + "}"
            parts.append(f'v1.LabelSelectorRequirement{{Key:{json.dumps(str(e.get("key", "")))}, '
                         f'Operator:{json.dumps(str(e.get("operator", "")))}, Values:{vals}}}')
        expr_text = "[]v1.LabelSelectorRequirement{" + ", ".join(parts) + "}"
    return f"v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{expr_text}}}"


def _invalid(causes: Causes, field: str, value: Any, message: str) -> None:
    causes.append(("FieldValueInvalid", field, f"Invalid value: {go_value(value)}: {message}"))


def _invalid_raw(causes: Causes, field: str, shown: str, message: str) -> None:
    """field.Invalid for values Go prints with %#v (selectors, maps): shown as given."""
    causes.append(("FieldValueInvalid", field, f"Invalid value: {shown}: {message}"))


def _required(causes: Causes, field: str, detail: str = "") -> None:
    causes.append(("FieldValueRequired", field, "Required value" + (f": {detail}" if detail else "")))


def _unsupported(causes: Causes, field: str, value: Any, supported: list[str]) -> None:
    allowed = ", ".join(json.dumps(v) for v in supported)
    causes.append(("FieldValueNotSupported", field,
                   f"Unsupported value: {go_value(value)}: supported values: {allowed}"))


def _duplicate(causes: Causes, field: str, value: Any) -> None:
    causes.append(("FieldValueDuplicate", field, f"Duplicate value: {go_value(value)}"))


def _forbidden(causes: Causes, field: str, detail: str) -> None:
    causes.append(("FieldValueForbidden", field, f"Forbidden: {detail}"))


def _not_found(causes: Causes, field: str, value: Any) -> None:
    causes.append(("FieldValueNotFound", field, f"Not found: {go_value(value)}"))


# ============================================================================ string formats
_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_FMT + ")?"
_ENV_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_RE = {fmt: re.compile(fmt) for fmt in (_LABEL_FMT, _SUBDOMAIN_FMT, _DNS1035_FMT, _QUALIFIED_FMT,
                                        _LABEL_VALUE_FMT, _ENV_FMT, _CONFIG_KEY_FMT)}

LABEL_MSG = _regex_error("a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                         "or '-', and must start and end with an alphanumeric character", _LABEL_FMT,
                         "my-name", "123-abc")
SUBDOMAIN_MSG = _regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                             "characters, '-' or '.', and must start and end with an alphanumeric character",
                             _SUBDOMAIN_FMT, "example.com")
DNS1035_MSG = _regex_error("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                           "start with an alphabetic character, and end with an alphanumeric character",
                           _DNS1035_FMT, "my-name", "abc-123")
_QUALIFIED_MSG = _regex_error("must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                              "end with an alphanumeric character", _QUALIFIED_FMT, "MyName", "my.name",
                              "123-abc")
_LABEL_VALUE_MSG = _regex_error("a valid label must be an empty string or consist of alphanumeric "
                                "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                                "character", _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
_ENV_MSG = _regex_error("a valid environment variable name must consist of alphabetic characters, digits, "
                        "'_', '-', or '.', and must not start with a digit", _ENV_FMT, "my.env-name",
                        "MY_ENV.NAME", "MyEnvName1")
_CONFIG_KEY_MSG = _regex_error("a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                               _CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name")
_PORT_RANGE_MSG = "must be between 1 and 65535, inclusive"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def dns1123_label(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _RE[_LABEL_FMT].fullmatch(value):
        errs.append(LABEL_MSG)
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    errs = [_max_len(253)] if len(value) > 253 else []
    if not _RE[_SUBDOMAIN_FMT].fullmatch(value):
        errs.append(SUBDOMAIN_MSG)
    return errs


def dns1035_label(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _RE[_DNS1035_FMT].fullmatch(value):
        errs.append(DNS1035_MSG)
    return errs


def path_segment_name(value: str) -> list[str]:
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{ch}'" for ch in ("/", "%") if ch in value]


def qualified_name(value: str) -> list[str]:
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + msg for msg in dns1123_subdomain(prefix)]
    else:
        return ["a qualified name " + _QUALIFIED_MSG + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _RE[_QUALIFIED_FMT].fullmatch(name):
        errs.append("name part " + _QUALIFIED_MSG)
    return errs


def label_value(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _RE[_LABEL_VALUE_FMT].fullmatch(value):
        errs.append(_LABEL_VALUE_MSG)
    return errs


def port_name(value: str) -> list[str]:
    """IANA_SVC_NAME, as container and Service port names must be."""
    errs = []
    if len(value) > 15:
        errs.append(_max_len(15))
    if not re.fullmatch("[-a-z0-9]+", value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value and not re.search("[a-z]", value):
        errs.append("must contain at least one letter (a-z)")
    if value.startswith("-") or value.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def config_key(value: str) -> list[str]:
    errs = [_max_len(253)] if len(value) > 253 else []
    if not _RE[_CONFIG_KEY_FMT].fullmatch(value):
        errs.append(_CONFIG_KEY_MSG)
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def _port_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535


# ============================================================================ metadata
_LABEL_NAMED = {("", "Namespace")}
_DNS1035_NAMED = {("", "Service")}
_PATH_SEGMENT_NAMED = {("rbac.authorization.k8s.io", k) for k in ("Role", "ClusterRole", "RoleBinding",
                                                                   "ClusterRoleBinding")}


def _name_errors(kind: ResourceKind, obj: Obj) -> list[str]:
    name = str((obj.get("metadata") or {}).get("name", ""))
    if kind.key == ("apiextensions.k8s.io", "CustomResourceDefinition"):
        spec = obj.get("spec") or {}
        expected = f"{(spec.get('names') or {}).get('plural', '')}.{spec.get('group', '')}"
        return [] if name == expected else ['must be spec.names.plural+"."+spec.group']
    if kind.key == ("apiregistration.k8s.io", "APIService"):  # `v1.` names the core group
        spec = obj.get("spec") or {}
        expected = f"{spec.get('version', '')}.{spec.get('group', '')}"
        return [] if name == expected else [f'must be `spec.version+"."+spec.group`: "{expected}"']
    if kind.key in _LABEL_NAMED:
        return dns1123_label(name)
    if kind.key in _DNS1035_NAMED:
        return dns1035_label(name)
    if kind.key in _PATH_SEGMENT_NAMED or kind.custom or kind.group == CHAOS_GROUP:
        return path_segment_name(name)
    return dns1123_subdomain(name)


def _labels(causes: Causes, labels: Any, field: str) -> None:
    if labels is None:
        return
    if not isinstance(labels, dict):
        raise BadRequest(f"json: cannot unmarshal {type(labels).__name__} into Go struct field {field} "
                         "of type map[string]string")
    for key in sorted(labels):
        value = labels[key]
        if not isinstance(value, str):
            raise BadRequest(f"json: cannot unmarshal {_json_kind(value)} into Go struct field "
                             f"{field} of type string")
        for msg in qualified_name(str(key)):
            _invalid(causes, field, key, msg)
        for msg in label_value(value):
            _invalid(causes, field, value, msg)


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null" if value is None else "string"


def _metadata(causes: Causes, op: Operation) -> None:
    meta = op.obj.get("metadata") or {}  # type: ignore[union-attr]
    old_meta = (op.old or {}).get("metadata") or {}
    if op.verb == "CREATE":
        for msg in _name_errors(op.kind, op.obj):  # type: ignore[arg-type]
            _invalid(causes, "metadata.name", meta.get("name", ""), msg)
    if op.verb == "CREATE" or meta.get("labels") != old_meta.get("labels"):
        _labels(causes, meta.get("labels"), "metadata.labels")
    annotations = meta.get("annotations")
    if annotations and (op.verb == "CREATE" or annotations != old_meta.get("annotations")):
        if not isinstance(annotations, dict):
            raise BadRequest("json: cannot unmarshal into Go struct field metadata.annotations of type "
                             "map[string]string")
        size = 0
        for key in sorted(annotations):
            value = annotations[key]
            if not isinstance(value, str):
                raise BadRequest(f"json: cannot unmarshal {_json_kind(value)} into Go struct field "
                                 "ObjectMeta.metadata.annotations of type string")
            for msg in qualified_name(str(key).lower()):
                _invalid(causes, "metadata.annotations", key, msg)
            size += len(key) + len(value.encode())
        if size > 256 * 1024:
            causes.append(("FieldValueTooLong", "metadata.annotations",
                           "Too long: must have at most 262144 bytes"))


# ============================================================================ pod spec
_CONTAINER_RESOURCES = {"cpu", "memory", "ephemeral-storage"}
_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")


def _quantity(kind: ResourceKind, value: Any) -> Any:
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError, ValueError, ArithmeticError):
        raise BadRequest(f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: '
                         "quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from None


def _resources(causes: Causes, kind: ResourceKind, resources: Any, path: str) -> None:
    if not isinstance(resources, dict):
        return
    parsed: dict[str, dict[str, Any]] = {}
    for section in ("limits", "requests"):
        values = resources.get(section) or {}
        if not isinstance(values, dict):
            continue
        parsed[section] = {}
        for name in sorted(values):
            qty = _quantity(kind, values[name])
            parsed[section][name] = qty
            field = f"{path}.{section}[{name}]"
            standard = name in _CONTAINER_RESOURCES or name.startswith("hugepages-")
            if not standard and ("/" not in name or name.split("/")[0].endswith("kubernetes.io")):
                _invalid(causes, field, name, "must be a standard resource type or fully qualified")
            if qty < 0:
                _invalid(causes, field, str(values[name]), "must be greater than or equal to 0")
    limits = parsed.get("limits", {})
    for name, request in parsed.get("requests", {}).items():
        if name in limits and request > limits[name]:
            raw_request = resources["requests"][name]
            _invalid(causes, f"{path}.requests", str(raw_request),
                     f"must be less than or equal to {name} limit of {resources['limits'][name]}")


def _probe_port(causes: Causes, port: Any, field: str) -> None:
    if isinstance(port, str) and not port.isdigit():
        for msg in port_name(port):
            _invalid(causes, field, port, msg)
    elif not _port_number(int(port) if isinstance(port, str) else port):
        _invalid(causes, field, port, _PORT_RANGE_MSG)


def _probe(causes: Causes, probe: Any, path: str, *, liveness_like: bool) -> None:
    if not isinstance(probe, dict):
        return
    handlers = [h for h in _HANDLERS if probe.get(h) is not None]
    if not handlers:
        _required(causes, path, "must specify a handler type")
    for extra in handlers[1:]:
        _forbidden(causes, f"{path}.{extra}", "may not specify more than 1 handler type")
    if probe.get("httpGet") is not None:
        http = probe["httpGet"]
        if isinstance(http, dict):
            if http.get("port") is None:
                _required(causes, f"{path}.httpGet.port")
            else:
                _probe_port(causes, http["port"], f"{path}.httpGet.port")
    if isinstance(probe.get("tcpSocket"), dict):
        if probe["tcpSocket"].get("port") is None:
            _required(causes, f"{path}.tcpSocket.port")
        else:
            _probe_port(causes, probe["tcpSocket"]["port"], f"{path}.tcpSocket.port")
    if isinstance(probe.get("exec"), dict) and not probe["exec"].get("command"):
        _required(causes, f"{path}.exec.command")
    for field in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                  "failureThreshold", "terminationGracePeriodSeconds"):
        value = probe.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            _invalid(causes, f"{path}.{field}", value, "must be greater than or equal to 0")
    success = probe.get("successThreshold")
    if liveness_like and isinstance(success, int) and success not in (0, 1):
        _invalid(causes, f"{path}.successThreshold", success, "must be 1")


def _container(causes: Causes, kind: ResourceKind, c: Obj, path: str, *, init: bool,
               volumes: set[str]) -> None:
    image = c.get("image")
    if not image or not str(image).strip():
        _required(causes, f"{path}.image")
    elif str(image) != str(image).strip():
        _invalid(causes, f"{path}.image", image, "must not have leading or trailing whitespace")
    policy = c.get("imagePullPolicy")
    if policy is not None and policy not in ("Always", "IfNotPresent", "Never"):
        _unsupported(causes, f"{path}.imagePullPolicy", policy, ["Always", "IfNotPresent", "Never"])
    seen_ports: set[str] = set()
    for j, port in enumerate(c.get("ports") or []):
        if not isinstance(port, dict):
            continue
        ppath = f"{path}.ports[{j}]"
        if port.get("name"):
            for msg in port_name(str(port["name"])):
                _invalid(causes, f"{ppath}.name", port["name"], msg)
            if port["name"] in seen_ports:
                _duplicate(causes, f"{ppath}.name", port["name"])
            seen_ports.add(str(port["name"]))
        if port.get("containerPort") is None:
            _required(causes, f"{ppath}.containerPort")
        elif not _port_number(port["containerPort"]):
            _invalid(causes, f"{ppath}.containerPort", port["containerPort"], _PORT_RANGE_MSG)
        if port.get("hostPort") not in (None, 0) and not _port_number(port["hostPort"]):
            _invalid(causes, f"{ppath}.hostPort", port["hostPort"], _PORT_RANGE_MSG)
        protocol = port.get("protocol")
        if protocol is not None and protocol not in ("SCTP", "TCP", "UDP"):
            _unsupported(causes, f"{ppath}.protocol", protocol, ["SCTP", "TCP", "UDP"])
    for j, env in enumerate(c.get("env") or []):
        if not isinstance(env, dict):
            continue
        epath = f"{path}.env[{j}]"
        name = env.get("name")
        if not name:
            _required(causes, f"{epath}.name")
        elif not _RE[_ENV_FMT].fullmatch(str(name)):
            _invalid(causes, f"{epath}.name", name, _ENV_MSG)
        source = env.get("valueFrom")
        if isinstance(source, dict):
            if env.get("value"):
                _invalid(causes, f"{epath}.valueFrom", "", "may not be specified when `value` is not empty")
            refs = [k for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
                    if source.get(k) is not None]
            if len(refs) > 1:
                _invalid(causes, f"{epath}.valueFrom", "", "may not have more than one field specified at a time")
            for ref in ("configMapKeyRef", "secretKeyRef"):
                if isinstance(source.get(ref), dict) and not source[ref].get("key"):
                    _required(causes, f"{epath}.valueFrom.{ref}.key")
    _resources(causes, kind, c.get("resources"), f"{path}.resources")
    sidecar = init and c.get("restartPolicy") == "Always"
    for probe_name in ("livenessProbe", "readinessProbe", "startupProbe"):
        if c.get(probe_name) is None:
            continue
        if init and not sidecar:
            _forbidden(causes, f"{path}.{probe_name}", "may not be set for init containers without "
                                                       "restartPolicy=Always")
            continue
        _probe(causes, c[probe_name], f"{path}.{probe_name}",
               liveness_like=probe_name != "readinessProbe")
    mount_paths: set[str] = set()
    for j, mount in enumerate(c.get("volumeMounts") or []):
        if not isinstance(mount, dict):
            continue
        mpath = f"{path}.volumeMounts[{j}]"
        if not mount.get("name"):
            _required(causes, f"{mpath}.name")
        elif mount["name"] not in volumes:
            _not_found(causes, f"{mpath}.name", mount["name"])
        if not mount.get("mountPath"):
            _required(causes, f"{mpath}.mountPath")
        elif mount["mountPath"] in mount_paths:
            _invalid(causes, f"{mpath}.mountPath", mount["mountPath"], "must be unique")
        else:
            mount_paths.add(str(mount["mountPath"]))


def validate_pod_spec(causes: Causes, kind: ResourceKind, spec: Any, path: str,
                      restart_policies: list[str] | None = None, extra_volumes: set[str] | None = None) -> None:
    """ValidatePodSpec for the fields agents and manifests usually get wrong. `extra_volumes` are
    volumes the pods will get from elsewhere (a StatefulSet's volumeClaimTemplates)."""
    if not isinstance(spec, dict):
        _required(causes, f"{path}.containers")
        return
    volumes: set[str] = set(extra_volumes or ())
    for i, volume in enumerate(spec.get("volumes") or []):
        if not isinstance(volume, dict):
            continue
        vname = volume.get("name")
        if not vname:
            _required(causes, f"{path}.volumes[{i}].name")
            continue
        for msg in dns1123_label(str(vname)):
            _invalid(causes, f"{path}.volumes[{i}].name", vname, msg)
        if vname in volumes:
            _duplicate(causes, f"{path}.volumes[{i}].name", vname)
        volumes.add(str(vname))
    if not spec.get("containers"):
        _required(causes, f"{path}.containers")
    names: set[str] = set()
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            cpath = f"{path}.{group}[{i}]"
            if not isinstance(c, dict):
                _invalid(causes, cpath, "", "must be an object")
                continue
            name = c.get("name")
            if not name:
                _required(causes, f"{cpath}.name")
            else:
                for msg in dns1123_label(str(name)):
                    _invalid(causes, f"{cpath}.name", name, msg)
                if name in names:
                    _duplicate(causes, f"{cpath}.name", name)
                names.add(str(name))
            _container(causes, kind, c, cpath, init=group == "initContainers", volumes=volumes)
    policy = spec.get("restartPolicy")
    allowed = restart_policies or ["Always", "OnFailure", "Never"]
    if policy is None and restart_policies is not None and "Always" not in restart_policies:
        policy = "Always"  # what defaulting would set, then reject, for a Job template
    if policy is not None and policy not in allowed:
        _unsupported(causes, f"{path}.restartPolicy", policy, allowed)
    dns = spec.get("dnsPolicy")
    if dns is not None and dns not in ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"):
        _unsupported(causes, f"{path}.dnsPolicy", dns, ["ClusterFirstWithHostNet", "ClusterFirst", "Default",
                                                        "None"])
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and not isinstance(grace, bool) and grace < 0:
        _invalid(causes, f"{path}.terminationGracePeriodSeconds", grace, "must be greater than or equal to 0")


# ============================================================================ per-kind rules
_POD_MUTABLE = ("pod updates may not change fields other than `spec.containers[*].image`,"
                "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
                "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set "
                "to 1 if it was previously negative)")


def _pod(causes: Causes, op: Operation) -> None:
    obj, old = op.obj or {}, op.old or {}
    if op.verb == "CREATE":
        validate_pod_spec(causes, op.kind, obj.get("spec"), "spec")
        return
    new_spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    if new_spec == old_spec:
        return
    # Blank out what may change, then anything still different is forbidden.
    a, b = dict(old_spec), dict(new_spec)
    for group in ("containers", "initContainers"):
        old_c, new_c = a.get(group) or [], b.get(group) or []
        if old_c and len(old_c) == len(new_c):
            a[group] = [{**o, "image": n.get("image")} if isinstance(o, dict) and isinstance(n, dict) else o
                        for o, n in zip(old_c, new_c, strict=True)]
    for field in ("activeDeadlineSeconds", "terminationGracePeriodSeconds", "ephemeralContainers"):
        a.pop(field, None)
        b.pop(field, None)
    old_tol = a.get("tolerations") or []
    new_tol = b.get("tolerations") or []
    if all(t in new_tol for t in old_tol):
        a.pop("tolerations", None)
        b.pop("tolerations", None)
    if not a.get("nodeName"):  # binding sets it once
        a.pop("nodeName", None)
        b.pop("nodeName", None)
    if all(g in (a.get("schedulingGates") or []) for g in b.get("schedulingGates") or []):
        a.pop("schedulingGates", None)
        b.pop("schedulingGates", None)
    if a != b:
        _forbidden(causes, "spec", _POD_MUTABLE)


_REPLICATED = {"Deployment": "deployment", "ReplicaSet": "deployment", "StatefulSet": "deployment",
               "DaemonSet": "deployment"}
_STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                "minReadySeconds")


def _selector_matches(selector: Obj, labels: dict[str, Any]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, operator = expr.get("key"), expr.get("operator")
        values = expr.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def _workload(causes: Causes, op: Operation) -> None:
    obj, old = op.obj or {}, op.old or {}
    spec = obj.get("spec") or {}
    kind_name = op.kind.kind
    replicas = spec.get("replicas")
    if kind_name != "DaemonSet" and isinstance(replicas, int) and replicas < 0:
        _invalid(causes, "spec.replicas", replicas, "must be greater than or equal to 0")
    selector = spec.get("selector")
    template = spec.get("template") or {}
    template_labels = (template.get("metadata") or {}).get("labels") or {}
    if selector is None:
        _required(causes, "spec.selector")
    elif not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        _invalid_raw(causes, "spec.selector", go_selector(selector if isinstance(selector, dict) else None),
                     f"empty selector is invalid for {_REPLICATED[kind_name]}")
    else:
        _labels(causes, selector.get("matchLabels"), "spec.selector.matchLabels")
        if not _selector_matches(selector, template_labels):
            _invalid_raw(causes, "spec.template.metadata.labels", go_string_map(template_labels),
                         "`selector` does not match template `labels`")
    _labels(causes, template_labels or None, "spec.template.metadata.labels")
    if op.verb == "CREATE" or template != ((old.get("spec") or {}).get("template") or {}):
        claims = {str((t.get("metadata") or {}).get("name")) for t in spec.get("volumeClaimTemplates") or []
                  if isinstance(t, dict)}
        validate_pod_spec(causes, op.kind, template.get("spec"), "spec.template.spec", ["Always"],
                          extra_volumes=claims)
    if kind_name == "Deployment":
        _deployment_strategy(causes, spec.get("strategy"))
    if op.verb == "UPDATE":
        old_spec = old.get("spec") or {}
        if old_spec.get("selector") is not None and selector != old_spec.get("selector"):
            _invalid_raw(causes, "spec.selector",
                         go_selector(selector if isinstance(selector, dict) else None), "field is immutable")
        if kind_name == "StatefulSet":
            changed = {k for k in set(spec) | set(old_spec) if spec.get(k) != old_spec.get(k)}
            if changed - set(_STS_MUTABLE) - {"selector"}:
                _forbidden(causes, "spec", "updates to statefulset spec for fields other than 'replicas', "
                                           "'ordinals', 'template', 'updateStrategy', "
                                           "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                                           "forbidden")


def _deployment_strategy(causes: Causes, strategy: Any) -> None:
    if not isinstance(strategy, dict):
        return
    stype = strategy.get("type")
    if stype is not None and stype not in ("Recreate", "RollingUpdate"):
        _unsupported(causes, "spec.strategy.type", stype, ["Recreate", "RollingUpdate"])
    rolling = strategy.get("rollingUpdate")
    if stype == "Recreate" and rolling is not None:
        _forbidden(causes, "spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")
    if isinstance(rolling, dict):
        surge, unavailable = rolling.get("maxSurge"), rolling.get("maxUnavailable")
        if surge in (0, "0%") and unavailable in (0, "0%"):
            _invalid(causes, "spec.strategy.rollingUpdate.maxUnavailable", unavailable,
                     "may not be 0 when `maxSurge` is 0")
        for name, value in (("maxSurge", surge), ("maxUnavailable", unavailable)):
            if isinstance(value, int) and value < 0:
                _invalid(causes, f"spec.strategy.rollingUpdate.{name}", value,
                         "must be greater than or equal to 0")
            elif isinstance(value, str) and value.endswith("%") and value[:-1].isdigit() \
                    and int(value[:-1]) > 100 and name == "maxUnavailable":
                _invalid(causes, f"spec.strategy.rollingUpdate.{name}", value, "must not be greater than 100%")


def _job(causes: Causes, op: Operation) -> None:
    obj, old = op.obj or {}, op.old or {}
    spec = obj.get("spec") or {}
    for field in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds"):
        value = spec.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            _invalid(causes, f"spec.{field}", value, "must be greater than or equal to 0")
    template = spec.get("template") or {}
    if op.verb == "CREATE":
        validate_pod_spec(causes, op.kind, template.get("spec"), "spec.template.spec", ["OnFailure", "Never"])
        return
    old_spec = old.get("spec") or {}
    if old_spec.get("selector") is not None and spec.get("selector") != old_spec.get("selector"):
        _invalid_raw(causes, "spec.selector", go_selector(spec.get("selector")), "field is immutable")
    if old_spec.get("completions") != spec.get("completions") and spec.get("completionMode") != "Indexed":
        _invalid(causes, "spec.completions", spec.get("completions"), "field is immutable")
    if (old_spec.get("template") or {}).get("spec") != template.get("spec"):
        causes.append(("FieldValueInvalid", "spec.template",
                       "Invalid value: core.PodTemplateSpec{...}: field is immutable"))


def _cronjob(causes: Causes, op: Operation) -> None:
    spec = (op.obj or {}).get("spec") or {}
    schedule = spec.get("schedule")
    if not schedule:
        _required(causes, "spec.schedule")
    elif isinstance(schedule, str) and not schedule.startswith("@"):
        fields = schedule.split()
        if fields and fields[0].startswith(("TZ=", "CRON_TZ=")):
            _invalid(causes, "spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone "
                                                        "field instead")
        elif len(fields) != 5:
            _invalid(causes, "spec.schedule", schedule, f"Expected exactly 5 fields, found {len(fields)}: "
                                                        f"{schedule}")
    policy = spec.get("concurrencyPolicy")
    if policy is not None and policy not in ("Allow", "Forbid", "Replace"):
        _unsupported(causes, "spec.concurrencyPolicy", policy, ["Allow", "Forbid", "Replace"])
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    template = job_spec.get("template") or {}
    validate_pod_spec(causes, op.kind, template.get("spec"), "spec.jobTemplate.spec.template.spec",
                      ["OnFailure", "Never"])


_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]


def _service(causes: Causes, op: Operation) -> None:
    spec = (op.obj or {}).get("spec") or {}
    svc_type = spec.get("type") or "ClusterIP"
    if svc_type not in _SERVICE_TYPES:
        _unsupported(causes, "spec.type", svc_type, _SERVICE_TYPES)
        return
    if svc_type == "ExternalName":
        if not spec.get("externalName"):
            _required(causes, "spec.externalName")
        return
    ports = spec.get("ports") or []
    headless = spec.get("clusterIP") == "None"
    if not ports and not headless:
        _required(causes, "spec.ports")
    names: set[str] = set()
    seen: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        path = f"spec.ports[{i}]"
        name = port.get("name")
        if len(ports) > 1 and not name:
            _required(causes, f"{path}.name")
        elif name:
            for msg in dns1123_label(str(name)):
                _invalid(causes, f"{path}.name", name, msg)
            if name in names:
                _duplicate(causes, f"{path}.name", name)
            names.add(str(name))
        number = port.get("port")
        if not _port_number(number):
            _invalid(causes, f"{path}.port", number, _PORT_RANGE_MSG)
        protocol = port.get("protocol") or "TCP"
        if protocol not in ("SCTP", "TCP", "UDP"):
            _unsupported(causes, f"{path}.protocol", protocol, ["SCTP", "TCP", "UDP"])
        if (number, protocol) in seen:
            causes.append(("FieldValueDuplicate", path,
                           f"Duplicate value: core.ServicePort{{Name:{json.dumps(str(name or ''))}, "
                           f"Protocol:{json.dumps(protocol)}, Port:{number}}}"))
        seen.add((number, protocol))
        target = port.get("targetPort")
        if isinstance(target, str) and not target.isdigit():
            for msg in port_name(target):
                _invalid(causes, f"{path}.targetPort", target, msg)
        elif target is not None and not _port_number(int(target) if isinstance(target, str) else target):
            _invalid(causes, f"{path}.targetPort", target, _PORT_RANGE_MSG)
        node_port = port.get("nodePort")
        if node_port:
            if svc_type == "ClusterIP":
                _forbidden(causes, f"{path}.nodePort", "may not be used when `type` is 'ClusterIP'")
            elif not (isinstance(node_port, int) and 30000 <= node_port <= 32767):
                _invalid(causes, f"{path}.nodePort", node_port, "provided port is not in the valid range. The "
                                                                "range of valid ports is 30000-32767")
    _labels(causes, spec.get("selector"), "spec.selector")


_PVC_IMMUTABLE = "spec is immutable after creation except resources.requests and volumeAttributesClassName " \
                 "for bound claims"


def _pvc(causes: Causes, op: Operation) -> None:
    spec = (op.obj or {}).get("spec") or {}
    if op.verb == "CREATE":
        if not spec.get("accessModes"):
            _required(causes, "spec.accessModes", "at least 1 access mode is required")
        requests = (spec.get("resources") or {}).get("requests") or {}
        if "storage" not in requests:
            _required(causes, "spec.resources[storage]")
        else:
            qty = _quantity(op.kind, requests["storage"])
            if qty <= 0:
                _invalid(causes, "spec.resources[storage]", str(requests["storage"]), "must be greater than zero")
        return
    old_spec = (op.old or {}).get("spec") or {}
    a, b = dict(old_spec), dict(spec)
    for field in ("resources", "volumeAttributesClassName"):
        a.pop(field, None)
        b.pop(field, None)
    if not a.get("volumeName"):  # the binder sets it once
        a.pop("volumeName", None)
        b.pop("volumeName", None)
    if a.get("storageClassName") is None:  # retroactive default class assignment
        a.pop("storageClassName", None)
        b.pop("storageClassName", None)
    if a != b:
        _forbidden(causes, "spec", _PVC_IMMUTABLE)


def _config_data(causes: Causes, op: Operation) -> None:
    obj = op.obj or {}
    is_secret = op.kind.kind == "Secret"
    data = obj.get("data") or {}
    binary = obj.get("binaryData") or {}
    string_data = (obj.get("stringData") or {}) if is_secret else {}
    for field, values in (("data", data), ("binaryData", binary), ("stringData", string_data)):
        if not isinstance(values, dict):
            raise BadRequest(f"json: cannot unmarshal {_json_kind(values)} into Go struct field "
                             f"{op.kind.kind}.{field} of type map[string]")
        for key in sorted(values):
            for msg in config_key(str(key)):
                _invalid(causes, f"{field}[{key}]", key, msg)
            if field == "binaryData" and key in data:
                _invalid(causes, f"data[{key}]", key, "duplicate of key present in binaryData")
    if is_secret or binary:
        for values in (data if is_secret else {}, binary):
            for key in sorted(values):
                _base64(op.kind, values[key])
    old = op.old or {}
    if op.verb == "UPDATE" and old.get("immutable"):
        for field in ("data", "binaryData"):
            if (old.get(field) or {}) != (obj.get(field) or {}):
                _forbidden(causes, field, "field is immutable when `immutable` is set")
        if not obj.get("immutable"):
            _forbidden(causes, "immutable", "field is immutable when `immutable` is set")
    if is_secret and op.verb == "UPDATE" and (old.get("type") or "Opaque") != (obj.get("type") or "Opaque"):
        _invalid(causes, "type", obj.get("type") or "Opaque", "field is immutable")


def _base64(kind: ResourceKind, value: Any) -> None:
    if not isinstance(value, str):
        raise BadRequest(f'{kind.kind} in version "v1" cannot be handled as a {kind.kind}: json: cannot '
                         f"unmarshal {_json_kind(value)} into Go value of type []uint8")
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        bad = next((i for i, ch in enumerate(value) if ch not in
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="), len(value))
        raise BadRequest(f'{kind.kind} in version "v1" cannot be handled as a {kind.kind}: illegal base64 '
                         f"data at input byte {bad}") from None


def _webhook_configuration(causes: Causes, op: Operation) -> None:
    """Each webhook's `timeoutSeconds` lies in 1..30 (the API server's own call budget is 34 s)."""
    for index, webhook in enumerate((op.obj or {}).get("webhooks") or []):
        timeout = webhook.get("timeoutSeconds") if isinstance(webhook, dict) else None
        if isinstance(timeout, int) and not 1 <= timeout <= 30:
            _invalid(causes, f"webhooks[{index}].timeoutSeconds", timeout,
                     "the timeout value must be between 1 and 30 seconds")


_RULES: dict[tuple[str, str], Callable[[Causes, Operation], None]] = {
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _webhook_configuration,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _webhook_configuration,
    ("", "Pod"): _pod,
    ("apps", "Deployment"): _workload,
    ("apps", "ReplicaSet"): _workload,
    ("apps", "StatefulSet"): _workload,
    ("apps", "DaemonSet"): _workload,
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cronjob,
    ("", "Service"): _service,
    ("", "PersistentVolumeClaim"): _pvc,
    ("", "ConfigMap"): _config_data,
    ("", "Secret"): _config_data,
}


@admission_plugin
class ObjectValidation(AdmissionPlugin):
    """Reject invalid objects on CREATE and UPDATE with the real API server's 422 causes."""

    name = "validation"
    order = 50

    def validate(self, op: Operation) -> None:
        if op.obj is None or op.verb == "DELETE" or op.subresource == "status":
            return
        if not isinstance(op.obj.get("metadata"), dict):
            return
        causes: Causes = []
        _metadata(causes, op)
        rule = _RULES.get(op.kind.key)
        if rule is not None:
            rule(causes, op)
        if causes:
            raise invalid(op.kind.kind, op.name, causes, op.kind.group)


__all__ = ["ObjectValidation", "config_key", "dns1035_label", "dns1123_label", "dns1123_subdomain",
           "go_selector", "label_value", "qualified_name", "validate_pod_spec"]
