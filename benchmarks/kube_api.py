"""Kubernetes API server speed: `kubectl get pods -A` latency and list throughput with 500 pods.

    python benchmarks/kube_api.py [--pods 500] [--runs 10] [--seconds 5] [--json]

Creates the pods (10 namespaces, 50 each) in a fresh twin, advances it until they are scheduled
and running, serves it on a free loopback port (manual clock), then prints the median wall time
of the real `kubectl get pods -A` (server-side Table printing included) and how many
`GET /api/v1/pods` full lists per second one httpx client gets.

kubectl's time splits into the server's and its own: the script also times the same paged Table
list kubectl makes (`limit=500` and `continue`, the body read but not decoded) and reports
kubectl's own CPU seconds per run, so a slow figure says which side to work on.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
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
        cpu = []
        rows = 0
        for _ in range(args.runs):
            before = _children_cpu()
            t0 = time.perf_counter()
            result = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            timings.append(time.perf_counter() - t0)
            cpu.append(_children_cpu() - before)
            rows = len(result.stdout.splitlines()) - 1
        report.update(kubectl_rows=rows, kubectl_median_s=round(statistics.median(timings), 3),
                      kubectl_min_s=round(min(timings), 3), kubectl_cpu_s=round(statistics.median(cpu), 3))
        if not args.json:
            print(f"kubectl get pods -A ({rows} rows): median {statistics.median(timings) * 1000:.0f} ms "
                  f"over {args.runs} runs (min {min(timings) * 1000:.0f} ms); kubectl's own CPU "
                  f"{statistics.median(cpu) * 1000:.0f} ms")

        headers = {"Authorization": f"Bearer {token_for(tokens, 'agent')}"}
        with httpx.Client(base_url=server.url, headers=headers,
                          verify=server.tls.client_context()) as http:
            paged = [_paged_table_list(http) for _ in range(args.runs)]
            report.update(server_paged_s=round(statistics.median(p[0] for p in paged), 3),
                          pages=paged[0][1])
            if not args.json:
                print(f"the same paged Table list without kubectl ({paged[0][1]} pages of 500): median "
                      f"{report['server_paged_s'] * 1000:.0f} ms")
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


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _paged_table_list(http: httpx.Client) -> tuple[float, int]:
    """(seconds, pages) for the list kubectl makes: Table pages of 500 followed by `continue`."""
    accept = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
              "g=meta.k8s.io,application/json")
    started, pages, token = time.perf_counter(), 0, None
    while True:
        params = {"limit": "500", **({"continue": token} if token else {})}
        response = http.get("/api/v1/pods", params=params, headers={"Accept": accept})
        response.raise_for_status()
        pages += 1
        found = re.search(rb'"continue":"([^"]+)"', response.content[:1000])  # in the list metadata, first
        if found is None:
            return time.perf_counter() - started, pages
        token = found.group(1).decode()


if __name__ == "__main__":
    main()
