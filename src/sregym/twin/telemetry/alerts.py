"""Prometheus rule evaluation on the simulated clock: alerting and recording rules.

Rule files are ordinary Prometheus rule YAML (`groups: [{name, interval, rules: [...]}]`); the
default set lives in `telemetry/rules/*.yaml` and a user extends it with `configure_rules(twin,
extra_files=[...])`. A controller (order 96, after the scraper) evaluates each group every
`interval` of simulated time (default 30 s, aligned to multiples of the interval) with the PromQL
engine over the full TSDB, and reproduces Prometheus' alert state machine:

- a new result element creates a *pending* alert (`activeAt` = evaluation time); it becomes
  *firing* once it has been active for `for:` (immediately when `for` is 0);
- when the element disappears, a pending alert is dropped; a firing one stays firing for
  `keep_firing_for` and then is *resolved* (kept, inactive, for 15 minutes, as Prometheus does);
- labels and annotations are templated (`{{ $labels.pod }}`, `{{ $value | humanize }}`, see
  `alert_template`); `alertname` and the rule's labels are added to the alert's labels;
- `ALERTS{alertname, alertstate, ...}` = 1 and `ALERTS_FOR_STATE{alertname, ...}` = activeAt are
  written back to the TSDB for every active alert, with staleness markers when they go away;
  recording rules write their result under the recorded name.

The Prometheus API (`api/prometheus.py`) reads `rule_manager(twin).api_alerts/api_rules`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from sregym.twin.controller import Controller, controller
from sregym.twin.telemetry.alert_template import expand, go_float_e
from sregym.twin.telemetry.app_rules import load_due
from sregym.twin.telemetry.promtime import ParamError, parse_duration_ms, rfc3339
from sregym.twin.telemetry.tsdb import TSDB, label_key

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

log = logging.getLogger("sregym.twin.alerts")

RULES_DIR = Path(__file__).with_name("rules")
# Where the default files appear to live, as a Prometheus in a cluster would report them.
DISPLAY_DIR = "/etc/prometheus/rules"
DEFAULT_INTERVAL_MS = 30_000
RESOLVED_RETENTION_MS = 15 * 60_000
ZERO_TIME = "0001-01-01T00:00:00Z"
LOOKBACK_MS = 300_000

Labels = dict[str, str]
Visible = Callable[[Labels], bool]


class RuleFileError(ValueError):
    """A rule file that Prometheus would refuse to load."""


@dataclass
class Alert:
    labels: Labels
    annotations: Labels
    value: float
    active_at_ms: int
    state: str = "pending"  # pending | firing | inactive
    fired_at_ms: int | None = None
    resolved_at_ms: int | None = None
    keep_firing_since_ms: int | None = None

    def to_api(self) -> dict[str, Any]:
        out: dict[str, Any] = {"labels": dict(sorted(self.labels.items())),
                               "annotations": dict(sorted(self.annotations.items())),
                               "state": self.state, "activeAt": rfc3339(self.active_at_ms),
                               "value": go_float_e(self.value)}
        if self.keep_firing_since_ms is not None:
            out["keepFiringSince"] = rfc3339(self.keep_firing_since_ms)
        return out


@dataclass
class Rule:
    name: str
    expr: str
    labels: Labels
    health: str = "unknown"
    last_error: str = ""
    last_eval_ms: int | None = None
    eval_seconds: float = 0.0

    @property
    def kind(self) -> str:
        raise NotImplementedError

    def base_api(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "query": self.expr, "labels": dict(sorted(self.labels.items())),
                               "health": self.health, "evaluationTime": self.eval_seconds,
                               "lastEvaluation": rfc3339(self.last_eval_ms) if self.last_eval_ms is not None
                               else ZERO_TIME, "type": self.kind}
        if self.last_error:
            out["lastError"] = self.last_error
        return out


@dataclass
class RecordingRule(Rule):
    @property
    def kind(self) -> str:
        return "recording"

    def to_api(self, _visible: Visible) -> dict[str, Any]:
        return self.base_api()


@dataclass
class AlertingRule(Rule):
    for_ms: int = 0
    keep_firing_for_ms: int = 0
    annotations: Labels = field(default_factory=dict)
    alerts: dict[tuple[tuple[str, str], ...], Alert] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return "alerting"

    def active(self) -> list[Alert]:
        return [a for _k, a in sorted(self.alerts.items()) if a.state != "inactive"]

    def state(self, visible: Visible) -> str:
        states = {a.state for a in self.active() if visible(a.labels)}
        return "firing" if "firing" in states else "pending" if "pending" in states else "inactive"

    def to_api(self, visible: Visible) -> dict[str, Any]:
        out = self.base_api()
        out.pop("type")
        out.update({"state": self.state(visible), "duration": self.for_ms / 1000,
                    "keepFiringFor": self.keep_firing_for_ms / 1000,
                    "annotations": dict(sorted(self.annotations.items())),
                    "alerts": [a.to_api() for a in self.active() if visible(a.labels)],
                    "type": "alerting"})
        return out


@dataclass
class RuleGroup:
    name: str
    file: str
    interval_ms: int
    rules: list[Rule]
    limit: int = 0
    last_eval_ms: int | None = None
    eval_seconds: float = 0.0
    # Series written at the previous evaluation (for staleness markers).
    written: dict[tuple[tuple[str, str], ...], Labels] = field(default_factory=dict)

    def to_api(self, visible: Visible, kind: str, rule_names: set[str]) -> dict[str, Any] | None:
        rules = [r for r in self.rules
                 if (not kind or (kind == "alert") == isinstance(r, AlertingRule))
                 and (not rule_names or r.name in rule_names)]
        if (kind or rule_names) and not rules:
            return None
        return {"name": self.name, "file": self.file, "rules": [r.to_api(visible) for r in rules],
                "interval": self.interval_ms / 1000, "limit": self.limit,
                "evaluationTime": self.eval_seconds,
                "lastEvaluation": rfc3339(self.last_eval_ms) if self.last_eval_ms is not None else ZERO_TIME}


# ------------------------------------------------------------------ loading
def _duration(value: Any, what: str) -> int:
    if value in (None, ""):
        return 0
    try:
        ms = parse_duration_ms(str(value))
    except ParamError as exc:
        raise RuleFileError(f"{what}: {exc}") from None
    if ms < 0:
        raise RuleFileError(f"{what}: negative duration")
    return ms


def _str_map(value: Any, what: str) -> Labels:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RuleFileError(f"{what} must be a map")
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


@functools.lru_cache(maxsize=64)
def _yaml_doc(text: str) -> Any:
    """The parsed YAML of a rule file, kept per process: every twin loads the same default files,
    and parsing them was a fifth of building a twin. Only read, never changed, by the caller."""
    return yaml.safe_load(text)


def parse_rule_file(text: str, file: str) -> list[RuleGroup]:
    """Prometheus rule YAML → groups (RuleFileError for anything Prometheus rejects)."""
    try:
        doc = _yaml_doc(text)
    except yaml.YAMLError as exc:
        raise RuleFileError(f"{file}: {exc}") from None
    if doc is None:
        return []
    if not isinstance(doc, dict) or not isinstance(doc.get("groups") or [], list):
        raise RuleFileError(f"{file}: expected a map with a `groups` list")
    groups: list[RuleGroup] = []
    seen: set[str] = set()
    for g in doc.get("groups") or []:
        if not isinstance(g, dict) or not g.get("name"):
            raise RuleFileError(f"{file}: groupname must not be empty")
        name = str(g["name"])
        if name in seen:
            raise RuleFileError(f"{file}: {name}: repeated in the same file")
        seen.add(name)
        interval = _duration(g.get("interval"), f"{file}: {name}: interval") or DEFAULT_INTERVAL_MS
        rules: list[Rule] = []
        for index, r in enumerate(g.get("rules") or []):
            where = f"{file}: group {name!r}, rule {index + 1}"
            if not isinstance(r, dict) or not r.get("expr"):
                raise RuleFileError(f"{where}: field 'expr' must be set in rule")
            expr = str(r["expr"]).strip()
            labels = _str_map(r.get("labels"), f"{where}: labels")
            if r.get("alert") and r.get("record"):
                raise RuleFileError(f"{where}: only one of 'record' and 'alert' must be set")
            if r.get("record"):
                if r.get("for") or r.get("annotations") or r.get("keep_firing_for"):
                    raise RuleFileError(f"{where}: invalid field for a recording rule")
                rules.append(RecordingRule(str(r["record"]), expr, labels))
            elif r.get("alert"):
                rules.append(AlertingRule(str(r["alert"]), expr, labels,
                                          for_ms=_duration(r.get("for"), f"{where}: for"),
                                          keep_firing_for_ms=_duration(r.get("keep_firing_for"),
                                                                       f"{where}: keep_firing_for"),
                                          annotations=_str_map(r.get("annotations"), f"{where}: annotations")))
            else:
                raise RuleFileError(f"{where}: one of 'record' or 'alert' must be set")
        groups.append(RuleGroup(name, file, interval, rules, limit=int(g.get("limit") or 0)))
    return groups


def default_rule_files() -> list[Path]:
    return sorted(RULES_DIR.glob("*.yaml"))


@functools.cache
def _engine_class() -> Any:
    """The PromQL engine class, imported on first use (the engine imports this package)."""
    from sregym.twin.telemetry.promql import Engine

    return Engine


@functools.lru_cache(maxsize=4096)
def _parsed(expr: str) -> Any:
    """A rule expression's syntax tree, parsed once per process: every group re-runs the same
    expressions each interval, and the tree is only read by the engine."""
    from sregym.twin.telemetry.promql.parse import parse

    return parse(expr)


# ------------------------------------------------------------------ manager
class RuleManager:
    """The rule groups of one twin and their evaluation state."""

    def __init__(self, twin: Twin, groups: Iterable[RuleGroup] = ()) -> None:
        self.twin = twin
        self.groups: list[RuleGroup] = list(groups)
        self.app_namespaces: set[str] = set()  # apps whose own rule files are loaded (app_rules)

    def load(self, path: str | Path, *, display_name: str | None = None) -> None:
        p = Path(path)
        self.groups.extend(parse_rule_file(p.read_text(), display_name or str(p)))

    def load_text(self, text: str, file: str) -> None:
        self.groups.extend(parse_rule_file(text, file))

    # ------------------------------------------------------------ evaluation
    def tick(self, now_ms: int) -> None:
        """Evaluate every group whose interval slot has come."""
        tsdb = self.twin.services.tsdb
        if tsdb is None:
            return
        for group in self.groups:
            slot = now_ms - now_ms % group.interval_ms
            if group.last_eval_ms is not None and slot <= group.last_eval_ms:
                continue
            self.evaluate_group(group, tsdb, slot)

    def evaluate_group(self, group: RuleGroup, tsdb: TSDB, t_ms: int) -> None:
        written: dict[tuple[tuple[str, str], ...], Labels] = {}
        total = 0
        for rule in group.rules:
            samples = self._query(rule, tsdb, t_ms)
            if samples is None:
                continue
            total += len(samples)
            if isinstance(rule, AlertingRule):
                series = self._alerting(rule, samples, t_ms)
            else:
                series = self._recording(rule, samples)
            for labels, value in series:
                key = label_key(labels)
                if key in written:
                    continue
                tsdb.append(labels, t_ms, value)
                written[key] = labels
            rule.eval_seconds = round(2e-5 + 4e-6 * len(samples), 9)
        for key, labels in group.written.items():
            if key not in written:
                tsdb.mark_stale(labels, t_ms)
        group.written = written
        group.last_eval_ms = t_ms
        group.eval_seconds = round(5e-5 + 4e-6 * total + sum(r.eval_seconds for r in group.rules), 9)

    def _query(self, rule: Rule, tsdb: TSDB, t_ms: int) -> list[tuple[Labels, float]] | None:
        rule.last_eval_ms = t_ms
        try:
            result = _engine_class()(tsdb, lookback_ms=LOOKBACK_MS).instant(rule.expr, t_ms,
                                                                            parsed=_parsed(rule.expr))
        except Exception as exc:  # a broken rule must not stop the others (or the tick)
            rule.health, rule.last_error = "err", str(getattr(exc, "message", "") or exc)
            return None
        if result.type == "scalar":
            samples = [({}, float(result.value.value))]
        elif result.type == "vector":
            samples = [(dict(s.labels), float(s.value)) for s in result.value]
        else:
            rule.health = "err"
            rule.last_error = f"rule result is not a vector or scalar: {result.type!r}"
            return None
        rule.health, rule.last_error = "ok", ""
        return samples

    def _recording(self, rule: RecordingRule, samples: list[tuple[Labels, float]]) -> list[tuple[Labels, float]]:
        out = []
        for labels, value in samples:
            lb = {k: v for k, v in labels.items() if k != "__name__"}
            lb.update(rule.labels)
            lb["__name__"] = rule.name
            out.append(({k: v for k, v in lb.items() if v != ""}, value))
        if len({label_key(lb) for lb, _ in out}) != len(out):
            rule.health = "err"
            rule.last_error = "vector contains metrics with the same labelset after applying rule labels"
            return []
        return out

    def _alerting(self, rule: AlertingRule, samples: list[tuple[Labels, float]], t_ms: int) \
            -> list[tuple[Labels, float]]:
        current: dict[tuple[tuple[str, str], ...], Alert] = {}
        for labels, value in samples:
            base = {k: v for k, v in labels.items() if k != "__name__"}
            lb = dict(base)
            for name, text in rule.labels.items():
                lb[name] = expand(text, base, value)
            lb["alertname"] = rule.name
            lb = {k: v for k, v in lb.items() if v != ""}
            annotations = {name: expand(text, base, value) for name, text in rule.annotations.items()}
            key = tuple(sorted(lb.items()))
            if key in current:
                rule.health = "err"
                rule.last_error = "vector contains metrics with the same labelset after applying alert labels"
                return self._alert_series(rule)
            current[key] = Alert(lb, annotations, value, t_ms)
        for key, fresh in current.items():
            alert = rule.alerts.get(key)
            if alert is not None and alert.state != "inactive":
                alert.value, alert.annotations = fresh.value, fresh.annotations
                alert.keep_firing_since_ms = None
            else:
                rule.alerts[key] = fresh
        for key in list(rule.alerts):
            alert = rule.alerts[key]
            if key in current:
                continue
            if alert.state == "pending" or (alert.resolved_at_ms is not None and
                                            t_ms - alert.resolved_at_ms > RESOLVED_RETENTION_MS):
                del rule.alerts[key]
                continue
            if alert.state == "inactive":
                continue
            if rule.keep_firing_for_ms > 0:
                if alert.keep_firing_since_ms is None:
                    alert.keep_firing_since_ms = t_ms
                if t_ms - alert.keep_firing_since_ms < rule.keep_firing_for_ms:
                    continue
            alert.state = "inactive"
            alert.resolved_at_ms = t_ms
            alert.keep_firing_since_ms = None
        for alert in rule.alerts.values():
            if alert.state == "pending" and t_ms - alert.active_at_ms >= rule.for_ms:
                alert.state = "firing"
                alert.fired_at_ms = t_ms
        return self._alert_series(rule)

    def _alert_series(self, rule: AlertingRule) -> list[tuple[Labels, float]]:
        out: list[tuple[Labels, float]] = []
        for alert in rule.active():
            out.append(({**alert.labels, "__name__": "ALERTS", "alertstate": alert.state}, 1.0))
            out.append(({**alert.labels, "__name__": "ALERTS_FOR_STATE"}, alert.active_at_ms / 1000))
        return out

    # ------------------------------------------------------------------- API
    def api_alerts(self, visible: Visible) -> list[dict[str, Any]]:
        return [a.to_api() for g in self.groups for r in g.rules if isinstance(r, AlertingRule)
                for a in r.active() if visible(a.labels)]

    def api_rules(self, visible: Visible, *, kind: str = "", rule_names: Iterable[str] = (),
                  group_names: Iterable[str] = (), files: Iterable[str] = ()) -> list[dict[str, Any]]:
        names, gnames, fnames = set(rule_names), set(group_names), set(files)
        out = []
        for group in self.groups:
            if (gnames and group.name not in gnames) or (fnames and group.file not in fnames):
                continue
            doc = group.to_api(visible, kind, names)
            if doc is not None:
                out.append(doc)
        return out

    def alerts(self, state: str | None = None) -> list[Alert]:
        """Active alerts (optionally in one state), for in-process callers and tests."""
        return [a for g in self.groups for r in g.rules if isinstance(r, AlertingRule)
                for a in r.active() if state is None or a.state == state]


def rule_manager(twin: Twin) -> RuleManager:
    """The twin's rule manager, created with the default rules on first use."""
    manager = twin.services.alerts
    if manager is None:
        manager = RuleManager(twin)
        for path in default_rule_files():
            manager.load(path, display_name=f"{DISPLAY_DIR}/{path.name}")
        twin.services.alerts = manager
    return manager


