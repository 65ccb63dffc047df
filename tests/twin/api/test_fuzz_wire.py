"""Deterministic adversarial fuzzing of every wire API of one running twin.

One `TwinServer` in its own process (Hotel Reservation deployed and warmed up, so every store
holds real data; this file run as a script) serves the Kubernetes API over HTTPS and Prometheus,
Loki and Jaeger over HTTP. Keep-alive clients on two threads (Kubernetes; the query APIs) send
≥ 10,000 Kubernetes requests, ≥ 2,000 PromQL queries and hundreds of LogQL and Jaeger requests,
generated from one seed: well-formed ones with random parameters, malformed bodies and queries,
and adversarial ones (catastrophic regexes, year-long subqueries, 11,001-point ranges, billion
laughs, deep nesting, 4 MiB bodies, JSON patches that copy themselves up, oversized limits).

Asserted: no 5xx (other than the real servers' own 5xx answers: a query budget's timeout, a list
at a future resourceVersion; counted and printed), no request taking longer than its budget (the
client gives up at the budget plus a margin, which fails the test; PromQL queries mostly carry
Prometheus' `timeout` parameter), and bounded growth of the server process's memory. Streaming
requests (watch, follow, exec upgrades) are left out: they are meant to stay open.
"""

from __future__ import annotations

import json
import random
import ssl
import string
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from sregym.twin import Twin
from sregym.twin.api.kubeconfig import make_tokens, token_for
from sregym.twin.api.loki import DEADLINE_EXCEEDED, QUERY_TIMEOUT_S
from sregym.twin.telemetry.promql.budget import DEFAULT_TIMEOUT_S
from support.processes import memory_mb, start_served, stop_served

SEED = 20261201
KUBE_REQUESTS = 10_000
PROMQL_QUERIES = 2_000
LOKI_REQUESTS = 600
JAEGER_REQUESTS = 600
# The client waits this long beyond the server's query budget before calling a request hung.
MARGIN_S = 15.0
# Query budgets bound what one evaluation holds (a few hundred MiB at most: measured ~220 MiB for
# the heaviest query here, on top of what the Kubernetes stream created); what stays allocated
# afterwards (objects the fuzz created, caches, the allocator's arenas) must stay small. Unbounded
# work (issue #26: a year-long subquery, 5 GB) would blow through both.
MAX_PEAK_GROWTH_MB = 640
MAX_RETAINED_GROWTH_MB = 256
PROMQL_TIMEOUT = "2s"


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    budget_answers: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    slowest: Counter[str] = field(default_factory=Counter)  # seconds, per API (printed only)
    lock: threading.Lock = field(default_factory=threading.Lock)  # two client threads record


@dataclass
class Served:
    process: subprocess.Popen[str]
    info: dict[str, Any]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    process, info = start_served(__file__, str(tmp_path_factory.mktemp("fuzz")), "fuzz")
    try:
        yield Served(process, info)
    finally:
        stop_served(process)

def serve() -> None:
    """The server process: a warmed-up twin on free ports; one JSON line describing it (URLs,
    tokens, CA, real names to aim at), then serve until stdin closes."""
    from sregym.apps import deploy_app
    from sregym.twin.api.serve import TwinServer

    seed = SEED % 1000
    twin = Twin(seed=seed)
    deploy_app(twin, "hotel-reservation")
    twin.advance(180)
    server = TwinServer(twin, tokens=make_tokens(), port=0, speed=0, shutdown_grace=0.2,
                        observability_ports={"prometheus": 0, "loki": 0, "jaeger": 0}).start_in_thread()
    info = server.call(lambda: _inventory(twin))
    info.update(url=server.url, urls=server.observability_urls(), tokens=server.tokens,
                ca=str(server.tls.ca_file) if server.tls else "")
    print(json.dumps(info), flush=True)
    sys.stdin.read()
    server.stop()


