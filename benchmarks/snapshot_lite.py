"""The `baseline` agent live vs offline (over exported snapshots) on the `lite` suite.

    python benchmarks/snapshot_lite.py [--seeds 1] [--noise none] [--json OUT] [PROBLEM ...]

Per problem and seed: the live diagnosis-only root-cause score (a `Conductor`, stepped clock), the
offline score (export with window = the problem's `settle_s`, `run_baseline` over the replay,
scored by `snapshot.score`), whether the offline output validated, and the wall times of the live
attempt, the export and the offline run. Then the means and the issue's criterion
(|offline mean - live mean| <= 0.10). See `sregym.snapshot.replay_compare` for why the two sides
see the same moment of the incident.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from sregym.problems import select
    from sregym.snapshot.replay_compare import compare

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="*", help="problem ids (default: the lite suite)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1 per problem")
    parser.add_argument("--noise", default="none", choices=("none", "low", "high"))
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    ids = args.problems or [p.id for p in select(suite="lite")]
    if not ids:
        parser.error("no problems: name problem ids, or register the lite suite's problems")
    rows = []
    print(f"{'problem':<56} {'seed':>4} {'live':>5} {'offline':>7} {'valid':>5} {'live s':>6} {'export s':>8} "
          f"{'offline s':>9}")
    with tempfile.TemporaryDirectory(prefix="sregym-snapshot-lite-") as tmp:
        for seed in range(args.seeds):
            for pid in ids:
                work = Path(tmp) / f"{pid.replace('/', '__')}-{seed}"
                work.mkdir()
                c = compare(pid, work, seed=seed, noise=args.noise)
                rows.append({"seed": seed, **c.to_json()})
                print(f"{pid:<56} {seed:>4} {c.live:>5.2f} {c.offline:>7.2f} {'yes' if c.valid else 'NO':>5} "
                      f"{c.live_wall_s:>6.1f} {c.export_wall_s:>8.1f} {c.offline_wall_s:>9.1f}"
                      + (f"  ({c.reason})" if c.offline < c.live and c.reason else ""), flush=True)
    live = sum(r["live"] for r in rows) / len(rows)
    offline = sum(r["offline"] for r in rows) / len(rows)
    print(f"\nmean live {live:.3f}  mean offline {offline:.3f}  difference {offline - live:+.3f}  "
          f"({'within' if abs(offline - live) <= 0.10 else 'NOT within'} 10 points); "
          f"outputs valid {sum(r['valid'] for r in rows)}/{len(rows)}")
    print(f"wall: live {sum(r['live_wall_s'] for r in rows):.0f}s, export {sum(r['export_wall_s'] for r in rows):.0f}s, "
          f"offline {sum(r['offline_wall_s'] for r in rows):.0f}s")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "live_mean": live, "offline_mean": offline}, indent=2,
                                        sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
