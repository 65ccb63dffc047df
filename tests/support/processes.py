"""Stopping the servers a test started as subprocesses (in their own session), politely first."""

from __future__ import annotations

import os
import signal
import subprocess


def stop_group(proc: subprocess.Popen, timeout: float = 30) -> None:
    """SIGTERM the process group of `proc` (started with `start_new_session=True`), SIGKILL it if
    it is still there after `timeout` seconds, and reap it. Safe to call when it already ended."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def read_lines_until(proc: subprocess.Popen, prefix: str, timeout: float = 120) -> list[str]:
    """The lines `proc` prints (text mode, stdout piped) up to and including the first that
    starts with `prefix` — or all of them if it exits or `timeout` passes first."""
    import time

    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line:
            break
        lines.append(line)
        if line.startswith(prefix):
            break
    return lines


def memory_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of process `pid`, in MiB (`VmRSS`, `VmHWM`)."""
    values: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def start_served(script: str, cwd: str, what: str,
                 env: dict[str, str] | None = None) -> tuple[subprocess.Popen, dict]:
    """Start `python script --serve` (a test module that serves a twin in its own process, so
    the test can watch its memory), and read the one JSON line it prints when serving. The
    server stops when its stdin closes (`stop_served`). `env` adds to the inherited environment."""
    import json
    import sys

    import pytest

    # The module imports `support` like the tests do: give the server the tests' import root too.
    tests_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join(p for p in (tests_root, os.environ.get("PYTHONPATH", "")) if p)
    process = subprocess.Popen([sys.executable, script, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": path, **(env or {})})
    assert process.stdout is not None and process.stdin is not None
    line = process.stdout.readline()
    if not line:
        process.kill()
        pytest.fail(f"the {what} server did not start")
    return process, json.loads(line)


def stop_served(process: subprocess.Popen) -> None:
    """Close the server's stdin (it stops at EOF); kill it if it does not within 30 s."""
    assert process.stdin is not None
    process.stdin.close()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
