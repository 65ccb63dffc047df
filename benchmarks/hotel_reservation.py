"""App speed: simulated seconds per wall second and peak memory for Hotel Reservation at 100 and
5,000 requests/s, the Astronomy Shop at its chart's default load (10 Locust users), Social
Network at its wrk2 mixed workload (~100 req/s), and the 500-service synthetic app.

    python benchmarks/hotel_reservation.py [--seconds 300] [--only SCENARIO] [--json] [--save-baseline]

Each scenario runs in its own subprocess (so one scenario's heap does not inflate the next one's
peak RSS): it deploys the app exactly as `sregym twin up --app` does, lets it start and warm up
(not timed), sets the load with `dataplane.set_load` (the wrk2 generator's multiplier), lets the
new load settle (not timed), then times `--seconds` of simulated time with the full cluster
running (controllers, kubelet, data plane, scrapers, alert rules). Before the timed window the
heap is frozen (`gc.freeze`) as the runner's warm prefix does for every attempt
(`problems.warm_prefix`), and the collector runs with the thresholds the `sregym` command sets
(`sregym.gcpolicy`), so the figure is the speed of an attempt; `--no-freeze` measures a plain
process, where full garbage collections over the deployed app cost a further ~15%, and
`--default-gc` CPython's default thresholds (another 10-15%).
Wall time depends on what else the machine runs; `cpu ms/sim s` (process CPU time per
simulated second) is the figure to compare across runs on a busy machine. Besides speed it prints what
the app did over the timed window (entry rate, success ratio, p95), so a fast but broken run is
visible in the table. Beside `cpu ms/sim s` it prints the figure recorded in
`benchmarks/baseline.json` ({scenario: cpu_ms_per_sim_s}) so a regression shows;
`--save-baseline` records this run's figures there.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HOTEL_BASE_RPS = 100.0
SCENARIOS = ("hotel-100", "hotel-5000", "hotel-5000-scaled", "astronomy-shop", "social-network",
             "synthetic-500svc")
# `hotel-5000` is the stock app (one replica per service, 3 workers x 4 cores): 5,000 req/s need
# ~16 cores, so it saturates and collapses, which is what the real deployment would do. The
# scaled variant gives the load room (8 workers, 8 replicas of every stateless service) so the
# table also shows the cost of a healthy high-rate run.
SCALED_REPLICAS = 8
BASELINE = Path(__file__).with_name("baseline.json")
STATEFUL = ("mongodb-", "consul", "jaeger")  # RWO volumes / singletons: not scaled


def _deploy(scenario: str) -> tuple[Any, str]:
    """Build the twin for a scenario; returns (twin, workload name)."""
    from sregym.twin.topology import Topology
    from sregym.twin.twin import Twin

    if scenario.startswith("hotel"):
        from sregym.apps import deploy_app

        scaled = scenario.endswith("-scaled")
        twin = Twin(seed=1, topology=Topology.default(workers=8) if scaled else None)
        deploy_app(twin, "hotel-reservation")
        if scaled:
            for deployment in twin.list("deployments", "hotel-reservation"):
                name = deployment["metadata"]["name"]
                if not name.startswith(STATEFUL):
                    twin.patch("deployments", "hotel-reservation", name, {"spec": {"replicas": SCALED_REPLICAS}})
        return twin, "hotel-reservation"
    if scenario in ("astronomy-shop", "social-network"):
        from sregym.apps import deploy_app
        twin = Twin(seed=1)
        deploy_app(twin, scenario)
        return twin, scenario
    from sregym.twin.dataplane.synthetic import synthetic_app

    # 500 pods need more than kind's three workers (110 pods per node).
    twin = Twin(seed=1, topology=Topology.default(workers=6))
    synthetic_app("bench", layers=(1, 10, 40, 100, 349), fanout=0, rps=100, cpu_ms=0.05, cpu_limit=None,
                  memory_limit=None, cpu_request="10m").deploy(twin)
    return twin, "bench"


def run(scenario: str, seconds: float, freeze: bool = True) -> dict[str, Any]:
    setup_start = time.perf_counter()
    twin, workload = _deploy(scenario)
    twin.advance(120)  # pull images, start databases, register, warm caches
    dataplane = twin.services.dataplane
    if scenario.startswith("hotel-5000"):
        dataplane.set_load(workload, 5000.0 / HOTEL_BASE_RPS)
    twin.advance(30)
    setup_wall = time.perf_counter() - setup_start
    if freeze:
        gc.collect()
        gc.freeze()
    start, cpu_start = time.perf_counter(), time.process_time()
    twin.advance(seconds)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    stats = dataplane.entry_stats(seconds)
    pods = sum(1 for _ in twin.store.scan("Pod"))
    tsdb = twin.services.tsdb
    return {"scenario": scenario, "pods": pods, "simulated_s": seconds, "setup_wall_s": round(setup_wall, 2),
            "wall_s": round(wall, 2), "sim_s_per_wall_s": round(seconds / wall, 1),
            "cpu_ms_per_sim_s": round(1000 * cpu / seconds, 2), "sim_s_per_cpu_s": round(seconds / cpu, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "entry_rps": round(stats.rps, 1), "success_ratio": round(stats.success_ratio, 4),
            "p95_ms": round(stats.p95_ms, 1), "series": len(tsdb) if tsdb is not None else 0}


COLUMNS = (("scenario", "scenario", "<18"), ("pods", "pods", ">5"), ("sim s", "simulated_s", ">6.0f"),
           ("wall s", "wall_s", ">7.2f"), ("sim s/wall s", "sim_s_per_wall_s", ">12.1f"),
           ("cpu ms/sim s", "cpu_ms_per_sim_s", ">12.2f"), ("baseline", "baseline_cpu_ms_per_sim_s", ">8.2f"),
           ("sim s/cpu s", "sim_s_per_cpu_s", ">11.1f"),
           ("peak RSS MB", "peak_rss_mb", ">11.1f"), ("entry rps", "entry_rps", ">9.1f"),
           ("success", "success_ratio", ">7.4f"), ("p95 ms", "p95_ms", ">7.1f"), ("series", "series", ">7"),
           ("setup s", "setup_wall_s", ">7.2f"))


def table(rows: list[dict[str, Any]]) -> str:
    widths = [max([len(title)] + [len(format(row[key], fmt)) for row in rows if key in row])
              for title, key, fmt in COLUMNS]
    header = "  ".join(f"{title:{'<' if fmt[0] == '<' else '>'}{w}}"
                       for (title, _key, fmt), w in zip(COLUMNS, widths, strict=True))
    lines = [header, "-" * len(header)]
    for row in rows:
        if "error" in row:
            lines.append(f"{row['scenario']:<{widths[0]}}  ERROR: {row['error']}")
            continue
        lines.append("  ".join(f"{format(row[key], fmt) if key in row else '-':{'<' if fmt[0] == '<' else '>'}{w}}"
                               for (_title, key, fmt), w in zip(COLUMNS, widths, strict=True)))
    return "\n".join(lines)


def read_recorded() -> dict[str, Any]:
    """Everything `baseline.json` records ({} when there is no readable file): this script's
    figures per scenario and what `speed_table.py` keeps under "targets"."""
    try:
        recorded = json.loads(BASELINE.read_text())
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def write_recorded(recorded: dict[str, Any]) -> None:
    BASELINE.write_text(json.dumps(dict(sorted(recorded.items())), indent=2) + "\n")


def load_baseline() -> dict[str, float]:
    """The recorded cpu ms per simulated second per scenario ({} when none is recorded)."""
    return {k: float(v) for k, v in read_recorded().items() if isinstance(v, int | float)}


def save_baseline(rows: list[dict[str, Any]]) -> None:
    recorded = read_recorded()  # keeps what else the file records
    recorded.update({row["scenario"]: row["cpu_ms_per_sim_s"] for row in rows if "error" not in row})
    write_recorded(recorded)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--only", choices=SCENARIOS)
    parser.add_argument("--child", choices=SCENARIOS, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print one JSON object per scenario")
    parser.add_argument("--no-freeze", action="store_true", help="do not freeze the heap before the timed window")
    parser.add_argument("--default-gc", action="store_true",
                        help="keep CPython's default GC thresholds instead of the sregym command's")
    parser.add_argument("--save-baseline", action="store_true",
                        help=f"record this run's cpu ms/sim s figures in {BASELINE.name}")
    args = parser.parse_args()
    if args.child:
        if not args.default_gc:
            from sregym.gcpolicy import tune_for_simulation

            tune_for_simulation()  # as the `sregym` command does for every run
        print(json.dumps(run(args.child, args.seconds, freeze=not args.no_freeze)))
        return
    rows = []
    baseline = load_baseline()
    for scenario in [args.only] if args.only else list(SCENARIOS):
        flags = (["--no-freeze"] if args.no_freeze else []) + (["--default-gc"] if args.default_gc else [])
        proc = subprocess.run([sys.executable, __file__, "--child", scenario, "--seconds", str(args.seconds), *flags],
                              capture_output=True, text=True, check=False)
        out = proc.stdout.strip().splitlines()
        if proc.returncode == 0 and out:
            row = json.loads(out[-1])
        else:
            row = {"scenario": scenario, "error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
        if scenario in baseline:
            row["baseline_cpu_ms_per_sim_s"] = baseline[scenario]
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
    if not args.json:
        print(table(rows))
    if args.save_baseline:
        save_baseline(rows)


if __name__ == "__main__":
    main()
