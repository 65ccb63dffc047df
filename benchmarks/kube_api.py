"""Kubernetes API server speed: `kubectl get pods -A` latency and list throughput with 500 pods.

    python benchmarks/kube_api.py [--pods 500] [--runs 10] [--seconds 5] [--json]

Creates the pods (10 namespaces, 50 each) in a fresh twin, advances it until they are scheduled
and running, serves it on a free loopback port (manual clock), then prints the median wall time
of the real `kubectl get pods -A` (server-side Table printing included) and how many
`GET /api/v1/pods` full lists per second one httpx client gets.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from sregym.twin import Twin
from sregym.twin.api.kubeconfig import context_name, make_tokens, token_for, write_kubeconfig
from sregym.twin.api.serve import TwinServer


def build_twin(pods: int) -> Twin:
    twin = Twin(seed=1)
    namespaces = [f"bench-{i}" for i in range(10)]
    for ns in namespaces:
        twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for i in range(pods):
        twin.create({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "namespace": namespaces[i % len(namespaces)],
                         "labels": {"app": f"app-{i % 25}"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.27",
                                     "resources": {"requests": {"cpu": "1m", "memory": "1Mi"}}}]},
        })
    twin.advance(30)
    return twin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=500)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    report: dict[str, float | int] = {"pods": args.pods}

    started = time.perf_counter()
    twin = build_twin(args.pods)
    report["build_s"] = round(time.perf_counter() - started, 2)
    if not args.json:
        print(f"twin with {twin.store.count('Pod')} pods built in {report['build_s']:.2f}s")
    tokens = make_tokens()
    server = TwinServer(twin, tokens=tokens, port=0, speed=0, shutdown_grace=0.2).start_in_thread()
    assert server.tls is not None
    workdir = Path(tempfile.mkdtemp(prefix="sregym-bench-"))
    try:
        kubeconfig = write_kubeconfig(workdir / "kubeconfig", server.url, tokens,
                                      ca_pem=server.tls.ca_pem)
        kubectl = shutil.which("kubectl") or "/usr/bin/kubectl"
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        cmd = [kubectl, "--context", context_name("agent"), "--cache-dir", str(workdir / "cache"),
               "get", "pods", "-A"]
        subprocess.run(cmd, env=env, capture_output=True, check=True)  # warm the discovery cache
        timings = []
        rows = 0
        for _ in range(args.runs):
            t0 = time.perf_counter()
            result = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            timings.append(time.perf_counter() - t0)
            rows = len(result.stdout.splitlines()) - 1
        report.update(kubectl_rows=rows, kubectl_median_s=round(statistics.median(timings), 3),
                      kubectl_min_s=round(min(timings), 3))
        if not args.json:
            print(f"kubectl get pods -A ({rows} rows): median {statistics.median(timings) * 1000:.0f} ms "
                  f"over {args.runs} runs (min {min(timings) * 1000:.0f} ms)")

        headers = {"Authorization": f"Bearer {token_for(tokens, 'agent')}"}
        with httpx.Client(base_url=server.url, headers=headers,
                          verify=server.tls.client_context()) as http:
            for accept, label in (("application/json", "JSON PodList"),
                                  ("application/json;as=Table;v=v1;g=meta.k8s.io", "Table")):
                count = 0
                t0 = time.perf_counter()
                while time.perf_counter() - t0 < args.seconds:
                    response = http.get("/api/v1/pods", headers={"Accept": accept})
                    response.raise_for_status()
                    count += 1
                elapsed = time.perf_counter() - t0
                report[f"lists_per_s_{'table' if 'Table' in label else 'json'}"] = round(count / elapsed, 1)
                if not args.json:
                    print(f"list throughput ({label}, {args.pods} pods): {count / elapsed:.1f} lists/s")
        if args.json:
            print(json.dumps(report))
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
