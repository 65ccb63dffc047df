"""How the kubelet turns a pod spec into a container's environment and files.

Env resolution follows `kubelet_pods.go` `makeEnvironmentVariables`: service-link variables,
then `envFrom` sources in order, then `env` entries (later wins), each `value` expanded with
`$(VAR)` against what was defined before it. Errors carry the kubelet's exact wording because the
agent sees them verbatim in `CreateContainerConfigError` statuses and `Failed` events.

Volume files are the ConfigMap/Secret/downwardAPI keys the container sees under its mounts; a
missing source is a `FailedMount` for the kubelet (pod stuck in ContainerCreating).
"""

from __future__ import annotations

import base64
import math
import re
from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.quantity import parse_quantity

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

_VAR_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.\-]*)\)")


class ConfigError(Exception):
    """The container cannot be configured (CreateContainerConfigError); str() is the message."""


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes `$(VAR)` expansion: defined names are replaced, `$$` escapes, others stay."""

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        return env[name] if name in env else m.group(0)

    return _VAR_REF.sub(sub, text)


def _decode(value: str) -> str:
    try:
        return base64.b64decode(value).decode("utf-8", errors="replace")
    except (ValueError, TypeError):
        return value


def _configmap_data(cm: dict[str, Any]) -> dict[str, str]:
    data = dict(cm.get("data") or {})
    for key, value in (cm.get("binaryData") or {}).items():
        data.setdefault(key, _decode(value))
    return data


def _secret_data(secret: dict[str, Any]) -> dict[str, str]:
    data = {k: _decode(v) for k, v in (secret.get("data") or {}).items()}
    data.update(secret.get("stringData") or {})
    return data


def _field_ref(pod: dict[str, Any], path: str) -> str:
    meta = pod.get("metadata") or {}
    m = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if m:
        return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    values = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "metadata.uid": meta.get("uid", ""),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", ""),
        "status.hostIP": status.get("hostIP", ""),
        "status.hostIPs": ",".join(i.get("ip", "") for i in status.get("hostIPs") or []),
        "status.podIP": status.get("podIP", ""),
        "status.podIPs": ",".join(i.get("ip", "") for i in status.get("podIPs") or []),
    }
    return str(values.get(path, ""))


def _resource_ref(twin: Twin, pod: dict[str, Any], container: dict[str, Any], ref: dict[str, Any]) -> str:
    resource = ref.get("resource", "")
    name = ref.get("containerName") or container.get("name")
    target = next((c for c in (pod.get("spec") or {}).get("containers") or [] if c.get("name") == name),
                  container)
    section, _, kind = resource.partition(".")
    value = get_path(target, "resources", section, kind)
    if value is None and section == "limits":
        node = twin.store.peek("Node", None, get_path(pod, "spec", "nodeName") or "")
        value = get_path(node or {}, "status", "allocatable", kind, default="0")
    if value is None:
        value = "0"
    divisor = parse_quantity(ref.get("divisor") or "1")
    if divisor == 0:
        divisor = parse_quantity("1")
    return str(math.ceil(parse_quantity(value) / divisor))


def service_env(twin: Twin, namespace: str, enable_links: bool) -> dict[str, str]:
    """Docker-links-style variables for Services (`WEB_SERVICE_HOST` ...), as the kubelet adds."""
    env: dict[str, str] = {}
    services = []
    if enable_links:
        services.extend(twin.store.scan("Service", namespace))
    master = twin.store.peek("Service", "default", "kubernetes")
    if master is not None and namespace != "default":
        services.append(master)
    for svc in services:
        spec = svc.get("spec") or {}
        ip = spec.get("clusterIP")
        if not ip or ip == "None" or spec.get("type") == "ExternalName":
            continue
        prefix = svc["metadata"]["name"].upper().replace("-", "_")
        ports = spec.get("ports") or []
        if not ports:
            continue
        env[f"{prefix}_SERVICE_HOST"] = ip
        env[f"{prefix}_SERVICE_PORT"] = str(ports[0].get("port"))
        for port in ports:
            if port.get("name"):
                env[f"{prefix}_SERVICE_PORT_{port['name'].upper().replace('-', '_')}"] = str(port.get("port"))
        first = ports[0]
        proto = (first.get("protocol") or "TCP").lower()
        env[f"{prefix}_PORT"] = f"{proto}://{ip}:{first.get('port')}"
        for port in ports:
            proto_up = (port.get("protocol") or "TCP").upper()
            base = f"{prefix}_PORT_{port.get('port')}_{proto_up}"
            env[base] = f"{proto_up.lower()}://{ip}:{port.get('port')}"
            env[f"{base}_PROTO"] = proto_up.lower()
            env[f"{base}_PORT"] = str(port.get("port"))
            env[f"{base}_ADDR"] = ip
    return env


def resolve_env(twin: Twin, pod: dict[str, Any], container: dict[str, Any]) -> dict[str, str]:
    """The container's environment, or ConfigError with the kubelet's message."""
    store = twin.store
    namespace = pod["metadata"].get("namespace") or "default"
    spec = pod.get("spec") or {}
    env: dict[str, str] = dict(service_env(twin, namespace, spec.get("enableServiceLinks", True) is not False))
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix") or ""
        if "configMapRef" in source:
            ref = source["configMapRef"] or {}
            cm = store.peek("ConfigMap", namespace, ref.get("name", ""))
            if cm is None:
                if ref.get("optional"):
                    continue
                raise ConfigError(f'configmap "{ref.get("name", "")}" not found')
            data = _configmap_data(cm)
        elif "secretRef" in source:
            ref = source["secretRef"] or {}
            secret = store.peek("Secret", namespace, ref.get("name", ""))
            if secret is None:
                if ref.get("optional"):
                    continue
                raise ConfigError(f'secret "{ref.get("name", "")}" not found')
            data = _secret_data(secret)
        else:
            continue
        for key in sorted(data):
            env[prefix + key] = data[key]
    for item in container.get("env") or []:
        name = item.get("name", "")
        if "valueFrom" not in item or item.get("valueFrom") is None:
            env[name] = expand(str(item.get("value") or ""), env)
            continue
        source = item["valueFrom"] or {}
        if "configMapKeyRef" in source or "secretKeyRef" in source:
            value = _key_ref(store, namespace, source)
            if value is not None:
                env[name] = value
        elif "fieldRef" in source:
            env[name] = _field_ref(pod, (source["fieldRef"] or {}).get("fieldPath", ""))
        elif "resourceFieldRef" in source:
            env[name] = _resource_ref(twin, pod, container, source["resourceFieldRef"] or {})
    return env


# ----------------------------------------------------------------------------------- volumes
def _source_missing(twin: Twin, namespace: str, source: dict[str, Any], kind: str) -> str | None:
    """Error text when a configMap/secret volume source cannot be set up, else None."""
    name = source.get("name" if kind == "configmap" else "secretName", "") or source.get("name", "")
    if kind == "configmap" and name == "kube-root-ca.crt":
        return None  # published into every namespace by the root-ca-cert-publisher
    obj = twin.store.peek("ConfigMap" if kind == "configmap" else "Secret", namespace, name)
    if obj is None:
        return None if source.get("optional") else f'{kind} "{name}" not found'
    data = _configmap_data(obj) if kind == "configmap" else _secret_data(obj)
    for item in source.get("items") or []:
        if item.get("key") not in data and not source.get("optional"):
            return f"{kind} references non-existent config key: {item.get('key')}"
    return None


def volume_errors(twin: Twin, pod: dict[str, Any]) -> list[tuple[str, str]]:
    """(volume name, error) for every configMap/secret-backed volume that cannot be mounted."""
    namespace = pod["metadata"].get("namespace") or "default"
    errors: list[tuple[str, str]] = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        name = volume.get("name", "")
        problem = None
        if "configMap" in volume:
            problem = _source_missing(twin, namespace, volume["configMap"] or {}, "configmap")
        elif "secret" in volume:
            problem = _source_missing(twin, namespace, volume["secret"] or {}, "secret")
        elif "projected" in volume:
            for source in (volume["projected"] or {}).get("sources") or []:
                if "configMap" in source:
                    problem = _source_missing(twin, namespace, source["configMap"] or {}, "configmap")
                elif "secret" in source:
                    problem = _source_missing(twin, namespace, source["secret"] or {}, "secret")
                if problem:
                    break
        if problem:
            errors.append((name, problem))
    return errors


def _volume_keys(twin: Twin, pod: dict[str, Any], volume: dict[str, Any]) -> dict[str, str] | None:
    """Relative path -> content of a keyed volume (None for directory-like volumes)."""
    namespace = pod["metadata"].get("namespace") or "default"

    def keyed(source: dict[str, Any], kind: str) -> dict[str, str]:
        name = source.get("name") if kind == "configmap" else (source.get("secretName") or source.get("name"))
        if kind == "configmap" and name == "kube-root-ca.crt" and \
                twin.store.peek("ConfigMap", namespace, name) is None:
            return {"ca.crt": "-----BEGIN CERTIFICATE-----\n(sregym cluster CA)\n-----END CERTIFICATE-----\n"}
        obj = twin.store.peek("ConfigMap" if kind == "configmap" else "Secret", namespace, name or "")
        if obj is None:
            return {}
        data = _configmap_data(obj) if kind == "configmap" else _secret_data(obj)
        items = source.get("items")
        if items:
            return {i.get("path") or i.get("key"): data[i["key"]] for i in items if i.get("key") in data}
        return dict(data)

    def downward(source: dict[str, Any]) -> dict[str, str]:
        out = {}
        for item in source.get("items") or []:
            if "fieldRef" in item:
                path = (item["fieldRef"] or {}).get("fieldPath", "")
                if path in ("metadata.labels", "metadata.annotations"):
                    values = get_path(pod, *path.split("."), default={}) or {}
                    out[item.get("path", "")] = "".join(f'{k}="{v}"\n' for k, v in sorted(values.items()))
                else:
                    out[item.get("path", "")] = _field_ref(pod, path)
        return out

    if "configMap" in volume:
        return keyed(volume["configMap"] or {}, "configmap")
    if "secret" in volume:
        return keyed(volume["secret"] or {}, "secret")
    if "downwardAPI" in volume:
        return downward(volume["downwardAPI"] or {})
    if "projected" in volume:
        out: dict[str, str] = {}
        for source in (volume["projected"] or {}).get("sources") or []:
            if "configMap" in source:
                out.update(keyed(source["configMap"] or {}, "configmap"))
            elif "secret" in source:
                out.update(keyed(source["secret"] or {}, "secret"))
            elif "downwardAPI" in source:
                out.update(downward(source["downwardAPI"] or {}))
            elif "serviceAccountToken" in source:
                from sregym.twin.userland.fs import service_account_token  # the kubelet's projected token

                src = source["serviceAccountToken"] or {}
                out[src.get("path", "token")] = service_account_token(
                    twin, pod, src.get("audience"), int(src.get("expirationSeconds") or 3607))
        return out
    return None


def container_files(twin: Twin, pod: dict[str, Any], container: dict[str, Any]) -> dict[str, str]:
    """Absolute path -> content for every keyed file the container sees through its mounts."""
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    files: dict[str, str] = {}
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name"))
        if volume is None:
            continue
        keys = _volume_keys(twin, pod, volume)
        if keys is None:
            continue
        base = (mount.get("mountPath") or "/").rstrip("/")
        sub_path = mount.get("subPath")
        if sub_path:
            if sub_path in keys:
                files[base or "/"] = keys[sub_path]
            else:
                prefix = sub_path.rstrip("/") + "/"
                for rel, content in keys.items():
                    if rel.startswith(prefix):
                        files[f"{base}/{rel[len(prefix):]}"] = content
            continue
        for rel, content in keys.items():
            files[f"{base}/{rel}"] = content
    return files


def _key_ref(store: Any, namespace: str, source: dict[str, Any]) -> str | None:
    """The value of a `configMapKeyRef`/`secretKeyRef`, None when an optional reference is
    missing, or ConfigError with the kubelet's message."""
    is_cm = "configMapKeyRef" in source
    ref = source["configMapKeyRef" if is_cm else "secretKeyRef"] or {}
    kind, label = ("ConfigMap", "configmap") if is_cm else ("Secret", "secret")
    obj_name, key = ref.get("name", ""), ref.get("key", "")
    obj = store.peek(kind, namespace, obj_name)
    if obj is None:
        if ref.get("optional"):
            return None
        raise ConfigError(f'{label} "{obj_name}" not found')
    data = _configmap_data(obj) if is_cm else _secret_data(obj)
    if key not in data:
        if ref.get("optional"):
            return None
        raise ConfigError(f"couldn't find key {key} in {kind} {namespace}/{obj_name}")
    return data[key]
