"""Aggregate result lines into the numbers a researcher reports.

Rates are over attempts that ran (environment failures are counted apart: they say nothing about
the agent). A rate is `None` when no attempt had that phase. pass^k is the probability that k
attempts of one problem all pass end to end, estimated without bias from n seeds with c passes
as C(c, k) / C(n, k) and averaged over problems (the τ-bench definition): it rewards agents that
are reliably right, not occasionally lucky.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from math import comb
from typing import Any

from pydantic import BaseModel, ConfigDict

from sregym.runner.store import is_environment_failure, is_skipped


class Rates(BaseModel):
    """Outcomes of one group of attempts."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = 0
    environment_failures: int = 0
    detection: float | None = None  # detection accuracy
    diagnosis: float | None = None
    mitigation: float | None = None
    end_to_end: float | None = None


class DetectionRates(BaseModel):
    """Detection answers of one group of attempts (those with a detection phase that ran).

    `false_positive_rate`: no-incident controls answered "incident"; `false_negative_rate`:
    incidents not answered "incident" (a missing answer is a miss). Each is None when the group
    has no attempt of that kind."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = 0
    incidents: int = 0
    controls: int = 0
    unanswered: int = 0
    accuracy: float | None = None
    false_positive_rate: float | None = None
    false_negative_rate: float | None = None
    onset_within_tolerance: float | None = None  # of the incidents answered "yes" with a start time


class ProblemRow(BaseModel):
    """One problem's attempts in a run: the per-instance line of the report (like SWE-bench's
    resolved/unresolved lists, with one verdict per seed)."""

    model_config = ConfigDict(extra="forbid")

    problem_id: str
    app: str
    difficulty: str | None = None
    layers: list[str] = []
    verdicts: dict[str, str]  # seed -> "pass" | "fail" | "environment_failure"
    attempts: int
    environment_failures: int = 0
    passed: int = 0  # attempts passed end to end
    detection_passed: int = 0
    diagnosis_passed: int = 0
    mitigation_passed: int = 0
    resolved: bool  # every attempt that ran passed end to end (and at least one ran)
    mean_sim_seconds_to_diagnosis: float | None = None
    mean_sim_seconds_to_mitigation: float | None = None
    mean_steps: float | None = None


class Summary(BaseModel):
    """`summary.json`: overall rates, rates by layer, difficulty and app, pass^k, one row per
    problem with the resolved/unresolved lists, mean steps, tool calls and tokens."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    model: str | None = None
    noise: str
    problems: int
    seeds: list[int]
    overall: Rates
    by_layer: dict[str, Rates]
    by_difficulty: dict[str, Rates] = {}
    by_app: dict[str, Rates] = {}
    pass_hat_k: dict[str, float]
    detection: DetectionRates | None = None  # None when no attempt had a detection phase
    detection_by_app: dict[str, DetectionRates] = {}
    per_problem: list[ProblemRow] = []
    resolved: list[str] = []
    unresolved: list[str] = []
    mean_steps: float | None = None
    mean_tool_calls: float | None = None
    mean_tokens_in: float | None = None
    mean_tokens_out: float | None = None
    cost_usd: float | None = None  # total over the attempts whose cost is known (None: none is)
    mean_cost_usd: float | None = None  # per attempt, over those attempts
    environment_failure_reasons: dict[str, int] = {}  # first line of each reason -> attempts
    skipped: int = 0  # attempts the backend could not run (twin-only problems on --backend kube): not scored
    skipped_reasons: dict[str, int] = {}  # "problem id: reason" -> attempts
    missing: int = 0
    ran: int = 0  # attempts run by this invocation (fewer than planned after a resume)
    interrupted: bool = False
    out_dir: str = ""


def phase_passed(line: Mapping[str, Any], phase: str) -> bool | None:
    """Whether `phase` ("diagnosis", "mitigation") passed; None when it was not run or scored."""
    block = line.get(phase)
    if not isinstance(block, Mapping):
        return None
    value = block.get("passed")
    return None if value is None else bool(value)


