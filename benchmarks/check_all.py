"""Wall time of `sregym check --all` on this machine, in total and per problem.

    python benchmarks/check_all.py [--seed 0] [--suite lite] [-j N] [--save F] [--compare F]

Runs the check protocol (noop + recover, gold twice, from one warm start per app and seed) for
every registered problem (or one suite) through `check_many`, the code path of `sregym check`,
with `-j` worker processes (default: one per CPU), and prints each problem's verdict as it
finishes, then the total and the CPU time of the whole process tree, as JSON on the last line.
`--save F` writes each problem's verdicts and gold digest (a hash of the gold run's telemetry
fingerprint and score) to F; `--compare F` reports every problem whose verdicts or digest differ
from such a file, which is how a behaviour-preserving refactor proves it preserved behaviour.
A figure for a report, never a test assertion.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--suite", default=None)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--save", metavar="FILE", help="write verdicts and gold digests as JSON")
    parser.add_argument("--compare", metavar="FILE", help="compare with a file written by --save")
    opts = parser.parse_args()

    from sregym.problems.check import CheckReport, check_many
    from sregym.problems.registry import select

    problems = select(suite=opts.suite)
    start, cpu0 = time.perf_counter(), _cpu_seconds()

    def show(report: CheckReport) -> None:
        failed = "; ".join(f"{s.name}: {s.detail}" for s in report.steps if not s.passed)
        print(f"{'PASS' if report.passed else 'FAIL'} {time.perf_counter() - start:7.2f}s {report.problem_id}"
              + (f"  ({failed})" if failed else ""), flush=True)

    reports = check_many(problems, opts.seed, jobs=opts.jobs, on_report=show)
    summary = {"problems": len(problems), "passed": sum(r.passed for r in reports), "jobs": opts.jobs,
               "cpus": os.cpu_count(), "wall_s": round(time.perf_counter() - start, 2),
               "cpu_s": round(_cpu_seconds() - cpu0, 2)}
    outcomes = {r.problem_id: {"steps": {s.name: s.passed for s in r.steps}, "gold_digest": r.gold_digest}
                for r in reports}
    if opts.save:
        with open(opts.save, "w") as out:
            json.dump(outcomes, out, indent=1, sort_keys=True)
    differ = _differences(outcomes, opts.compare) if opts.compare else []
    for line in differ:
        print(f"DIFFERS {line}")
    if opts.compare:
        summary["differ"] = len(differ)
    print(json.dumps(summary))
    return 0 if summary["passed"] == len(problems) and not differ else 1


def _differences(outcomes: dict, path: str) -> list[str]:
    with open(path) as f:
        before = json.load(f)
    lines = []
    for pid in sorted(before.keys() | outcomes.keys()):
        was, now = before.get(pid), outcomes.get(pid)
        if was != now:
            lines.append(f"{pid}: {was} -> {now}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