# ------------------------------------------------------------------------------ generators
NASTY_TEXT = ["", " ", "\x00", "%00", "../..", "é", "💥", "a" * 300, "-1", "1e309", "NaN", "null", "{}",
              "[]", "'", '"', "\\", "${x}", "*", "?", "#", "a=b,c!=d", "in (a,b", "!x", "x in ()",
              "status.phase=Running", "metadata.name==web", "=", "~", ",,,", "0", "99999999999999999999"]
REGEX_BOMBS = [r"(\\w+)+x", r"(a|a)*b", r"(.*a){20}", r"(x+x+)+y", r"((a*)*)*b", r"(.*)*=(.*)*x",
               r"(?=x)", r"(a)\\1", r"[z-a]", r"x{1001}", r"(((((((((((a)))))))))))*z", r"\\pX"]


def _text(rng: random.Random, size: int = 12) -> str:
    if rng.random() < 0.5:
        return rng.choice(NASTY_TEXT)
    alphabet = string.printable + "éü中🙂"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, size)))


def _json_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice([None, True, False, 0, -1, 2**63, 1.5, -1e300, _text(rng), "", "x" * 50])
    if roll < 0.7:
        return {_text(rng, 8): _json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def _mutate(rng: random.Random, obj: Any) -> Any:
    """A copy of a valid object with a few fields replaced by random values."""
    obj = json.loads(json.dumps(obj))
    for _ in range(rng.randint(1, 4)):
        node = obj
        for _depth in range(rng.randint(1, 4)):
            if isinstance(node, dict) and node:
                key = rng.choice(sorted(node))
                if rng.random() < 0.4 or not isinstance(node[key], dict | list):
                    node[key] = _json_value(rng)
                    break
                node = node[key]
            elif isinstance(node, list) and node:
                node = node[rng.randrange(len(node))]
            else:
                break
    return obj


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _laughs(levels: int) -> str:
    doc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\nl0: &l0 [lol, lol, lol, lol, lol, lol]\n"
    for i in range(1, levels):
        doc += f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 6)}]\n"
    return doc + f"data: {{k: v}}\nz: *l{levels - 1}\n"


@dataclass
class KubeRequest:
    method: str
    path: str
    params: dict[str, str]
    body: bytes | None
    content_type: str
    user: str


