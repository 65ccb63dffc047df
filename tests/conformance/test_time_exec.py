"""Clocks inside pods read the machine's time, as in a real container (it shares the host clock).

`kubectl exec POD -- date` and the `Date` header an app answers `curl -i` with must agree with the
client's `date`, not with the twin's simulated epoch (`sregym/twin/api/wall_time.py`).
"""

from __future__ import annotations

import subprocess
import time
from datetime import UTC, datetime

import pytest

from support.kube import KubeHarness

NS = "default"
APP = "http://frontend.hotel-reservation:5000/"


def _kubectl(cluster: KubeHarness, *args: str) -> subprocess.CompletedProcess[str]:
    with cluster.ticking():
        return cluster.kubectl(*args, input="", timeout=120)


@pytest.fixture(scope="module")
def pods(cluster: KubeHarness) -> dict[str, str]:
    _kubectl(cluster, "run", "clock-bb", "--image=busybox:1.36", "--", "sleep", "36000")
    _kubectl(cluster, "run", "clock-web", "--image=nginx:1.27")
    result = _kubectl(cluster, "wait", "--for=condition=Ready", "pod/clock-bb", "pod/clock-web", "--timeout=60s")
    assert result.returncode == 0, result.stderr
    return {"busybox": "clock-bb", "debian": "clock-web"}


def _c_date(text: str) -> float:
    """`Tue Dec  1 23:20:38 UTC 2026` (the C locale's `date`)."""
    return datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S UTC %Y").replace(tzinfo=UTC).timestamp()


def _within_now(stamp: float, before: float) -> None:
    assert int(before) - 2 <= stamp <= time.time() + 1, (stamp, before)


@pytest.mark.parametrize("image", ["busybox", "debian"])
@pytest.mark.parametrize("argv, parse", [(["date"], _c_date), (["date", "-u"], _c_date),
                                         (["date", "+%s"], float),
                                         (["sh", "-c", "date +%s"], float),
                                         (["date", "+%Y-%m-%dT%H:%M:%SZ"],
                                          lambda t: datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp())])
def test_date_in_a_pod_is_the_machine_date(cluster: KubeHarness, pods: dict[str, str], image: str,
                                           argv: list[str], parse) -> None:
    before = time.time()
    result = cluster.kubectl("exec", pods[image], "--", *argv, input="", timeout=120)
    assert result.returncode == 0, result.stderr
    _within_now(parse(result.stdout.strip()), before)


@pytest.mark.parametrize("argv", [["curl", "-si", APP], ["curl", "-sI", APP], ["curl", "-sv", "-o", "/dev/null", APP]])
def test_http_date_header_is_the_machine_date(cluster: KubeHarness, pods: dict[str, str], argv: list[str]) -> None:
    before = time.time()
    result = cluster.kubectl("exec", pods["debian"], "--", *argv, input="", timeout=120)
    text = result.stdout + result.stderr
    lines = [line.lstrip("< ").strip() for line in text.splitlines() if line.lstrip("< ").startswith("Date: ")]
    assert lines, text
    stamp = datetime.strptime(lines[0][len("Date: "):], "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)
    _within_now(stamp.timestamp(), before)


def test_in_process_exec_keeps_simulated_time(cluster: KubeHarness, pods: dict[str, str]) -> None:
    """The baseline agent's tools and oracles exec in-process: they see the stored clock."""
    from sregym.twin.userland.context import ExecRun, exec_context

    def run() -> tuple[str, float]:
        pod = cluster.twin.store.peek("Pod", NS, pods["busybox"])
        execution = ExecRun(exec_context(cluster.twin, pod, pods["busybox"]), ["date", "+%s"])
        while not execution.step(10_000):
            pass
        return execution.result().stdout, cluster.twin.clock.now

    out, now = cluster.call(run)
    assert int(out) == int(now)
