"""Benchmark-runner cost: wall time and peak memory of `sregym run --suite lite --agent gold -j 2`.

    python benchmarks/run_lite.py [--suite lite] [--agent gold] [-j 2] [--seeds 1] [--out DIR]

The run is a real `sregym run` subprocess (spawned workers included). Peak memory is measured
two ways: the sum of the resident sets of the whole process tree, sampled every 50 ms from
/proc (what the machine must hold at once), and the largest single process' high-water mark
(`ru_maxrss` of the waited-for children). The printed JSON also carries the run's end-to-end
rate, so a fast but broken run is visible.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def _tree_rss_bytes(root: int) -> int:
    total, stack = 0, [root]
    page = os.sysconf("SC_PAGE_SIZE")
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm") as fh:
                total += int(fh.read().split()[1]) * page
        except OSError:
            continue
        stack.extend(_children(pid))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="lite")
    parser.add_argument("--agent", default="gold")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--out", default=None, help="results directory (default: a temporary one)")
    args = parser.parse_args()

    out = Path(args.out or tempfile.mkdtemp(prefix="sregym-run-lite-"))
    cmd = [sys.executable, "-m", "sregym.cli.main", "run", "--suite", args.suite, "--agent", args.agent,
           "-j", str(args.jobs), "--seeds", str(args.seeds), "--out", str(out), "--no-progress"]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss_bytes(proc.pid))
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - started
    stop.set()
    sampler.join()
    max_child_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    summary_path = out / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    overall = summary.get("overall", {})
    report = {
        "command": " ".join(cmd[2:]), "exit_code": proc.returncode, "wall_seconds": round(wall, 2),
        "attempts": overall.get("attempts"), "environment_failures": overall.get("environment_failures"),
        "end_to_end": overall.get("end_to_end"),
        "seconds_per_attempt": round(wall / overall["attempts"], 2) if overall.get("attempts") else None,
        "peak_tree_rss_mib": round(peak / 2**20, 1), "peak_single_process_rss_mib": round(max_child_kib / 1024, 1),
        "out": str(out),
    }
    print(json.dumps(report, indent=2))
    if proc.returncode != 0:
        print(stdout[-2000:], stderr[-4000:], sep="\n", file=sys.stderr)
        sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
