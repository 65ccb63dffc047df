"""`sregym run --backend kube` end to end, against the twin served over HTTPS as the "real"
cluster (`sregym twin up --speed 10` in a subprocess): install by server-side apply, baseline,
injection, the baseline agent acting with its own ServiceAccount token through the real kubectl,
scoring over the served Prometheus, cleanup. The verdicts must equal the in-process run's of the
same problems and seed; nothing the attempts created may stay; the agent's token must be refused
in the hidden namespaces."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.xdist_group("kube-backend")

SREGYM = [sys.executable, "-m", "sregym.cli.main"]
# The agent's own kubectl calls take wall time, during which a served twin runs SPEED times as fast
# and eats the phase's simulated-time budget: 20 leaves room for a busy machine (50 did not; 20
# passed under a CI load in 415 s, 10 took 692 s).
SPEED = 20
# Problems of four layers whose verdicts do not hinge on a tick's timing; one on the data-plane app
# (its install, traffic and Prometheus over the wire), the rest on the small control-plane app.
# Issue #23 asks for at least five problems across layers with the in-process verdicts.
PROBLEMS = ("demo-shop/missing-configmap-key-v1",  # config
            "demo-shop/nonexistent-node-selector-v1",  # k8s (scheduling)
            "demo-shop/validating-webhook-outage-v1",  # control-plane (admission)
            "demo-shop/resourcequota-blocks-recreation-v1",  # control-plane (quota)
            "hotel-reservation/service-target-port-geo-v1")  # network, on the data-plane app
HIDDEN = ("chaos-mesh", "sregym-system")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Served:
    """A `sregym twin up` subprocess and the flags that point `--backend kube` at it."""

    def __init__(self, workdir: Path) -> None:
        self.kubeconfig = workdir / "kubeconfig"
        ports = {name: _free_port() for name in ("prometheus", "loki", "jaeger")}
        self.urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
        self.log = (workdir / "twin.log").open("w")
        self.process = subprocess.Popen(
            [*SREGYM, "twin", "up", "--port", "0", "--kubeconfig", str(self.kubeconfig), "--speed", str(SPEED),
             "--prometheus-port", str(ports["prometheus"]), "--loki-port", str(ports["loki"]),
             "--jaeger-port", str(ports["jaeger"])], stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(600):
            if self.kubeconfig.exists() and self._answers():
                return
            if self.process.poll() is not None:
                raise RuntimeError((workdir / "twin.log").read_text())
            time.sleep(0.2)
        raise RuntimeError("the served twin did not come up")

    def _answers(self) -> bool:
        import httpx

        try:
            return httpx.get(self.urls["prometheus"] + "/api/v1/query", params={"query": "time()"},
                             timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def flags(self) -> list[str]:
        return ["--backend", "kube", "--kubeconfig", str(self.kubeconfig), "--context", "kind-admin",
                "--prometheus-url", self.urls["prometheus"], "--loki-url", self.urls["loki"],
                "--jaeger-url", self.urls["jaeger"], "--cluster-speed", str(SPEED)]

    def admin(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["kubectl", "--kubeconfig", str(self.kubeconfig), "--context", "kind-admin", *args],
                              capture_output=True, text=True, timeout=60)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = Served(tmp_path_factory.mktemp("served-twin"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module", autouse=True)
def ledger_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ledgers (`env/kube/leftovers.py`) of this module's runs, in a directory of its own."""
    state = tmp_path_factory.mktemp("sregym-state")
    previous = os.environ.get("SREGYM_STATE_DIR")
    os.environ["SREGYM_STATE_DIR"] = str(state)
    try:
        yield state
    finally:
        if previous is None:
            os.environ.pop("SREGYM_STATE_DIR", None)
        else:
            os.environ["SREGYM_STATE_DIR"] = previous


def _ledgers(state: Path) -> list[Path]:
    return sorted(state.glob("kube-ledgers/*/*.jsonl"))


def _verdicts(out: Path) -> dict[str, tuple[Any, ...]]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    return {r["problem_id"]: (r["environment_failure"], r["passed"], (r.get("diagnosis") or {}).get("passed"),
                              (r.get("mitigation") or {}).get("passed")) for r in rows}


def _run(args: list[str], out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(out.parent)}
    return subprocess.run([*SREGYM, "run", *args, "--agent", "baseline", "--out", str(out), "--progress", "none",
                           *[a for p in PROBLEMS for a in ("-p", p)]], capture_output=True, text=True,
                          timeout=3600, env=env)


def _leftovers(served: Served) -> list[str]:
    """Everything an attempt creates that must be gone afterwards."""
    found = []
    namespaces = served.admin("get", "namespaces", "-o", "name").stdout.split()
    found += [n for n in namespaces if n.split("/")[-1] in ("demo-shop", "hotel-reservation", "sregym-system")]
    found += [line for line in served.admin("get", "clusterroles,clusterrolebindings", "-o", "name").stdout.split()
              if "oncall" in line]
    found += [line for line in served.admin("get", "serviceaccounts,rolebindings", "-A", "-o", "name").stdout.split()
              if "oncall" in line]
    return found


