"""The conductor: one attempt of one agent on one problem, from a fresh twin to a scored result.

Sequence (issue 7): a fresh twin with the run seed; deploy the app and its workload; a healthy
baseline period (the SLO must hold, otherwise the attempt is an *environment* failure, never
charged to the agent); record the baseline; start noise; inject; let the fault take hold; then
the agent's phases — diagnosis (ends with `submit_diagnosis`) and mitigation (ends with
`submit_mitigation_done`) — each with its own budget of steps, tool calls, simulated and wall
time; finally the verification window and scoring.

During the phases the twin is served by `TwinServer` (manual clock in `stepped` mode, paced to
wall time in `realtime` mode), so kubectl is the real binary talking HTTPS with a kubeconfig
that holds only the agent credential, and the query tools go through the same HTTP APIs with
the agent token. In `stepped` mode the simulated clock advances `seconds_per_call` after every
tool call, so an attempt is fully deterministic for a given seed and sequence of calls.

The agent only ever gets the `ToolSession`, the `Brief` and what its declared capabilities
entitle it to (`grants`, `run_agent`: shell access, gold hooks); this object (which holds the
problem) stays with whoever runs the attempt.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sregym.cluster.twin import TwinCluster
from sregym.env.agent_access import AgentAccess
from sregym.env.capabilities import Capability, GoldHooks, Grantee, Grants, ShellAccess
from sregym.env.config import PHASES, AttemptConfig, ClockMode
from sregym.env.models import (
    AttemptResult,
    Brief,
    DetectionOutcome,
    DiagnosisOutcome,
    EntrySloSeries,
    MitigationOutcome,
    TrajectoryEntry,
)
from sregym.oracles.detection import DetectionAnswer, score_detection
from sregym.problems.model import CheckSpec, Problem, id_version
from sregym.problems.run import ProblemRun
from sregym.problems.warm_prefix import shared_run
from sregym.tools.session import AppContext, Phase, QueryApi, ToolError, ToolSession
from sregym.tools.spec import ToolResult
from sregym.types import DiagnosisSubmission, MitigationScore

BASELINE_CHECKS = (CheckSpec(check="baseline_intact"), CheckSpec(check="entry_slo"))


class EnvironmentFailure(RuntimeError):
    """The environment, not the agent, failed (the app never became healthy, the API server did
    not start ...). The attempt is reported with `environment_failure=True`."""


class Conductor:
    """Runs one attempt. Use: `brief = c.start()`, then `c.run_agent(agent, brief)` (or give
    `c.session` and `brief` to a tools-only agent), then `c.result()` (which finishes the attempt
    if the agent stopped early) and `c.close()`.

    `config` says how the attempt runs; keyword `settings` (`noise=`, `clock=`, `limits=` ...,
    the fields of `AttemptConfig`) change single fields of it, the form tests and the Gym
    session use. `fixed_time` serves simulated time unchanged instead of anchoring it to the
    machine's clock, so the same seed and calls give byte-identical observations (the Gymnasium
    environments use it; kubectl's client-side ages then read against the machine's clock)."""

    def __init__(self, problem: str | Problem, config: AttemptConfig | None = None, *, seed: int = 0,
                 agent_name: str = "", model: str | None = None, judge: Any = None,
                 judge_name: str = "deterministic", judge_model: str | None = None, fixed_time: bool = False,
                 **settings: Any) -> None:
        if isinstance(problem, str):
            from sregym.problems import get_problem

            problem = get_problem(problem)
        config = (config or AttemptConfig()).replace(**settings)
        self.config = config
        self._problem = problem
        self.seed = int(seed)
        self.noise = config.noise
        self.clock: ClockMode = config.clock
        self.seconds_per_call = float(config.seconds_per_call)
        self.limits = config.limits
        self.phases = tuple(p for p in PHASES if p in config.phases)
        self.baseline_s = float(config.baseline_s)
        self.realtime_speed = float(config.realtime_speed)
        self.agent_name = agent_name
        self.model = model
        self.verify_window_s = config.verify_window_s
        self._judge = judge
        self._judge_name = judge_name
        self._judge_model = judge_model
        self.fixed_time = bool(fixed_time)

        self._phase: Phase = "done"
        self._started = False
        self._prepared = False
        self._finished = False
        self._closed = False
        self._pending_finish = False
        self._truncation: str | None = None
        self._env_failure: str | None = None
        self._agent_error: str | None = None
        self._trajectory: list[TrajectoryEntry] = []
        self._submission: DiagnosisSubmission | None = None
        self._detection: DetectionAnswer | None = None
        self._detect_s: float | None = None
        self._detect_score: DetectionOutcome | None = None
        self._detect_onset: float | None = None
        self._declared_done = False
        self._diag_s: float | None = None
        self._mitig_s: float | None = None
        self._diag_score: Any = None
        self._mitig_score: MitigationScore | None = None
        self._phase_start: dict[str, Any] = {}
        self._wall0 = time.perf_counter()
        self._wall_total: float | None = None
        self._inject_at = 0.0
        self._agent_start = 0.0
        self._slo_series: EntrySloSeries | None = None

        self._run: ProblemRun | None = None
        self._access: Any = None  # AgentAccess, or a KubeAgentAccess with --backend kube
        self._kube: Any = None  # the cluster side of a --backend kube attempt (env/kube/attempt.py)
        self.session = ToolSession(Backend(self))

    # ================================================================ public
    @property
    def finished(self) -> bool:
        return self._finished or self._pending_finish

    @property
    def truncated(self) -> bool:
        return self._truncation is not None

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def trajectory(self) -> list[TrajectoryEntry]:
        return list(self._trajectory)

    @property
    def kubeconfig(self) -> Path | None:
        """The agent kubeconfig (for shell agents), while the attempt is running."""
        return self._access.kubectl.kubeconfig if self._access is not None else None

    @property
    def urls(self) -> dict[str, str]:
        """Query API base URLs (prometheus, loki, jaeger), while the attempt is running."""
        return dict(self._access.urls) if self._access is not None else {}

    @property
    def agent_token(self) -> str:
        return self._access.token if self._access is not None else ""

    def start(self) -> Brief:
        """Prepare the incident and open the first phase. Raises `EnvironmentFailure` when the
        environment could not be brought to a healthy baseline (see `result()`)."""
        if self._started:
            raise RuntimeError("this conductor was already started; make a new one per attempt")
        self._started = True
        self._wall0 = time.perf_counter()
        self.prepare()
        self._guarded(self._serve)
        self._open_phase(self.phases[0])  # type: ignore[arg-type]
        return self._brief()

    def prepare(self) -> None:
        """The part of `start()` that needs no server and no thread: deploy, baseline, inject,
        settle. Called alone, it leaves a conductor that a forked child can `start()` from (the
        Gymnasium environments' warm resets, `gym.episode`); `start()` calls it if needed."""
        if self._prepared:
            if self._env_failure is not None:
                raise EnvironmentFailure(self._env_failure)
            return
        self._prepared = True
        self._guarded(self._prepare)

    def _guarded(self, step: Any) -> None:
        """Run a setup step; any failure is the environment's (`EnvironmentFailure`)."""
        try:
            step()
        except EnvironmentFailure as exc:
            self._env_failure = str(exc)
            self._finish_now()
            raise
        except Exception as exc:
            self._env_failure = f"{type(exc).__name__}: {exc}"
            self._finish_now()
            raise EnvironmentFailure(self._env_failure) from exc

    def grants(self, capabilities: Iterable[Capability]) -> Grants:
        """Exactly the objects `capabilities` entitle an agent to, for this attempt: a
        `ShellAccess` for SHELL (while the attempt is served), `GoldHooks` for GOLD."""
        wanted = frozenset(capabilities)
        shell = gold = None
        if Capability.SHELL in wanted:
            if self._access is None:
                raise RuntimeError("shell access exists only while the attempt is served (after start())")
            shell = ShellAccess(kubeconfig=self.kubeconfig, urls=self.urls, token=self.agent_token,
                                clock=self.clock, poll=self.poll, record_program=self.record_program)
        if Capability.GOLD in wanted:
            gold = GoldHooks(commands=self._gold_commands, diagnosis=self._gold_diagnosis,
                             detection=self._gold_detection)
        return Grants(shell=shell, gold=gold)

    def run_agent(self, agent: Grantee, brief: Brief) -> None:
        """Hand `agent` what its class declares (`capabilities`), then run it on this attempt."""
        agent.grant(self.grants(type(agent).capabilities))
        agent.run(self.session, brief)

    def record_program(self, phase: str, args: dict[str, Any], observation: str, is_error: bool) -> None:
        """Append an external program's run (its command line, exit code, output) to the
        trajectory; it is not a tool call, so no time passes and no limit is charged."""
        sim = self._sim_elapsed() if self._run is not None else 0.0
        self._trajectory.append(TrajectoryEntry(index=len(self._trajectory), phase=phase, kind="program",
                                                tool="command", args=args, observation=observation,
                                                is_error=is_error, sim_time=round(sim, 3)))

    def poll(self) -> bool:
        """Enforce the limits without a tool call (for shell agents in realtime mode, which act
        through kubectl directly): truncates the attempt when a budget ran out. Returns
        `finished`."""
        if self._started and not self.finished:
            reason = self._limit_reached()
            if reason is not None:
                self._truncate(reason)
                self._finish_now()
        return self.finished

    def result(self, *, agent_error: str | None = None) -> AttemptResult:
        """Finish the attempt if needed (an agent that returned without submitting stopped
        early; `agent_error` says it crashed) and score it."""
        if agent_error is not None and self._agent_error is None:
            self._agent_error = agent_error
        if not self._finished:
            if self._started and self._truncation is None and self._phase != "done":
                self._truncation = ("agent failed: " + agent_error.splitlines()[0] if agent_error
                                    else "agent stopped before finishing every phase")
            self._finish_now()
        return self._result()

    def close(self) -> None:
        """Stop serving and remove temporary files (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._access is not None:
                self._access.close()
                self._access = None
        finally:
            if self._kube is not None:  # remove what the attempt created on the cluster
                kube, self._kube = self._kube, None
                kube.cleanup(self._run)

    def __enter__(self) -> Conductor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ================================================================ setup
    def _prepare(self) -> None:
        if self.config.kube is not None:
            run = self._prepare_kube()
            self._begin_incident(run, run.cluster)
            return
        shared = shared_run(self._problem, self.seed, self.noise, self.baseline_s)
        if shared is not None:  # forked from a warm prefix: deployed, baseline period run
            run = self._run = shared[0]
            cluster = run.cluster
        else:
            cluster = TwinCluster.new(self.seed)
            run = ProblemRun(self._problem, cluster, seed=self.seed, noise=self.noise)
            self._run = run
            try:
                run.deploy()
            except RuntimeError as exc:
                raise EnvironmentFailure(f"deploy failed: {exc}") from None
            run.advance(self.baseline_s)
        self._begin_incident(run, cluster)

    def _prepare_kube(self) -> ProblemRun:
        """`--backend kube`: check the cluster, install the app on it, run the healthy baseline."""
        import os

        from sregym.env.kube.attempt import KubeAttempt
        from sregym.env.kube.target import ClusterNotReady, KubeTarget

        target = KubeTarget.from_json(dict(self.config.kube or {}))
        try:
            kube = self._kube = KubeAttempt(target, self._problem, f"{self._problem.id}-s{self.seed}-p{os.getpid()}")
            kube.check_prerequisites(noise=self.noise)
            run = self._run = ProblemRun(self._problem, kube.cluster, seed=self.seed, noise=self.noise)
            kube.install(run)
            run.advance(self.baseline_s)
        except ClusterNotReady as exc:
            raise EnvironmentFailure(str(exc)) from None
        return run

    def _begin_incident(self, run: ProblemRun, cluster: Any) -> None:
        """Record the healthy baseline (it must hold), start the noise, inject, let it settle."""
        run.record_baseline()
        from sregym.oracles.mitigation import evaluate

        bad = [c for c in evaluate(run.check_context(), BASELINE_CHECKS, "must_keep") if not c.passed]
        if bad:
            raise EnvironmentFailure("baseline unhealthy: " + "; ".join(f"{c.name}: {c.detail}" for c in bad))
        run.start_noise()
        run.inject()
        self._inject_at = cluster.now()
        run.advance(self._problem.settle_s)
        self._agent_start = cluster.now() - self._inject_at

    def _serve(self) -> None:
        from sregym.twin.api.kubeconfig import make_tokens, token_for

        assert self._run is not None
        if self._kube is not None:  # a real ServiceAccount token on the cluster itself
            self._access = self._kube.grant()
            return
        # A fresh random agent token per attempt; the server accepts no admin token at all (the
        # conductor, faults and oracles reach the twin in-process), so none can leak to the agent.
        tokens = make_tokens(("agent",))
        self._access = AgentAccess(self._run.cluster.twin,  # type: ignore[attr-defined]
                                   server_tokens=tokens, agent_token=token_for(tokens, "agent"),
                                   speed=self.realtime_speed if self.clock == "realtime" else 0.0,
                                   namespace=self._problem.namespace, prefix="sregym-attempt-",
                                   fixed_time=self.fixed_time)

    def _stop_serving(self) -> None:
        if self._access is not None:
            self._access.stop()

    # ================================================================ phases
    def _sim_elapsed(self) -> float:
        """Simulated seconds since injection."""
        assert self._run is not None
        return self._on_loop(self._run.cluster.now) - self._inject_at

    def _agent_now(self) -> float:
        """The twin's now as the agent's clients see it (the server's wall anchor), so the
        tools' "now-15m" and the brief's start name the instants kubectl and the query APIs show."""
        if self._run is None:
            return 0.0
        sim_now = float(self._on_loop(self._run.cluster.now))
        access = self._access
        return float(self._on_loop(access.present, sim_now)) if access is not None else sim_now

    def _on_loop(self, fn: Any, *args: Any) -> Any:
        server = self._access.server if self._access is not None else None
        if server is not None:
            return server.call(fn, *args)
        return fn(*args)

    def _open_phase(self, phase: Phase) -> None:
        self._phase = phase
        self._phase_start = {"sim": self._sim_elapsed(), "wall": time.perf_counter(),
                             "calls": self.session.tool_calls, "steps": self.session.steps}

    def _advance_phase(self) -> None:
        idx = self.phases.index(self._phase) if self._phase in self.phases else len(self.phases)
        if idx + 1 < len(self.phases):
            self._open_phase(self.phases[idx + 1])  # type: ignore[arg-type]
        else:
            self._phase = "done"
            self._pending_finish = True

    def _limit_reached(self) -> str | None:
        """Which per-phase budget is used up, if any."""
        start = self._phase_start
        calls = self.session.tool_calls - start["calls"]
        noted = self.session.steps - start["steps"]
        steps = noted if self.session.steps else calls
        max_steps = self.limits.max_steps if self.limits.max_steps is not None else self._problem.limits.max_steps
        max_sim = (self.limits.max_sim_seconds if self.limits.max_sim_seconds is not None
                   else self._problem.limits.max_sim_seconds)
        phase = self._phase
        if max_steps is not None and steps >= max_steps:
            return f"{phase} phase step limit reached ({max_steps} steps)"
        if self.limits.max_tool_calls is not None and calls >= self.limits.max_tool_calls:
            return f"{phase} phase tool-call limit reached ({self.limits.max_tool_calls} calls)"
        if max_sim is not None and self._sim_elapsed() - start["sim"] >= max_sim:
            return f"{phase} phase simulated-time limit reached ({max_sim:.0f}s)"
        if (self.limits.max_wall_seconds is not None
                and time.perf_counter() - start["wall"] >= self.limits.max_wall_seconds):
            return f"{phase} phase wall-time limit reached ({self.limits.max_wall_seconds:.0f}s)"
        return None

    def _truncate(self, reason: str) -> None:
        self._truncation = reason
        self._phase = "done"
        self._pending_finish = True

    # ======================================================= backend hooks
    def _admit(self, tool: str) -> str | None:
        if not self._started:
            return "the attempt has not started yet"
        if self._phase == "done" or self.finished:
            why = f" ({self._truncation})" if self._truncation else ""
            return f"the attempt is over{why}; no more tool calls are accepted"
        if tool == "submit_detection" and self._phase != "detection":
            return ("submit_detection is not available now: the detection phase is over"
                    if "detection" in self.phases else "this attempt has no detection phase")
        if tool == "submit_diagnosis" and self._phase != "diagnosis":
            return ("submit_diagnosis is not available now: the diagnosis phase is over"
                    if "diagnosis" in self.phases else "this attempt has no diagnosis phase")
        if tool == "submit_mitigation_done" and self._phase != "mitigation":
            return ("submit_mitigation_done is available in the mitigation phase, after "
                    "submit_diagnosis" if "mitigation" in self.phases else "this attempt has no mitigation phase")
        return None

    def _record(self, tool: str, args: dict[str, Any], result: ToolResult, phase: str, at: float) -> None:
        self._trajectory.append(TrajectoryEntry(index=len(self._trajectory), phase=phase, tool=tool,
                                                args=args, observation=result.text, is_error=result.is_error,
                                                sim_time=round(at, 3)))
        if self._pending_finish:
            self._finish_now()
            return
        self._let_time_pass()
        reason = self._limit_reached()
        if reason is not None:
            self._truncate(reason)
            self._finish_now()

    def _record_message(self, content: str, tool_calls: list[dict[str, Any]], purpose: str) -> None:
        """The agent's own words go into the trajectory as they are; they are not a tool call,
        so no time passes and no limit is charged."""
        if not self._started:
            return
        self._trajectory.append(TrajectoryEntry(
            index=len(self._trajectory), phase=self._phase, kind="message", tool="assistant",
            args={"purpose": purpose, "tool_calls": tool_calls}, observation=content, is_error=False,
            sim_time=round(self._sim_elapsed(), 3)))

    def _let_time_pass(self) -> None:
        assert self._run is not None
        if self.clock == "stepped":
            self._on_loop(self._run.advance, self.seconds_per_call)
        elif self._run.noise is not None:
            self._on_loop(self._run.noise.tick)

    def _submit_detection(self, incident: bool, started_at: str | None, evidence: str) -> str:
        from sregym.tools.timeparse import TimeParseError, parse_time

        at = None
        if started_at:
            try:
                at = parse_time(started_at, self._agent_now())
            except TimeParseError as exc:
                raise ToolError(f"answer not accepted: started_at: {exc}") from None
        self._detection = DetectionAnswer(incident=bool(incident), started_at=at,
                                          started_at_text=started_at or None, evidence=evidence)
        self._detect_s = round(self._sim_elapsed(), 3)
        self._detect_onset = self._onset()  # on the agent's clock, while it is served
        self._advance_phase()
        # The same words whatever the answer and whatever the truth: nothing here may tell the
        # agent whether it was right or whether the problem is a no-incident control.
        if self._phase == "diagnosis":
            return ("Answer recorded. The diagnosis phase starts now: find the root cause of the incident "
                    "and call submit_diagnosis (with no root-cause entities if nothing is wrong).")
        if self._phase == "mitigation":
            return ("Answer recorded. The mitigation phase starts now: mitigate the incident if there is "
                    "one, then call submit_mitigation_done.")
        return "Answer recorded. The attempt is complete."

    def _onset(self) -> float | None:
        """When the faults were injected, on the agent's clock (None for a no-incident control)."""
        if self._problem.is_control or self._run is None:
            return None
        access = self._access
        return float(self._on_loop(access.present, self._inject_at)) if access is not None else float(self._inject_at)

    def _submit_diagnosis(self, root_causes: list[str], mechanism: str, affected: list[str],
                          explanation: str) -> str:
        try:
            sub = DiagnosisSubmission.from_texts(root_causes, mechanism, affected, explanation)
        except ValueError as exc:
            raise ToolError(f"diagnosis not accepted: {exc}") from None
        # An empty list is accepted on every problem (refusing it only where a fault exists would
        # tell the agent which problems are controls); it scores zero wherever a root cause exists.
        self._submission = sub
        self._diag_s = round(self._sim_elapsed(), 3)
        self._advance_phase()
        if self._phase == "mitigation":
            return ("Diagnosis recorded. The mitigation phase starts now: fix the incident with the "
                    "tools, then call submit_mitigation_done.")
        return "Diagnosis recorded. The attempt is complete."

    def _submit_mitigation_done(self) -> str:
        self._declared_done = True
        self._mitig_s = round(self._sim_elapsed(), 3)
        self._advance_phase()
        return "Mitigation declared done. The system is now observed to verify the fix; the attempt is complete."

    def _query(self, api: QueryApi, path: str, params: list[tuple[str, str]]) -> tuple[int, Any]:
        if self._access is None:
            return 503, {"error": f"the {api} API is not available"}
        return self._access.query(api, path, params)

    def _app_context(self) -> AppContext:
        from sregym.apps import APPS, get_app

        name = self._problem.app
        namespace = self._problem.namespace
        app = self._run.app if self._run is not None else (get_app(name) if name in APPS else None)
        description = app.description if app is not None else ""
        if not description:
            description = (f"The {name} application runs in namespace {namespace}; its entry point is the "
                           f"{app.entry[0] if app else '?'} Service. A load generator sends it "
                           f"steady traffic.")
        return AppContext(app=name, namespaces=(namespace,), description=" ".join(description.split()))

    # ============================================================== finish
    def _finish_now(self) -> None:
        if self._finished:
            return
        self._finished = True
        self._pending_finish = False
        self._phase = "done"
        self._stop_serving()
        self._wall_total = time.perf_counter() - self._wall0
        if self._env_failure is not None or self._run is None:
            return
        if "detection" in self.phases:
            self._detect_score = score_detection(self._detection, expected_incident=not self._problem.is_control,
                                                 onset=self._detect_onset)
        if "diagnosis" in self.phases and self._submission is not None and self._problem.is_control:
            from sregym.oracles.diagnosis import score_no_root_cause

            self._diag_score = score_no_root_cause(self._submission)
        elif "diagnosis" in self.phases and self._submission is not None:
            from sregym.oracles.diagnosis import score_diagnosis
            from sregym.problems.vocabulary import vocabulary_of

            self._diag_score = score_diagnosis(self._problem.ground_truth, self._submission, judge=self._judge,
                                               judge_name=self._judge_name, judge_model=self._judge_model,
                                               vocabulary=vocabulary_of(self._problem.id))
        if "mitigation" in self.phases and self._declared_done:
            self._mitig_score = self._run.verify(self.verify_window_s)
        self._slo_series = self._entry_slo_series()
        self._wall_total = time.perf_counter() - self._wall0

    def _entry_slo_series(self) -> EntrySloSeries | None:
        """The entry SLO from the baseline through the verification window (after serving stopped)."""
        from sregym.env.slo_series import record_series

        assert self._run is not None
        slo = self._run.app.slo
        return record_series(
            self._run.cluster, inject_at=self._inject_at, baseline_s=self.baseline_s, agent_start=self._agent_start,
            actions=[e.sim_time for e in self._trajectory if e.kind == "tool"], diagnosis=self._diag_s,
            done=self._mitig_s, window_s=self._mitig_score.window_s if self._mitig_score is not None else None,
            slo_success_ratio=slo.success_ratio, slo_p95_ms=slo.p95_latency_ms)

    def _result(self) -> AttemptResult:
        diagnosis = mitigation = None
        detection = None
        if "detection" in self.phases:
            detection = self._detect_score or DetectionOutcome(submitted=self._detection is not None,
                                                               expected_incident=not self._problem.is_control)
        if "diagnosis" in self.phases:
            s = self._diag_score
            diagnosis = DiagnosisOutcome(submitted=self._submission is not None) if s is None else DiagnosisOutcome(
                submitted=True, root_cause_score=s.root_cause_score, checklist=s.checklist,
                checklist_score=s.checklist_score, dimension_scores=dict(s.dimension_scores), judge=s.judge,
                judge_model=s.judge_model, passed=bool(s.passed))
        if "mitigation" in self.phases:
            m = self._mitig_score
            mitigation = MitigationOutcome(declared_done=self._declared_done) if m is None else MitigationOutcome(
                declared_done=True, checks=m.checks, window_s=m.window_s, passed=m.passed)
        ran = [o for o in (detection, diagnosis, mitigation) if o is not None]
        passed = self._env_failure is None and bool(ran) and all(o.passed for o in ran)
        version = id_version(self._problem.id)
        steps = self.session.steps or self.session.tool_calls
        return AttemptResult(
            problem_id=self._problem.id, problem_version=version, layers=tuple(self._problem.tags.layers),
            seed=self.seed, agent=self.agent_name,
            model=self.model, noise=self.noise, clock=self.clock, phases=self.phases, detection=detection, diagnosis=diagnosis,
            mitigation=mitigation, passed=passed, steps=steps, tool_calls=self.session.tool_calls,
            tokens_in=self.session.tokens_in, tokens_out=self.session.tokens_out,
            sim_seconds_to_detection=self._detect_s, sim_seconds_to_diagnosis=self._diag_s, sim_seconds_to_mitigation=self._mitig_s,
            truncated=self._truncation is not None, truncation_reason=self._truncation,
            wall_seconds=round(self._wall_total if self._wall_total is not None
                               else time.perf_counter() - self._wall0, 3),
            environment_failure=self._env_failure is not None, environment_failure_reason=self._env_failure,
            agent_error=self._agent_error, entry_slo=self._slo_series)

    # =============================================================== brief
    def _brief(self) -> Brief:
        from sregym.twin.clock import format_time

        alerts = self._query("prometheus", "/api/v1/alerts", [])
        ctx = self._app_context()
        started = format_time(self._agent_now()) if self._run else ""
        return incident_brief(alerts, ctx, started, self.phases)

    # ========================================================= gold hooks
    def _gold_commands(self) -> list[str]:
        """The problem's gold solution as kubectl commands (handed out only as `GoldHooks`)."""
        from sregym.env.gold_commands import action_to_command, wait_repeats

        assert self._access is not None
        return [action_to_command(a, self._access.home, i) for i, a in enumerate(self._problem.gold)
                for _ in range(wait_repeats(a, self.seconds_per_call))]

    def _gold_detection(self) -> dict[str, Any]:
        """`submit_detection` arguments from the problem (handed out only as `GoldHooks`)."""
        from sregym.twin.clock import format_time

        onset = self._onset()
        if onset is None:
            return {"incident": False, "evidence": "the reference answer: nothing is wrong"}
        return {"incident": True, "started_at": format_time(onset), "evidence": "the reference answer"}

    def _gold_diagnosis(self) -> dict[str, Any]:
        """`submit_diagnosis` arguments written from the ground truth (handed out only as `GoldHooks`)."""
        from sregym.problems.gold_diagnosis import gold_diagnosis_args
        from sregym.problems.vocabulary import vocabulary_of

        return gold_diagnosis_args(self._problem.ground_truth, vocabulary_of(self._problem.id))


class Backend:
    """The narrow `SessionBackend` a `ToolSession` talks to. It forwards to the conductor's
    hooks; the problem stays on the conductor, out of the session's attributes."""

    def __init__(self, conductor: Conductor) -> None:
        self._c = conductor
        self._call_phase: str = "done"  # the phase and time at which the current call was admitted
        self._call_at = 0.0

    def kubectl(self, command: str, stdin: str | None = None) -> tuple[str, bool]:
        access = self._c._access
        runner = access.kubectl if access is not None else None
        if runner is None:
            return "the cluster is not available", True
        return runner.run(command, stdin)  # type: ignore[no-any-return]

    def query(self, api: QueryApi, path: str, params: list[tuple[str, str]]) -> tuple[int, Any]:
        return self._c._query(api, path, params)

    def now(self) -> float:
        return self._c._agent_now()

    def app_context(self) -> AppContext:
        return self._c._app_context()

    @property
    def phases(self) -> tuple[str, ...]:
        return self._c.phases

    @property
    def phase(self) -> Phase:
        return self._c._phase

    def admit(self, tool: str) -> str | None:
        refusal = self._c._admit(tool)
        if refusal is None:
            self._call_phase = self._c._phase
            self._call_at = self._c._sim_elapsed()
        return refusal

    def record(self, tool: str, args: dict[str, Any], result: ToolResult) -> None:
        self._c._record(tool, args, result, self._call_phase, self._call_at)

    def record_message(self, content: str, tool_calls: list[dict[str, Any]], purpose: str) -> None:
        self._c._record_message(content, tool_calls, purpose)

    def submit_detection(self, incident: bool, started_at: str | None, evidence: str) -> str:
        return self._c._submit_detection(incident, started_at, evidence)

    def submit_diagnosis(self, root_causes: list[str], mechanism: str, affected: list[str],
                         explanation: str) -> str:
        return self._c._submit_diagnosis(root_causes, mechanism, affected, explanation)

    def submit_mitigation_done(self) -> str:
        return self._c._submit_mitigation_done()


def incident_brief(alerts: tuple[int, Any], ctx: AppContext, started: str, phases: tuple[str, ...]) -> Brief:
    """The incident page an attempt opens with, from the agent's `/api/v1/alerts` answer (status,
    body) at the start. A snapshot replay builds its page here too (`snapshot.replay`), so the
    baseline agent reads the same page offline as live."""
    from sregym.tools import render

    if "detection" in phases:
        return check_brief(ctx, started, phases)
    status, data = alerts
    rendered = render.alerts(data) if status < 400 else "alerts unavailable"
    firing = tuple(line for line in rendered.splitlines() if line.startswith("[FIRING]"))
    pending = tuple(line for line in rendered.splitlines() if line.startswith("[PENDING]"))
    if firing:
        page = "The following alerts are firing:\n" + "\n".join(firing)
    elif pending:
        page = ("Users report that the application is misbehaving. Alerts pending (not firing yet):\n"
                + "\n".join(pending))
    else:
        page = ("Users report that the application is misbehaving (no alert has fired yet). "
                "Investigate the cluster.")
    tasks = []
    if "detection" in phases:
        tasks.append("decide whether there is an incident and answer with submit_detection")
    if "diagnosis" in phases:
        tasks.append("find the root cause and submit a diagnosis with submit_diagnosis")
    if "mitigation" in phases:
        tasks.append("mitigate the incident and call submit_mitigation_done")
    text = (f"INCIDENT PAGE ({started})\n{page}\n\n{ctx.text()}\n\n"
            f"Your task: {'; then '.join(tasks)}.")
    return Brief(text=text, alerts=firing, app=ctx.app, namespaces=ctx.namespaces, phases=phases,
                 started_at=started)


def check_brief(ctx: AppContext, started: str, phases: tuple[str, ...]) -> Brief:
    """The page of an attempt that starts with detection: a routine health check, word for word
    the same whether something is broken or not (no alerts quoted: the agent looks for itself),
    so the page never answers the question the phase asks."""
    tasks = ["decide whether the system has an incident right now and answer with submit_detection"]
    if "diagnosis" in phases:
        tasks.append("if there is one, find its root cause and submit a diagnosis with submit_diagnosis")
    if "mitigation" in phases:
        tasks.append("mitigate it if there is one and call submit_mitigation_done")
    text = (f"ON-CALL CHECK ({started})\nYou are taking over the on-call shift. Check the health of the "
            f"application with the tools.\n\n{ctx.text()}\n\nYour task: {'; then '.join(tasks)}.")
    return Brief(text=text, alerts=(), app=ctx.app, namespaces=ctx.namespaces, phases=phases,
                 started_at=started)


__all__ = ["PHASES", "AttemptConfig", "ClockMode", "Conductor", "EnvironmentFailure", "check_brief",
           "incident_brief"]
