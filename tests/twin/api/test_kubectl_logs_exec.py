"""`kubectl logs` and `kubectl exec` against the twin, with the real kubectl binary."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from sregym.twin.api.kubeconfig import context_name

MANIFEST = """
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: default}
data: {app.conf: "port=8080\\nlevel=debug\\n"}
---
apiVersion: v1
kind: Pod
metadata: {name: ticker, namespace: default}
spec:
  nodeName: kind-worker
  containers:
  - name: main
    image: busybox:1.36
    command: ["sh", "-c", "i=0; while true; do i=$((i+1)); echo tick $i; sleep 5; done"]
    env: [{name: GREETING, value: hello}]
    volumeMounts: [{name: cfg, mountPath: /etc/app}]
  - name: side
    image: busybox:1.36
    command: ["sh", "-c", "echo side up; sleep 3600"]
  volumes: [{name: cfg, configMap: {name: app-config}}]
---
apiVersion: v1
kind: Pod
metadata: {name: crasher, namespace: default}
spec:
  nodeName: kind-worker2
  containers:
  - name: app
    image: busybox:1.36
    command: ["sh", "-c", "echo starting; echo fatal: bad config >&2; exit 2"]
---
apiVersion: v1
kind: Pod
metadata: {name: pulling, namespace: default}
spec:
  nodeName: kind-worker3
  containers:
  - {name: app, image: "busybox:no-such-tag"}
