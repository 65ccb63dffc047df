"""Noise sensitivity per agent: each agent's scores on a suite at noise `none` and `high`, and the drop.

    python benchmarks/noise_sensitivity.py [--agent baseline] [--suite lite] [--seeds 1] [-j 2] [--out DIR]
    python benchmarks/noise_sensitivity.py --from baseline:none=DIR --from baseline:high=DIR

Noise starts with the healthy baseline (unrelated warnings, restarts and error lines are in the
agent's first reads), so an agent that takes "something is red" for the answer loses points at
`high`. Each (agent, noise) pair is one real `sregym run` subprocess; the table gives the rates of
passed diagnoses, mitigations and end-to-end attempts, and the end-to-end drop from none to high.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

LEVELS = ("none", "high")


def run(agent: str, noise: str, suite: str, seeds: int, jobs: int, out: Path) -> Path:
    cmd = [sys.executable, "-m", "sregym.cli.main", "run", "--suite", suite, "--agent", agent,
           "--seeds", str(seeds), "--noise", noise, "-j", str(jobs), "--out", str(out), "--no-progress"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def rates(out: Path) -> tuple[float, float, float, int]:
    """(diagnosis, mitigation, end-to-end) pass rates and the number of attempts of one run."""
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    if not rows:
        return 0.0, 0.0, 0.0, 0
    n = len(rows)
    diag = sum(bool((r.get("diagnosis") or {}).get("passed")) for r in rows) / n
    mit = sum(bool((r.get("mitigation") or {}).get("passed")) for r in rows) / n
    e2e = sum(bool(r.get("passed")) for r in rows) / n
    return diag, mit, e2e, n


def report(results: dict[tuple[str, str], Path]) -> None:
    agents = sorted({agent for agent, _ in results})
    print(f"{'agent':<12} {'noise':<6} {'attempts':>8} {'diagnosis':>10} {'mitigation':>11} {'end-to-end':>11}")
    for agent in agents:
        e2e: dict[str, float] = {}
        for noise in LEVELS:
            if (agent, noise) not in results:
                continue
            d, m, e, n = rates(results[(agent, noise)])
            e2e[noise] = e
            print(f"{agent:<12} {noise:<6} {n:>8} {d:>10.1%} {m:>11.1%} {e:>11.1%}")
        if len(e2e) == len(LEVELS):
            drop = e2e["none"] - e2e["high"]
            print(f"{agent:<12} sensitivity (end-to-end none - high): {drop * 100:+.1f} points")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", action="append", default=[], help="agent name (repeatable; default baseline)")
    parser.add_argument("--suite", default="lite")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--out", default=None, help="parent directory for the runs (default: temporary)")
    parser.add_argument("--from", dest="existing", action="append", default=[],
                        help="AGENT:NOISE=DIR: report an earlier run instead of running it")
    args = parser.parse_args()

    results: dict[tuple[str, str], Path] = {}
    for item in args.existing:
        key, _, directory = item.partition("=")
        agent, _, noise = key.partition(":")
        results[(agent, noise)] = Path(directory)
    if not results:
        parent = Path(args.out or tempfile.mkdtemp(prefix="sregym-noise-sensitivity-"))
        for agent in args.agent or ["baseline"]:
            for noise in LEVELS:
                results[(agent, noise)] = run(agent, noise, args.suite, args.seeds, args.jobs,
                                              parent / f"{agent}-noise-{noise}")
    report(results)


if __name__ == "__main__":
    main()
