"""Every speed figure of issue 24 in one table: target, this run, the recorded previous run.

    python benchmarks/speed_table.py [--only apps,warm,lite,check,kubectl,hyperscale] [--seconds 300] [--save]
    python benchmarks/speed_table.py --from FILE        # tabulate a run saved with --json-out

Each group of figures is measured by the benchmark that owns it, run as a subprocess (so one
does not inflate the next one's memory), and read back from its JSON:

- `apps` (`hotel_reservation.py`): simulated seconds per CPU second for Hotel Reservation at
  100 and 5,000 req/s (scaled), the Astronomy Shop, Social Network and the 500-service app, and
  the peak resident memory of the Hotel Reservation and 500-service processes. The twin is
  single-threaded, so on an idle machine this is the speed over wall time; per CPU second it
  stays comparable when the machine is busy;
- `warm` (`rl_throughput.py`): the median reset of a Hotel Reservation episode from a warmed twin
  (attempt setup from warm state);
- `lite` (`run_lite.py`): wall time of `sregym run --suite lite --agent baseline -j 2`;
- `check` (`check_all.py`): wall time of `sregym check --all` at `-j 2` (ten minutes and more: the
  whole catalogue, three runs per problem);
- `kubectl` (`kube_api.py`): median wall time of the real `kubectl get pods -A` at 10,000 pods,
  with its two parts beside it: the server's time for the same paged Table list without kubectl,
  and kubectl's own CPU (decoding ~13 MB of Table and printing it);
- `hyperscale` (`twin_scale.py`): a 1,000-node cluster running 10,000 pods (1,000 Deployments of
  10), timed over 60 simulated seconds after 120 of warm-up: simulated seconds per wall second
  and peak memory. The issue sets no target for them; they are there so a regression shows.

`--save` records this run's figures in `baseline.json` under "targets" (beside the per-scenario
cpu ms/sim s figures `hotel_reservation.py` keeps there), so the next run prints them as
"previous" and a regression shows. A group that fails prints its error in the table and the
others still run. Figures for a report, never a test assertion; wall times depend on what else
the machine runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hotel_reservation import read_recorded, write_recorded  # this folder is on the path of a script

HERE = Path(__file__).resolve().parent
GROUPS = ("apps", "warm", "lite", "check", "kubectl", "hyperscale")
WARM_PROBLEM = "hotel-reservation/service-target-port-geo-v1"


@dataclass(frozen=True)
class Figure:
    key: str
    group: str
    label: str
    unit: str
    target: float | None  # None: a breakdown of the figure above it, shown for where the time goes
    higher_is_better: bool
    stretch: float | None = None

    def met(self, value: float) -> bool | None:
        if self.target is None:
            return None
        return value >= self.target if self.higher_is_better else value <= self.target


FIGURES = (
    Figure("hotel_100_x", "apps", "Hotel Reservation, 100 req/s", "x real time", 500, True, stretch=1000),
    Figure("hotel_5000_scaled_x", "apps", "Hotel Reservation, 5,000 req/s (scaled)", "x real time", 50, True),
    Figure("synthetic_500svc_x", "apps", "500-service synthetic app", "x real time", 10, True),
    Figure("astronomy_shop_x", "apps", "Astronomy Shop, default load", "x real time", 200, True),
    Figure("social_network_x", "apps", "Social Network, default load", "x real time", 200, True),
    Figure("hotel_100_rss_mb", "apps", "Hotel Reservation, peak memory", "MB", 300, False),
    Figure("synthetic_500svc_rss_mb", "apps", "500-service app, peak memory", "MB", 1500, False),
    Figure("warm_reset_s", "warm", "attempt setup from warm state (HR)", "s", 0.3, False),
    Figure("lite_baseline_s", "lite", "lite suite, baseline agent, -j 2", "s", 60, False),
    Figure("check_all_min", "check", "check --all, -j 2", "min", 3, False),
    Figure("kubectl_10k_s", "kubectl", "kubectl get pods -A, 10,000 pods", "s", 1.0, False),
    Figure("kubectl_10k_server_s", "kubectl", "  of which the server's paged Table list", "s", None, False),
    Figure("kubectl_10k_cpu_s", "kubectl", "  kubectl's own CPU per call", "s", None, False),
    Figure("hyperscale_x", "hyperscale", "1,000 nodes, 10,000 pods", "x real time", None, True),
    Figure("hyperscale_rss_mb", "hyperscale", "1,000 nodes, 10,000 pods, peak memory", "MB", None, False),
    Figure("hyperscale_setup_s", "hyperscale", "1,000 nodes, 10,000 pods, create + 120 s warm-up", "s", None,
           False),
)
# hotel_reservation.py scenario -> (speed figure, memory figure)
_SCENARIOS = {"hotel-100": ("hotel_100_x", "hotel_100_rss_mb"), "hotel-5000-scaled": ("hotel_5000_scaled_x", None),
              "synthetic-500svc": ("synthetic_500svc_x", "synthetic_500svc_rss_mb"),
              "astronomy-shop": ("astronomy_shop_x", None), "social-network": ("social_network_x", None)}


def _run(script: str, *args: str, timeout: float = 7200) -> str:
    proc = subprocess.run([sys.executable, str(HERE / script), *args], capture_output=True, text=True,
                          timeout=timeout, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{script} exited {proc.returncode}: {tail}")
    return proc.stdout


def _first_json(text: str) -> dict[str, Any]:
    """The first JSON object in `text` (a benchmark may print a summary line after it)."""
    start = text.index("{")
    return json.JSONDecoder().raw_decode(text[start:])[0]


def measure_apps(seconds: float) -> dict[str, float]:
    out: dict[str, float] = {}
    for scenario, (speed, memory) in _SCENARIOS.items():
        row = json.loads(_run("hotel_reservation.py", "--only", scenario, "--seconds", str(seconds),
                              "--json").strip().splitlines()[-1])
        if "error" in row:
            raise RuntimeError(f"{scenario}: {row['error']}")
        out[speed] = float(row["sim_s_per_cpu_s"])
        if memory:
            out[memory] = float(row["peak_rss_mb"])
    return out


def measure_warm() -> dict[str, float]:
    report = _first_json(_run("rl_throughput.py", "--problem", WARM_PROBLEM, "--episodes", "4",
                              "--cold-episodes", "1"))
    return {"warm_reset_s": float(report["warm"]["reset_median_s"])}


def measure_lite() -> dict[str, float]:
    report = _first_json(_run("run_lite.py", "--agent", "baseline", "-j", "2"))
    return {"lite_baseline_s": float(report["wall_seconds"])}


def measure_check() -> dict[str, float]:
    last = _run("check_all.py", "-j", "2").strip().splitlines()[-1]
    return {"check_all_min": round(float(json.loads(last)["wall_s"]) / 60, 2)}


def measure_kubectl() -> dict[str, float]:
    report = _first_json(_run("kube_api.py", "--pods", "10000", "--runs", "3", "--seconds", "1", "--json"))
    return {"kubectl_10k_s": float(report["kubectl_median_s"]),
            "kubectl_10k_server_s": float(report["server_paged_s"]),
            "kubectl_10k_cpu_s": float(report["kubectl_cpu_s"])}


def measure_hyperscale() -> dict[str, float]:
    report = _first_json(_run("twin_scale.py", "--workers", "999", "--deployments", "1000", "--replicas", "10",
                              "--warm", "120", "--seconds", "60", "--json"))
    return {"hyperscale_x": float(report["sim_s_per_wall_s"]), "hyperscale_rss_mb": float(report["peak_rss_mb"]),
            "hyperscale_setup_s": round(float(report["setup_s"]) + float(report["warm_s"]), 1)}


def measure(groups: list[str], seconds: float) -> tuple[dict[str, float], dict[str, str]]:
    """(figures, {group: error}) for the requested groups, each printed to stderr as it ends."""
    runners = {"apps": lambda: measure_apps(seconds), "warm": measure_warm, "lite": measure_lite,
               "check": measure_check, "kubectl": measure_kubectl, "hyperscale": measure_hyperscale}
    figures: dict[str, float] = {}
    errors: dict[str, str] = {}
    for group in groups:
        print(f"measuring {group} ...", file=sys.stderr, flush=True)
        try:
            figures.update(runners[group]())
        except Exception as exc:  # the table shows it; the other groups still run
            errors[group] = f"{type(exc).__name__}: {exc}"
    return figures, errors


def load_previous() -> dict[str, float]:
    targets = read_recorded().get("targets")
    if not isinstance(targets, dict):
        return {}
    return {k: float(v) for k, v in targets.items() if isinstance(v, int | float)}


def save(figures: dict[str, float]) -> None:
    recorded = read_recorded()
    targets = dict(recorded.get("targets") or {})
    targets.update(figures)
    recorded["targets"] = dict(sorted(targets.items()))
    write_recorded(recorded)


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}"


def table(figures: dict[str, float], errors: dict[str, str], previous: dict[str, float],
          groups: list[str]) -> str:
    header = ("figure", "target", "this run", "previous", "")
    rows: list[tuple[str, ...]] = []
    for figure in FIGURES:
        if figure.group not in groups:
            continue
        direction = ">=" if figure.higher_is_better else "<="
        stretch = f" (stretch {_fmt(figure.stretch)})" if figure.stretch else ""
        target = "" if figure.target is None else f"{direction} {_fmt(figure.target)}{stretch}"
        value = figures.get(figure.key)
        met = None if value is None else figure.met(value)
        if value is None:
            verdict = f"not measured: {errors.get(figure.group, 'no figure')}"
        else:
            verdict = "" if met is None else "met" if met else "missed"
        rows.append((f"{figure.label} [{figure.unit}]", target, _fmt(value),
                     _fmt(previous.get(figure.key)), verdict))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("-" * len(lines[0]))
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(GROUPS),
                        help=f"comma-separated groups to measure (default: all of {', '.join(GROUPS)})")
    parser.add_argument("--seconds", type=float, default=300, help="simulated seconds per app scenario")
    parser.add_argument("--save", action="store_true", help="record this run's figures in baseline.json")
    parser.add_argument("--json-out", metavar="FILE", help="also write this run's figures and errors as JSON")
    parser.add_argument("--from", dest="source", metavar="FILE", help="tabulate a run saved with --json-out")
    args = parser.parse_args()
    groups = [g.strip() for g in args.only.split(",") if g.strip()]
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; choose from {', '.join(GROUPS)}")
    if args.source:
        saved = json.loads(Path(args.source).read_text())
        figures, errors = saved["figures"], saved.get("errors", {})
        groups = [g for g in GROUPS if g in saved.get("groups", GROUPS)]
    else:
        figures, errors = measure(groups, args.seconds)
    print(table(figures, errors, load_previous(), groups))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"groups": groups, "figures": figures, "errors": errors}, indent=2))
    if args.save and not args.source:
        save(figures)


if __name__ == "__main__":
    main()
