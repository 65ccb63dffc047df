"""The wall anchor and the two layers that apply it (kube fields, the query APIs' parameters and
answers), on a fake wall clock so every number is exact."""

from __future__ import annotations

import copy
import json

import pytest

from sregym.twin.api.kube.wall_fields import present_log_lines, shift_times
from sregym.twin.api.obs_time import present_body, rewrite_params
from sregym.twin.api.wall_time import WallAnchor, bound, shift_embedded, shift_stamp
from sregym.twin.clock import SimClock


class FakeWall:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_follow_anchor_keeps_now_on_the_wall_clock_when_sim_runs_ahead_or_stands_still() -> None:
    clock = SimClock()
    wall = FakeWall(clock.now + 1_000_000.4)
    anchor = WallAnchor(clock, mode="follow", wall=wall)
    assert anchor.offset == 1_000_000  # floor: presented now never after the wall now
    assert anchor.now() == clock.now + 1_000_000
    for _ in range(600):  # the simulation runs ten minutes ahead of the wall clock
        clock.step()
    assert anchor.now() <= wall.now and anchor.offset == 1_000_000 - 600
    wall.now += 0.5  # within the tolerance: timestamps stay put
    assert anchor.offset == 1_000_000 - 600
    wall.now += 60  # the simulation stood still for a minute: re-anchored
    assert anchor.offset == 1_000_000 - 600 + 60
    assert anchor.to_sim(anchor.present(clock.now)) == clock.now


def test_paced_anchor_is_fixed_once_chosen_and_fixed_anchor_is_constant() -> None:
    clock = SimClock()
    wall = FakeWall(clock.now + 500.0)
    paced = WallAnchor(clock, mode="paced", wall=wall)
    assert paced.offset == 500
    wall.now += 3600
    assert paced.offset == 500
    assert WallAnchor.fixed().offset == 0 and WallAnchor.fixed(7).present(10.0) == 17.0
    assert WallAnchor.for_speed(clock, 0).mode == "follow"
    assert WallAnchor.for_speed(clock, 1).mode == "paced"


@pytest.mark.parametrize(("stamp", "seconds", "expected"), [
    ("2026-01-05T09:00:00Z", 3600, "2026-01-05T10:00:00Z"),
    ("2026-01-05T09:00:00.123456Z", 86400, "2026-01-06T09:00:00.123456Z"),
    ("2026-01-05T09:00:00.000000000Z", -1, "2026-01-05T08:59:59.000000000Z"),
    ("2026-01-05T10:00:00+01:00", 0, "2026-01-05T10:00:00+01:00"),
    ("2026-01-05T10:00:00+01:00", 60, "2026-01-05T10:01:00+01:00"),
    ("not a time", 60, "not a time"),
    ("", 60, ""),
])
def test_shift_stamp_keeps_layout(stamp: str, seconds: int, expected: str) -> None:
    assert shift_stamp(stamp, seconds) == expected