"""


def _popen_kubectl(kube, *args: str) -> subprocess.Popen[str]:  # type: ignore[no-untyped-def]
    """A long-running kubectl (`logs -f`) with the harness's kubeconfig, as the agent."""
    env = {**os.environ, "KUBECONFIG": str(kube.kubeconfig), "HOME": str(kube.cache_dir)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    argv = [shutil.which("kubectl") or "/usr/bin/kubectl", "--context", context_name("agent"),
            "--cache-dir", str(kube.cache_dir / "cache"), *args]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@pytest.fixture
def cluster(kube):  # type: ignore[no-untyped-def]
    kube.call(kube.twin.apply, MANIFEST)
    kube.advance(40)
    return kube


def test_logs_tail_container_and_timestamps(cluster) -> None:  # type: ignore[no-untyped-def]
    result = cluster.kubectl("logs", "ticker", "--tail=3")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["tick 6", "tick 7", "tick 8"]
    assert 'Defaulted container "main" out of: main, side' in result.stderr
    assert cluster.ok("logs", "ticker", "-c", "side") == "side up\n"
    stamped = cluster.ok("logs", "ticker", "-c", "main", "--timestamps", "--tail=2").splitlines()
    assert stamped == ["2026-01-05T09:00:33.000000000Z tick 7", "2026-01-05T09:00:38.000000000Z tick 8"]
    # sinceSeconds keeps only the recent lines; limitBytes cuts the body.
    recent = cluster.ok("logs", "ticker", "-c", "main", "--since=14s").splitlines()
    assert recent == ["tick 6", "tick 7", "tick 8"]
    assert cluster.ok("logs", "ticker", "-c", "main", "--limit-bytes=13") == "tick 1\ntick 2"


def test_logs_previous_and_errors(cluster) -> None:  # type: ignore[no-untyped-def]
    assert cluster.ok("logs", "crasher", "--previous") == "starting\nfatal: bad config\n"
    missing = cluster.kubectl("logs", "ticker", "-c", "nope")
    assert missing.returncode == 1
    assert "container nope is not valid for pod ticker" in missing.stderr
    waiting = cluster.kubectl("logs", "pulling")
    assert waiting.returncode == 1
    assert 'container "app" in pod "pulling" is waiting to start' in waiting.stderr
    no_previous = cluster.kubectl("logs", "ticker", "-c", "side", "--previous")
    assert 'previous terminated container "side" in pod "ticker" not found' in no_previous.stderr
    gone = cluster.kubectl("logs", "ghost")
    assert 'pods "ghost" not found' in gone.stderr


def test_logs_follow_streams_until_the_container_stops(cluster) -> None:  # type: ignore[no-untyped-def]
    proc = _popen_kubectl(cluster, "logs", "-f", "ticker", "-c", "main")
    try:
        time.sleep(1.5)
        for _ in range(3):
            cluster.advance(5)
            time.sleep(0.3)
        cluster.call(cluster.twin.delete, "pods", "default", "ticker")
        for _ in range(60):
            cluster.advance(1)
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[:11] == [f"tick {i}" for i in range(1, 12)]


def test_exec_env_file_and_hostname(cluster) -> None:  # type: ignore[no-untyped-def]
    env = cluster.ok("exec", "ticker", "-c", "main", "--", "env").splitlines()
    assert "GREETING=hello" in env and "HOSTNAME=ticker" in env
    assert "KUBERNETES_SERVICE_HOST=10.96.0.1" in env
    assert cluster.ok("exec", "ticker", "-c", "main", "--", "cat", "/etc/app/app.conf") == \
        "port=8080\nlevel=debug\n"
    assert cluster.ok("exec", "ticker", "-c", "main", "--", "sh", "-c", "echo $HOSTNAME") == "ticker\n"
    listing = cluster.ok("exec", "ticker", "-c", "main", "--", "ls", "-la", "/etc/app")
    assert "..data -> ..2026_01_05_09_00_" in listing
    assert cluster.ok("exec", "ticker", "-c", "main", "--", "cat", "/etc/resolv.conf") == (
        "search default.svc.cluster.local svc.cluster.local cluster.local\n"
        "nameserver 10.96.0.10\noptions ndots:5\n")


def test_exec_exit_codes_and_errors(cluster) -> None:  # type: ignore[no-untyped-def]
    failed = cluster.kubectl("exec", "ticker", "-c", "main", "--", "sh", "-c", "echo out; exit 3")
    assert failed.returncode == 3
    assert failed.stdout == "out\n"
    assert "command terminated with exit code 3" in failed.stderr
    not_found = cluster.kubectl("exec", "ticker", "-c", "main", "--", "sh", "-c", "nosuchtool")
    assert not_found.returncode == 127 and "sh: nosuchtool: not found" in not_found.stderr
    missing = cluster.kubectl("exec", "ticker", "-c", "main", "--", "nosuchtool")
    assert missing.returncode == 1
    assert ('OCI runtime exec failed: exec failed: unable to start container process: '
            'exec: "nosuchtool": executable file not found in $PATH') in missing.stderr
    assert missing.stderr.startswith("error: Internal error occurred: Internal error occurred: ")
    crashed = cluster.kubectl("exec", "crasher", "--", "ls")
    assert crashed.returncode == 1
    assert 'unable to upgrade connection: container not found ("app")' in crashed.stderr
    wrong = cluster.kubectl("exec", "ticker", "-c", "nope", "--", "ls")
    assert wrong.returncode == 1 and "nope" in wrong.stderr


def test_exec_with_stdin(cluster) -> None:  # type: ignore[no-untyped-def]
    result = cluster.kubectl("exec", "-i", "ticker", "-c", "main", "--", "sh",
                             input="echo from-stdin\ncat /etc/app/app.conf | wc -l\nexit 5\n")
    assert result.returncode == 5
    assert result.stdout == "from-stdin\n2\n"
    counted = cluster.kubectl("exec", "-i", "ticker", "-c", "main", "--", "wc", "-l", input="a\nb\nc\n")
    assert counted.stdout.strip() == "3"


def test_exec_into_hidden_namespace_is_refused_to_the_agent(kube) -> None:  # type: ignore[no-untyped-def]
    kube.call(kube.twin.apply, """
apiVersion: v1
kind: Namespace
metadata: {name: chaos-mesh}
---
apiVersion: v1
kind: Pod
metadata: {name: controller, namespace: chaos-mesh}
spec:
  nodeName: kind-worker
  containers:
  - {name: c, image: busybox:1.36, command: ["sleep", "3600"]}
""")
    kube.advance(20)
    assert kube.ok("exec", "-n", "chaos-mesh", "controller", "--", "hostname", user="admin") == "controller\n"
    # To the agent the namespace does not exist (kubectl 1.32 names the missing namespace).
    refused = kube.kubectl("exec", "-n", "chaos-mesh", "controller", "--", "hostname")
    assert refused.returncode != 0
    assert refused.stderr == 'Error from server (NotFound): namespaces "chaos-mesh" not found\n'
    assert refused.stdout == ""


def test_exec_interactive_tty_session(cluster) -> None:  # type: ignore[no-untyped-def]
    """`kubectl exec -it POD -- sh` on a real pseudo-terminal: prompt, echo, state, exit code."""
    import pty
    import select

    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "HOME": str(cluster.cache_dir)}
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [shutil.which("kubectl") or "/usr/bin/kubectl", "--context", context_name("agent"),
         "--cache-dir", str(cluster.cache_dir / "cache"), "exec", "-it", "ticker", "-c", "main",
         "--", "sh"], stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    seen = b""

    def read_until(marker: bytes, timeout: float = 15) -> None:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while marker not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    return

    try:
        read_until(b"/ # ")
        os.write(master, b"echo hello $HOSTNAME\r")
        read_until(b"hello ticker\r\n")
        os.write(master, b"cd /etc/app\r")
        read_until(b"/etc/app # ")
        os.write(master, b"exit 7\r")
        proc.wait(timeout=15)
        read_until(b"exit code 7", timeout=2)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    text = seen.decode(errors="replace")
    assert "/ # echo hello $HOSTNAME\r\nhello ticker\r\n/ # " in text
    assert "/etc/app # exit 7" in text
    assert proc.returncode == 7
