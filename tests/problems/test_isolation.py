"""Nothing the agent credential can reach names a fault or a problem.

The sweep itself (every readable kind and the app's logs read with the agent credential) runs in
the problem group's child process: at the end of the noop run's verification window, once per
fault mechanism and at least once per app (`isolation_sample`), and for the first problem of each
app also after the fault took hold under high noise (`noisy_sample`): see
`tests/support/problem_batch.py`.
"""

from __future__ import annotations

import pytest

from sregym.problems import all_problem_ids, get_problem
from support.problem_batch import batch_result, group_of, isolation_sample, noisy_sample


def _assert_isolated(problem_id: str, view: dict) -> None:
    assert "error" not in view, view.get("error")
    assert not view["found"]
    # The benchmark's chaos namespace and the Chaos Mesh objects in it stay invisible (Chaos Mesh's
    # kinds are visible; the sweep reads them too).
    assert "chaos-mesh" not in view["namespaces"]
    assert get_problem(problem_id).namespace in view["namespaces"]
    assert "forbidden" in view["chaos_listing"] or "reserved" in view["chaos_listing"]


@pytest.mark.parametrize("problem_id", [pytest.param(pid, marks=pytest.mark.xdist_group(group_of(pid)))
                                        for pid in all_problem_ids() if pid in isolation_sample()])
def test_agent_view_has_no_fault_or_problem_identifier(problem_id: str) -> None:
    _assert_isolated(problem_id, batch_result(problem_id)["isolation"])


@pytest.mark.parametrize("problem_id", [pytest.param(pid, marks=pytest.mark.xdist_group(group_of(pid)))
                                        for pid in all_problem_ids() if pid in noisy_sample()])
def test_agent_view_under_high_noise_has_no_fault_or_problem_identifier(problem_id: str) -> None:
    _assert_isolated(problem_id, batch_result(problem_id)["isolation_noisy"])


def test_the_noisy_sweep_covers_every_app() -> None:
    apps = {pid.split("/", 1)[0] for pid in all_problem_ids()}
    assert {pid.split("/", 1)[0] for pid in noisy_sample()} == apps