def configure_rules(twin: Twin, *, extra_files: Iterable[str | Path] = (), extra_texts: Iterable[
        tuple[str, str]] = (), include_defaults: bool = True) -> RuleManager:
    """Replace the twin's rule set: the defaults (unless excluded) plus extra rule files and
    `(file name, yaml text)` pairs. Call before the alerts you care about start evaluating."""
    manager = RuleManager(twin)
    if include_defaults:
        for path in default_rule_files():
            manager.load(path, display_name=f"{DISPLAY_DIR}/{path.name}")
    for path in extra_files:
        manager.load(path)
    for name, text in extra_texts:
        manager.load_text(text, name)
    twin.services.alerts = manager
    return manager


@controller
class AlertingController(Controller):
    """Evaluates the rule groups on the simulated clock (after the scraper, order 95)."""

    name = "alerting"
    order = 96

    def reconcile(self) -> None:
        manager = rule_manager(self.twin)
        load_due(self.twin, manager, manager.app_namespaces)
        manager.tick(round(self.twin.clock.now * 1000))


__all__ = ["Alert", "AlertingController", "AlertingRule", "RecordingRule", "RuleFileError", "RuleGroup",
           "RuleManager", "configure_rules", "default_rule_files", "parse_rule_file", "rule_manager"]
