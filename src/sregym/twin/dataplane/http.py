"""One HTTP/1.1 request, as curl or wget would send it, routed into the destination's handler.

The connection goes through the same pipeline as traffic (`connect.py`). What answers depends on
what listens: a data-plane program with an HTTP protocol serves its operations (success drawn
from the operation's current outcome in the fluid model, so an exec'd curl sees what the traffic
sees; unknown paths get Go's `404 page not found`); a gRPC program closes the connection on the
HTTP/1.1 preface (curl: "Empty reply from server"); other servers answer per their declared HTTP
paths. HTTPChaos (`chaos.http`) can abort, delay or replace the response.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sregym.twin.chaos.http_rewrite import request_route, rewrite_response
from sregym.twin.dataplane.app_pages import (
    GRPC_ERROR,
    hr_frontend_body,
    hr_frontend_error,
    is_nginx,
    nginx_answer,
)
from sregym.twin.dataplane.client_clock import client_now
from sregym.twin.dataplane.connect import ConnectResult
from sregym.twin.dataplane.pages import Page, PageRequest, pages_for
from sregym.twin.dataplane.port_pages import port_answer
from sregym.twin.dataplane.state import match_operation
from sregym.twin.dataplane.tls_validity import check_validity, served_certificate

if TYPE_CHECKING:
    from sregym.twin.dataplane.engine import DataPlaneEngine

REASONS = {200: "OK", 201: "Created", 204: "No Content", 301: "Moved Permanently", 302: "Found",
           400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 500: "Internal Server Error", 502: "Bad Gateway",
           503: "Service Unavailable", 504: "Gateway Timeout"}


@dataclass(frozen=True)
class HttpResult:
    """`error` is None for any HTTP response (even a 500), else one of the connection errors or
    "empty_reply" (the server closed without answering), "reset", "timeout" (no response within
    the client's time limit)."""

    status: int = 0
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    message: str = ""
    latency_ms: float = 0.0
    connect: ConnectResult | None = field(default=None, repr=False)

    @property
    def reason(self) -> str:
        return REASONS.get(self.status, "")


def http_request(engine: DataPlaneEngine, src_pod: dict[str, Any] | None, url: str, *, method: str = "GET",
                 headers: dict[str, str] | None = None, body: str | None = None,
                 timeout_ms: float = 10_000.0) -> HttpResult:
    parts = urlsplit(url if "://" in url else "http://" + url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = parts.path or "/"
    conn = engine.connect(src_pod, host, port, connect_timeout_ms=timeout_ms)
    if not conn.ok:
        return HttpResult(error=conn.error, message=conn.message, latency_ms=conn.latency_ms, connect=conn)
    return answer(engine, conn, parts.scheme, port, path, method=method, timeout_ms=timeout_ms, query=parts.query,
                  headers=headers, body=body, client_pod=src_pod)


def answer(engine: DataPlaneEngine, conn: ConnectResult, scheme: str, port: int, path: str, *,
           method: str = "GET", timeout_ms: float = 10_000.0, query: str = "",
           headers: dict[str, str] | None = None, body: str | None = None,
           client_pod: dict[str, Any] | None = None) -> HttpResult:
    """What the process behind an established connection answers to one request (also used
    for connections that do not cross the network, such as the kubelet's port-forward)."""
    rtt = 2 * conn.latency_ms
    if scheme == "https":
        terminator = engine.proc_at(conn.dst_ip, conn.target_port or port)
        if terminator is None or terminator.inst.tls_port != (conn.target_port or port):
            return HttpResult(error="tls", latency_ms=rtt, connect=conn,
                              message="error:0A00010B:SSL routines::wrong version number")
        sni = next((v for k, v in (headers or {}).items() if k.lower() == "host"), "").split(":", 1)[0]
        pem = served_certificate(terminator.inst.certificates, sni)
        validity = check_validity(pem, client_now(engine.twin, client_pod)) if pem is not None else None
        if validity is not None and not validity.ok:  # the client verifies the server's certificate
            return HttpResult(error=f"x509_{validity.reason}", latency_ms=rtt, connect=conn,
                              message=validity.curl_error)
    found = engine.runtime.listener(conn.dst_ip, conn.target_port or port)
    chaos = engine.twin.services.chaos
    effect = chaos.http(conn.dst_pod, conn.target_port or port, method, path, headers) \
        if chaos is not None and conn.dst_pod is not None and hasattr(chaos, "http") else None
    path, method = request_route(effect, path, method)  # a Request rule's replace: the server sees another route
    if effect is not None and getattr(effect, "abort", False):
        return HttpResult(error="reset", latency_ms=rtt, connect=conn, message="Connection reset by peer")
    delay = float(getattr(effect, "delay_ms", 0.0) or 0.0) if effect is not None else 0.0
    proc = engine.proc_at(conn.dst_ip, conn.target_port or port)
    date = _http_date(engine.twin.clock.now)
    if proc is not None:
        spec = proc.inst.spec
        if spec.protocol != "http":
            grpc = spec.protocol == "grpc"  # grpc-go sends SETTINGS first: curl sees HTTP/0.9
            return HttpResult(error=GRPC_ERROR if grpc else "empty_reply", latency_ms=rtt, connect=conn,
                              message="Received HTTP/0.9 when not allowed" if grpc else "Empty reply from server")
        op = match_operation(proc, path, method)
        pages = pages_for(spec.name)
        request = PageRequest(method, path, query, dict(headers or {}), body, twin=engine.twin,
                              rng=engine.twin.rng.stream("dataplane-pages")) if pages else None
        invalid = hr_frontend_error(spec.trace_name, path, query)
        handler = hr_frontend_error(spec.trace_name, path, "x") is not None  # one of its handlers
        if invalid is not None:  # the handler rejects the request before calling anything
            result = HttpResult(400, invalid + "\n", {"Access-Control-Allow-Origin": "*",
                                                      "Content-Type": "text/plain; charset=utf-8",
                                                      "X-Content-Type-Options": "nosniff", "Date": date},
                                latency_ms=rtt + 0.2, connect=conn)
        elif op is None and handler:  # a handler the traffic model does not exercise
            result = HttpResult(200, hr_frontend_body(path), {"Access-Control-Allow-Origin": "*", "Date": date,
                                                            "Content-Type": "text/plain; charset=utf-8"},
                                latency_ms=rtt + 0.5, connect=conn)
        elif op is None and pages and (page := pages(request)) is not None:  # type: ignore[arg-type]
            result = _from_page(page, rtt + 0.3 + delay, timeout_ms, conn, date)
        elif op is None:
            result = HttpResult(404, "404 page not found\n", {"Content-Type": "text/plain; charset=utf-8",
                                                              "X-Content-Type-Options": "nosniff", "Date": date},
                                latency_ms=rtt + 0.2, connect=conn)
        else:
            outcome = proc.results.get(op.key)
            success = outcome.success if outcome else 1.0
            latency = (outcome.mean if outcome else op.cpu_ms) + rtt + delay
            if latency > timeout_ms:
                return HttpResult(error="timeout", latency_ms=timeout_ms, connect=conn,
                                  message=f"Operation timed out after {int(timeout_ms)} milliseconds with 0 bytes "
                                          "received")
            rng = engine.twin.rng.stream("dataplane-http")
            ok = rng.random() < success
            page = pages(replace(request, ok=ok, error=outcome.error if outcome else "")) \
                if pages and request else None
            if page is not None:
                result = _from_page(page, latency, timeout_ms, conn, date)
            elif ok:
                payload = json.dumps({"operation": op.name, "service": spec.trace_name}) + "\n"
                reply_headers = {"Content-Type": "application/json", "Date": date}
                if handler:
                    payload = hr_frontend_body(path)
                    reply_headers = {"Access-Control-Allow-Origin": "*", "Date": date,
                                     "Content-Type": "text/plain; charset=utf-8"}  # Go sniffs JSON as text
                result = HttpResult(200, payload, reply_headers, latency_ms=latency, connect=conn)
            else:
                text = (outcome.error if outcome and outcome.error else "internal error") + "\n"
                result = HttpResult(500, text, {"Content-Type": "text/plain; charset=utf-8",
                                                "X-Content-Type-Options": "nosniff", "Date": date},
                                    latency_ms=latency, connect=conn)
    elif found is not None and (handled := port_answer(engine, found, PageRequest(
            method, path, query, dict(headers or {}), body, twin=engine.twin))) is not None:
        result = _from_page(handled, rtt + 0.3 + delay, timeout_ms, conn, date)
    elif found is not None:
        listen = found[2]
        if listen.http_paths is None:
            return HttpResult(error="empty_reply", latency_ms=rtt, connect=conn, message="Empty reply from server")
        served = not listen.http_paths or path in listen.http_paths or any(
            p.endswith("/") and path.startswith(p) for p in listen.http_paths)
        if is_nginx(found[1].image):
            stock = ("/", "/index.html", "/50x.html")  # the default site's files
            status, body, reply_headers = nginx_answer(path, path in (listen.http_paths or stock), date)
            result = HttpResult(status, body, reply_headers, latency_ms=rtt + 0.3 + delay, connect=conn)
        else:
            result = HttpResult(200 if served else 404, "OK\n" if served else "404 page not found\n",
                                {"Content-Type": "text/plain; charset=utf-8", "Date": date},
                                latency_ms=rtt + 0.3 + delay, connect=conn)
    else:
        return HttpResult(error="refused", latency_ms=rtt, connect=conn, message=conn.message)
    if result.error is not None:  # an app's handler never answered in time
        return result
    status, body, rewritten = rewrite_response(effect, result.status, result.body, result.headers)
    result = HttpResult(status, body, rewritten, latency_ms=result.latency_ms, connect=conn)
    headers_out = dict(result.headers)
    lower = bool(headers_out) and all(k == k.lower() for k in headers_out)  # as the server wrote them
    headers_out["content-length" if lower else "Content-Length"] = str(len(result.body.encode()))
    return HttpResult(result.status, result.body, headers_out, None, "", result.latency_ms, conn)


def _from_page(page: Page, latency_ms: float, timeout_ms: float, conn: ConnectResult, date: str) -> HttpResult:
    """An app's own answer; a handler that never answers, or answers after the client gave up,
    is the client's timeout."""
    latency = latency_ms + page.delay_ms
    if page.stall or latency > timeout_ms:
        return HttpResult(error="timeout", latency_ms=timeout_ms, connect=conn,
                          message=f"Operation timed out after {int(timeout_ms)} milliseconds with 0 bytes received")
    lower = all(k == k.lower() for k in page.headers)  # Envoy writes lower-case names
    headers = dict(page.headers) if any(k.lower() == "date" for k in page.headers) else \
        {**page.headers, "date" if lower and page.headers else "Date": date}
    return HttpResult(page.status, page.body, headers, latency_ms=latency, connect=conn)


def _http_date(now: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(now, tz=UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")


__all__ = ["REASONS", "HttpResult", "answer", "http_request"]
