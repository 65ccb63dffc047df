"""Memory bombs run through real `kubectl exec` against a twin served in its own process.

Each bomb must end the way a real container ends it (the OOM killer's exit 137, the real tool's
error) or at the twin's budget (exit 137, as for a command still running when it runs out), the
server must answer the next request, and its resident memory must stay bounded: the twin keeps
every shell value in its own memory, so before the process memory was accounted an agent's
`x=$x$x` loop grew until the server died. The server process is given an address-space limit so
that a regression fails the test instead of exhausting the machine.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sregym.twin.api.kubeconfig import context_name, write_kubeconfig
from support.pods import BOX_POD, LIMITED_POD
from support.processes import memory_mb, start_served, stop_served

KUBECTL = "/usr/bin/kubectl"
# The server's address space: far above what a healthy twin needs, far below what a bomb takes.
SERVER_ADDRESS_SPACE = 3 << 30
# Each exec may hold its memory cap (64 MiB), its output cap (16 MiB) and transient copies of
# them; after all the bombs the server's peak must stay well under what one unbounded bomb takes.
MAX_PEAK_GROWTH_MB = 512
# What stays resident after the bombs: freed memory the allocator keeps (arenas, a raised mmap
# threshold; no Python objects stay, as tracemalloc shows), not values. Whether the allocator has
# handed freed memory back when we look is a matter of timing, so the bound is on what is resident
# above the server's start, after the first bombs and again after ten more: ten more bombs that
# each leaked what they held would add 640 MiB on top.
MAX_RETAINED_GROWTH_MB = 256
# glibc raises its mmap threshold each time a large block is freed, so later large values come from
# the heap and what they leave behind stays resident or not depending on what else was allocated
# meanwhile: under a loaded CI the retained figure after ten more bombs read 265 MiB once against
# 196 on an idle run of the same code. The server keeps the default threshold fixed (setting it
# turns the adjustment off), so freed large values go back to the system and the figure measures
# what the bombs hold, not the allocator's history (148 MiB on the idle run).
SERVER_ENV = {"MALLOC_MMAP_THRESHOLD_": str(128 << 10)}

MANIFEST = BOX_POD + "---" + LIMITED_POD


@dataclass
class Served:
    process: subprocess.Popen[str]
    kubeconfig: Path
    home: Path
    start_rss: float = 0.0  # MiB, once serving

    def kubectl(self, *args: str, timeout: float = 120,
                input: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": str(self.home)}
        env.pop("KUBERNETES_SERVICE_HOST", None)
        return subprocess.run([KUBECTL, "--context", context_name("agent"), "--cache-dir",
                               str(self.home / "cache"), *args], capture_output=True, text=True,
                              env=env, timeout=timeout, check=False, input=input)

    def exec(self, script: str, pod: str = "box") -> subprocess.CompletedProcess[str]:
        return self.kubectl("exec", pod, "--", "sh", "-c", script)

    def memory_mb(self) -> tuple[float, float]:
        """(current, peak) resident memory of the server process, in MiB."""
        return memory_mb(self.process.pid)

    def alive(self) -> bool:
        answer = self.kubectl("get", "pod", "box", "-o", "jsonpath={.status.phase}", timeout=60)
        return self.process.poll() is None and answer.returncode == 0 and answer.stdout == "Running"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("bombs")
    process, info = start_served(__file__, str(home), "exec", env=SERVER_ENV)
    kubeconfig = write_kubeconfig(home / "kubeconfig", info["url"], info["tokens"],
                                  ca_pem=info["ca_pem"].encode())
    served = Served(process, kubeconfig, home)
    assert served.alive()
    served.start_rss = served.memory_mb()[0]
    try:
        yield served
    finally:
        stop_served(process)

def serve() -> None:
    """The server process: a twin with two running busybox pods, one JSON line (URL, tokens,
    CA), then serve until stdin closes."""
    from sregym.twin import Twin
    from sregym.twin.api.kubeconfig import make_tokens
    from sregym.twin.api.serve import TwinServer

    resource.setrlimit(resource.RLIMIT_AS, (SERVER_ADDRESS_SPACE, SERVER_ADDRESS_SPACE))
    twin = Twin(seed=11)
    twin.apply(MANIFEST)
    twin.advance(30)
    server = TwinServer(twin, tokens=make_tokens(), port=0, speed=0, shutdown_grace=0.2).start_in_thread()
    assert server.tls is not None
    print(json.dumps({"url": server.url, "tokens": server.tokens,
                      "ca_pem": server.tls.ca_pem.decode()}), flush=True)
    sys.stdin.read()
    server.stop()


KILLED = "command terminated with exit code 137"
# (script, exit code, what stderr holds): every bomb ends promptly with what a client can read.
BOMBS = [
    # A doubling string: the OOM killer at the container's memory (here the server's cap).
    ("x=a; while true; do x=$x$x; done", 137, KILLED),
    # The same through command substitution and a pipe.
    ('x=a; while :; do x=$(echo "$x$x" | cat); done', 137, KILLED),
    # Many distinct values, none large: the total is what counts.
    ('x=aaaaaaaaaaaaaaaa; while :; do x=$x$x; [ ${#x} -gt 1000000 ] && break; done; i=0; '
     'while :; do eval "v$i=\\$x\\$i"; i=$((i+1)); done', 137, KILLED),
    # Splitting or parsing a large value: a string (or token) per piece, not just the text.
    ('x="ab "; while [ ${#x} -lt 20000000 ]; do x=$x$x; done; for w in $x; do :; done', 137, KILLED),
    ('x=";"; while [ ${#x} -lt 20000000 ]; do x=$x$x; done; eval "$x"', 137, KILLED),
    # printf pads in memory.
    ("printf '%*s' 999999999", 137, KILLED),
    ("x=$(printf '%*s' 999999999); echo ${#x}", 137, KILLED),
    # An endless producer into a pipe or a substitution: the twin's step budget ends it.
    ("yes | head -c 10000000000", 137, KILLED),
    ("x=$(yes); echo done", 137, KILLED),
    # Output beyond the exec output cap (16 MiB): ended there like at the step budget.
    ("a=$(printf '%*s' 4000000); while :; do echo \"$a\"; done", 137, KILLED),
    # A file doubling itself: the writable layer fills up (ENOSPC), then the work budget ends it.
    ("echo aaaaaaaaaaaaaaaaaaaaaaaa > /tmp/f; while :; do cat /tmp/f >> /tmp/f; done", 137,
     "write error: No space left on device"),
    # 64-bit shell arithmetic: no gigabyte integers.
    ("echo $((1<<9999999999)) $((4611686018427387904*4))", 0, ""),
    # Not in this userland / not in ash: the real tools' answers.
    # An endless device: to the client until the output cap; into a substitution, the OOM killer.
    ("cat /dev/zero", 137, KILLED),
    ("x=$(cat /dev/zero); echo ${#x}", 137, KILLED),
    ("head -c 10000000000 /dev/zero", 137, KILLED),
    ("seq 1 100000000", 127, "seq: not found"),
    ("echo {1..99999999}", 0, ""),
]


@pytest.mark.parametrize(("script", "code", "stderr"), BOMBS, ids=[b[0][:40] for b in BOMBS])
def test_memory_bomb_is_stopped_and_the_server_survives(served: Served, script: str, code: int,
                                                        stderr: str) -> None:
    rss_before, _ = served.memory_mb()
    result = served.exec(script)
    assert result.returncode == code, result.stderr[-2000:]
    assert stderr in result.stderr
    assert served.alive()
    rss_after, _peak = served.memory_mb()
    assert rss_after - rss_before < MAX_RETAINED_GROWTH_MB


def test_output_is_capped_and_normal_output_intact(served: Served) -> None:
    big = served.exec("a=$(printf '%*s' 4000000); while :; do echo \"$a\"; done")
    assert big.returncode == 137
    assert len(big.stdout) == 16 << 20
    assert served.exec("echo $((1<<64)) $((9223372036854775807+1)) $((7*6))").stdout == \
        "1 -9223372036854775808 42\n"
    assert served.exec("printf '%s|%*s|%-*s|%.*f\\n' a 4 b 3 c 2 3.14159").stdout == "a|   b|c  |3.14\n"
    assert served.exec("echo {1..3}").stdout == "{1..3}\n"
    assert served.exec("head -c 5 /dev/zero | wc -c").stdout == "5\n"


def test_a_huge_script_on_stdin(served: Served) -> None:
    """`kubectl exec -i POD -- sh < script`: 16 MiB of script is more than parsing it may take."""
    result = served.kubectl("exec", "-i", "box", "--", "sh", input="a;" * (8 << 20))
    assert result.returncode == 137 and KILLED in result.stderr
    assert served.alive()


def test_oom_at_the_container_memory_limit(served: Served) -> None:
    """An 8 MiB container kills a 16 MiB string that the 64 MiB server cap would allow, and keeps
    running: the exec'd process is the one the OOM killer chose."""
    grown = "x=aaaaaaaaaaaaaaaa; while [ ${#x} -lt 16000000 ]; do x=$x$x; done; echo ${#x}"
    assert served.exec(grown).stdout == "16777216\n"
    small = served.exec(grown, pod="small")
    assert small.returncode == 137 and KILLED in small.stderr
    assert served.exec("echo still here", pod="small").stdout == "still here\n"
    restarts = served.kubectl("get", "pod", "small", "-o",
                              "jsonpath={.status.containerStatuses[0].restartCount}")
    assert restarts.stdout == "0"


