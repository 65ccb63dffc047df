"""Which backend ingress-nginx picks for a request, from the Ingress objects of its class.

The controller merges every Ingress of class `nginx` into one nginx configuration: one `server`
per host (rules without a host go to the catch-all server `_`), one `location` per path. A
request is matched the way that configuration matches it:

* server: the rule host equal to the Host header, else a wildcard host (`*.example.com`, one
  label), else the catch-all server;
* location: `pathType: Exact` matches the path exactly; `Prefix` matches element-wise (`/api`
  matches `/api` and `/api/v1`, not `/apiv1`); `ImplementationSpecific` is nginx's plain string
  prefix. The longest path wins, an Exact path before a prefix of the same length;
* no location matches: the Ingress's `spec.defaultBackend` when that host's Ingress has one,
  else the controller's default backend, which answers nginx's 404 page.

`tls_secret_for(host)` names the Secret whose certificate the server presents for SNI `host`.
Nothing here touches the data plane: `ingress_nginx.py` uses these answers every tick.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CLASS_NAME = "nginx"
CLASS_ANNOTATION = "kubernetes.io/ingress.class"


@dataclass(frozen=True)
class Backend:
    """Where a matched request goes: Service `service` in `namespace`, port by number or name."""

    namespace: str
    ingress: str
    service: str
    port: int | str
    path: str = ""  # the location that matched ("" for a default backend)
    path_type: str = ""


@dataclass(frozen=True)
class Location:
    host: str
    path: str
    path_type: str
    backend: Backend


def of_class(ingress: dict[str, Any], classes: list[dict[str, Any]], class_name: str = CLASS_NAME) -> bool:
    """Does this controller (class `class_name`) serve this Ingress?"""
    spec = ingress.get("spec") or {}
    named = spec.get("ingressClassName") or \
        ((ingress.get("metadata") or {}).get("annotations") or {}).get(CLASS_ANNOTATION)
    if named:
        return named == class_name
    return any(((c.get("metadata") or {}).get("annotations") or {}).get(
        "ingressclass.kubernetes.io/is-default-class") == "true" and c["metadata"].get("name") == class_name
        for c in classes)


def _backend(namespace: str, ingress: str, raw: dict[str, Any] | None, path: str = "", path_type: str = "") -> Backend | None:
    service = (raw or {}).get("service") or {}
    port = service.get("port") or {}
    if not service.get("name"):
        return None
    return Backend(namespace, ingress, service["name"], port.get("number") or port.get("name") or 80, path, path_type)


def locations(ingresses: list[dict[str, Any]]) -> list[Location]:
    """Every (host, path) location the merged configuration has, in a stable order."""
    out: list[Location] = []
    for ing in sorted(ingresses, key=lambda i: (i["metadata"].get("namespace", ""), i["metadata"]["name"])):
        ns, name = ing["metadata"].get("namespace", "default"), ing["metadata"]["name"]
        for rule in (ing.get("spec") or {}).get("rules") or []:
            for entry in ((rule.get("http") or {}).get("paths")) or []:
                path_type = entry.get("pathType") or "ImplementationSpecific"
                path = entry.get("path") or "/"
                backend = _backend(ns, name, entry.get("backend"), path, path_type)
                if backend is not None:
                    out.append(Location(rule.get("host") or "", path, path_type, backend))
    return out


def path_matches(path_type: str, location: str, path: str) -> bool:
    if path_type == "Exact":
        return path == location
    if path_type == "Prefix":
        base = location.rstrip("/")
        return not base or path == base or path.startswith(base + "/")
    return path.startswith(location)  # ImplementationSpecific: nginx's string prefix


def _host_matches(rule_host: str, host: str) -> bool:
    if rule_host.startswith("*."):
        suffix = rule_host[1:]
        return host.endswith(suffix) and "." not in host[: -len(suffix)]
    return rule_host == host


def server_host(ingresses: list[dict[str, Any]], host: str) -> str:
    """The server a Host header lands on: the exact host, a wildcard host, else "" (catch-all)."""
    hosts = {loc.host for loc in locations(ingresses)} | {h for ing in ingresses for h in _tls_hosts(ing)}
    if host in hosts:
        return host
    wild = sorted((h for h in hosts if h.startswith("*.") and _host_matches(h, host)), key=len, reverse=True)
    return wild[0] if wild else ""


def route(ingresses: list[dict[str, Any]], host: str, path: str) -> Backend | None:
    """The backend for `host` + `path`, or None when nginx answers 404 from its default backend."""
    path = path.split("?", 1)[0] or "/"
    server = server_host(ingresses, host)
    candidates = [loc for loc in locations(ingresses)
                  if loc.host == server and path_matches(loc.path_type, loc.path, path)]
    if candidates:
        best = max(candidates, key=lambda loc: (len(loc.path), loc.path_type == "Exact"))
        return best.backend
    for ing in sorted(ingresses, key=lambda i: (i["metadata"].get("namespace", ""), i["metadata"]["name"])):
        spec = ing.get("spec") or {}
        owns = any((rule.get("host") or "") == server for rule in spec.get("rules") or []) or not spec.get("rules")
        if owns and spec.get("defaultBackend"):
            return _backend(ing["metadata"].get("namespace", "default"), ing["metadata"]["name"],
                            spec["defaultBackend"])
    return None


def _tls_hosts(ingress: dict[str, Any]) -> list[str]:
    return [h for entry in (ingress.get("spec") or {}).get("tls") or [] for h in entry.get("hosts") or []]


def tls_secret_for(ingresses: list[dict[str, Any]], host: str) -> tuple[str, str] | None:
    """(namespace, Secret name) whose certificate is served for SNI `host`, or None (the
    controller's self-signed "Kubernetes Ingress Controller Fake Certificate")."""
    for ing in sorted(ingresses, key=lambda i: (i["metadata"].get("namespace", ""), i["metadata"]["name"])):
        for entry in (ing.get("spec") or {}).get("tls") or []:
            if entry.get("secretName") and any(_host_matches(h, host) for h in entry.get("hosts") or []):
                return ing["metadata"].get("namespace", "default"), entry["secretName"]
    return None


__all__ = ["Backend", "Location", "locations", "of_class", "path_matches", "route", "server_host",
           "tls_secret_for"]
