"""The baseline's detection rule: is there an incident, from the signals an on-call engineer
checks first?

Why a fixed rule: the detection task needs a reference point between "never page" (noop) and an
LLM. The rule is generic (it knows no fault): an incident is
- a firing alert on the application's namespace; or
- an SLO breach at the entry point (the services nothing else calls): server error ratio above
  `ERROR_RATIO` or p95 latency above `P95_MS`, on two looks in a row; or
- pods that are not Running and Ready and stay so over `POLLS` looks (a rollout in progress
  replaces its pods within that time, so a completed benign rollout is not an incident); or
- Warning events of a kind that means lasting trouble (`LASTING`) on objects that still exist.
A one-off readiness-probe blip, pods already replaced, and old events whose object is gone are
ignored: that is what routine operations leave behind.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sregym.agents.baseline.investigate import kubectl, parse_alerts, parse_pods
from sregym.tools.timeparse import TimeParseError, parse_time

if TYPE_CHECKING:
    from sregym.tools.session import ToolSession

ERROR_RATIO = 0.01
P95_MS = 500.0
POLLS = 3
LASTING = frozenset({"BackOff", "Failed", "FailedCreate", "FailedScheduling", "FailedMount", "Evicted",
                     "OOMKilling", "FailedAttachVolume", "FailedCreatePodSandBox", "NodeNotReady"})
_DEP = re.compile(r"^(\S+) -> (\S+) \((\d+)\)$")
_VALUE = re.compile(r"=> ([-+0-9.eEnaNIf]+)")
_SINCE = re.compile(r"since (\S+)")


def _text(session: ToolSession, tool: str, args: dict[str, Any]) -> str:
    result = session.call(tool, args)
    return "" if result.is_error else result.text


def _entry_services(session: ToolSession) -> list[str]:
    edges = []
    for line in _text(session, "get_dependency_graph", {"since": "15m"}).splitlines():
        match = _DEP.match(line.strip())
        if match:
            edges.append((match.group(1), match.group(2)))
    callees = {c for _, c in edges}
    return sorted({p for p, _ in edges if p not in callees})


def _values(text: str) -> list[float]:
    out = []
    for match in _VALUE.finditer(text):
        try:
            out.append(float(match.group(1)))
        except ValueError:
            continue
    return [v for v in out if v == v]  # NaN: no traffic, no verdict


def _slo_breach(session: ToolSession, entries: list[str]) -> str | None:
    """The first entry service whose errors or latency breach the thresholds, as evidence."""
    if not entries:
        return None
    names = "|".join(re.escape(e) for e in entries)
    server = f'span_kind="SPAN_KIND_SERVER", service_name=~"{names}"'
    errors = (f'sum(rate(traces_span_metrics_calls_total{{{server}, status_code="STATUS_CODE_ERROR"}}[2m])) '
              f'/ sum(rate(traces_span_metrics_calls_total{{{server}}}[2m]))')
    p95 = (f"histogram_quantile(0.95, sum by (le) "
           f"(rate(traces_span_metrics_duration_milliseconds_bucket{{{server}}}[2m])))")
    ratio = max(_values(_text(session, "promql_query", {"query": errors})), default=0.0)
    latency = max(_values(_text(session, "promql_query", {"query": p95})), default=0.0)
    if ratio > ERROR_RATIO:
        return f"error ratio {ratio:.1%} at the entry point ({', '.join(entries)})"
    if latency > P95_MS:
        return f"p95 latency {latency:.0f} ms at the entry point ({', '.join(entries)})"
    return None


def _lasting_warnings(session: ToolSession, namespace: str) -> list[str]:
    text = kubectl(session, f"get events -n {namespace} --field-selector type=Warning "
                            "-o custom-columns=REASON:.reason,KIND:.involvedObject.kind,NAME:.involvedObject.name")
    found = []
    for line in text.splitlines()[1:]:
        cols = line.split()
        if len(cols) == 3 and cols[0] in LASTING:
            exists = kubectl(session, f"get {cols[1].lower()} {cols[2]} -n {namespace} -o name")
            if exists.strip():
                found.append(f"{cols[0]} on {cols[1]}/{cols[2]}")
    return sorted(set(found))


def detect(session: ToolSession, namespace: str) -> dict[str, Any]:
    """Look, decide, and return the `submit_detection` arguments."""
    evidence: list[str] = []
    started: str | None = None
    for alert_line in _text(session, "get_alerts", {}).splitlines():
        alert = next(iter(parse_alerts(alert_line)), None)
        if alert is None or alert.state != "FIRING" or alert.labels.get("namespace", namespace) != namespace:
            continue
        if f"alert {alert.name} firing" not in evidence:
            evidence.append(f"alert {alert.name} firing")
        since = _SINCE.search(alert_line)
        if since and started is None:
            started = since.group(1)
    entries = _entry_services(session)
    breach = _slo_breach(session, entries)
    if breach is not None and _slo_breach(session, entries) is not None:  # two looks in a row
        evidence.append(breach)
    stuck: set[str] | None = None
    for _ in range(POLLS):
        bad = {p.name for p in parse_pods(kubectl(session, f"get pods -n {namespace} -o wide")) if not p.healthy}
        stuck = bad if stuck is None else stuck & bad
        if not stuck:
            break
    if stuck:
        evidence.append(f"pods not healthy over {POLLS} looks: {', '.join(sorted(stuck))}")
    evidence += [f"Warning event {w}" for w in _lasting_warnings(session, namespace)]
    if not evidence:
        return {"incident": False, "evidence": "no firing alert, entry point within its SLO, every pod healthy, "
                                               "no lasting Warning events"}
    args: dict[str, Any] = {"incident": True, "evidence": "; ".join(evidence)}
    if started is not None:
        try:
            parse_time(started, 0.0)
            args["started_at"] = started
        except TimeParseError:
            pass
    return args


__all__ = ["detect"]