def test_kube_fields_shift_only_api_time_fields() -> None:
    obj = {"metadata": {"creationTimestamp": "2026-01-05T09:00:00Z",
                        "annotations": {"note": "2026-01-05T09:00:00Z"},
                        "managedFields": [{"manager": "kubectl", "time": "2026-01-05T09:00:00Z"}]},
           "data": {"time": "2026-01-05T09:00:00Z"},
           "status": {"conditions": [{"lastTransitionTime": "2026-01-05T09:00:00Z"}],
                      "containerStatuses": [{"state": {"running": {"startedAt": "2026-01-05T09:00:00Z"}}}]},
           "items": [{"timestamp": "2026-01-05T09:00:00Z", "window": "30s"}],
           "eventTime": None}
    out = shift_times(obj, 60)
    assert out["metadata"]["creationTimestamp"] == "2026-01-05T09:01:00Z"
    assert out["metadata"]["managedFields"][0]["time"] == "2026-01-05T09:01:00Z"
    assert out["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-05T09:01:00Z"
    assert out["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] == "2026-01-05T09:01:00Z"
    assert out["items"][0]["timestamp"] == "2026-01-05T09:01:00Z"
    assert out["metadata"]["annotations"]["note"] == "2026-01-05T09:00:00Z"  # user data
    assert out["data"]["time"] == "2026-01-05T09:00:00Z"
    assert out["eventTime"] is None
    assert obj["metadata"]["creationTimestamp"] == "2026-01-05T09:00:00Z"  # the input is untouched
    assert shift_times(out, -60) == obj


def test_chaos_mesh_times_shift_with_the_rest() -> None:
    """A Schedule's `status.time` (its last schedule time) and an experiment's record events are
    metav1.Time values too: left unshifted, they read months away from the creationTimestamp
    beside them. A `time` or `timestamp` anywhere else stays the user's data."""
    schedule = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "Schedule",
                "metadata": {"creationTimestamp": "2026-01-05T09:00:00Z"},
                "spec": {"schedule": "@every 1m", "time": "2026-01-05T09:00:00Z"},
                "status": {"time": "2026-01-05T09:01:00Z"}}
    chaos = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos",
             "status": {"experiment": {"containerRecords": [{"events": [
                 {"type": "Succeeded", "operation": "Apply", "timestamp": "2026-01-05T09:00:30Z"}]}]}}}
    other = {"apiVersion": "example.com/v1", "kind": "Schedule", "status": {"time": "2026-01-05T09:01:00Z"}}
    out = shift_times({"items": [schedule, chaos, other]}, 3600)
    assert out["items"][0]["status"]["time"] == "2026-01-05T10:01:00Z"
    assert out["items"][0]["metadata"]["creationTimestamp"] == "2026-01-05T10:00:00Z"
    assert out["items"][0]["spec"]["time"] == "2026-01-05T09:00:00Z"
    event = out["items"][1]["status"]["experiment"]["containerRecords"][0]["events"][0]
    assert event["timestamp"] == "2026-01-05T10:00:30Z"
    assert out["items"][2]["status"]["time"] == "2026-01-05T09:01:00Z"
    assert schedule["status"]["time"] == "2026-01-05T09:01:00Z"  # the input is untouched
    assert shift_times(out, -3600) == {"items": [schedule, chaos, other]}


