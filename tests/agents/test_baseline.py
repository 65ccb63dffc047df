"""`baseline`: it never touches problem, fault or oracle code, and it solves problems it has not
been told anything about, through the tools only."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import sregym.agents.baseline as baseline_pkg
from sregym.agents import make_agent
from sregym.agents.baseline.hypotheses import _strip_blocks
from sregym.agents.baseline.investigate import parse_alerts, parse_events, parse_pods
from sregym.env import AttemptConfig, AttemptResult, Conductor
from support.forked_attempts import Outcomes, run_attempts

FORBIDDEN = ("sregym.problems", "sregym.faults", "sregym.oracles")
PACKAGE_DIR = Path(baseline_pkg.__file__).parent


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_baseline_source_imports_no_problem_fault_or_oracle_module() -> None:
    files = sorted(PACKAGE_DIR.glob("*.py"))
    assert {f.name for f in files} >= {"agent.py", "investigate.py", "hypotheses.py", "remedies.py"}
    for path in files:
        bad = sorted(n for n in _imports(path) if n.startswith(FORBIDDEN))
        assert not bad, f"{path.name} imports {bad}"


def test_importing_baseline_loads_no_problem_fault_or_oracle_module() -> None:
    code = ("import json, sys\n"
            "import sregym.agents.baseline\n"
            "from sregym.agents.baseline import BaselineAgent\n"
            "assert BaselineAgent.name == 'baseline'\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('sregym'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert "sregym.agents.baseline.agent" in loaded
    assert not [m for m in loaded if m.startswith(FORBIDDEN)]


def test_parsers_read_kubectl_tables_and_alerts() -> None:
    pods = parse_pods(
        "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED READINESS\n"
        "geo-58676bb4c-b2p7v 0/1 CrashLoopBackOff 3 (28s ago) 59s 10.244.3.9 kind-worker3 <none> <none>\n"
        "frontend-5fbff86b7-rv854 1/1 Running 0 6m 10.244.3.2 kind-worker2 <none> <none>\n")
    assert [(p.name, p.healthy, p.node) for p in pods] == [
        ("geo-58676bb4c-b2p7v", False, "kind-worker3"), ("frontend-5fbff86b7-rv854", True, "kind-worker2")]
    events = parse_events("LAST SEEN TYPE REASON OBJECT MESSAGE\n"
                          "9s Warning FailedScheduling pod/user-5f-b2 0/4 nodes are available: x\n")
    assert events[0].reason == "FailedScheduling" and events[0].message.startswith("0/4 nodes")
    alerts = parse_alerts("[FIRING] ContainerCPUThrottling (container=c, pod=geo-1, severity=info) since x\n")
    assert alerts[0].labels["pod"] == "geo-1" and alerts[0].state == "FIRING"


def test_corefile_override_block_is_removed_and_the_rest_kept() -> None:
    corefile = (".:53 {\n    errors\n    template ANY ANY rate.ns.svc.cluster.local {\n       rcode NXDOMAIN\n"
                "    }\n    kubernetes cluster.local {\n       pods insecure\n    }\n    cache 30\n}\n")
    cleaned = _strip_blocks(corefile, lambda header: header.startswith("template"))
    assert "NXDOMAIN" not in cleaned and "template" not in cleaned
    assert "kubernetes cluster.local {" in cleaned and "pods insecure" in cleaned and cleaned.endswith("}\n")


END_TO_END = [
    "hotel-reservation/service-target-port-geo-v1",
    "hotel-reservation/limitrange-oomkill-v1",
    "hotel-reservation/coredns-nxdomain-v1",
    # outside `lite`: mechanisms the rules were generalised to later
    "hotel-reservation/cronjob-sidecar-blocks-completion-v1",
    "hotel-reservation/mongodb-user-removed-geo-v1",
]
SEED = 1


def solve(problem: str) -> str:
    """One attempt of the baseline agent on `problem`: its result and the tools it used, as JSON
    (run in `support.forked_attempts`' child)."""
    with Conductor(problem, seed=SEED, noise="none", agent_name="baseline") as conductor:
        brief = conductor.start()
        make_agent("baseline").run(conductor.session, brief)
        result = conductor.result()
        tools = sorted({e.tool for e in conductor.trajectory})
    return json.dumps({"result": result.model_dump_json(), "tools": tools})


@pytest.fixture(scope="module")
def solved() -> Outcomes:
    """Every end-to-end attempt, run in one child that deploys Hotel Reservation and runs its
    healthy baseline once and forks each attempt from there (an xdist worker cannot fork, and
    deployed the app afresh for each)."""
    return run_attempts(__file__, "solve", [(p,) for p in END_TO_END], seed=SEED, baseline_s=AttemptConfig().baseline_s)


@pytest.mark.parametrize("problem", END_TO_END)
def test_baseline_solves_problems_end_to_end(solved: Outcomes, problem: str) -> None:
    outcome = json.loads(solved[(problem,)])
    result = AttemptResult.model_validate_json(outcome["result"])
    assert result.passed, result.model_dump_json()
    assert set(outcome["tools"]) >= {"get_alerts", "kubectl", "submit_diagnosis", "submit_mitigation_done"}
