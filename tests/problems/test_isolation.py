"""Nothing the agent credential can reach names a fault or a problem."""

from __future__ import annotations

import json
import re

import pytest

from sregym.cluster.twin import TwinCluster
from sregym.faults import FAULTS
from sregym.problems import all_problem_ids, get_problem
from sregym.problems.run import ProblemRun

READABLE = ("Pod", "Deployment", "ReplicaSet", "Service", "Endpoints", "ConfigMap", "Secret", "Event",
            "ResourceQuota", "Namespace", "Node", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
            "NetworkPolicy", "DaemonSet", "StatefulSet")


@pytest.mark.parametrize("problem_id", all_problem_ids())
def test_agent_view_has_no_fault_or_problem_identifier(problem_id: str) -> None:
    problem = get_problem(problem_id).model_copy(update={"noise": "high"})
    cluster = TwinCluster.new(11)
    run = ProblemRun(problem, cluster, seed=11)
    run.setup()
    run.advance(300)
    agent = cluster.as_user("agent")
    text = []
    for kind in READABLE:
        text.extend(json.dumps(o, sort_keys=True) for o in agent.list(kind))
    for pod in agent.list("Pod", problem.namespace):
        for c in pod["spec"]["containers"]:
            if (pod.get("status") or {}).get("phase") == "Running":
                text.append(agent.logs(problem.namespace, pod["metadata"]["name"], c["name"]))
    blob = "\n".join(text).lower()
    forbidden = {problem.id.lower(), problem.id.split("/")[1].lower(), "fault", "faults", "inject", "injected",
                 "injection", *(name.lower() for name in FAULTS.names())}
    # Whole words only ("default" is not "fault").
    assert not [w for w in sorted(forbidden) if re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", blob)]
    # The chaos namespace and Chaos Mesh objects stay invisible.
    assert "chaos-mesh" not in {n["metadata"]["name"] for n in agent.list("Namespace")}
    with pytest.raises(Exception, match=r"forbidden|reserved"):
        agent.list("PodChaos", "chaos-mesh")
