"""Work whose caller gave up: gRPC deadlines cancel queued calls, so a retry-storm backlog drains
as soon as the callers' policy lets it, while the bad policy still keeps the collapse alive."""

from __future__ import annotations

from sregym.cluster.twin import TwinCluster
from sregym.problems.catalog.hotel_reservation.disk_and_metastable import _search_env
from sregym.problems.model import Action
from sregym.problems.registry import PROBLEMS
from sregym.problems.run import ProblemRun, apply_action
from sregym.twin.dataplane.queueing import CANCEL_COST_MS, QueueState, serve
from sregym.twin.dataplane.synthetic import synthetic_app
from sregym.twin.twin import Twin

COST_MS = 10.0  # one core serves 100 req/s


def _tick(state: QueueState, rps: float, deadlines: dict[float, float]) -> tuple[float, float]:
    """One second of `rps` requests; `deadlines` maps a caller timeout (ms) to its share."""
    result = serve(state, rps * COST_MS, 1.0, 1.0, limit=None, mean_cost_ms=COST_MS, max_queue_s=60.0,
                   deadlines={t: share * rps for t, share in deadlines.items()}, rate=rps)
    return result.served_ms / COST_MS, result.cancelled


# ------------------------------------------------------------------------------ the queue
def test_callers_deadline_bounds_the_live_queue_and_the_excess_is_cancelled_cheaply() -> None:
    state = QueueState()
    for _ in range(30):  # 150 req/s offered to 100 req/s of capacity, callers wait 100 ms
        _tick(state, 150.0, {100.0: 1.0})
    assert state.backlog_ms <= 100.0 + 1e-6  # 100 ms of one core: the calls still in time
    served, cancelled = _tick(state, 150.0, {100.0: 1.0})
    # the late calls are discarded at a fraction of their cost, the rest of the core serves
    assert cancelled > 45.0
    assert served > 100.0 - cancelled * CANCEL_COST_MS / COST_MS - 1.0


def test_without_cancelling_callers_the_backlog_keeps_growing() -> None:
    state = QueueState()
    for _ in range(30):  # an open-loop generator serves nobody's deadline
        _tick(state, 150.0, {})
    assert state.backlog_ms > 1000.0 and state.abandoned == 0.0


def test_abandoned_backlog_is_gone_within_a_tick_once_the_load_drops() -> None:
    state = QueueState()
    for _ in range(60):
        _tick(state, 400.0, {100.0: 1.0})
    assert state.abandoned > 250.0  # this tick's excess, discarded at the head next tick
    served, _ = _tick(state, 30.0, {2000.0: 1.0})
    assert state.abandoned == 0.0 and state.backlog_ms == 0.0
    assert served >= 30.0


def test_only_the_impatient_share_of_a_mixed_queue_is_cancelled() -> None:
    state = QueueState()
    for _ in range(20):  # half the callers wait 50 ms, the other half 10 s
        _tick(state, 200.0, {50.0: 0.5, 10_000.0: 0.5})
    # the patient half keeps queueing beyond the short deadline, the impatient half is cancelled
    assert state.backlog_ms > 1000.0 and state.abandoned > 10.0


# -------------------------------------------------------------------- synthetic storm
def _storm(name: str) -> Twin:
    twin = Twin(seed=23)
    synthetic_app(name, layers=(1, 1), rps=30.0, cpu_ms=COST_MS, cpu_limit="1", memory_limit="4Gi",
                  timeout="100ms", retries=3).deploy(twin)
    twin.advance(60)
    dp = twin.services.dataplane
    assert dp.entry_stats(20).success_ratio > 0.999
    dp.burst(name, 5.0, 10)
    twin.advance(10)
    return twin


def _backend(twin: Twin) -> object:
    return next(p for p in twin.services.dataplane.procs.values() if p.inst.spec.trace_name == "svc-1-0")