def test_endless_loops_end_at_the_budget(served: Served) -> None:
    """No growth, no end: like a client giving up on a real exec, the twin ends it at its step or
    time budget with 137 (`sleep infinity` reaches the time budget at once)."""
    for script in ("while true; do :; done", "yes > /dev/null", "sleep infinity"):
        result = served.exec(script)
        assert result.returncode == 137 and KILLED in result.stderr, script
    assert served.alive()


def test_the_server_answers_during_a_long_exec(served: Served) -> None:
    """The exec runs in slices on the server's loop: a `kubectl get` is answered while a busy
    loop is still running towards its step budget."""
    env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "HOME": str(served.home)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    busy = subprocess.Popen([KUBECTL, "--context", context_name("agent"), "--cache-dir",
                             str(served.home / "cache"), "exec", "box", "--", "sh", "-c",
                             "while :; do a=$(echo $(echo $(echo x))); done"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # Give the exec time to start (it runs for ~10 s of CPU), then three requests in a row:
        # a server that ran the exec in one go would answer the first only once the exec ended,
        # and kubectl exec would have exited by the time the third is answered.
        time.sleep(2)
        assert all(served.alive() for _ in range(3))
        answered_while_running = busy.poll() is None
        _out, err = busy.communicate(timeout=600)
    finally:
        if busy.poll() is None:
            busy.kill()
    assert answered_while_running
    assert busy.returncode == 137 and KILLED in err


def test_server_memory_stays_bounded(served: Served) -> None:
    """Runs last in this module: the server's peak and retained memory after every bomb above
    (once the 64 MiB file the doubling bomb left in the container's writable layer is removed)."""
    assert served.exec("rm -f /tmp/f").returncode == 0
    rss, peak = served.memory_mb()
    # The same bombs again: nothing they held may stay behind.
    for script, _code, _stderr in BOMBS[:5] * 2:
        assert served.exec(script).returncode == 137
    again, peak = served.memory_mb()
    print(f"\nserver RSS {served.start_rss:.0f} -> {rss:.0f} MiB, {again:.0f} MiB after ten more "
          f"bombs (peak {peak:.0f})")
    assert peak - served.start_rss < MAX_PEAK_GROWTH_MB
    assert rss - served.start_rss < MAX_RETAINED_GROWTH_MB
    assert again - served.start_rss < MAX_RETAINED_GROWTH_MB
    assert served.alive()


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    serve()
