"""Differential harness: our PromQL engine against `promtool test rules` (Prometheus itself).

The same synthetic series are loaded into our TSDB and written as a promtool unit-test file; the
engine's answers for every corpus query become `promql_expr_test` expectations. promtool compares
exactly, so it reports every case whose floats differ in the last bit too: the harness parses its
`got:` output and accepts a case when values agree within 1e-9 relative (NaN equals NaN).

Run directly (`python tests/twin/telemetry/promql_diff_harness.py`) to print disagreements.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from sregym.twin.telemetry.promql import Engine, PromQLError
from sregym.twin.telemetry.tsdb import STALE_NAN, TSDB

CORPUS = Path(__file__).parent / "promql_corpus" / "queries.txt"
INTERVAL_MS = 15_000
STEPS = 260  # 65 minutes of samples at 15 s
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


class Lcg:
    """A tiny deterministic generator so the series never depend on Python's `random`."""

    def __init__(self, seed: int) -> None:
        self.state = seed

    def next(self, modulo: int) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return (self.state >> 33) % modulo


def _counter_with_resets(rng: Lcg, steps: int, reset_every: int) -> list[str]:
    values, current = [], float(rng.next(50))
    for i in range(steps):
        if i and i % reset_every == 0:
            current = float(rng.next(3))
        else:
            current += rng.next(20)
        values.append(f"{current:g}")
    return values


def build_series() -> list[tuple[str, str]]:
    """(series selector, promtool values notation) pairs; deterministic."""
    rng = Lcg(42)
    out: list[tuple[str, str]] = [
        ('http_requests_total{job="api",instance="i1",code="200"}', "0+12x100 3+9x159"),
        ('http_requests_total{job="api",instance="i2",code="200"}', "5+7x259"),
        ('http_requests_total{job="api",instance="i1",code="500"}',
         " ".join(_counter_with_resets(rng, STEPS, 37))),
        ('http_requests_total{job="web",instance="i3",code="200"}', "100+20x126 stale"),
        ('http_requests_total{job="web",instance="i3",code="500"}', "0+0.5x259"),
        ('up{job="api",instance="i1"}', "1+0x259"),
        ('up{job="api",instance="i2"}', "1+0x40 stale " + " ".join(["_"] * 19) + " 1+0x198"),
        ('up{job="web",instance="i3"}', "1+0x126 stale"),
        ('a_metric{x="1"}', "1+1x259"),
        ('b_metric{x="1"}', "2+2x259"),
        ('weird{kind="nan"}', " ".join(["NaN", "1", "2", "NaN"] * 65)),
        ('weird{kind="inf"}', " ".join(["1", "Inf", "3", "-Inf", "5"] * 52)),
        ('broken_bucket{le="0.5"}', "1+1x259"),
        ('broken_bucket{le="1"}', "2+1x259"),
        ('gappy_gauge{instance="i1"}', " ".join(["_", "_", "5", "6", "_", "7", "stale", "8"] + ["_"] * 20)),
    ]
    temps = [41.0 + rng.next(400) / 100 for _ in range(STEPS)]
    out.append(('cpu_temp{instance="i1",job="api"}', " ".join(f"{t:g}" for t in temps)))
    for inst in ("i1", "i2", "i3", "i4"):
        base = 1000 + rng.next(800)
        vals = []
        for _ in range(STEPS):
            base = max(100, base + rng.next(41) - 20)
            vals.append(str(base))
        out.append((f'memory_usage_bytes{{instance="{inst}"}}', " ".join(vals)))
    bounds = ["0.05", "0.1", "0.25", "0.5", "1", "+Inf"]
    for job, reset_at in (("api", None), ("web", 150)):
        for path in ("/a", "/b"):
            cum = [0.0] * len(bounds)
            series: list[list[str]] = [[] for _ in bounds]
            total = 0.0
            totals, sums = [], []
            for i in range(STEPS):
                if reset_at is not None and i == reset_at:
                    cum = [0.0] * len(bounds)
                    total = 0.0
                per = [rng.next(6) for _ in bounds]
                running = 0
                for b in range(len(bounds)):
                    running += per[b]
                    cum[b] += running
                    series[b].append(f"{cum[b]:g}")
                total += running * 0.2
                totals.append(f"{cum[-1]:g}")
                sums.append(f"{total:.1f}")
            labels = f'job="{job}",path="{path}"'
            for b, le in enumerate(bounds):
                out.append((f'request_duration_seconds_bucket{{{labels},le="{le}"}}', " ".join(series[b])))
            out.append((f"request_duration_seconds_count{{{labels}}}", " ".join(totals)))
            out.append((f"request_duration_seconds_sum{{{labels}}}", " ".join(sums)))
    return out


