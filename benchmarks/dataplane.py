"""Data-plane speed: simulated seconds per wall second and peak memory.

    python benchmarks/dataplane.py [--seconds 300] [--only synthetic-100|synthetic-5000|synthetic-500svc|hotel-100|hotel-5000]

Each scenario deploys its app, lets it start (not timed), then times `seconds` of simulated
traffic. Peak RSS is the process high-water mark after the scenario (scenarios run in
subprocesses so one does not inflate the next).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def run(scenario: str, seconds: float) -> dict[str, float | str]:
    from sregym.twin.dataplane.synthetic import synthetic_app
    from sregym.twin.topology import Topology
    from sregym.twin.twin import Twin

    # 500 pods need more than kind's three workers (110 pods per node).
    twin = Twin(seed=1, topology=Topology.default(workers=6) if scenario == "synthetic-500svc" else None)
    if scenario.startswith("hotel"):
        from sregym.apps import deploy_app

        deploy_app(twin, "hotel-reservation")
        if scenario == "hotel-5000":
            dp = twin.services.dataplane
            for name, workload in dp.workloads.items():
                dp.set_load(name, 5000.0 / max(workload.spec.rps, 1e-9))
    elif scenario == "synthetic-500svc":
        synthetic_app("bench", layers=(1, 10, 40, 100, 349), fanout=0, rps=100, cpu_ms=0.05, cpu_limit=None,
                      memory_limit=None, cpu_request="10m").deploy(twin)
    else:
        rps = 5000.0 if scenario == "synthetic-5000" else 100.0
        synthetic_app("bench", layers=(1, 3, 6), fanout=1, rps=rps, replicas=3 if rps > 1000 else 1,
                      cpu_ms=0.05 if rps > 1000 else 2.0, gateway_cpu_ms=0.2, cpu_limit=None, memory_limit=None,
                      with_store=True).deploy(twin)
    twin.advance(90)
    start = time.perf_counter()
    twin.advance(seconds)
    wall = time.perf_counter() - start
    stats = twin.services.dataplane.entry_stats(60)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"scenario": scenario, "simulated_s": seconds, "wall_s": round(wall, 2),
            "sim_s_per_wall_s": round(seconds / wall, 1), "peak_rss_mb": round(rss_mb, 1),
            "pods": len(list(twin.store.scan("Pod"))), "success_ratio": round(stats.success_ratio, 4),
            "p95_ms": round(stats.p95_ms, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--only")
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run(args.child, args.seconds)))
        return
    scenarios = [args.only] if args.only else ["synthetic-100", "synthetic-5000", "synthetic-500svc",
                                               "hotel-100", "hotel-5000"]
    for scenario in scenarios:
        proc = subprocess.run([sys.executable, __file__, "--child", scenario, "--seconds", str(args.seconds)],
                              capture_output=True, text=True)
        line = proc.stdout.strip().splitlines()[-1] if proc.returncode == 0 and proc.stdout.strip() else \
            json.dumps({"scenario": scenario, "error": (proc.stderr.strip().splitlines() or ["failed"])[-1]})
        print(line, flush=True)


if __name__ == "__main__":
    main()
