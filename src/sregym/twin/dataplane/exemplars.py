"""Exemplar requests: a few concrete requests per tick walked along the fluid model's paths.

Traces are sampled, not computed from rates: each exemplar picks an endpoint leg by its traffic
share, the operation from the request mix, whether each downstream call happens (probability,
cache hit or miss), and draws its latencies and failures from the same per-tick outcomes the
fluid engine computed. It yields Jaeger-style spans (server span per operation, client span per
attempt, so retries are visible) with the tags a Go service instrumented with OpenTracing/
OpenTelemetry sets. A call that would wait in its server's queue past its caller's deadline is
cancelled there: its server span ends in DeadlineExceeded at the deadline, without children. Randomness comes from the `dataplane-exemplars` stream: same seed, same spans.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane.connect import Leg
from sregym.twin.dataplane.envoy import route_dependency
from sregym.twin.dataplane.errortexts import client_error, deadline_error, propagated_error, retryable
from sregym.twin.dataplane.kafka_spans import producer_span
from sregym.twin.dataplane.spec import RPC_KINDS, Operation, http_route
from sregym.twin.dataplane.state import OpResult, Proc, match_operation
from sregym.twin.telemetry.traces import Span

if TYPE_CHECKING:
    from sregym.twin.dataplane.engine import DataPlaneEngine

MAX_DEPTH = 12
SPAN_BUDGET_PER_TICK = 200
GRPC_CODES = {"OK": 0, "Unknown": 2, "DeadlineExceeded": 4, "Unimplemented": 12, "Unavailable": 14,
              "ResourceExhausted": 8, "Internal": 13}


def sample_exemplars(engine: DataPlaneEngine, flows: list[dict[str, Any]], now: float) -> None:
    if engine.exemplars_per_tick <= 0:
        return
    traces = engine.twin.services.traces
    if traces is None:
        return
    rng = engine.twin.rng.stream("dataplane-exemplars")
    # A span budget keeps huge call graphs affordable: their traces are sampled less often.
    engine.span_credit = min(engine.span_credit + SPAN_BUDGET_PER_TICK, 10 * SPAN_BUDGET_PER_TICK)
    for flow in flows:
        legs = [(leg, proc) for leg, proc in flow["legs"] if proc is not None and leg.result.ok]
        if flow["rate"] <= 0 or not legs:
            continue
        mix = flow["workload"].spec.mix
        for index in range(engine.exemplars_per_tick):
            if engine.span_credit <= 0:
                return
            leg, proc = _pick(rng, [(leg.fraction, (leg, proc)) for leg, proc in legs])
            item = _pick(rng, [(m.weight, m) for m in mix])
            op = match_operation(proc, item.operation, item.method)
            if op is None:
                continue
            trace_id = f"{rng.getrandbits(128):032x}"
            start_us = int(now * 1_000_000) + int(index * 1_000_000 / engine.exemplars_per_tick) + \
                rng.randrange(1000)
            before = len(traces)
            _serve(engine, rng, traces, proc, op, trace_id, "", start_us, 0, leg)
            engine.span_credit -= max(1, len(traces) - before)


def _pick(rng: random.Random, weighted: list[tuple[float, Any]]) -> Any:
    total = sum(w for w, _ in weighted)
    draw = rng.random() * total
    for weight, value in weighted:
        draw -= weight
        if draw < 0:
            return value
    return weighted[-1][1]


def _process_tags(proc: Proc) -> dict[str, Any]:
    return {"hostname": proc.inst.pod, "ip": proc.pod_ip, "jaeger.version": "Go-2.30.0",
            "pod": proc.inst.pod, "namespace": proc.inst.namespace}


def _serve(engine: DataPlaneEngine, rng: random.Random, traces: Any, proc: Proc, op: Operation, trace_id: str,
           parent: str, start_us: int, depth: int, via: Leg | None,
           deadline_ms: float | None = None) -> tuple[int, bool, str]:
    """A server span for `op` at `proc` with its children; returns (duration µs, ok, error).
    `deadline_ms` is the caller's timeout when it cancels what it abandons (gRPC, HTTP clients)."""
    span_id = f"{rng.getrandbits(64):016x}"
    spec = proc.inst.spec
    result = proc.results.get(op.key)
    wait = proc.serve_result.wait_ms if proc.serve_result else 0.0
    cancelled = deadline_ms is not None and wait >= deadline_ms
    own_ms = deadline_ms if cancelled and deadline_ms is not None else \
        op.cpu_ms * 0.6 + wait + rng.expovariate(1.0 / max(op.cpu_ms * 0.4, 0.01))
    cursor = start_us + int(own_ms * 500)  # half the own work happens before the calls
    ok, error = True, ""
    if cancelled:
        ok, error = False, "rpc error: code = DeadlineExceeded desc = context deadline exceeded" \
            if spec.protocol == "grpc" else "context canceled"
    elif proc.serve_result is not None and rng.random() < proc.serve_result.drop_fraction:
        ok, error = False, (result.error if result else "overloaded")
    elif depth < MAX_DEPTH:
        outcomes: dict[str, tuple[bool, bool]] = {}
        for call in op.calls:
            if rng.random() >= call.probability or not _condition(call.when, outcomes) \
                    or not call.feature_enabled(proc.inst.settings):
                if call.id:
                    outcomes[call.id] = (True, True)
                continue
            count = int(call.count) + (1 if rng.random() < call.count - int(call.count) else 0)
            call_ok, hit = True, False
            for _ in range(count):
                end_us, attempt_ok, attempt_error, hit = _call(engine, rng, traces, proc, call, trace_id, span_id,
                                                               cursor, depth, op)
                cursor = end_us if not op.parallel else cursor
                if not attempt_ok:
                    call_ok = False
                    if not call.optional and ok:
                        ok, error = False, attempt_error
            if call.id:
                outcomes[call.id] = (call_ok, hit)
            if not ok:
                break
    duration_us = max(1, cursor - start_us + int(own_ms * 500))
    tags: dict[str, Any] = {"span.kind": "server", "pod": proc.inst.pod}
    if spec.protocol == "http":
        status = 200 if ok else 500
        tags.update({"component": "net/http", "http.method": op.method, "http.url": op.name,
                     "http.status_code": status})
    elif spec.protocol == "thrift":  # a Thrift handler: no status codes, an exception or none
        status = 0 if ok else 2
        tags.update({"component": "thrift", "rpc.system": "thrift"})
    else:
        code = "OK" if ok else _grpc_code(error)
        status = GRPC_CODES.get(code, 2)
        tags.update({"component": "gRPC", "rpc.system": "grpc", "rpc.grpc.status_code": status})
    if not ok:
        tags["error"] = True
    name = f"HTTP {op.method} {op.name}" if spec.protocol == "http" else op.name
    traces.add(Span(trace_id=trace_id, span_id=span_id, parent_span_id=parent, service=spec.trace_name,
                    operation=name, kind="server", start_us=start_us, duration_us=duration_us, error=not ok,
                    status_code=status, message=error, tags=tags, process_tags=_process_tags(proc),
                    events=engine.flags.span_events(proc.inst, op.key, start_us + int(own_ms * 250))))
    return duration_us, ok, error


