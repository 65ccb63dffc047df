"""Warm starts: a run forked from a shared, warmed-up twin is the run a fresh twin would give."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from sregym.cli.main import app
from sregym.problems import get_problem
from sregym.problems.check import check_many, check_problem
from sregym.problems.warm import ForkedRunFailed, can_fork, in_fork

pytestmark = pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")


def test_forked_gold_run_equals_a_fresh_one() -> None:
    # In a fresh interpreter (one thread, nothing cached): fingerprint, score JSON, verdict.
    script = textwrap.dedent("""
        from sregym.cluster.twin import TwinCluster
        from sregym.problems import get_problem
        from sregym.problems.check import _gold_after_warmup, _gold_run
        from sregym.problems.warm import can_fork, in_fork, warm_start
        p = get_problem("demo-shop/bad-image-tag-v1")
        assert can_fork()
        fresh = _gold_run(p, 3, TwinCluster.new)
        warm = warm_start(p, 3)
        forked = in_fork(lambda: _gold_after_warmup(warm.run_for(p)))
        again = in_fork(lambda: _gold_after_warmup(warm.run_for(p)))
        print(warm.deterministic, fresh == forked == again, fresh[2])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True"]


def test_an_unverified_warm_start_is_verified_when_a_later_caller_asks() -> None:
    from sregym.problems.warm import clear_cache, warm_start

    problem = get_problem("demo-shop/bad-image-tag-v1")
    clear_cache()
    try:
        once = warm_start(problem, 11, verify=False)
        assert once.deterministic is None  # built once: nothing compared, and it says so
        if can_fork():  # the protocol forks from the cached start and reports no warm-up comparison
            unverified = check_problem(problem, 11, replicate=False, verify_warmup=False)
            assert unverified.passed and "same seed, identical warm-up" not in {s.name for s in unverified.steps}
        again = warm_start(problem, 11)
        assert again is once and again.deterministic is True  # the second build, compared now
    finally:
        clear_cache()


def test_forked_and_fresh_protocols_agree() -> None:
    problem = get_problem("demo-shop/missing-configmap-key-v1")
    fresh = check_problem(problem, 4, fork=False)
    if not can_fork():
        pytest.skip("another thread is running in this test process: forking is not safe here")
    forked = check_problem(problem, 4, fork=True)
    assert fresh.passed and forked.passed
    assert [(s.name, s.passed) for s in fresh.steps] == \
        [(s.name, s.passed) for s in forked.steps if s.name != "same seed, identical warm-up"]
    assert any(s.name == "same seed, identical warm-up" and s.passed for s in forked.steps)


def test_in_fork_returns_results_and_isolates_the_parent() -> None:
    if not can_fork():
        pytest.skip("another thread is running in this test process: forking is not safe here")
    state = [1]

    def mutate() -> list[int]:
        state.append(2)
        return list(state)

    assert in_fork(mutate) == [1, 2]
    assert state == [1]

    def boom() -> None:
        raise ValueError("broken problem")

    with pytest.raises(ForkedRunFailed, match="ValueError: broken problem"):
        in_fork(boom)


def test_check_many_in_parallel_matches_serial_and_keeps_order() -> None:
    problems = [get_problem("demo-shop/service-selector-mismatch-v1"), get_problem("demo-shop/bad-image-tag-v1")]
    seen: list[str] = []
    parallel = check_many(problems, 1, jobs=2, on_report=lambda r: seen.append(r.problem_id))
    serial = check_many(problems, 1, jobs=1)
    assert [r.problem_id for r in parallel] == [p.id for p in problems]
    assert sorted(seen) == sorted(p.id for p in problems)
    assert [[(s.name, s.passed) for s in r.steps] for r in parallel] == \
        [[(s.name, s.passed) for s in r.steps] for r in serial]
    assert all(r.passed for r in parallel)


def test_cli_check_with_jobs_and_unknown_id() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["check", "demo-shop/service-selector-mismatch-v1",
                                 "demo-shop/nonexistent-node-selector-v1", "-j", "2"])
    assert result.exit_code == 0, result.output
    assert "2 passed, 0 failed" in result.output
    missing = runner.invoke(app, ["check", "demo-shop/nope-v1"])
    assert missing.exit_code == 2