_SPECIAL = {"Inf": math.inf, "+Inf": math.inf, "-Inf": -math.inf, "NaN": math.nan}
_SERIES_TOKEN = re.compile(r"^([-+]?[0-9.eE]+|[-+]?Inf|NaN)([+-])([0-9.eE]+)x([0-9]+)$")


def expand_values(notation: str) -> list[float | str | None]:
    """promtool's series notation: `a+bxn` (n+1 values, accumulated), `_` (no sample), `stale`."""
    out: list[float | str | None] = []
    for token in notation.split():
        if token == "_":
            out.append(None)
        elif token == "stale":
            out.append("stale")
        elif token in _SPECIAL:
            out.append(_SPECIAL[token])
        elif m := _SERIES_TOKEN.match(token):
            start = _SPECIAL.get(m.group(1))
            value = float(m.group(1)) if start is None else start
            delta = float(m.group(3)) * (-1 if m.group(2) == "-" else 1)
            for _ in range(int(m.group(4)) + 1):
                out.append(value)
                value += delta
        else:
            out.append(float(token))
    return out


def parse_selector(text: str) -> dict[str, str]:
    name, _, rest = text.partition("{")
    labels = {"__name__": name} if name else {}
    for k, v in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', rest):
        labels[k] = v
    return labels


def load_tsdb(series: list[tuple[str, str]]) -> TSDB:
    db = TSDB()
    for selector, notation in series:
        labels = parse_selector(selector)
        for i, v in enumerate(expand_values(notation)):
            if v is None:
                continue
            db.append(labels, i * INTERVAL_MS, STALE_NAN if v == "stale" else v)  # type: ignore[arg-type]
    return db


@dataclass
class Case:
    query: str
    t_ms: int | None  # None: both must reject the query
    line: int
    exact: bool = False  # a rejection whose full message must equal promtool's
    ours: list[tuple[dict[str, str], float]] | None = None
    our_error: str | None = None
    verdict: str = ""
    detail: str = ""
    promtool_got: list[tuple[dict[str, str], float]] | None = field(default=None, repr=False)


_DURATION = re.compile(r"(\d+)(ms|y|w|d|h|m|s)")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000,
            "y": 31_536_000_000}


def duration_ms(text: str) -> int:
    return sum(int(n) * _UNIT_MS[u] for n, u in _DURATION.findall(text))


def load_corpus(path: Path = CORPUS) -> list[Case]:
    cases: list[Case] = []
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        times, _, query = raw.partition(" | ")
        if times.strip() in ("error", "parse error"):
            cases.append(Case(query.strip(), None, lineno, exact=times.strip() == "parse error"))
            continue
        for t in times.split(","):
            cases.append(Case(query.strip(), duration_ms(t.strip()), lineno))
    return cases


def evaluate_ours(engine: Engine, case: Case) -> None:
    t_ms = case.t_ms if case.t_ms is not None else 30 * 60_000
    try:
        result = engine.instant(case.query, t_ms)
    except PromQLError as exc:
        case.our_error = exc.message
        return
    if result.type == "scalar":
        case.ours = [({}, result.value.value)]
    elif result.type == "vector":
        case.ours = [(dict(s.labels), s.value) for s in result.value]
    else:
        case.our_error = f"result type {result.type}"


def _yaml_float(v: float) -> float | str:
    return v


def promtool_file(series: list[tuple[str, str]], cases: list[Case]) -> dict:
    tests = []
    for case in cases:
        t_ms = case.t_ms if case.t_ms is not None else 30 * 60_000
        entry: dict = {"expr": case.query, "eval_time": f"{t_ms}ms", "exp_samples": []}
        for labels, value in case.ours or []:
            entry["exp_samples"].append({"labels": _labels_text(labels), "value": value})
        tests.append(entry)
    return {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [{
            "interval": f"{INTERVAL_MS}ms",
            "input_series": [{"series": s, "values": v} for s, v in series],
            "promql_expr_test": tests,
        }],
    }


def _labels_text(labels: dict[str, str]) -> str:
    name = labels.get("__name__", "")
    rest = ",".join(f"{k}={json.dumps(v)}" for k, v in sorted(labels.items()) if k != "__name__")
    return f"{name}{{{rest}}}"


