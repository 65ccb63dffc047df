"""How fast does the twin's control plane run at scale?

Creates 50 Deployments x 10 replicas in a fresh twin, advances 600 simulated seconds and prints
simulated seconds per wall second and the peak RSS (and, with --trace-heap, the Python heap).

    python benchmarks/twin_scale.py [--deployments 50] [--replicas 10] [--seconds 600] [--workers 5]
    python benchmarks/twin_scale.py --workers 1000 --deployments 1000 --replicas 10 --warm 120 --seconds 60 --json

The second is the hyperscale run of issue 24: a 1,000-node, 10,000-pod cluster, timed after
`--warm` simulated seconds so the figure is the running cluster's rather than its start-up's.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
import tracemalloc

from sregym.twin import Twin
from sregym.twin.topology import Topology


def deployment(index: int, replicas: int) -> dict:
    name = f"svc-{index:03d}"
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "bench", "labels": labels},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{
                                  "name": "app", "image": "nginx:1.27",
                                  "ports": [{"containerPort": 80}],
                                  "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
                                  "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deployments", type=int, default=50)
    parser.add_argument("--replicas", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=5,
                        help="worker nodes (110 pods each, like kind's kubelet default)")
    parser.add_argument("--warm", type=float, default=0,
                        help="simulated seconds to run before the timed window (start-up excluded)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--trace-heap", action="store_true",
                        help="also report the peak Python heap (tracemalloc slows the run ~2x)")
    args = parser.parse_args()

    if args.trace_heap:
        tracemalloc.start()
    wall0 = time.perf_counter()
    twin = Twin(seed=args.seed, topology=Topology.default(workers=args.workers))
    twin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
    twin.apply([deployment(i, args.replicas) for i in range(args.deployments)])
    setup = time.perf_counter() - wall0
    if args.warm:
        wall_warm = time.perf_counter()
        twin.advance(args.warm)
        warm = time.perf_counter() - wall_warm
    else:
        warm = 0.0

    wall1 = time.perf_counter()
    twin.advance(args.seconds)
    run = time.perf_counter() - wall1
    peak = tracemalloc.get_traced_memory()[1] if args.trace_heap else None
    tracemalloc.stop()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    pods = list(twin.store.scan("pods", "bench"))
    ready = sum(1 for p in pods if any(c.get("type") == "Ready" and c.get("status") == "True"
                                       for c in (p.get("status") or {}).get("conditions") or []))
    if args.json:
        print(json.dumps({"nodes": twin.store.count("Node"), "pods": len(pods), "ready": ready,
                          "setup_s": round(setup, 2), "warm_s": round(warm, 2), "sim_s": args.seconds,
                          "wall_s": round(run, 2), "sim_s_per_wall_s": round(args.seconds / run, 3),
                          "peak_rss_mb": round(rss_mb, 1)}))
        return
    print(f"deployments x replicas      {args.deployments} x {args.replicas}")
    print(f"pods ready / total          {ready} / {len(pods)}")
    print(f"setup wall time             {setup:.2f} s")
    if args.warm:
        print(f"warm-up ({args.warm:.0f} sim s)          {warm:.2f} s")
    print(f"simulated seconds           {args.seconds:.0f}")
    print(f"wall seconds                {run:.2f}")
    print(f"simulated s per wall s      {args.seconds / run:.1f}")
    if peak is not None:
        print(f"peak traced heap            {peak / 2**20:.1f} MiB")
    print(f"peak RSS                    {rss_mb:.1f} MiB")


if __name__ == "__main__":
    main()