def _condition(when: str | None, outcomes: dict[str, tuple[bool, bool]]) -> bool:
    if when is None:
        return True
    kind, _, ref = when.partition(":")
    ok, hit = outcomes.get(ref, (True, False))
    return {"miss": not ok or not hit, "hit": ok and hit, "error": not ok, "ok": ok}[kind]


def _call(engine: DataPlaneEngine, rng: random.Random, traces: Any, proc: Proc, call: Any, trace_id: str,
          parent: str, start_us: int, depth: int, op: Operation) -> tuple[int, bool, str, bool]:
    """One logical call of `op` with the caller's retries: (end µs, ok, error, cache hit)."""
    dep = proc.inst.deps.get(call.dependency)
    if dep is None:
        return start_us, False, f"missing address for {call.dependency}", False
    dep = route_dependency(proc, op, dep)  # an Envoy route's timeout bounds the upstream call
    pod = engine.twin.store.peek("Pod", proc.inst.namespace, proc.inst.pod)
    # an address the client cannot parse fails in the client itself: nothing dialed, nothing retried
    route = None if dep.invalid else engine.router.route(pod, dep.host, dep.port, connect_timeout_ms=dep.timeout_ms)
    cursor = start_us
    error, cls = "", ""
    for attempt in range(dep.retries + 1):
        if attempt:
            cursor += int(dep.backoff_ms * 1000)
        leg = _pick(rng, [(leg.fraction, leg) for leg in route.legs]) if route is not None and route.legs else None
        if leg is None and not dep.invalid:
            return cursor, False, "no route", False
        res = leg.result if leg is not None else None
        traced = dep.kind in (*RPC_KINDS, "kafka")
        span_id = f"{rng.getrandbits(64):016x}" if traced else ""
        ok, hit = True, False
        if res is None:
            ok, error, cls = False, dep.invalid, "invalid_address"
            elapsed_us = 50
        elif not res.ok:
            ok, error, cls = False, client_error(dep, call, res), res.error or ""
            elapsed_us = int(min(res.latency_ms, dep.timeout_ms) * 1000)
        elif dep.kind in RPC_KINDS:
            callee = engine.proc_at(res.dst_ip, res.target_port)
            op = match_operation(callee, call.operation, None) if callee is not None else None
            rtt_us = int(2 * res.latency_ms * 1000 + leg.delay_ms * 1000)
            if callee is None or op is None:
                elapsed_us = rtt_us
            else:
                child_us, child_ok, child_error = _serve(engine, rng, traces, callee, op, trace_id, span_id,
                                                         cursor + rtt_us // 2, depth + 1, leg, dep.timeout_ms)
                elapsed_us = child_us + rtt_us
                if not child_ok:
                    ok, cls = False, "server_error"
                    error = propagated_error(dep, call, OpResult(error=child_error))
            if elapsed_us > dep.timeout_ms * 1000:
                ok, error, cls = False, deadline_error(dep, call), "timeout"
                elapsed_us = int(dep.timeout_ms * 1000)
        else:
            outcome = engine._store(proc, pod, dep, call, res, 0.0)
            elapsed_us = int((outcome.latency_ms + 2 * res.latency_ms) * 1000)
            hit = rng.random() < (outcome.hit_ratio or 0.0)
            if not outcome.ok:
                ok, error, cls = False, outcome.error, outcome.error_class or "server_error"
        if traced:
            tags: dict[str, Any] = {"span.kind": "client", "net.peer.name": dep.host, "net.peer.port": dep.port,
                                    "pod": proc.inst.pod}
            span_kind = "client"
            if dep.kind == "kafka":  # a publish: a PRODUCER span with the messaging attributes
                name, span_kind, kafka_tags = producer_span(call.collection or "orders", ok, elapsed_us, None)
                tags.update(kafka_tags)
                status = 0 if ok else 2
            elif dep.kind == "thrift":
                status = 0 if ok else 2
                tags.update({"component": "thrift", "rpc.system": "thrift"})
                name = call.operation
            elif dep.kind == "grpc":
                code = "OK" if ok else _grpc_code(error)
                tags.update({"component": "gRPC", "rpc.system": "grpc", "rpc.grpc.status_code": GRPC_CODES.get(code, 2)})
                status = GRPC_CODES.get(code, 2)
                name = call.operation
            else:
                status = 200 if ok else 500
                verb, path = http_route(call.operation)
                tags.update({"component": "net/http", "http.method": verb, "http.status_code": status})
                name = f"HTTP {verb} {path}"
            if not ok:
                tags["error"] = True
            traces.add(Span(trace_id=trace_id, span_id=span_id, parent_span_id=parent, service=proc.inst.spec.trace_name,
                            operation=name, kind=span_kind, start_us=cursor, duration_us=max(1, elapsed_us),
                            error=not ok, status_code=status, message=error if not ok else "", tags=tags,
                            process_tags=_process_tags(proc)))
        cursor += elapsed_us
        if ok:
            return cursor, True, "", hit
        if not retryable(dep, cls):
            break
    return cursor, False, error, False


def _grpc_code(error: str) -> str:
    marker = "code = "
    if marker in error:
        return error.split(marker, 1)[1].split(" ", 1)[0]
    return "Unknown"


__all__ = ["sample_exemplars"]