def detection_rates(lines: list[Mapping[str, Any]]) -> DetectionRates | None:
    """Accuracy, false-positive and false-negative rates of the detection blocks in `lines`."""
    blocks = [ln["detection"] for ln in lines
              if not is_environment_failure(ln) and isinstance(ln.get("detection"), Mapping)]
    if not blocks:
        return None
    controls = [b for b in blocks if not b.get("expected_incident")]
    incidents = [b for b in blocks if b.get("expected_incident")]
    timed = [bool(b["onset_within_tolerance"]) for b in incidents if b.get("onset_within_tolerance") is not None]
    return DetectionRates(
        attempts=len(blocks), incidents=len(incidents), controls=len(controls),
        unanswered=sum(not b.get("submitted") for b in blocks),
        accuracy=_rate([bool(b.get("correct")) for b in blocks]),
        false_positive_rate=_rate([b.get("incident") is True for b in controls]),
        false_negative_rate=_rate([b.get("incident") is not True for b in incidents]),
        onset_within_tolerance=_rate(timed))


def end_to_end_passed(line: Mapping[str, Any]) -> bool:
    return bool(line.get("passed"))


def _rate(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def _mean(values: Iterable[Any]) -> float | None:
    nums = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return round(sum(nums) / len(nums), 6) if nums else None


def _total(values: Iterable[Any]) -> float | None:
    """The sum of the known numbers; None when there is none (an unknown cost is not 0)."""
    nums = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return round(sum(nums), 6) if nums else None


def rates(lines: list[Mapping[str, Any]]) -> Rates:
    valid = [ln for ln in lines if not is_environment_failure(ln)]
    detect = [p for p in (phase_passed(ln, "detection") for ln in valid) if p is not None]
    diag = [p for p in (phase_passed(ln, "diagnosis") for ln in valid) if p is not None]
    mit = [p for p in (phase_passed(ln, "mitigation") for ln in valid) if p is not None]
    return Rates(attempts=len(lines), environment_failures=len(lines) - len(valid), detection=_rate(detect),
                 diagnosis=_rate(diag),
                 mitigation=_rate(mit), end_to_end=_rate([end_to_end_passed(ln) for ln in valid]))


def pass_hat_k(lines: list[Mapping[str, Any]]) -> dict[str, float]:
    """{"1": ..., "2": ..., ...} up to the largest number of valid seeds any problem has."""
    per_problem: dict[str, list[bool]] = defaultdict(list)
    for ln in lines:
        if not is_environment_failure(ln):
            per_problem[str(ln["problem_id"])].append(end_to_end_passed(ln))
    return pass_hat_k_of(per_problem)


def pass_hat_k_of(per_problem: Mapping[str, Sequence[bool]]) -> dict[str, float]:
    """The estimator itself over {problem: its attempts' verdicts}: C(c, k) / C(n, k) averaged over
    the problems with at least k attempts (the report applies it to snapshot repeats too)."""
    if not per_problem:
        return {}
    out: dict[str, float] = {}
    for k in range(1, max(len(v) for v in per_problem.values()) + 1):
        vals = [comb(sum(v), k) / comb(len(v), k) for v in per_problem.values() if len(v) >= k]
        out[str(k)] = round(sum(vals) / len(vals), 6)
    return out


def app_of(problem_id: str) -> str:
    """A problem id is `app/name-vN`."""
    return problem_id.split("/", 1)[0]


def verdict(line: Mapping[str, Any]) -> str:
    if is_environment_failure(line):
        return "environment_failure"
    return "pass" if end_to_end_passed(line) else "fail"


def reason_head(line: Mapping[str, Any]) -> str:
    """The first line of an environment failure's reason (what tallies group by)."""
    return str(line.get("environment_failure_reason") or "unknown").strip().splitlines()[0][:300]


def problem_rows(lines: list[Mapping[str, Any]], *, layers: Mapping[str, Iterable[str]],
                 difficulties: Mapping[str, str]) -> list[ProblemRow]:
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for ln in lines:
        grouped[str(ln["problem_id"])].append(ln)
    rows = []
    for pid, group in grouped.items():
        valid = [ln for ln in group if not is_environment_failure(ln)]
        passed = sum(end_to_end_passed(ln) for ln in valid)
        rows.append(ProblemRow(
            problem_id=pid, app=app_of(pid), difficulty=difficulties.get(pid),
            layers=sorted(set(layers.get(pid, ()))),
            verdicts={str(ln["seed"]): verdict(ln) for ln in sorted(group, key=lambda ln: int(ln["seed"]))},
            attempts=len(group), environment_failures=len(group) - len(valid), passed=passed,
            detection_passed=sum(bool(phase_passed(ln, "detection")) for ln in valid),
            diagnosis_passed=sum(bool(phase_passed(ln, "diagnosis")) for ln in valid),
            mitigation_passed=sum(bool(phase_passed(ln, "mitigation")) for ln in valid),
            resolved=bool(valid) and passed == len(valid),
            mean_sim_seconds_to_diagnosis=_mean(ln.get("sim_seconds_to_diagnosis") for ln in valid),
            mean_sim_seconds_to_mitigation=_mean(ln.get("sim_seconds_to_mitigation") for ln in valid),
            mean_steps=_mean(ln.get("steps") for ln in valid)))
    return rows


def _grouped_rates(lines: list[Mapping[str, Any]], keys_of: Any) -> dict[str, Rates]:
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for ln in lines:
        for key in sorted(set(keys_of(str(ln["problem_id"])))):
            groups[key].append(ln)
    return {key: rates(group) for key, group in sorted(groups.items())}


def summarize(lines: list[Mapping[str, Any]], *, layers: Mapping[str, Iterable[str]], agent: str,
              model: str | None, noise: str, seeds: list[int], planned: int,
              difficulties: Mapping[str, str] | None = None) -> Summary:
    """`layers` maps a problem id to its layer tags (a problem counts once under each);
    `difficulties` maps it to its difficulty tag."""
    difficulties = dict(difficulties or {})
    recorded = len(lines)
    skipped: dict[str, int] = defaultdict(int)
    for ln in lines:
        if is_skipped(ln):  # left out of every count and rate: the attempt was not run
            skipped[f"{ln['problem_id']}: {ln.get('skipped_reason') or 'not run on this backend'}"] += 1
    lines = [ln for ln in lines if not is_skipped(ln)]
    valid = [ln for ln in lines if not is_environment_failure(ln)]
    rows = problem_rows(lines, layers=layers, difficulties=difficulties)
    reasons: dict[str, int] = defaultdict(int)
    for ln in lines:
        if is_environment_failure(ln):
            reasons[reason_head(ln)] += 1
    by_app: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for ln in lines:
        by_app[app_of(str(ln["problem_id"]))].append(ln)
    detection_by_app = {app: r for app, group in sorted(by_app.items())
                        for r in [detection_rates(group)] if r is not None}
    return Summary(
        agent=agent, model=model, noise=noise, problems=len({str(ln["problem_id"]) for ln in lines}),
        seeds=list(seeds), overall=rates(lines),
        by_layer=_grouped_rates(lines, lambda pid: layers.get(pid, ())),
        by_difficulty=_grouped_rates(lines, lambda pid: (difficulties[pid],) if pid in difficulties else ()),
        by_app=_grouped_rates(lines, lambda pid: (app_of(pid),)),
        pass_hat_k=pass_hat_k(lines), detection=detection_rates(lines), detection_by_app=detection_by_app,
        per_problem=rows,
        resolved=[r.problem_id for r in rows if r.resolved],
        unresolved=[r.problem_id for r in rows if not r.resolved],
        mean_steps=_mean(ln.get("steps") for ln in valid),
        mean_tool_calls=_mean(ln.get("tool_calls") for ln in valid),
        mean_tokens_in=_mean(ln.get("tokens_in") for ln in valid),
        mean_tokens_out=_mean(ln.get("tokens_out") for ln in valid),
        cost_usd=_total(ln.get("cost_usd") for ln in lines),
        mean_cost_usd=_mean(ln.get("cost_usd") for ln in lines),
        environment_failure_reasons=dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        skipped=sum(skipped.values()), skipped_reasons=dict(sorted(skipped.items())),
        missing=max(0, planned - recorded))


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"


def render_table(summary: Summary) -> Any:
    """A rich `Table` of rates: overall, then one row per layer, difficulty and app. Narrow on
    purpose: it must fit 80 columns (a CI log, a terminal split in two)."""
    from rich import box
    from rich.table import Table

    title = f"sregym: agent {summary.agent}" + (f" ({summary.model})" if summary.model else "")
    table = Table(title=title, caption=_caption(summary), box=box.SIMPLE_HEAD, pad_edge=False)
    detecting = summary.detection is not None
    columns = ("group", "attempts", "env-fail", *(("detect",) if detecting else ()), "diag", "mitig", "e2e")
    for col in columns:
        table.add_column(col, justify="left" if col == "group" else "right", no_wrap=True)
    rows: list[tuple[str, Rates]] = [("overall", summary.overall)]
    for label, groups in (("layer", summary.by_layer), ("difficulty", summary.by_difficulty),
                          ("app", summary.by_app)):
        if label == "app" and len(groups) < 2:
            continue  # one app: its row would repeat "overall"
        rows += [(f"{label} {k}", v) for k, v in groups.items()]
    for name, r in rows:
        cells = [name[:34], str(r.attempts), str(r.environment_failures),
                 *((_pct(r.detection),) if detecting else ()), _pct(r.diagnosis), _pct(r.mitigation),
                 _pct(r.end_to_end)]
        table.add_row(*cells, end_section=name == "overall")
    return table


def render_problems(summary: Summary) -> Any:
    """A rich `Table` with one row per problem (grouped by app, so ids fit 80 columns): the
    end-to-end verdict of each seed and whether the problem is resolved."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title="problems", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("problem", no_wrap=True, overflow="ellipsis", max_width=48)
    table.add_column("e2e", justify="right", no_wrap=True)
    table.add_column("diag", justify="right", no_wrap=True)
    table.add_column("mitig", justify="right", no_wrap=True)
    table.add_column("seeds", no_wrap=True, overflow="ellipsis", max_width=12)
    marks = {"pass": "+", "fail": "-", "environment_failure": "E"}
    app = None
    for row in sorted(summary.per_problem, key=lambda r: r.problem_id):
        if row.app != app:
            app = row.app
            table.add_row(Text(f"{app}/", style="bold"), "", "", "", "")
        ran = row.attempts - row.environment_failures
        table.add_row("  " + row.problem_id.split("/", 1)[-1], f"{row.passed}/{ran}",
                      f"{row.diagnosis_passed}/{ran}", f"{row.mitigation_passed}/{ran}",
                      "".join(marks[v] for v in row.verdicts.values()))
    return table


def _caption(summary: Summary) -> str:
    parts = [f"noise {summary.noise}", f"seeds {len(summary.seeds)}",
             f"resolved {len(summary.resolved)}/{len(summary.per_problem)}"]
    if summary.pass_hat_k:
        parts.append("pass^k " + " ".join(f"k={k}:{100 * v:.0f}%" for k, v in summary.pass_hat_k.items()))
    for label, value in (("mean steps", summary.mean_steps), ("mean tool calls", summary.mean_tool_calls),
                         ("mean tokens in", summary.mean_tokens_in), ("mean tokens out", summary.mean_tokens_out)):
        if value is not None:
            parts.append(f"{label} {value:.1f}")
    if summary.missing:
        parts.append(f"{summary.missing} attempts missing")
    if summary.skipped:
        parts.append(f"{summary.skipped} attempts skipped (not run on this backend, not scored)")
    if summary.detection is not None:
        d = summary.detection
        parts.append(f"detection accuracy {_pct(d.accuracy)}, false positives {_pct(d.false_positive_rate)} "
                     f"of {d.controls} controls, false negatives {_pct(d.false_negative_rate)} of {d.incidents} incidents")
    return "; ".join(parts)


__all__ = ["DetectionRates", "ProblemRow", "Rates", "Summary", "app_of", "detection_rates", "end_to_end_passed",
           "pass_hat_k", "pass_hat_k_of", "phase_passed", "problem_rows", "rates", "reason_head", "render_problems", "render_table", "summarize", "verdict"]