class KubeGenerator:
    """Kubernetes API requests aimed at real objects, with random and adversarial parts."""

    COLLECTIONS = [
        "/api/v1/namespaces/{ns}/pods", "/api/v1/namespaces/{ns}/configmaps",
        "/api/v1/namespaces/{ns}/secrets", "/api/v1/namespaces/{ns}/services",
        "/api/v1/namespaces/{ns}/events", "/api/v1/namespaces/{ns}/endpoints",
        "/apis/apps/v1/namespaces/{ns}/deployments", "/apis/apps/v1/namespaces/{ns}/replicasets",
        "/apis/apps/v1/namespaces/{ns}/statefulsets", "/apis/batch/v1/namespaces/{ns}/jobs",
        "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies", "/api/v1/nodes", "/api/v1/namespaces",
        "/apis/apps/v1/deployments", "/api/v1/pods", "/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods",
        "/apis/chaos-mesh.org/v1alpha1/namespaces/{ns}/podchaos", "/apis/coordination.k8s.io/v1/leases",
    ]
    DISCOVERY = ["/api", "/apis", "/api/v1", "/apis/apps/v1", "/version", "/healthz", "/openapi/v3",
                 "/openapi/v3/api/v1", "/apis/apps", "/", "/nope", "/api/v2", "/apis/x/y/z"]
    LIST_PARAMS = ["labelSelector", "fieldSelector", "limit", "continue", "resourceVersion",
                   "resourceVersionMatch", "timeoutSeconds", "pretty", "includeObject"]
    LOG_PARAMS = ["container", "previous", "tailLines", "sinceSeconds", "sinceTime", "timestamps",
                  "limitBytes"]

    def __init__(self, rng: random.Random, objects: dict[str, list[tuple[str, dict[str, Any]]]]) -> None:
        self.rng = rng
        self.objects = objects  # collection path -> [(name, object)]

    def _params(self, keys: list[str]) -> dict[str, str]:
        rng = self.rng
        params = {}
        for key in rng.sample(keys, rng.randint(0, min(3, len(keys)))):
            params[key] = rng.choice([_text(rng), str(rng.randint(-5, 10**6)), "true", "1", "app=frontend",
                                      "metadata.namespace=hotel-reservation", "Exact", "NotOlderThan"])
        return params

    def request(self) -> KubeRequest:
        rng = self.rng
        user = rng.choice(["admin", "agent"])
        roll = rng.random()
        ns = rng.choice(["hotel-reservation", "default", "kube-system", "sregym-system", "chaos-mesh", "nope"])
        collection = rng.choice(self.COLLECTIONS).format(ns=ns)
        if roll < 0.06:
            return KubeRequest("GET", rng.choice(self.DISCOVERY), {}, None, "", user)
        if roll < 0.30:
            return KubeRequest("GET", collection, self._params(self.LIST_PARAMS), None, "", user)
        known = self.objects.get(collection.replace(f"/{ns}/", "/hotel-reservation/")) or []
        name, obj = rng.choice(known) if known and rng.random() < 0.8 else (_text(rng, 20) or "x", {})
        item = f"{collection}/{quote(name, safe='')}"
        if roll < 0.42:
            sub = rng.choice(["", "", "/status", "/scale", "/log", "/exec", "/eviction", "/binding", "/x"])
            params = self._params(self.LOG_PARAMS if sub == "/log" else self.LIST_PARAMS)
            params.pop("follow", None)
            return KubeRequest("GET", item + sub, params, None, "", user)
        if roll < 0.62:
            return self._write(collection, item, obj, user)
        if roll < 0.80:
            return self._patch(item, obj, user)
        if roll < 0.90:
            body = rng.choice([None, b"{}", json.dumps({"propagationPolicy": _text(rng)}).encode(),
                               json.dumps({"gracePeriodSeconds": rng.randint(-10, 10),
                                           "dryRun": ["All"]}).encode(), b"{bad"])
            params = {"dryRun": "All"} if rng.random() < 0.7 else self._params(["propagationPolicy",
                                                                                "gracePeriodSeconds"])
            path = item if rng.random() < 0.8 else collection
            return KubeRequest("DELETE", path, params, body, "application/json", user)
        return self._adversarial(collection, user)

    def _write(self, collection: str, item: str, obj: dict[str, Any], user: str) -> KubeRequest:
        rng = self.rng
        base = obj or {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fuzz"}, "data": {}}
        body = _mutate(rng, base) if rng.random() < 0.8 else _json_value(rng)
        if isinstance(body, dict) and isinstance(body.get("metadata"), dict) and rng.random() < 0.7:
            body["metadata"]["name"] = f"fuzz-{rng.randrange(10**6)}"
            body["metadata"].pop("resourceVersion", None)
        raw = json.dumps(body).encode()
        ctype = "application/json"
        if rng.random() < 0.1:
            raw, ctype = raw[: rng.randrange(len(raw) + 1)], rng.choice(["application/json", "text/plain",
                                                                        "application/yaml"])
        params = {"dryRun": "All"} if rng.random() < 0.5 else self._params(["fieldValidation", "fieldManager"])
        if rng.random() < 0.5:
            return KubeRequest("POST", collection, params, raw, ctype, user)
        return KubeRequest("PUT", item, params, raw, ctype, user)

    def _patch(self, item: str, obj: dict[str, Any], user: str) -> KubeRequest:
        rng = self.rng
        kind = rng.choice(["application/merge-patch+json", "application/strategic-merge-patch+json",
                           "application/json-patch+json", "application/apply-patch+yaml", "text/nope"])
        if kind == "application/json-patch+json":
            paths = ["/metadata/labels/x", "/spec/replicas", "/data/k", "/metadata/annotations",
                     "/spec/template/spec/containers/0/image", "/spec", "/status", "", "/~1"]
            ops = [{"op": rng.choice(["add", "replace", "remove", "copy", "move", "test", "x"]),
                    "path": rng.choice(paths), "from": rng.choice(paths), "value": _json_value(rng)}
                   for _ in range(rng.randint(0, 5))]
            body: Any = ops
        elif obj and rng.random() < 0.6:
            body = {k: v for k, v in _mutate(rng, obj).items() if rng.random() < 0.5}
        else:
            body = _json_value(rng)
        params = {"dryRun": "All"} if rng.random() < 0.6 else {"fieldManager": _text(rng) or "fuzz"}
        return KubeRequest("PATCH", item, params, json.dumps(body).encode(), kind, user)

    def _adversarial(self, collection: str, user: str) -> KubeRequest:
        rng = self.rng
        cm = "/api/v1/namespaces/hotel-reservation/configmaps"
        choice = rng.randrange(8)
        if choice == 0:
            return KubeRequest("POST", cm, {}, _laughs(rng.randint(4, 12)).encode(), "application/yaml", user)
        if choice == 1:
            body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},"x":' + \
                _deep(rng.choice([50, 200, 5000, 100_000])) + "}"
            return KubeRequest("POST", cm, {"dryRun": "All"}, body.encode(), "application/json", user)
        if choice == 2:
            body = "x: " + _deep(rng.choice([50, 200, 3000]))
            return KubeRequest("POST", cm, {}, body.encode(), "application/yaml", user)
        if choice == 3:
            size = rng.choice([1 << 20, (3 << 20) + 10])
            body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
                               "data": {"k": "x" * size}}).encode()
            return KubeRequest("POST", cm, {"dryRun": "All"}, body, "application/json", user)
        if choice == 4:
            ops = [{"op": "copy", "from": "/metadata", "path": f"/metadata/annotations/a{i}"} for i in range(30)]
            return KubeRequest("PATCH", f"{cm}/{rng.choice(['frontend', 'nope'])}", {"dryRun": "All"},
                               json.dumps(ops).encode(), "application/json-patch+json", user)
        if choice == 5:
            return KubeRequest("GET", collection, {"labelSelector": "a in (" + ",".join(["x"] * 5000) + ")",
                                                  "limit": str(rng.choice([-1, 0, 2**62, 1]))}, None, "", user)
        if choice == 6:
            return KubeRequest(rng.choice(["GET", "POST", "PUT", "DELETE", "PATCH"]),
                               "/" + "/".join(quote(_text(rng, 6) or "x", safe="")
                                              for _ in range(rng.randint(1, 9))),
                               {}, b"{}", "application/json", user)
        return KubeRequest("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {},
                           json.dumps(_mutate(rng, {"spec": {"resourceAttributes": {
                               "verb": "get", "resource": "pods", "namespace": "x"}}})).encode(),
                           "application/json", user)