def test_shift_copies_only_what_moves_and_never_touches_the_input() -> None:
    """Answers are encoded, never edited, so the walk shares every subtree without an instant
    (a pod's spec, a managedFields entry's field set) instead of copying it; what holds an
    instant is a copy, and the store's object stays as it was."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "creationTimestamp": "2026-01-05T09:00:00Z", "labels": {"app": "a"},
                        "managedFields": [{"manager": "kubectl", "operation": "Update",
                                           "time": "2026-01-05T09:00:00Z", "fieldsType": "FieldsV1",
                                           "fieldsV1": {"f:spec": {"f:containers": {}}}}]},
           "spec": {"containers": [{"name": "c", "image": "nginx", "env": [{"name": "T", "value": "x"}]}]},
           "status": {"conditions": [{"type": "Ready", "lastTransitionTime": "2026-01-05T09:00:00Z"},
                                     {"type": "Other"}]}}
    schedule = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "Schedule",
                "status": {"time": "2026-01-05T09:01:00Z",
                           "conditions": [{"lastTransitionTime": "2026-01-05T09:00:00Z"}]}}
    before = copy.deepcopy([pod, schedule])
    out = shift_times({"items": [pod, schedule]}, 60)
    assert [pod, schedule] == before  # nothing under the input changed
    shifted = out["items"][0]
    assert shifted["metadata"]["creationTimestamp"] == "2026-01-05T09:01:00Z"
    assert shifted["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-05T09:01:00Z"
    assert shifted["spec"] is pod["spec"] and shifted["metadata"]["labels"] is pod["metadata"]["labels"]
    assert shifted["metadata"]["managedFields"][0]["fieldsV1"] is pod["metadata"]["managedFields"][0]["fieldsV1"]
    assert shifted["status"]["conditions"][1] is pod["status"]["conditions"][1]
    assert list(shifted) == list(pod) and list(shifted["metadata"]) == list(pod["metadata"])  # key order kept
    moved = out["items"][1]["status"]
    assert moved == {"time": "2026-01-05T09:02:00Z", "conditions": [{"lastTransitionTime": "2026-01-05T09:01:00Z"}]}
    unchanged = {"kind": "ConfigMap", "data": {"a": "b"}}
    assert shift_times(unchanged, 60) is unchanged


@pytest.mark.parametrize(("line", "expected"), [
    ("2026-01-05T09:00:01Z INF cmd/geo/main.go:48 > Start", "2026-01-05T10:00:01Z INF cmd/geo/main.go:48 > Start"),
    ('ts=2026-01-05T09:00:01.250Z level=error', 'ts=2026-01-05T10:00:01.250Z level=error'),
    ('{"t":{"$date":"2026-01-05T23:30:00.000+00:00"}}', '{"t":{"$date":"2026-01-06T00:30:00.000+00:00"}}'),
    ("2026/01/05 09:00:01 listening", "2026/01/05 10:00:01 listening"),
    ("2026-01-05 09:00:01.000 UTC [1] LOG:  ready", "2026-01-05 10:00:01.000 UTC [1] LOG:  ready"),
    ("version 2026-01 build 09:00", "version 2026-01 build 09:00"),
])
def test_embedded_log_times_shift(line: str, expected: str) -> None:
    assert shift_embedded(line, 3600) == expected


def test_log_lines_follow_the_bound_anchor() -> None:
    text = "2026-01-05T09:00:01.000000000Z hello world\n2026-01-05T09:00:02.500000000Z again\n"
    assert present_log_lines(text) == text  # no anchor bound: simulated time as stored
    with bound(WallAnchor.fixed(3600)):
        assert present_log_lines(text) == ("2026-01-05T10:00:01.000000000Z hello world\n"
                                           "2026-01-05T10:00:02.500000000Z again\n")


@pytest.mark.parametrize(("api", "query", "expected"), [
    ("prometheus", "query=up&start=1000.5&end=2000&step=15", "query=up&start=900.500&end=1900&step=15"),
    ("prometheus", "query=up&time=1970-01-01T00:33:20Z", "query=up&time=1900"),
    ("prometheus", "query=up&time=garbage", "query=up&time=garbage"),
    ("loki", "query=%7Ba%3D%22b%22%7D&start=2000000000000000000",
     "query=%7Ba%3D%22b%22%7D&start=1999999900000000000"),
    ("loki", "query=x&start=1000.5", "query=x&start=900500000000"),
    ("jaeger", "service=frontend&start=5000000000&end=6000000000&lookback=1h",
     "service=frontend&start=4900000000&end=5900000000&lookback=1h"),
    ("jaeger", "endTs=5000000&lookback=3600000", "endTs=4900000&lookback=3600000"),
    ("jaeger", "service=frontend", "service=frontend"),
])
def test_query_params_map_back_to_simulated_time(api: str, query: str, expected: str) -> None:
    assert rewrite_params(query, api, 100) == expected  # type: ignore[arg-type]


def test_query_answers_move_forward() -> None:
    prom = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {}, "values": [[1000, "1"], [1000.25, "2"]]}]}}
    out = json.loads(present_body(json.dumps(prom).encode(), "prometheus", 100))
    assert out["data"]["result"][0]["values"] == [[1100, "1"], [1100.25, "2"]]
    alerts = {"status": "success", "data": {"alerts": [{"activeAt": "2026-01-05T09:00:00.5Z"}]}}
    out = json.loads(present_body(json.dumps(alerts).encode(), "prometheus", 60))
    assert out["data"]["alerts"][0]["activeAt"] == "2026-01-05T09:01:00.5Z"
    loki = {"status": "success", "data": {"resultType": "streams", "result": [
        {"stream": {}, "values": [["1000000000000", "line"]]}]}}
    out = json.loads(present_body(json.dumps(loki).encode(), "loki", 1))
    assert out["data"]["result"][0]["values"] == [["1001000000000", "line"]]
    jaeger = {"data": [{"spans": [{"startTime": 10, "logs": [{"timestamp": 20}]}]}]}
    out = json.loads(present_body(json.dumps(jaeger).encode(), "jaeger", 1))
    assert out["data"][0]["spans"][0] == {"startTime": 1_000_010, "logs": [{"timestamp": 1_000_020}]}


def test_presenter_is_the_bound_anchors_present() -> None:
    from sregym.twin.api.wall_time import presenter

    assert presenter() is None  # in-process: programs print simulated time
    with bound(WallAnchor.fixed(3600)):
        present = presenter()
        assert present is not None and present(100.0) == 3700.0


@pytest.mark.parametrize("text, expected", [
    ("I0105 09:01:17.123456       1 server.go:1] up", "I0106 10:01:17.123456       1 server.go:1] up"),
    ("E0105 23:59:59.000000 x W0105 00:00:00.000001 y", "E0107 00:59:59.000000 x W0106 01:00:00.000001 y"),
    ("I0105 09:01:17 no fraction: not klog", "I0105 09:01:17 no fraction: not klog"),
    ("ID0105 09:01:17.123456 inside a word", "ID0105 09:01:17.123456 inside a word"),
])
def test_shift_embedded_moves_klog_headers(text: str, expected: str) -> None:
    assert shift_embedded(text, 90_000) == expected
