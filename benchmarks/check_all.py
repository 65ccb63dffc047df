"""Wall time of `sregym check --all` on this machine, in total and per problem.

    python benchmarks/check_all.py [--seed 0] [--suite lite] [-j N]

Runs the check protocol (noop, gold twice, recover) for every registered problem (or one
suite) with `-j` worker processes, and prints each problem's wall time and verdict, then the
total, as JSON on the last line. A figure for a report, never a test assertion.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor


def _check(args: tuple[str, int]) -> tuple[str, bool, float, str]:
    from sregym.problems.check import check_problem
    from sregym.problems.registry import get_problem

    problem_id, seed = args
    start = time.perf_counter()
    try:
        report = check_problem(get_problem(problem_id), seed)
        failed = "; ".join(f"{s.name}: {s.detail}" for s in report.steps if not s.passed)
        return problem_id, report.passed, time.perf_counter() - start, failed
    except Exception as exc:  # a crashing problem is a failed one, with the reason
        return problem_id, False, time.perf_counter() - start, f"{type(exc).__name__}: {exc}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--suite", default=None)
    parser.add_argument("-j", "--jobs", type=int, default=min(2, os.cpu_count() or 1))
    opts = parser.parse_args()

    from sregym.problems.registry import select

    ids = [p.id for p in select(suite=opts.suite)]
    start = time.perf_counter()
    results = []
    with ProcessPoolExecutor(max_workers=opts.jobs) as pool:
        for problem_id, passed, wall, detail in pool.map(_check, [(i, opts.seed) for i in ids]):
            results.append({"id": problem_id, "passed": passed, "wall_s": round(wall, 2)})
            print(f"{'PASS' if passed else 'FAIL'} {wall:7.2f}s {problem_id}" + (f"  ({detail})" if detail else ""),
                  flush=True)
    total = time.perf_counter() - start
    summary = {"problems": len(ids), "passed": sum(r["passed"] for r in results), "jobs": opts.jobs,
               "cpus": os.cpu_count(), "wall_s": round(total, 2), "per_problem": results}
    print(json.dumps(summary))
    return 0 if summary["passed"] == len(ids) else 1


if __name__ == "__main__":
    sys.exit(main())
