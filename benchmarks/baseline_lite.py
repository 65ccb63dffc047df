"""The `baseline` agent on the `lite` suite: per-problem table and end-to-end rates per noise level.

    python benchmarks/baseline_lite.py [--seeds 3] [--noise none,high] [-j 2] [--out DIR]
    python benchmarks/baseline_lite.py --from none=DIR --from high=DIR   # tabulate earlier runs

Each noise level is one real `sregym run --suite lite --agent baseline` subprocess; the table
counts, per problem, the seeds whose diagnosis, mitigation and end-to-end attempt passed. The
targets of the agent (issue 8) are printed next to the measured overall rates.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

TARGETS = {"none": 0.60, "high": 0.45}


def run(noise: str, seeds: int, jobs: int, out: Path) -> Path:
    cmd = [sys.executable, "-m", "sregym.cli.main", "run", "--suite", "lite", "--agent", "baseline",
           "--seeds", str(seeds), "--noise", noise, "-j", str(jobs), "--out", str(out), "--no-progress"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def tabulate(results: dict[str, Path]) -> dict[str, float]:
    """Print the per-problem table (passes/attempts per noise level); return the overall rates."""
    rows: dict[str, dict[str, list[int]]] = defaultdict(dict)
    rates: dict[str, float] = {}
    for noise, out in results.items():
        passed = total = 0
        for line in (out / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            diag = bool((r.get("diagnosis") or {}).get("passed"))
            mit = bool((r.get("mitigation") or {}).get("passed"))
            cell = rows[r["problem_id"]].setdefault(noise, [0, 0, 0, 0])
            cell[0] += diag
            cell[1] += mit
            cell[2] += bool(r.get("passed"))
            cell[3] += 1
            passed += bool(r.get("passed"))
            total += 1
        rates[noise] = passed / total if total else 0.0
    width = max(len(p) for p in rows) if rows else 10
    header = f"{'problem'.ljust(width)}  " + "  ".join(f"{n + ' diag/mit/e2e':>22}" for n in results)
    print(header)
    print("-" * len(header))
    for problem in sorted(rows):
        cells = []
        for noise in results:
            d, m, e, n = rows[problem].get(noise, [0, 0, 0, 0])
            cells.append(f"{f'{d}/{n} {m}/{n} {e}/{n}':>22}")
        print(f"{problem.ljust(width)}  " + "  ".join(cells))
    print()
    for noise, rate in rates.items():
        target = TARGETS.get(noise)
        verdict = "" if target is None else f"  (target >= {target:.0%}: {'met' if rate >= target else 'NOT met'})"
        print(f"noise {noise}: end-to-end {rate:.1%}{verdict}")
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--noise", default="none,high", help="comma-separated noise levels")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--out", default=None, help="parent directory for the runs (default: temporary)")
    parser.add_argument("--from", dest="existing", action="append", default=[],
                        help="NOISE=DIR: tabulate an earlier run instead of running it")
    args = parser.parse_args()

    results: dict[str, Path] = {}
    for item in args.existing:
        noise, _, directory = item.partition("=")
        results[noise] = Path(directory)
    if not results:
        parent = Path(args.out or tempfile.mkdtemp(prefix="sregym-baseline-lite-"))
        for noise in [n.strip() for n in args.noise.split(",") if n.strip()]:
            results[noise] = run(noise, args.seeds, args.jobs, parent / f"noise-{noise}")
    tabulate(results)


if __name__ == "__main__":
    main()
