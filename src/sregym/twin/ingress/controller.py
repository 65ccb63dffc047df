"""ingress-nginx's control loop: Ingress objects become the running controller's routes, its
served certificates, its reloads and its access log.

Every tick, before the data plane moves traffic (order 84), for each running
`nginx-ingress-controller` process:

* its configuration (the Ingresses of class `nginx`, the TLS Secrets they name) is compared with
  the one it loaded; a change is a reload, logged as the real controller logs it ("Configuration
  changes detected, backend reload required", "Backend successfully reloaded") with a `RELOAD`
  event on its pod and a `Sync` event on each changed Ingress;
* the requests its clients send (the workloads routed to it) are matched against the rules
  (`dataplane/ingress_routes.py`): each request path becomes an operation calling the upstream
  the rules pick (`<namespace>-<service>-<port>`), so the fluid engine carries the traffic, and a
  path no rule matches has no operation (nginx answers it from the default backend: 404);
* the certificates of the `tls:` hosts are what its https port presents (`tls_validity.py`);
* last tick's requests are written to its log in the chart's default `log-format-upstream`.

Randomness (request ids, client ports, sizes) comes from the `ingress-nginx` stream.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sregym.twin.controller import Controller, controller
from sregym.twin.dataplane import ingress_routes, log_channel
from sregym.twin.dataplane.logformat import format_log
from sregym.twin.dataplane.programs import DependencyConfig
from sregym.twin.dataplane.spec import Call, Operation
from sregym.twin.dataplane.tls_validity import handshake, secret_certificate
from sregym.twin.ingress.program import BINARY, SPEC, ingresses_of_class, ready_endpoints, service_port

if TYPE_CHECKING:
    from sregym.twin.dataplane.state import Proc

MAX_LINES_PER_TICK = 25
PROXY_READ_TIMEOUT_MS = 60_000.0  # proxy-read-timeout: 60 s
DEFAULT_UPSTREAM = "upstream-default-backend"
DEFAULT_BACKEND_ADDR = "127.0.0.1:8181"
COMPONENT = "nginx-ingress-controller"
USER_AGENT = "-"  # wrk sends no User-Agent


@dataclass
class ControllerState:
    """What one controller process loaded, and its access-log carry."""

    signature: tuple[Any, ...] | None = None
    generations: dict[tuple[str, str], str] = field(default_factory=dict)  # ingress -> resourceVersion
    endpointless: frozenset[str] = frozenset()
    carry: dict[tuple[str, str, int], float] = field(default_factory=lambda: defaultdict(float))
    routes: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (host, method, path) -> upstream


def upstream_name(backend: ingress_routes.Backend, port: int) -> str:
    return f"{backend.namespace}-{backend.service}-{port}"


def _klog(twin: Any, proc: Proc, level: str, caller: str, message: str) -> None:
    log_channel.write(twin, proc.inst, twin.clock.now, format_log("klog", twin.clock.now, level, caller, message))


@controller
class IngressNginxController(Controller):
    """Keeps each ingress-nginx process's routes, certificates and log in step with the Ingresses."""

    name = "ingress-nginx"
    order = 84
    user = "system:serviceaccount:ingress-nginx:ingress-nginx"

    def __init__(self, twin: Any) -> None:
        super().__init__(twin)
        self.states: dict[tuple[str, str, str], ControllerState] = {}

    def reconcile(self) -> None:
        engine = self.twin.services.dataplane
        procs = getattr(engine, "procs", None)
        if not procs:
            return
        mine = {k: p for k, p in procs.items() if p.inst.spec.name == BINARY}
        for key in [k for k in self.states if k not in mine]:
            del self.states[key]
        if not mine:
            return
        ingresses = ingresses_of_class(self.twin)
        for key, proc in sorted(mine.items()):
            self._load(proc, self.states.setdefault(key, ControllerState()), ingresses)
        requests = self._requests(engine, mine)
        for key, proc in sorted(mine.items()):
            state = self.states[key]
            self._program(engine, proc, state, ingresses, requests.get(key, []))
            self._access_log(proc, state, requests.get(key, []))

    # ------------------------------------------------------------------ configuration
    def _load(self, proc: Proc, state: ControllerState, ingresses: list[dict[str, Any]]) -> None:
        secrets = sorted({ref for ing in ingresses for host in _tls_hosts(ing)
                          if (ref := ingress_routes.tls_secret_for([ing], host)) is not None})
        versions = {(i["metadata"].get("namespace", ""), i["metadata"]["name"]): i["metadata"].get("resourceVersion", "")
                    for i in ingresses}
        secret_versions = tuple((ns, name, (self.twin.store.peek("Secret", ns, name) or {}).get("metadata", {})
                                 .get("resourceVersion", "")) for ns, name in secrets)
        signature = (tuple(sorted(versions.items())), secret_versions)
        certificates: dict[str, str] = {}
        for ing in ingresses:
            for host in _tls_hosts(ing):
                ref = ingress_routes.tls_secret_for([ing], host)
                pem = secret_certificate(self.twin.store.peek("Secret", *ref)) if ref else None
                if pem:
                    certificates.setdefault(host, pem)
                elif ref:
                    certificates.pop(host, None)
        proc.inst.certificates = certificates
        if signature == state.signature:
            return
        first = state.signature is None
        for ref in sorted(versions):
            if state.generations.get(ref) == versions[ref]:
                continue
            ing = next(i for i in ingresses if (i["metadata"].get("namespace", ""), i["metadata"]["name"]) == ref)
            _klog(self.twin, proc, "info", "store.go:440",
                  f'"Found valid IngressClass" ingress="{ref[0]}/{ref[1]}" ingressclass="nginx"')
            self.twin.events.record(ing, "Normal", "Sync", "Scheduled for sync", component=COMPONENT)
        for ns, name, _ in secret_versions:
            if self.twin.store.peek("Secret", ns, name) is None:
                _klog(self.twin, proc, "warning", "controller.go:1124",
                      f'Error getting SSL certificate "{ns}/{name}": local SSL certificate {ns}/{name} was not '
                      "found. Using default certificate")
        state.generations = dict(versions)
        state.signature = signature
        if first and not ingresses:
            return
        _klog(self.twin, proc, "info", "controller.go:193", '"Configuration changes detected, backend reload required"')
        _klog(self.twin, proc, "info", "controller.go:213", '"Backend successfully reloaded"')
        pod = proc.pod_obj
        if pod is not None:
            self.twin.events.record(pod, "Normal", "RELOAD", "NGINX reload triggered due to a change in configuration",
                                    component=COMPONENT)

    # ------------------------------------------------------------------ traffic
    def _requests(self, engine: Any, mine: dict[tuple[str, str, str], Proc]) -> dict[Any, list[tuple[Any, ...]]]:
        """(workload, source pod, rate, server name) of the clients routed to each process."""
        out: dict[Any, list[tuple[Any, ...]]] = defaultdict(list)
        now = self.twin.clock.now
        addresses = {}
        for key, proc in mine.items():
            addresses[(proc.pod_ip, proc.inst.port)] = key
            if proc.inst.tls_port:
                addresses[(proc.pod_ip, proc.inst.tls_port)] = key
        for name in sorted(engine.workloads):
            workload = engine.workloads[name]
            runs, src = workload.source_pod(self.twin)
            rate = workload.rate(now) if runs else 0.0
            host, port = workload.spec.host_port
            route = engine.router.route(src, host, port, connect_timeout_ms=workload.spec.timeout_ms)
            for leg in route.legs:
                key = addresses.get((leg.result.dst_ip, leg.result.target_port)) if leg.result.ok else None
                if key is not None and workload.spec.scheme == "https":
                    _, accepted = handshake(leg, mine[key], workload.spec, now)
                    key = key if accepted is not None else None  # the client hung up in the handshake
                if key is not None:
                    out[key].append((workload, src, rate * leg.fraction, workload.spec.server_name))
        return out

    def _program(self, engine: Any, proc: Proc, state: ControllerState, ingresses: list[dict[str, Any]],
                 requests: list[tuple[Any, ...]]) -> None:
        """The operations and upstreams the loaded rules give the requests the clients send."""
        ops: dict[tuple[str, str], Operation] = {}
        deps: dict[str, DependencyConfig] = {}
        routes: dict[tuple[str, str, str], str] = {}
        endpointless = set()
        for workload, _src, _rate, server in requests:
            for mix in workload.spec.mix:
                path = mix.operation.split("?", 1)[0]
                backend = ingress_routes.route(ingresses, server, path)
                port = service_port(self.twin, backend) if backend is not None else None
                if backend is None or port is None:
                    continue
                upstream = upstream_name(backend, port)
                routes[(server, mix.method, path)] = upstream
                if not ready_endpoints(self.twin, backend.namespace, backend.service):
                    endpointless.add(f"{backend.namespace}/{backend.service}")
                deps[upstream] = DependencyConfig(
                    name=upstream, kind="http", host=f"{backend.service}.{backend.namespace}.svc.cluster.local",
                    port=port, timeout_ms=PROXY_READ_TIMEOUT_MS, retries=0, backoff_ms=0.0,
                    address=f"{backend.service}.{backend.namespace}.svc.cluster.local:{port}")
                ops[(mix.method, path)] = Operation(name=path, method=mix.method, cpu_ms=0.1, response_bytes=512,
                                                    calls=(Call(dependency=upstream,
                                                                operation=f"{mix.method} {path}"),))
        for service in sorted(endpointless - state.endpointless):
            _klog(self.twin, proc, "warning", "controller.go:1214",
                  f'Service "{service}" does not have any active Endpoint.')
        state.endpointless = frozenset(endpointless)
        state.routes = routes
        operations = tuple(ops[k] for k in sorted(ops))
        if operations != proc.inst.spec.operations or deps != proc.inst.deps:
            proc.inst.spec = SPEC.model_copy(update={"operations": operations})
            proc.inst.deps = deps
            engine._order_cache = None  # the call graph changed

    def _access_log(self, proc: Proc, state: ControllerState, requests: list[tuple[Any, ...]]) -> None:
        """Last tick's requests, a line each; beyond MAX_LINES_PER_TICK every kind of request is
        sampled in proportion (a flood is sampled, never summed)."""
        now, dt = self.twin.clock.now, self.twin.clock.tick
        rng = self.twin.rng.stream("ingress-nginx")
        due: list[tuple[int, str, str, str, int, str | None, str, str, float]] = []
        for workload, src, rate, server in requests:
            total = sum(m.weight for m in workload.spec.mix) or 1.0
            src_ip = ((src or {}).get("status") or {}).get("podIP") or "10.244.0.1"
            for mix in workload.spec.mix:
                path = mix.operation.split("?", 1)[0]
                upstream = state.routes.get((server, mix.method, path))
                for status, share, addr, latency_ms in self._outcomes(proc, upstream, mix.method, path):
                    key = (mix.method, path, status)
                    state.carry[key] += rate * mix.weight / total * share * dt
                    count = int(state.carry[key])
                    state.carry[key] -= count
                    if count:
                        due.append((count, src_ip, mix.method, path, status, upstream, addr, server, latency_ms))
        owed = sum(entry[0] for entry in due)
        scale = min(1.0, MAX_LINES_PER_TICK / owed) if owed else 0.0
        lines: list[tuple[float, str]] = []
        for count, src_ip, method, path, status, upstream, addr, server, latency_ms in due:
            for _ in range(max(1, round(count * scale))):
                at = now - dt + rng.random() * dt
                lines.append((at, _line(at, src_ip, method, path, status, upstream, addr, server, latency_ms,
                                        rng)))
        for at, text in sorted(lines):
            log_channel.write(self.twin, proc.inst, at, text)

    def _outcomes(self, proc: Proc, upstream: str | None, method: str,
                  path: str) -> list[tuple[int, float, str, float]]:
        """(status, share, upstream address, mean latency in ms) of last tick's requests on a path."""
        if upstream is None:
            return [(404, 1.0, DEFAULT_BACKEND_ADDR, 0.5)]
        dep = proc.inst.deps.get(upstream)
        op = proc.inst.spec.operation(path, method)
        result = proc.results.get(op.key) if op is not None else None
        addr = _endpoint(self.twin, dep) if dep is not None else "-"
        if result is None:
            return [(200, 1.0, addr, 1.0)]
        out = []
        if result.success > 0:
            out.append((200, result.success, addr, result.mean))
        if result.success < 1.0:
            status = {"timeout": 504, "refused": 502, "reset": 502}.get(result.error_class, 503)
            if addr == "-":
                status = 503
            out.append((status, 1.0 - result.success, addr, result.mean))
        return out


