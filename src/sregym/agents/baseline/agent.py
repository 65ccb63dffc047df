"""The `baseline` agent: investigate, test hypotheses, diagnose, fix, verify, try the next fix.

In a detection phase it first answers with a generic rule (`baseline.detection`); when that says
"no incident" it names no root cause and changes nothing.

Diagnosis follows a runbook: firing alerts and workload state first, then events, policies and
webhooks, the call graph and recent error logs (to find the deepest failing component), then the
hypothesis tests: recent changes first (a team's Chaos Mesh experiment acting on the troubled
workload, `chaos`; the latest rollout's command line and mounted config, `rollouts`), one test
per known mechanism, and the node under the troubled pods (`nodes`: conditions, clock, kernel
tables). Mitigation applies the fix of the best finding and verifies
with the same signals; if the workloads do not recover it tries the next finding's fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.agents.base import Agent
from sregym.agents.baseline import remedies as fix
from sregym.agents.baseline.detection import detect
from sregym.agents.baseline.hypotheses import HYPOTHESES, IMPACT, Ctx, Finding
from sregym.agents.baseline.investigate import Facts, collect, kubectl, parse_pods
from sregym.agents.registry import agent

if TYPE_CHECKING:  # the runtime import graph stays free of env/problem code
    from sregym.env.models import Brief
    from sregym.tools.session import ToolSession

# Findings of these tests rest on object-specific evidence, so several may be reported together
# (concurrent faults); weaker ones are only used as the primary finding or as a fallback fix.
SPECIFIC = {"service_port", "service_selector", "service_extra_pods", "image_pull", "admission_webhook",
            "resource_quota", "volume_attach", "unschedulable", "node_selector", "missing_volume_source", "probe",
            "job_sidecar"}
DIAGNOSIS_CALL_BUDGET = 40
VERIFY_POLLS = 4


@agent
class BaselineAgent(Agent):
    """A deterministic runbook agent that needs no model."""

    name = "baseline"
    offline_driver = "baseline"  # over a replay of the snapshot (snapshot/baseline_driver)

    def run(self, session: ToolSession, brief: Brief) -> None:
        namespace = brief.namespaces[0] if brief.namespaces else "default"
        if session.phase == "detection":
            answer = detect(session, namespace)
            session.call("submit_detection", answer)
            if not answer["incident"]:  # it judged the system healthy: nothing to diagnose or fix
                self._stand_down(session)
                return
        if session.phase not in ("diagnosis", "mitigation"):
            return
        facts = collect(session, namespace)
        ctx = Ctx(session, facts)
        findings = self._test_hypotheses(ctx)
        chosen = self._choose(findings)
        if session.phase == "diagnosis":
            session.call("submit_diagnosis", self._submission(facts, chosen))
        if session.phase != "mitigation":
            return
        self._mitigate(session, facts, chosen, [f for _, f in findings if f not in chosen])
        if not session.done:
            session.call("submit_mitigation_done", {})

    @staticmethod
    def _stand_down(session: ToolSession) -> None:
        """After answering "no incident": name no root cause and change nothing."""
        if session.phase == "diagnosis":
            session.call("submit_diagnosis", {"root_cause_entities": [], "mechanism": "none",
                                              "explanation": "The system is operating normally."})
        if session.phase == "mitigation":
            session.call("submit_mitigation_done", {})

    # ----------------------------------------------------------------- diagnosis
    def _test_hypotheses(self, ctx: Ctx) -> list[tuple[str, Finding]]:
        found = []
        for test in HYPOTHESES:
            if ctx.session.tool_calls >= DIAGNOSIS_CALL_BUDGET:
                break
            finding = test(ctx)
            if finding is not None:
                found.append((test.__name__, finding))
        return found

    @staticmethod
    def _choose(findings: list[tuple[str, Finding]]) -> list[Finding]:
        """The first finding, plus other object-specific ones on different roots (concurrent faults)."""
        if not findings:
            return []
        chosen = [findings[0][1]]
        for name, finding in findings[1:]:
            if name in SPECIFIC and findings[0][0] in SPECIFIC and \
                    not set(finding.roots) & {r for c in chosen for r in c.roots}:
                chosen.append(finding)
        return chosen

    @staticmethod
    def _submission(facts: Facts, chosen: list[Finding]) -> dict:
        if not chosen:
            target = facts.deepest_failing() or (facts.deployments or ["unknown"])[0]
            return {"root_cause_entities": [f"{facts.namespace}/Deployment/{target}"],
                    "mechanism": "unknown", "affected_entities": [],
                    "explanation": f"{target} is the deepest failing component in the call graph. {IMPACT}"}
        roots = list(dict.fromkeys(r for f in chosen for r in f.roots))
        affected = [a for a in dict.fromkeys(a for f in chosen for a in f.affected) if a not in roots]
        return {"root_cause_entities": roots, "mechanism": chosen[0].mechanism,
                "affected_entities": affected,
                "explanation": " ".join(f.explanation for f in chosen)}

    # ----------------------------------------------------------------- mitigation
    def _mitigate(self, session: ToolSession, facts: Facts, chosen: list[Finding],
                  fallbacks: list[Finding]) -> None:
        plans = [f for f in chosen] + [f for f in fallbacks if f.fixes]
        for index, finding in enumerate(plans):
            for command, stdin in finding.fixes:
                args = {"command": command} if stdin is None else {"command": command, "stdin": stdin}
                session.call("kubectl", args)
                if session.done:
                    return
            if index + 1 < len(chosen):
                continue  # apply every chosen fix before judging recovery
            if self._recovered(session, facts):
                return

    @staticmethod
    def _recovered(session: ToolSession, facts: Facts) -> bool:
        """Poll the workloads the way the diagnosis saw them; time passes with each call.

        A pod that still crash-loops after the fix may have been created while the fault was
        active (it carries the old bad settings), so its Deployment is restarted once.
        """
        before = {p.name for p in facts.pods if not p.healthy}
        bounced: set[str] = set()
        for _ in range(VERIFY_POLLS):
            if session.done:
                return True
            # Missing pods are not "bad pods": judge by every Deployment's READY column first.
            table = kubectl(session, f"get deployments -n {facts.namespace}").splitlines()[1:]
            short = [row for row in table if len(row.split()) > 1 and not _all_ready(row.split()[1])]
            if table and not short:
                if not _clear_failed_pods(session, facts):
                    return True
                continue  # failed pods were replaced already: watch once more
            for row in short:  # no pod at all: the ReplicaSet may sit in create back-off
                cols = row.split()
                if len(cols) > 2 and cols[2] == "0" and cols[0] not in bounced:
                    bounced.add(cols[0])
                    session.call("kubectl", {"command": fix.restart(facts.namespace, cols[0], "verify")[0]})
            pods = parse_pods(kubectl(session, f"get pods -n {facts.namespace} -o wide"))
            bad = [p for p in pods if not p.healthy]
            for pod in bad:
                owner = facts.owner(pod.name)
                if owner and owner not in bounced and pod.status in ("CrashLoopBackOff", "Error", "OOMKilled"):
                    bounced.add(owner)
                    command, _ = fix.restart(facts.namespace, owner, "verify")
                    session.call("kubectl", {"command": command})
        return not before  # nothing was visibly broken: trust the fix


# Pod states that no restart brings back: the ReplicaSet has replaced such a pod and it only lingers.
_FAILED = ("Error", "Evicted", "ContainerStatusUnknown", "OOMKilled")


def _clear_failed_pods(session: ToolSession, facts: Facts) -> bool:
    """Delete a fully ready Deployment's leftover failed pods (killed while the cause was active,
    already replaced); True when there were any."""
    pods = parse_pods(kubectl(session, f"get pods -n {facts.namespace} -o wide"))
    stale = [p for p in pods if p.status in _FAILED and p.ready.startswith("0/") and facts.owner(p.name)]
    for pod in stale:
        session.call("kubectl", {"command": f"delete pod {pod.name} -n {facts.namespace} --ignore-not-found"})
    return bool(stale)


def _all_ready(ready: str) -> bool:
    have, _, want = ready.partition("/")
    return have == want


__all__ = ["BaselineAgent"]