class PromQLGenerator:
    FUNCS = ["rate", "irate", "increase", "delta", "deriv", "avg_over_time", "max_over_time",
             "quantile_over_time", "count_over_time", "absent_over_time", "changes", "resets",
             "predict_linear", "holt_winters"]
    INSTANT_FUNCS = ["abs", "ceil", "sort", "sort_desc", "timestamp", "absent", "histogram_quantile",
                     "label_replace", "label_join", "clamp", "round", "vector", "scalar", "exp", "ln"]
    AGGS = ["sum", "avg", "min", "max", "count", "stddev", "topk", "bottomk", "quantile", "count_values",
            "group"]
    RANGES = ["1m", "5m", "30s", "1h", "0s", "1y", "15d", "1ms", "99999d"]

    def __init__(self, rng: random.Random, names: list[str], labels: list[tuple[str, str]]) -> None:
        self.rng = rng
        self.names = names
        self.labels = labels

    def selector(self) -> str:
        rng = self.rng
        matchers = []
        for _ in range(rng.randint(0, 3)):
            name, value = rng.choice(self.labels)
            op = rng.choice(["=", "!=", "=~", "!~"])
            if op in ("=~", "!~") and rng.random() < 0.4:
                value = rng.choice(REGEX_BOMBS)
            matchers.append(f'{name}{op}"{value}"')
        name = rng.choice(self.names) if rng.random() < 0.85 else ""
        if not name and not matchers:
            matchers.append('__name__=~"' + rng.choice([".+", r"(\\w+)+x", "kube_.*"]) + '"')
        return name + ("{" + ",".join(matchers) + "}" if matchers or rng.random() < 0.2 else "")

    def expr(self, depth: int = 0) -> str:
        rng = self.rng
        roll = rng.random()
        if depth > 2 or roll < 0.3:
            return self.selector() if rng.random() < 0.85 else rng.choice(["1", "-2.5", "NaN", "Inf", "1e309"])
        if roll < 0.5:
            window = rng.choice(self.RANGES)
            inner = f"{self.selector()}[{window}]"
            if rng.random() < 0.3:
                inner = f"({self.expr(depth + 1)})[{window}:{rng.choice(['', '1s', '15s', '1m', '0s'])}]"
            fn = rng.choice(self.FUNCS)
            extra = {"quantile_over_time": "0.9, ", "predict_linear": "", "holt_winters": ""}.get(fn, "")
            suffix = {"predict_linear": ", 60", "holt_winters": ", 0.5, 0.5"}.get(fn, "")
            return f"{fn}({extra}{inner}{suffix})"
        if roll < 0.7:
            agg = rng.choice(self.AGGS)
            param = {"topk": "3, ", "bottomk": "2, ", "quantile": "0.5, ", "count_values": '"v", '}.get(agg, "")
            grouping = rng.choice(["", " by (namespace)", " without (pod)", " by (__name__)", " by ()"])
            return f"{agg}{grouping}({param}{self.expr(depth + 1)})"
        if roll < 0.85:
            op = rng.choice(["+", "-", "*", "/", "%", "^", "==", "!=", ">", "<", " and ", " or ", " unless ",
                             " > bool "])
            match = rng.choice(["", " on (namespace) ", " ignoring (pod) ", " on () group_left "])
            return f"({self.expr(depth + 1)}){op}{match}({self.expr(depth + 1)})"
        fn = rng.choice(self.INSTANT_FUNCS)
        if fn == "label_replace":
            return f'label_replace({self.expr(depth + 1)}, "dst", "$1", "pod", "{rng.choice(REGEX_BOMBS)}")'
        if fn == "histogram_quantile":
            return f"histogram_quantile(0.9, rate({self.selector()}[5m]))"
        return f"{fn}({self.expr(depth + 1)})"

    def request(self, now_s: float) -> tuple[str, dict[str, str]]:
        rng = self.rng
        roll = rng.random()
        query = self.expr()
        if rng.random() < 0.1:  # malformed: truncated, with garbage, or random text
            query = rng.choice([query[: rng.randrange(len(query) + 1)], query + rng.choice(")]}\"'{,@"),
                                _text(rng, 40)])
        if roll < 0.55:
            params = {"query": query}
            if rng.random() < 0.3:
                params["time"] = rng.choice([str(now_s - rng.randint(0, 7200)), "0", "-1e12", "nope", "1e20"])
            if rng.random() < 0.1:
                params["timeout"] = rng.choice(["5s", "1m", "-1s", "x", "0s"])
            return "/api/v1/query", params
        if roll < 0.9:
            span = rng.choice([60, 600, 3600, 86400, 11_001, 10**7])
            step = rng.choice(["15", "1", "0", "-5", "60s", "1h", "x", "0.001"])
            start = now_s - span
            return "/api/v1/query_range", {"query": query, "start": str(start), "end": str(now_s), "step": step}
        path = rng.choice(["/api/v1/series", "/api/v1/labels", "/api/v1/label/pod/values",
                           "/api/v1/label/__name__/values", "/api/v1/label/1bad/values", "/api/v1/metadata"])
        return path, {"match[]": self.selector() if rng.random() < 0.8 else _text(rng)}