_FAIL_HEAD = re.compile(r'^\s{4}expr: (".*"), time: ([^,]+),(?: err: (.*))?$')
_SAMPLE = re.compile(r'(\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}) (\S+?)(?:, |$)')


def _parse_samples(text: str) -> list[tuple[dict[str, str], float]]:
    text = text.strip()
    if text == "nil":
        return []
    out = []
    for labels, value in _SAMPLE.findall(text):
        parsed = {k: json.loads(f'"{v}"') for k, v in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', labels)}
        out.append((parsed, float(value)))
    return out


def parse_promtool_output(text: str) -> dict[tuple[str, int], tuple[str | None, list | None]]:
    """(expr, eval ms) -> (error or None, got samples or None) for every failing case."""
    failures: dict[tuple[str, int], tuple[str | None, list | None]] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FAIL_HEAD.match(lines[i])
        if not m:
            i += 1
            continue
        expr = json.loads(m.group(1))
        t_ms = duration_ms(m.group(2)) if m.group(2) != "0s" else 0
        if m.group(3) is not None:
            failures[(expr, t_ms)] = (m.group(3), None)
            i += 1
            continue
        got = None
        j = i + 1
        while j < len(lines) and not _FAIL_HEAD.match(lines[j]):
            stripped = lines[j].strip()
            if stripped.startswith("got:"):
                got = _parse_samples(stripped[len("got:"):])
            j += 1
        failures[(expr, t_ms)] = (None, got)
        i = j
    return failures


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b:
        return True
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def _key(labels: dict[str, str]) -> tuple:
    return tuple(sorted(labels.items()))


def compare(case: Case, failure: tuple[str | None, list | None] | None) -> None:
    if case.t_ms is None or case.our_error is not None:
        expect_error = case.t_ms is None
        if failure is None or failure[0] is None:
            case.verdict = "mismatch"
            case.detail = (f"we: {case.our_error!r}; promtool accepted it" if case.our_error else
                           "corpus expects an error; promtool accepted it")
            return
        if case.our_error is None:
            case.verdict = "mismatch"
            case.detail = f"promtool: {failure[0]}; we accepted it"
            return
        case.verdict = "ok" if expect_error or case.our_error else "mismatch"
        case.detail = f"both reject (promtool: {failure[0]} | we: {case.our_error})"
        if case.exact and failure[0] != case.our_error:
            case.verdict = "mismatch"
            case.detail = f"messages differ: promtool {failure[0]!r}, we {case.our_error!r}"
        return
    if failure is None:
        case.verdict = "ok"
        return
    error, got = failure
    if error is not None:
        case.verdict = "mismatch"
        case.detail = f"promtool: {error}"
        return
    got = got or []
    case.promtool_got = got
    ours = sorted(case.ours or [], key=lambda s: _key(s[0]))
    theirs = sorted(got, key=lambda s: _key(s[0]))
    if [_key(a) for a, _ in ours] != [_key(b) for b, _ in theirs]:
        case.verdict = "mismatch"
        case.detail = f"labels differ: ours {ours} promtool {theirs}"
        return
    bad = [(la, va, vb) for (la, va), (_, vb) in zip(ours, theirs, strict=True) if not _close(va, vb)]
    if bad:
        case.verdict = "mismatch"
        case.detail = f"values differ: {bad}"
        return
    case.verdict = "ok"


def run(workdir: Path | None = None) -> list[Case]:
    series = build_series()
    engine = Engine(load_tsdb(series))
    cases = load_corpus()
    for case in cases:
        evaluate_ours(engine, case)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(workdir or tmp) / "promql_diff_test.yaml"
        path.write_text(yaml.safe_dump(promtool_file(series, cases), sort_keys=False, width=1 << 20))
        proc = subprocess.run([PROMTOOL, "test", "rules", str(path)], capture_output=True, text=True,
                              timeout=120, check=False)
    failures = parse_promtool_output(proc.stdout + proc.stderr)
    for case in cases:
        t_ms = case.t_ms if case.t_ms is not None else 30 * 60_000
        compare(case, failures.get((case.query, t_ms)))
    return cases


if __name__ == "__main__":
    results = run(Path("/tmp"))
    bad = [c for c in results if c.verdict != "ok"]
    for c in bad:
        print(f"line {c.line}: {c.query} @ {c.t_ms}: {c.detail}")
    print(f"{len(results) - len(bad)}/{len(results)} cases agree")
