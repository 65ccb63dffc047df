"""`--executor ray --ray-address ray://host:port`: a run driven through Ray Client. The test starts
its own Ray head with a client server (`ray start --head --ray-client-server-port`, 2 CPUs, a
temporary directory and its own auth token) in a session of its own, runs one cheap attempt
through it from a separate `sregym run` process, checks that the line equals a `-j 1` run's and
that the attempt went through the client server, then stops exactly that head (its process group).

Ray 2.5x enables token authentication by default; the head's client server starts one server
process per client, which fails to reach the GCS unless `RAY_AUTH_MODE=token` is in the head's
own environment (not only the driver's), so both get it here, with the token in a file of ours."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray")
pytest.importorskip("grpc")  # ray[client]

# With the other Ray tests in one xdist worker, so two Rays never start on the machine at once.
pytestmark = pytest.mark.xdist_group("ray")

PROBLEM = "demo-shop/bad-image-tag-v1"
SREGYM = [sys.executable, "-m", "sregym.cli.main"]
RAY = str(Path(sys.executable).with_name("ray"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Head:
    """A Ray head started by `ray start` in its own session; `stop` ends that session's processes."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = _free_port()
        token = workdir / "auth_token"
        token.write_text(secrets.token_hex(32))
        self.env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token),
                    "RAY_USAGE_STATS_ENABLED": "0",
                    # The client server waits 30 s for the server process it starts per client; a
                    # CI machine under full load needs longer (the driver also retries, see
                    # `ray_executor.CLIENT_INIT_TRIES`).
                    "RAY_CLIENT_SERVER_CHECK_CHANNEL_TIMEOUT_S": "180"}
        self.env.pop("RAY_ADDRESS", None)
        started = subprocess.Popen(
            [RAY, "start", "--head", "--port", "0", "--ray-client-server-port", str(self.port), "--num-cpus", "2",
             "--temp-dir", str(workdir / "ray"), "--include-dashboard", "false", "--disable-usage-stats"],
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.group = started.pid  # the daemons `ray start` leaves behind keep its process group
        output, _ = started.communicate(timeout=180)
        if started.returncode != 0:
            self.stop()
            raise RuntimeError(output)

    @property
    def address(self) -> str:
        return f"ray://127.0.0.1:{self.port}"

    def client_server_log(self) -> str:
        return "".join(p.read_text(errors="replace")
                       for p in (self.workdir / "ray").glob("session_*/logs/ray_client_server*.err"))

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.group, sig)
            except ProcessLookupError:
                return
            time.sleep(3)


@pytest.fixture(scope="module")
def head() -> Iterator[Head]:
    # A short directory of its own: Ray's socket paths under it must fit AF_UNIX's 107 bytes, which
    # pytest's per-worker temporary directories do not leave room for.
    workdir = Path(tempfile.mkdtemp(prefix="rayc-", dir="/tmp"))
    server = Head(workdir)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _line(out: Path) -> dict:
    [line] = [json.loads(raw) for raw in (out / "results.jsonl").read_text().splitlines() if raw.strip()]
    line.pop("wall_seconds")
    return line


def test_a_run_through_ray_client_equals_a_one_job_local_run(head: Head, tmp_path: Path) -> None:
    remote = subprocess.run([*SREGYM, "run", "-p", PROBLEM, "--agent", "gold", "--executor", "ray",
                             "--ray-address", head.address, "--out", str(tmp_path / "client"), "--progress", "none"],
                            env=head.env, capture_output=True, text=True, timeout=900)
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert "New data connection" in head.client_server_log()  # it went through the client server
    local = subprocess.run([*SREGYM, "run", "-p", PROBLEM, "--agent", "gold", "-j", "1",
                            "--out", str(tmp_path / "local"), "--progress", "none"],
                           capture_output=True, text=True, timeout=900)
    assert local.returncode == 0, local.stderr[-3000:]
    over_the_client = _line(tmp_path / "client")
    assert over_the_client["passed"] is True
    assert over_the_client == _line(tmp_path / "local")
    invocation = json.loads((tmp_path / "client" / "run.json").read_text())["invocation"]
    assert invocation["executor"] == "ray"


def test_a_transient_client_init_failure_is_retried_and_a_setup_one_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """The retry of `ray_session`'s connect, with a stand-in `ray` module: a client server that
    failed to start this client's server process once is tried again; a refused token is not."""
    from sregym.runner import ray_executor

    monkeypatch.setattr(ray_executor, "CLIENT_INIT_BACKOFF_S", (0.0,))

    class FlakyRay:
        def __init__(self, errors: list[BaseException]) -> None:
            self.errors = errors
            self.calls = 0

        def init(self, **options: object) -> None:
            self.calls += 1
            if self.errors:
                raise self.errors.pop(0)

        def shutdown(self) -> None:
            pass

    flaky = FlakyRay([ConnectionAbortedError("Initialization failure from server:\n")])
    ray_executor._init_keeping_sigterm(flaky, address="ray://127.0.0.1:1")
    assert flaky.calls == 2
    refused = FlakyRay([ConnectionError("authentication failed")])
    with pytest.raises(ray_executor.SetupError, match=re.escape("could not connect to the Ray cluster at ray://127.0.0.1:1")):
        ray_executor._init_keeping_sigterm(refused, address="ray://127.0.0.1:1")
    assert refused.calls == 1
    always = FlakyRay([ConnectionAbortedError("Initialization failure from server:\n")] * 5)
    with pytest.raises(ray_executor.SetupError):
        ray_executor._init_keeping_sigterm(always, address="ray://127.0.0.1:1")
    assert always.calls == ray_executor.CLIENT_INIT_TRIES


def test_a_ray_client_address_without_the_token_is_a_setup_error(head: Head, tmp_path: Path) -> None:
    """The driver without the cluster's token: one line naming the address, exit code 3."""
    env = {**head.env, "RAY_AUTH_TOKEN_PATH": str(tmp_path / "no-such-token"), "HOME": str(tmp_path)}
    done = subprocess.run([*SREGYM, "run", "-p", PROBLEM, "--agent", "gold", "--executor", "ray",
                           "--ray-address", head.address, "--out", str(tmp_path / "out"), "--progress", "none"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stderr[-3000:]
    assert f"could not connect to the Ray cluster at {head.address}" in done.stderr