class LokiGenerator:
    def __init__(self, rng: random.Random, labels: list[tuple[str, str]]) -> None:
        self.rng = rng
        self.labels = labels

    def query(self) -> str:
        rng = self.rng
        name, value = rng.choice(self.labels)
        op = rng.choice(["=", "=~", "!=", "!~"])
        if op in ("=~", "!~") and rng.random() < 0.4:
            value = rng.choice(REGEX_BOMBS)
        sel = f'{{{name}{op}"{value}"}}'
        stages = []
        for _ in range(rng.randint(0, 4)):
            stages.append(rng.choice([f'|= "{_text(rng, 5)}"', f'|~ "{rng.choice(REGEX_BOMBS)}"', "| json",
                                      "| logfmt", '| level="error"', "| latency > 10ms", "| line_format \"{{.pod}}\"",
                                      '!~ "(a+)+b"', "| drop pod", "| regexp \"(?P<x>.*)\"", "| __error__=\"\""]))
        log = sel + " " + " ".join(stages)
        if rng.random() < 0.5:
            log = f"{rng.choice(['count_over_time', 'rate', 'bytes_rate', 'absent_over_time'])}({log} " \
                  f"[{rng.choice(['1m', '5m', '1h', '0s', '1y'])}])"
            if rng.random() < 0.5:
                log = f"sum by (pod) ({log})"
        if rng.random() < 0.1:
            log = rng.choice([log[: rng.randrange(len(log) + 1)], _text(rng, 30)])
        return log

    def request(self, now_s: float) -> tuple[str, dict[str, str]]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.6:
            span = rng.choice([60, 3600, 6 * 3600, 800 * 3600])
            params = {"query": self.query(), "start": str(int((now_s - span) * 1e9)), "end": str(int(now_s * 1e9)),
                      "limit": rng.choice(["10", "5000", "5001", "-1", "x", "1000"]),
                      "direction": rng.choice(["backward", "forward", "x"])}
            if rng.random() < 0.5:
                params["step"] = rng.choice(["15s", "1", "0", "0.001", "x", "1h"])
            return "/loki/api/v1/query_range", params
        if roll < 0.8:
            return "/loki/api/v1/query", {"query": self.query(), "time": str(int(now_s * 1e9))}
        path = rng.choice(["/loki/api/v1/labels", "/loki/api/v1/label/pod/values", "/loki/api/v1/series"])
        return path, {"match[]": self.query(), "query": self.query()}


