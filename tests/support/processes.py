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