def _endpoint(twin: Any, dep: DependencyConfig) -> str:
    """An address of the upstream's endpoints (the balancer's pick), "-" when it has none."""
    service, namespace = dep.host.split(".")[0], dep.host.split(".")[1]
    endpoints = twin.store.peek("Endpoints", namespace, service) or {}
    for subset in endpoints.get("subsets") or []:
        for address in subset.get("addresses") or []:
            ports = subset.get("ports") or [{}]
            return f"{address.get('ip')}:{ports[0].get('port', dep.port)}"
    return "-"


def _tls_hosts(ingress: dict[str, Any]) -> list[str]:
    return [h for entry in (ingress.get("spec") or {}).get("tls") or [] for h in entry.get("hosts") or []]


def _line(at: float, src_ip: str, method: str, path: str, status: int, upstream: str | None, addr: str,
          server: str, latency_ms: float, rng: Any) -> str:
    """One line of ingress-nginx's default log-format-upstream."""
    moment = datetime.fromtimestamp(at, tz=UTC)
    stamp = moment.strftime("%d/%b/%Y:%H:%M:%S +0000")
    request_time = latency_ms / 1000.0 * (0.5 + rng.random()) + 0.001  # around the model's mean
    size = {404: 146, 503: 190, 502: 150, 504: 160}.get(status, 300 + rng.randrange(4000))
    request_length = 80 + len(path) + len(server) + rng.randrange(40)
    req_id = f"{rng.getrandbits(128):032x}"
    name = upstream or DEFAULT_UPSTREAM
    if addr == "-":
        upstream_part = "- - - -"
    else:
        upstream_part = f"{addr} {size} {request_time * 0.9:.3f} {status}"
    return (f'{src_ip} - - [{stamp}] "{method} {path} HTTP/1.1" {status} {size} "-" "{USER_AGENT}" '
            f"{request_length} {request_time:.3f} [{name}] [] {upstream_part} {req_id}")


__all__ = ["IngressNginxController", "upstream_name"]