def test_bad_policy_keeps_the_collapse_alive_and_the_backend_counts_cancelled_calls() -> None:
    twin = _storm("abandon")
    dp = twin.services.dataplane
    for _ in range(10):  # five minutes at base load
        twin.advance(30)
        assert dp.entry_stats(30).success_ratio < 0.5
    backend = _backend(twin)
    assert backend.serve_result.utilisation > 0.99  # type: ignore[attr-defined]
    assert backend.queue.backlog_ms <= 100.0 + 1e-6  # type: ignore[attr-defined]
    cancelled = {labels["pod"]: value for name, labels, value, _ in dp.app_metrics()
                 if name == "app_requests_deadline_exceeded_total" and labels["service"] == "svc-1-0"}
    assert sum(cancelled.values()) > 30.0 * 300  # more calls were cancelled than the base load sent
    errors = sum(v for (service, span, kind, status), v in dp.span_calls.items()
                 if service == "svc-1-0" and kind == "SPAN_KIND_SERVER" and status == "STATUS_CODE_ERROR")
    assert errors > 30.0 * 300  # the cancelled calls end their server spans with an error
    sampled = [s for s in twin.services.traces.spans() if s.service == "svc-1-0" and s.kind == "server"
               and s.start_us > (twin.clock.now - 60) * 1_000_000]
    assert sampled and all(s.error and "DeadlineExceeded" in s.message for s in sampled)
    assert all(s.duration_us <= 100_000 for s in sampled)  # cancelled at the caller's 100 ms deadline


def test_policy_fix_alone_drains_in_seconds_without_restarting_the_backend() -> None:
    twin = _storm("drain")
    dp = twin.services.dataplane
    twin.advance(120)
    assert dp.entry_stats(30).success_ratio < 0.5
    backend_uid = twin.list("pods", "drain", label_selector="app=svc-1-0")[0]["metadata"]["uid"]
    twin.patch("Deployment", "drain", "gateway", {"spec": {"template": {"spec": {"containers": [
        {"name": "gateway", "env": [{"name": "CLIENT_TIMEOUT", "value": "2s"},
                                    {"name": "CLIENT_RETRIES", "value": "0"}]}]}}}})
    twin.advance(30)
    stats = dp.entry_stats(10)
    assert stats.success_ratio > 0.99 and stats.p95_ms < 100
    assert twin.list("pods", "drain", label_selector="app=svc-1-0")[0]["metadata"]["uid"] == backend_uid


# ------------------------------------------------------------ Hotel Reservation problem
STORM = "hotel-reservation/metastable-retry-collapse-v1"


def test_metastable_problem_recovers_from_the_policy_change_alone() -> None:
    problem = PROBLEMS.get(STORM)
    assert [a.kind + "/" + a.name for a in problem.gold] == ["Deployment/search"]
    assert problem.mitigation.window_s <= 300.0
    cluster = TwinCluster.new(5)
    run = ProblemRun(problem, cluster, seed=5, noise="none")
    run.deploy()
    run.advance(30)
    run.record_baseline()
    run.inject()
    for _ in range(10):  # five minutes at base load, still collapsed
        run.advance(30)
        assert cluster.entry_stats(30).success_ratio < 0.9
    rate_uid = cluster.list("Pod", "hotel-reservation", label_selector="io.kompose.service=rate")[0]["metadata"]["uid"]
    apply_action(cluster.as_user("agent"), Action(
        op="patch", kind="Deployment", namespace="hotel-reservation", name="search",
        patch=_search_env({"GRPC_CLIENT_TIMEOUT": "1s", "GRPC_CLIENT_RETRIES_ON_ERROR": "1"})))
    run.advance(20)
    assert cluster.entry_stats(10).success_ratio > 0.99
    pods = cluster.list("Pod", "hotel-reservation", label_selector="io.kompose.service=rate")
    assert [p["metadata"]["uid"] for p in pods] == [rate_uid]  # rate was never restarted