class JaegerGenerator:
    def __init__(self, rng: random.Random, services: list[str], trace_ids: list[str]) -> None:
        self.rng = rng
        self.services = services
        self.trace_ids = trace_ids

    def request(self, now_s: float) -> tuple[str, dict[str, str]]:
        rng = self.rng
        service = rng.choice([*self.services, _text(rng)])
        roll = rng.random()
        if roll < 0.15:
            return "/api/services", {}
        if roll < 0.3:
            return f"/api/services/{quote(service, safe='')}/operations", {}
        if roll < 0.5:
            tid = rng.choice([*self.trace_ids, _text(rng, 40), "0" * 32, "f" * 33])
            return f"/api/traces/{quote(tid, safe='')}", {}
        if roll < 0.6:
            return "/api/dependencies", {"endTs": str(int(now_s * 1000)),
                                         "lookback": rng.choice(["3600000", "-1", "x", str(10**15)])}
        params = {"service": service, "limit": rng.choice(["20", "0", "-1", "100000", "x", str(2**64)]),
                  "lookback": rng.choice(["1h", "2d", "custom", "x", "-1h", "99999h"])}
        if rng.random() < 0.4:
            params["tags"] = rng.choice(['{"error":"true"}', "{", "[]", '{"a":1}', _text(rng)])
        if rng.random() < 0.3:
            params["minDuration"] = rng.choice(["1ms", "x", "-1s", "1e9h"])
        if rng.random() < 0.3:
            params["start"] = str(int((now_s - rng.randint(0, 10**6)) * 1e6))
            params["end"] = rng.choice([str(int(now_s * 1e6)), "x", "-5"])
        return "/api/traces", params


