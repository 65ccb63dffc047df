"""`sregym twin up`: the served twin as a user starts it, then stops it with SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from support.processes import read_lines_until


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_twin_up_serves_kubectl_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    port, prom, loki, jaeger = (_free_port() for _ in range(4))
    kubeconfig = tmp_path / "kubeconfig.yaml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sregym.cli.main", "twin", "up", "--port", str(port),
         "--kubeconfig", str(kubeconfig), "--seed", "3", "--speed", "5",
         "--prometheus-port", str(prom), "--loki-port", str(loki), "--jaeger-port", str(jaeger)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    try:
        lines = read_lines_until(proc, "export KUBECONFIG=", timeout=60)
        assert lines and lines[-1].strip() == f"export KUBECONFIG={kubeconfig}", lines
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        nodes = subprocess.run(["kubectl", "get", "nodes", "-o", "name"], env=env, capture_output=True,
                               text=True, timeout=60)
        assert nodes.returncode == 0, nodes.stderr
        assert "node/kind-control-plane" in nodes.stdout.split()
        whoami = subprocess.run(["kubectl", "config", "current-context"], env=env, capture_output=True,
                                text=True, timeout=30)
        assert whoami.stdout.strip() == "kind-kind"
        printed = "".join(lines)
        assert f"prometheus: http://127.0.0.1:{prom}" in printed
        # The observability APIs answer on their own ports, in their own JSON shapes.
        query = httpx.get(f"http://127.0.0.1:{prom}/api/v1/query", params={"query": "vector(1)"}, timeout=30)
        assert query.json()["status"] == "success"
        assert query.json()["data"]["resultType"] == "vector"
        labels = httpx.get(f"http://127.0.0.1:{loki}/loki/api/v1/labels", timeout=30)
        assert labels.status_code == 200 and labels.json()["status"] == "success"
        services = httpx.get(f"http://127.0.0.1:{jaeger}/api/services", timeout=30)
        assert services.status_code == 200 and "data" in services.json()
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0
        assert rest.strip().endswith("stopped")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
