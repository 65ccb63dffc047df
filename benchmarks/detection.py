"""Detection accuracy and false-positive rate of built-in agents on the `detection` suite.

    python benchmarks/detection.py [--agents noop,baseline] [--seeds 1] [--noise low] [-j 1]
                                   [--problems ID,ID,...] [--out DIR]

Each agent is one real `sregym run --suite detection --phases detection` subprocess (or
`--problems` for a subset); the numbers are read back from its `summary.json`, which computes
them from the attempts' detection verdicts. Prints one row per agent (accuracy, false-positive
rate over the no-incident controls, false-negative rate over the incidents) and one per
(agent, app), then each attempt's answer.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def run_agent(agent: str, *, seeds: int, noise: str, jobs: int, out: Path,
              problems: list[str] | None = None) -> Path:
    """One `sregym run` of `agent` with the detection phase only; returns its results directory."""
    selection = ["--suite", "detection"] if not problems else [x for pid in problems for x in ("--problem", pid)]
    cmd = [sys.executable, "-m", "sregym.cli.main", "run", *selection, "--agent", agent, "--phases", "detection",
           "--seeds", str(seeds), "--noise", noise, "-j", str(jobs), "--out", str(out), "--no-progress"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def read(out: Path) -> dict[str, Any]:
    """The run's detection rates (overall and by app) and each attempt's answer."""
    summary = json.loads((out / "summary.json").read_text())
    answers = []
    for line in (out / "results.jsonl").read_text().splitlines():
        result = json.loads(line)
        block = result.get("detection") or {}
        answers.append({"problem_id": result["problem_id"], "seed": result["seed"],
                        "incident": block.get("incident"), "expected_incident": block.get("expected_incident"),
                        "correct": block.get("correct")})
    return {"overall": summary.get("detection"), "by_app": summary.get("detection_by_app") or {},
            "answers": sorted(answers, key=lambda a: (a["problem_id"], a["seed"]))}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def table(measured: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'agent':<10} {'group':<20} {'n':>3} {'accuracy':>9} {'FP rate':>8} {'FN rate':>8}"]
    for agent, data in measured.items():
        groups = [("overall", data["overall"]), *sorted(data["by_app"].items())]
        for group, rates in groups:
            if rates is None:
                continue
            lines.append(f"{agent:<10} {group:<20} {rates['attempts']:>3} {_pct(rates['accuracy']):>9} "
                         f"{_pct(rates['false_positive_rate']):>8} {_pct(rates['false_negative_rate']):>8}")
    lines.append("")
    for agent, data in measured.items():
        for a in data["answers"]:
            said = {True: "incident", False: "no incident", None: "no answer"}[a["incident"]]
            truth = "incident" if a["expected_incident"] else "control"
            lines.append(f"{agent:<10} {a['problem_id']:<52} seed {a['seed']}: {said:<11} ({truth}) "
                         f"{'right' if a['correct'] else 'WRONG'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="noop,baseline")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--noise", default="low")
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--problems", default="", help="comma-separated ids instead of the whole suite")
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here (default: a temp dir)")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = parser.parse_args(argv)
    problems = [p for p in args.problems.split(",") if p] or None
    with tempfile.TemporaryDirectory() as tmp:
        base = args.out or Path(tmp)
        measured = {agent: read(run_agent(agent, seeds=args.seeds, noise=args.noise, jobs=args.jobs,
                                          out=base / agent, problems=problems))
                    for agent in args.agents.split(",") if agent}
    print(json.dumps(measured, indent=2) if args.json else table(measured))
    return 0


if __name__ == "__main__":
    sys.exit(main())
