"""The data plane's per-tick memos return exactly what an uncached computation returns, and a
change to any input they are keyed on gives a fresh answer (each test fails if its memo ignored
that input): span-histogram bucket shares keyed on (d, m), operation matching keyed on (spec,
name, method), and Envoy access-log templates keyed on the format."""

from __future__ import annotations

import math
from types import SimpleNamespace

from sregym.twin.dataplane import state
from sregym.twin.dataplane.engine import SPAN_BUCKETS_MS
from sregym.twin.dataplane.envoy import _parsed_format, render_format
from sregym.twin.dataplane.span_shares import BucketShares, compute_shares
from sregym.twin.dataplane.spec import Operation, ProgramSpec, Setting
from sregym.twin.dataplane.state import match_operation


def _inline_histogram(d: float, m: float, n: float) -> list[float]:
    """The loop `_record_span` ran before the memo, kept here as the reference."""
    hist = [0.0] * len(SPAN_BUCKETS_MS)
    for index, le in enumerate(SPAN_BUCKETS_MS):
        if le > d:
            hist[index] += n if m <= 1e-9 else n * (1.0 - math.exp((d - le) / m))
    return hist


def _memo_histogram(shares: BucketShares, d: float, m: float, n: float) -> list[float]:
    hist = [0.0] * len(SPAN_BUCKETS_MS)
    start, values = shares.of(d, m)
    for index, share in enumerate(values, start):
        hist[index] += n * share
    return hist


def test_bucket_shares_are_bit_identical_to_the_inline_loop() -> None:
    shares = BucketShares(SPAN_BUCKETS_MS)
    for d, m, n in [(0.3, 0.2, 17.0), (45.5, 12.25, 3.5), (3.0, 0.0, 9.0), (9000.0, 4000.0, 0.7),
                    (20000.0, 5.0, 2.0), (0.3, 0.2, 17.0)]:
        assert _memo_histogram(shares, d, m, n) == _inline_histogram(d, m, n)


def test_a_changed_latency_or_tail_gives_fresh_shares() -> None:
    shares = BucketShares(SPAN_BUCKETS_MS)
    base = shares.of(5.0, 2.0)
    assert len(shares) == 1
    moved_d = shares.of(7.0, 2.0)  # the deterministic part moved past a bucket bound
    moved_m = shares.of(5.0, 3.0)  # only the tail changed
    assert moved_d == compute_shares(SPAN_BUCKETS_MS, 7.0, 2.0) != base
    assert moved_m == compute_shares(SPAN_BUCKETS_MS, 5.0, 3.0) != base
    assert moved_d[0] == min(i for i, le in enumerate(SPAN_BUCKETS_MS) if le > 7.0)
    assert len(moved_d[1]) == len(SPAN_BUCKETS_MS) - moved_d[0]
    assert shares.of(5.0, 2.0) is base  # unchanged inputs: the remembered answer
    assert len(shares) == 3


def test_bucket_share_memo_is_bounded() -> None:
    shares = BucketShares(SPAN_BUCKETS_MS, limit=4)
    for i in range(10):
        assert shares.of(float(i), 1.0) == compute_shares(SPAN_BUCKETS_MS, float(i), 1.0)
    assert len(shares) <= 4


def _spec(*ops: Operation, protocol: str = "http") -> ProgramSpec:
    return ProgramSpec(name="shop", protocol=protocol, port=Setting(default="8080"), operations=ops)


def _proc(spec: ProgramSpec) -> SimpleNamespace:
    return SimpleNamespace(inst=SimpleNamespace(spec=spec))


def test_operation_match_follows_name_method_and_spec() -> None:
    get_item = Operation(name="/api/products/{id}")
    post_cart = Operation(name="/api/cart", method="POST")
    get_cart = Operation(name="/api/cart")
    proc = _proc(_spec(get_item, post_cart, get_cart))
    assert match_operation(proc, "/api/products/OLJCESPC7Z", "GET") is get_item
    assert match_operation(proc, "/api/products/OLJCESPC7Z", "GET") is get_item  # remembered
    assert match_operation(proc, "/api/cart", "POST") is post_cart  # same name, other method
    assert match_operation(proc, "/api/cart", "GET") is get_cart
    assert match_operation(proc, "POST /api/cart", None) is post_cart
    assert match_operation(proc, "/api/products/OLJCESPC7Z", "DELETE") is None
    # A process of a new program version (another spec) gets its own answers, not the old ones.
    renamed = Operation(name="/api/catalog/{id}")
    other = _proc(_spec(renamed))
    assert match_operation(other, "/api/products/OLJCESPC7Z", "GET") is None
    assert match_operation(other, "/api/catalog/OLJCESPC7Z", "GET") is renamed
    assert match_operation(proc, "/api/catalog/OLJCESPC7Z", "GET") is None


def test_operation_match_memo_is_bounded(monkeypatch) -> None:
    monkeypatch.setattr(state, "MATCH_MEMO_LIMIT", 3)
    op = Operation(name="/p/{id}")
    proc = _proc(_spec(op))
    for i in range(10):
        assert match_operation(proc, f"/p/{i}", "GET") is op
    memo = state._MATCHES[id(proc.inst.spec)][1]
    assert len(memo) <= 3


