"""`/nginx-ingress-controller` as a data-plane program, and what it answers a single request.

The program listens on 80 (http), 443 (https, `tls_port`) and 10254 (`/healthz`). Its
operations are not fixed: `controller.py` rewrites them every tick from the Ingress objects
(one operation per request path the clients send, calling the backend Service the rules pick),
so the fluid engine carries traffic through the same rules. A request with no matching rule
has no operation and fails at the entry; a single request (`curl` from a pod) is answered by
`ingress_page`: nginx's 404 page from the default backend, its 503 page when the backend
Service has no ready endpoints, else the backend's own answer, proxied.
"""

from __future__ import annotations

from typing import Any

from sregym.twin.dataplane import ingress_routes
from sregym.twin.dataplane.pages import Page, PageRequest, register_pages
from sregym.twin.dataplane.spec import LogFormat, MemoryModel, ProgramSpec, Setting, Startup, register_program

BINARY = "nginx-ingress-controller"
NGINX = "nginx"  # ingress-nginx's Server header (server_tokens off)

SPEC = register_program(ProgramSpec(
    name=BINARY, service_name="ingress-nginx", protocol="http", port=Setting(default="80"),
    tls_port=Setting(default="443"), admin_port=Setting(default="10254"),
    memory=MemoryModel(base_mib=95.0, per_inflight_mib=0.02, per_rps_mib=0.02),
    startup=Startup(seconds=2.0, logs=(
        '"Creating API client" host="https://10.96.0.1:443"',
        '"Running in Kubernetes cluster" major="1" minor="32" git="v1.32.0" state="clean"',
        '"Starting NGINX Ingress controller"',
        '"Starting NGINX process"',
        '"New leader elected" identity="{setting[pod]}"',
    )),
    settings={"pod": Setting(env="POD_NAME", default="ingress-nginx-controller")},
    log=LogFormat(style="klog", main_caller="main.go:205", handler_caller="controller.go:193", error_burst=0),
    idle_cpu_cores=0.002,
))


def nginx_page(title: str) -> str:
    """nginx's built-in error page as ingress-nginx serves it (no version: server_tokens off)."""
    return (f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n"
            f"<hr><center>{NGINX}</center>\r\n</body>\r\n</html>\r\n")


def _page(status: int, title: str) -> Page:
    return Page(status, nginx_page(title), {"Server": NGINX, "Content-Type": "text/html",
                                                   "Connection": "keep-alive"})


def not_found() -> Page:
    return _page(404, "404 Not Found")


def unavailable() -> Page:
    return _page(503, "503 Service Temporarily Unavailable")


def ingresses_of_class(twin: Any) -> list[dict[str, Any]]:
    classes = list(twin.store.scan("IngressClass"))
    return [i for i in twin.store.scan("Ingress")
            if not i["metadata"].get("deletionTimestamp") and ingress_routes.of_class(i, classes)]


def ready_endpoints(twin: Any, namespace: str, service: str) -> int:
    """Ready addresses of the Service's Endpoints (what the controller's balancer gets)."""
    endpoints = twin.store.peek("Endpoints", namespace, service)
    return sum(len(s.get("addresses") or []) for s in ((endpoints or {}).get("subsets") or []))


def service_port(twin: Any, backend: ingress_routes.Backend) -> int | None:
    """The Service port a backend names (by number or by name), None when it has none."""
    svc = twin.store.peek("Service", backend.namespace, backend.service)
    for port in ((svc or {}).get("spec") or {}).get("ports") or []:
        if port.get("port") == backend.port or (port.get("name") and port.get("name") == backend.port):
            return int(port["port"])
    return None


def ingress_page(request: PageRequest) -> Page | None:
    """One request through the rules: 404, 503, or the backend's answer."""
    twin = request.twin
    if twin is None:
        return None
    headers = {k.lower(): v for k, v in request.headers.items()}
    host = headers.get("host", "").split(":", 1)[0]
    backend = ingress_routes.route(ingresses_of_class(twin), host, request.path)
    if backend is None:
        return not_found()
    port = service_port(twin, backend)
    if port is None or not ready_endpoints(twin, backend.namespace, backend.service):
        return unavailable()
    engine = twin.services.dataplane
    url = f"http://{backend.service}.{backend.namespace}.svc.cluster.local:{port}{request.path}" + \
        (f"?{request.query}" if request.query else "")
    answer = engine.http_request(None, url, request.method)
    if answer.error is not None:
        return _page(504 if answer.error == "timeout" else 502,
                     "504 Gateway Time-out" if answer.error == "timeout" else "502 Bad Gateway")
    return Page(answer.status, answer.body, {**answer.headers, "Server": NGINX})


register_pages(BINARY, ingress_page)

__all__ = ["BINARY", "SPEC", "ingress_page", "ingresses_of_class", "nginx_page", "not_found", "ready_endpoints", "service_port",
           "unavailable"]