# ------------------------------------------------------------------------------- runner
def _check(tally: Tally, api: str, response: httpx.Response, describe: Callable[[], str]) -> None:
    tally.counts[api] += 1
    tally.statuses[response.status_code] += 1
    if response.status_code < 500:
        return
    text = response.text
    if api == "prometheus" and response.status_code == 503 and '"errorType":"timeout"' in text:
        tally.budget_answers["prometheus timeout"] += 1
        return
    if api == "loki" and response.status_code == 504 and DEADLINE_EXCEEDED in text:
        tally.budget_answers["loki timeout"] += 1
        return
    if api == "kube" and response.status_code == 504 and '"reason":"Timeout"' in text \
            and "Too large resource version" in text:
        # The real API server's answer to a list at a future resourceVersion (after waiting for
        # its cache to catch up): a 504 by design, not a failure.
        tally.budget_answers["kube resourceVersion too large"] += 1
        return
    tally.failures.append(f"{api} {response.status_code}: {describe()} -> {text[:300]}")


def _send(client: httpx.Client, tally: Tally, api: str, method: str, url: str, describe: Callable[[], str],
          **kw: Any) -> None:
    started = time.perf_counter()
    try:
        response = client.request(method, url, **kw)
    except httpx.TimeoutException:
        with tally.lock:
            tally.failures.append(f"{api}: no answer within its budget: {describe()}")
        return
    with tally.lock:
        tally.slowest[api] = max(tally.slowest[api], time.perf_counter() - started)
        _check(tally, api, response, describe)


def _inventory(twin: Twin) -> dict[str, Any]:
    """Real names to aim at."""
    objects: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for plural, path in (("pods", "/api/v1/namespaces/hotel-reservation/pods"),
                         ("configmaps", "/api/v1/namespaces/hotel-reservation/configmaps"),
                         ("services", "/api/v1/namespaces/hotel-reservation/services"),
                         ("deployments", "/apis/apps/v1/namespaces/hotel-reservation/deployments")):
        objects[path] = [(o["metadata"]["name"], o) for o in twin.list(plural, "hotel-reservation")][:20]
    tsdb = twin.services.tsdb
    names = sorted({s.labels["__name__"] for s in tsdb.all_series()})
    pairs = sorted({(k, v) for s in list(tsdb.all_series())[:400] for k, v in s.labels.items()
                    if k != "__name__"})
    traces = twin.services.traces
    services = sorted({span.service for span in list(traces.spans())[:2000]})
    return {"objects": objects, "names": names, "labels": pairs, "services": services,
            "trace_ids": sorted(traces.trace_ids())[:50], "now": twin.clock.now}


def _kube_stream(info: dict[str, Any], rng: random.Random, tally: Tally) -> None:
    bearer = {user: {"Authorization": f"Bearer {token_for(info['tokens'], user)}"} for user in ("admin", "agent")}
    objects = {path: [tuple(pair) for pair in pairs] for path, pairs in info["objects"].items()}
    gen = KubeGenerator(rng, objects)
    verify = ssl.create_default_context(cafile=info["ca"]) if info["ca"] else False
    with httpx.Client(base_url=info["url"], verify=verify, timeout=httpx.Timeout(MARGIN_S * 2)) as kube:
        for _ in range(KUBE_REQUESTS):
            req = gen.request()
            headers = {**bearer[req.user], "Content-Type": req.content_type} if req.content_type \
                else dict(bearer[req.user])
            _send(kube, tally, "kube", req.method, req.path, lambda r=req: f"{r.method} {r.path} {r.params}",
                  params=req.params, content=req.body, headers=headers)


