"""The baseline's general steps (what changed, why the scheduler refuses, which address is gone)
and the held-out split its generalisation is measured on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sregym.agents.baseline.changes import SETTLED_S, edited_after_creation
from sregym.agents.baseline.hypotheses import HYPOTHESES
from sregym.problems import all_problem_ids
from support.baseline_attempt import baseline_result

ROOT = Path(__file__).resolve().parents[2]
SPLIT = ROOT / "benchmarks" / "baseline_split.json"
PARITY = ROOT / "src" / "sregym" / "problems" / "catalog" / "hotel_reservation" / "parity.py"


def _meta(created: str, *writes: str) -> dict:
    return {"name": "flagd-config", "creationTimestamp": created,
            "managedFields": [{"manager": "kubectl-client-side-apply", "time": t, "fieldsV1": {"f:data": {}}}
                              for t in writes]}


def test_an_object_written_well_after_creation_is_a_recent_change() -> None:
    change = edited_after_creation(_meta("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-01T00:07:00Z"))
    assert change is not None and change.at == "2026-01-01T00:07:00Z" and change.fields == ("f:data",)


def test_writes_at_deployment_time_are_not_changes() -> None:
    assert edited_after_creation(_meta("2026-01-01T00:00:00Z", "2026-01-01T00:00:05Z")) is None
    assert SETTLED_S > 5
    assert edited_after_creation({"name": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}) is None


def test_the_general_steps_run_in_the_hypothesis_order() -> None:
    names = [h.__name__ for h in HYPOTHESES]
    assert {"unschedulable", "missing_service", "flag_file"} <= set(names)
    assert names.index("unschedulable") < names.index("node_selector")  # the scheduler's reason first


def test_the_split_is_fixed_data_and_holds_out_whole_apps_and_the_parity_problems() -> None:
    seen = set(json.loads(SPLIT.read_text())["seen"])
    ids = set(all_problem_ids())
    parity = set(re.findall(r'id="([^"]+)"', PARITY.read_text()))
    assert seen <= ids and len(seen) >= 40
    assert {i.split("/")[0] for i in seen} == {"hotel-reservation", "demo-shop"}
    assert not seen & parity and parity <= ids
    held_out = ids - seen
    assert {i for i in ids if i.startswith(("astronomy-shop/", "social-network/"))} <= held_out


def test_the_agent_package_never_reads_the_split() -> None:
    package = ROOT / "src" / "sregym" / "agents" / "baseline"
    for path in package.glob("*.py"):
        assert "baseline_split" not in path.read_text(), path.name


@pytest.mark.parametrize("problem", [
    "astronomy-shop/flag-payment-failure-v1",         # a recently edited flag file, reverted
    "social-network/taint-no-toleration-v1",          # the scheduler's reason: an untolerated taint
    "social-network/user-service-missing-v1",         # callers dial a Service that no longer exists
    "hotel-reservation/host-port-conflict-v1",        # the scheduler's reason: no free host port
])
def test_baseline_solves_held_out_problems_by_the_general_steps(problem: str) -> None:
    result = baseline_result(problem)
    assert result.passed, result.model_dump_json()[:2000]