def test_access_log_template_matches_the_part_by_part_rendering() -> None:
    fields = {"START_TIME": "2026-01-01T00:00:00.000Z", "REQ(:METHOD)": "GET", "PATH": "/a{b}",
              "RESPONSE_FLAGS": "UF,URX"}
    for fmt in ['[%START_TIME%] "%REQ(:METHOD)% %PATH%" %RESPONSE_FLAGS% %UNSET% {json} 100% x\n',
                "%PATH%", "", "no operators {}", "%%PATH%%"]:
        expected = "".join(fields.get(text, "-") if operator else text for operator, text in _parsed_format(fmt))
        assert render_format(fmt, fields) == expected
    # Another format or other field values: a fresh line, never a remembered one.
    assert render_format("%PATH%", {"PATH": "/x"}) == "/x"
    assert render_format("%PATH% %PATH%", {"PATH": "/x"}) == "/x /x"


def test_tcp_counters_follow_the_pod_not_a_remembered_object() -> None:
    from sregym.twin.dataplane.tcp_loss import TcpStats

    stats = TcpStats(twin=None)  # type: ignore[arg-type]  # flows never read the twin
    a = {"metadata": {"uid": "uid-a"}, "spec": {"nodeName": "n1"}}
    b = {"metadata": {"uid": "uid-b"}, "spec": {"nodeName": "n1"}}
    host = {"metadata": {"uid": "uid-h"}, "spec": {"nodeName": "n2", "hostNetwork": True}}
    stats.flow(a, b, 10.0, None, 1.0)
    stats.flow(a, b, 10.0, None, 1.0)  # the remembered path
    assert stats.pods["uid-a"].out_segs == stats.pods["uid-b"].out_segs > 0
    a_again = {"metadata": {"uid": "uid-a"}, "spec": {"nodeName": "n1"}}  # the pod as a new object
    stats.flow(a_again, host, 10.0, None, 1.0)
    assert stats.pods["uid-a"].out_segs == 1.5 * stats.pods["uid-b"].out_segs
    assert "uid-h" not in stats.pods and stats.nodes["n2"].out_segs > 0  # host network: the node's
    recreated = {"metadata": {"uid": "uid-c"}, "spec": {"nodeName": "n1"}}  # same name, new pod
    stats.flow(recreated, None, 10.0, None, 1.0)
    assert stats.pods["uid-c"].out_segs == stats.pods["uid-b"].out_segs / 2


def test_flag_values_encode_as_json_with_their_type() -> None:
    from sregym.twin.dataplane.flag_client import resolve

    flags = {"on": {"state": "ENABLED", "variants": {"a": True, "b": 1}, "defaultVariant": "a"},
             "one": {"state": "ENABLED", "variants": {"a": True, "b": 1}, "defaultVariant": "b"},
             "neg": {"state": "ENABLED", "variants": {"z": -0.0, "p": 0.0}, "defaultVariant": "z"},
             "pos": {"state": "ENABLED", "variants": {"z": -0.0, "p": 0.0}, "defaultVariant": "p"},
             "obj": {"state": "ENABLED", "variants": {"x": {"k": [1]}}, "defaultVariant": "x"}}
    assert resolve(flags, "on", "false") == ("true", None)
    assert resolve(flags, "one", "0") == ("1", None)  # 1 after True: not the remembered "true"
    assert resolve(flags, "on", "0") == ("0", "TYPE_MISMATCH")
    assert resolve(flags, "neg", "1.5") == ("-0.0", None)
    assert resolve(flags, "pos", "1.5") == ("0.0", None)
    assert resolve(flags, "obj", "{}") == ('{"k": [1]}', None)


def test_log_resource_follows_the_pod_object() -> None:
    from sregym.twin import Twin
    from sregym.twin.dataplane.log_channel import export
    from sregym.twin.telemetry.otlp_logs import otlp_logs

    twin = Twin(seed=0)
    twin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default",
                                                                 "labels": {"app.kubernetes.io/component": "web"}},
                 "spec": {"containers": [{"name": "c", "image": "nginx", "env": [
                     {"name": "OTEL_SERVICE_NAME", "valueFrom": {"fieldRef": {
                         "fieldPath": "metadata.labels['app.kubernetes.io/component']"}}}]}]}})

    def services() -> list[str]:
        return sorted({res["service.name"] for res, _records in otlp_logs(twin).resources()})

    export(twin, "default", "web", "c", "fallback", 1.0, "one")
    export(twin, "default", "web", "c", "fallback", 2.0, "two")
    assert services() == ["web"]
    twin.patch("Pod", "default", "web", {"metadata": {"labels": {"app.kubernetes.io/component": "shop"}}})
    export(twin, "default", "web", "c", "fallback", 3.0, "three")
    assert services() == ["shop", "web"]  # the relabelled pod's line carries its new name
    export(twin, "default", "web", "other", "fallback", 4.0, "four")  # another container: its own
    assert services() == ["fallback", "shop", "web"]