def _query_stream(info: dict[str, Any], rng: random.Random, tally: Tally) -> None:
    urls, now = info["urls"], info["now"]
    bearer = [{"Authorization": f"Bearer {token_for(info['tokens'], user)}"} for user in ("admin", "agent")]
    prom_gen = PromQLGenerator(rng, info["names"], [tuple(p) for p in info["labels"]])
    loki_gen = LokiGenerator(rng, [("namespace", "hotel-reservation"), ("app", "frontend"), ("job", "x"),
                                   ("pod", "geo"), ("container", "hotel-reserv-geo"), ("node", "x")])
    jaeger_gen = JaegerGenerator(rng, info["services"], info["trace_ids"])
    plan = ["prometheus"] * PROMQL_QUERIES + ["loki"] * LOKI_REQUESTS + ["jaeger"] * JAEGER_REQUESTS
    rng.shuffle(plan)
    query_timeout = httpx.Timeout(max(DEFAULT_TIMEOUT_S, QUERY_TIMEOUT_S) + MARGIN_S)
    with httpx.Client(base_url=urls["prometheus"], timeout=query_timeout) as prom, \
            httpx.Client(base_url=urls["loki"], timeout=query_timeout) as loki, \
            httpx.Client(base_url=urls["jaeger"], timeout=httpx.Timeout(MARGIN_S * 2)) as jaeger:
        for api in plan:
            if api == "prometheus":
                path, params = prom_gen.request(now)
                if rng.random() < 0.9:  # Prometheus' own per-query budget, most of the time
                    params.setdefault("timeout", PROMQL_TIMEOUT)
                method = rng.choice(["GET", "GET", "POST"])
                kw: dict[str, Any] = {"params": params} if method == "GET" else {"data": params}
                _send(prom, tally, api, method, path, lambda p=path, q=params: f"{p} {q}",
                      headers=rng.choice(bearer), **kw)
            elif api == "loki":
                path, params = loki_gen.request(now)
                _send(loki, tally, api, "GET", path, lambda p=path, q=params: f"{p} {q}", params=params)
            else:
                path, params = jaeger_gen.request(now)
                _send(jaeger, tally, api, "GET", path, lambda p=path, q=params: f"{p} {q}", params=params)


def test_fuzz_every_api(served: Served, record_property: Any) -> None:
    info, pid = served.info, served.process.pid
    tally = Tally()
    rss_start, _peak = memory_mb(pid)
    streams = [threading.Thread(target=_kube_stream, args=(info, random.Random(SEED), tally)),
               threading.Thread(target=_query_stream, args=(info, random.Random(SEED + 1), tally))]
    for stream in streams:
        stream.start()
    for stream in streams:
        stream.join()
    rss_end, rss_peak = memory_mb(pid)
    figures = (f"fuzz requests: {dict(tally.counts)}; statuses: {dict(sorted(tally.statuses.items()))}; "
               f"real servers' 5xx answers: {dict(tally.budget_answers)}; server RSS {rss_start:.0f} -> "
               f"{rss_end:.0f} MiB (peak {rss_peak:.0f}); slowest answer per API (s): "
               f"{ {k: round(v, 2) for k, v in tally.slowest.items()} }")
    record_property("report", figures)  # printed in the terminal summary (tests/conftest.py), also under xdist
    assert tally.counts["kube"] >= 10_000 and tally.counts["prometheus"] >= 2_000
    assert tally.counts["loki"] >= 500 and tally.counts["jaeger"] >= 500
    assert not tally.failures, "\n".join(tally.failures[:20])
    assert rss_peak - rss_start < MAX_PEAK_GROWTH_MB
    assert rss_end - rss_start < MAX_RETAINED_GROWTH_MB
    # The server still answers normally afterwards.
    answer = httpx.get(info["urls"]["prometheus"] + "/api/v1/query", params={"query": "count(up)"})
    assert answer.json()["status"] == "success"


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    serve()