def test_kube_backend_gives_the_in_process_verdicts_and_cleans_up(served: Served, tmp_path: Path,
                                                                  ledger_state: Path) -> None:
    kube = _run(served.flags(), tmp_path / "kube")
    assert kube.returncode == 0, kube.stderr[-3000:]
    assert "[kube] installing hotel-reservation" in kube.stderr  # install progress is reported
    local = _run([], tmp_path / "local")
    assert local.returncode == 0, local.stderr[-3000:]
    over_the_wire, in_process = _verdicts(tmp_path / "kube"), _verdicts(tmp_path / "local")
    assert set(over_the_wire) == set(PROBLEMS)
    assert over_the_wire == in_process
    assert not any(v[0] for v in over_the_wire.values())  # no environment failure
    assert _leftovers(served) == []
    assert _ledgers(ledger_state) == []


def test_agent_token_is_refused_in_hidden_namespaces_and_noop_matches(served: Served) -> None:
    from sregym.agents import make_agent
    from sregym.env import Conductor
    from sregym.env.kube.target import KubeTarget

    assert served.admin("create", "namespace", "chaos-mesh").returncode in (0, 1)  # 1: it exists
    target = KubeTarget(kubeconfig=str(served.kubeconfig), context="kind-admin",
                        prometheus_url=served.urls["prometheus"], loki_url=served.urls["loki"],
                        jaeger_url=served.urls["jaeger"], speed=SPEED)
    problem = "demo-shop/missing-configmap-key-v1"
    with Conductor(problem, seed=0, kube=target.to_json(), agent_name="noop") as conductor:
        brief = conductor.start()
        kubeconfig = str(conductor.kubeconfig)

        def agent(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["kubectl", "--kubeconfig", kubeconfig, *args], capture_output=True, text=True,
                                  timeout=60)

        who = agent("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
        assert who.stdout == "system:serviceaccount:kube-system:oncall", who.stderr
        assert agent("auth", "can-i", "list", "pods", "-n", "demo-shop").stdout.strip() == "yes"
        assert agent("auth", "can-i", "patch", "deployments", "-n", "demo-shop").stdout.strip() == "yes"
        assert agent("get", "pods", "-n", "demo-shop").returncode == 0
        # Chaos Mesh objects: the agent's in the app namespace, nobody's business in hidden ones.
        assert agent("auth", "can-i", "delete", "schedules.chaos-mesh.org", "-n", "demo-shop").stdout.strip() == "yes"
        for namespace in HIDDEN:
            assert agent("auth", "can-i", "list", "pods", "-n", namespace).stdout.strip() == "no"
            assert agent("auth", "can-i", "get", "schedules.chaos-mesh.org", "-n", namespace).stdout.strip() == "no"
            refused = agent("get", "pods,secrets", "-n", namespace)
            assert refused.returncode != 0 and "forbidden" in refused.stderr.lower(), refused
        assert agent("auth", "can-i", "create", "clusterroles").stdout.strip() == "no"
        assert served.admin("get", "serviceaccount", "oncall", "-n", "kube-system").returncode == 0
        conductor.run_agent(make_agent("noop"), brief)
        over_the_wire = conductor.result()
    assert _leftovers(served) == []
    with Conductor(problem, seed=0, agent_name="noop") as local:
        local.run_agent(make_agent("noop"), local.start())
        in_process = local.result()
    assert not over_the_wire.environment_failure
    assert (over_the_wire.passed, over_the_wire.mitigation.passed) == (in_process.passed, in_process.mitigation.passed)
    assert over_the_wire.passed is False  # the noop agent leaves the incident as it is


def test_twin_only_problems_are_skipped_with_their_reason(served: Served, tmp_path: Path) -> None:
    done = subprocess.run([*SREGYM, "run", *served.flags(), "-p", "hotel-reservation/slow-disk-geo-v1",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 2
    assert "device-scoped IOChaos" in done.stderr and "needs the twin" in done.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_check_protocol_runs_on_the_cluster_and_cleans_up(served: Served) -> None:
    flags = [f for f in served.flags() if f not in ("--backend", "kube")]
    done = subprocess.run([*SREGYM, "check", "demo-shop/nonexistent-node-selector-v1", "--backend", "kube", *flags],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "PASS demo-shop/nonexistent-node-selector-v1" in done.stdout
    assert _leftovers(served) == []


def test_kube_flags_without_the_kube_backend_are_refused() -> None:
    done = subprocess.run([*SREGYM, "run", "-p", "demo-shop/missing-configmap-key-v1", "--prometheus-url",
                           "http://127.0.0.1:1"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--prometheus-url" in done.stderr and "--backend kube" in done.stderr


def test_resume_removes_what_a_killed_run_left_and_records_the_attempt(served: Served, tmp_path: Path,
                                                                       ledger_state: Path) -> None:
    """The whole run is killed (SIGKILL: no clean-up of its own) once its attempt has installed
    the app; `--resume` removes what the attempt's ledger recorded, says so, and runs it again."""
    import signal

    problem, out = "demo-shop/missing-configmap-key-v1", tmp_path / "killed"
    log = (tmp_path / "killed.log").open("w")
    killed = subprocess.Popen([*SREGYM, "run", *served.flags(), "-p", problem, "--agent", "noop", "--out", str(out),
                               "--progress", "none"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        for _ in range(3000):
            installed = any('"Namespace"' in p.read_text() and '"demo-shop"' in p.read_text()
                            for p in _ledgers(ledger_state))
            if (installed and served.admin("get", "deployments", "-n", "demo-shop", "-o", "name").stdout.strip()) \
                    or killed.poll() is not None:
                break
            time.sleep(0.2)
    finally:
        # The run and its worker (a process group of its own) die at once, as with a machine that
        # goes down: nothing cleans up. The worker's pid ends its ledger's name.
        os.killpg(killed.pid, signal.SIGKILL)
        for ledger in _ledgers(ledger_state):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(ledger.stem.rsplit("-p", 1)[1]), signal.SIGKILL)
        killed.wait(timeout=60)
        log.close()
    assert "namespace/demo-shop" in _leftovers(served), (tmp_path / "killed.log").read_text()[-3000:]
    assert len(_ledgers(ledger_state)) == 1
    assert not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_text().strip()

    resumed = subprocess.run([*SREGYM, "run", "--resume", str(out), "--progress", "none"], capture_output=True,
                             text=True, timeout=1800)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "removed what an interrupted attempt left on the cluster" in resumed.stderr
    assert "Namespace demo-shop" in resumed.stderr
    assert _verdicts(out) == {problem: (False, False, False, False)}  # recorded, scored: noop fails
    assert _leftovers(served) == []
    assert _ledgers(ledger_state) == []


def _tsv_rows(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines()[1:] if line]


def test_snapshot_export_on_the_cluster_has_the_twins_layout(served: Served, tmp_path: Path) -> None:
    """`snapshot export --backend kube` writes the files the twin's export writes, read through the
    agent's credential and the served Prometheus, Loki and Jaeger, and removes what it created."""
    from sregym.snapshot.export import export_snapshot

    problem = "hotel-reservation/service-target-port-geo-v1"  # a data-plane app: logs and traces too
    out = tmp_path / "kube"
    done = subprocess.run([*SREGYM, "snapshot", "export", problem, "--out", str(out), "--window", "3m",
                           "--baseline", "1m", *served.flags()], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "installing hotel-reservation" in done.stderr
    assert _leftovers(served) == []
    export_snapshot(problem, tmp_path / "twin", window_s=180, baseline_s=60)
    kube, twin = out / "snapshot", tmp_path / "twin" / "snapshot"

    def files(root: Path) -> list[str]:
        """The files outside metrics/, alert lists by their directory (their names are instants)."""
        return sorted(p.parent.name if p.parent.name == "alerts" else str(p.relative_to(root))
                      for p in root.rglob("*") if p.is_file() and p.parent.name != "metrics")

    assert files(kube) == files(twin)  # README, snapshot/app/topology json, 4 alert lists, the four tsv files
    assert (json.loads((out / "ground_truth.json").read_text())
            == json.loads((tmp_path / "twin" / "ground_truth.json").read_text()))
    assert json.loads((kube / "app.json").read_text())["services"] == json.loads((twin / "app.json").read_text())["services"]
    # The objects are the agent's: the app's, before and after, and nothing of the hidden namespaces.
    objects = _tsv_rows(kube / "k8s_objects.tsv")
    assert {r[0] for r in objects} == {"baseline", "snapshot"}
    assert ["snapshot", "Service", "hotel-reservation", "geo"] in [r[:4] for r in objects]
    assert not {r[2] for r in objects} & set(HIDDEN)
    assert not any(r[1] == "PodMetrics" for r in objects)
    assert '"manager":"sregym"' not in (kube / "k8s_objects.tsv").read_text()  # nothing names the benchmark
    assert _tsv_rows(kube / "k8s_events.tsv")
    assert {r[2] for r in _tsv_rows(kube / "logs.tsv") if r[1] == "pod"} == {"hotel-reservation"}
    traced = {r[4] for r in _tsv_rows(kube / "traces.tsv")}
    assert {"frontend", "search"} <= traced, traced
    calls = json.loads((kube / "topology.json").read_text())["calls"]
    assert {"source": "frontend", "target": "search"} in [{k: c[k] for k in ("source", "target")} for c in calls]
    metric_files = {p.name for p in (kube / "metrics").iterdir()}
    assert any(name.startswith("pod") for name in metric_files) and any(name.startswith("node") for name in metric_files)
