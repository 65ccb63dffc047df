"""A conductor and an export that continue from a shared warm prefix (`problems.warm_prefix`)
produce exactly what they produce from scratch: the conductor's cluster after its setup has the
same fingerprint, the exported snapshot is byte-identical. This is what lets the lite comparison
(`test_baseline_offline`) fork every attempt from one prefix.

Forking is unsafe in an xdist worker (it runs a receiver thread), so the comparison runs in a
single-threaded child; a short baseline keeps it cheap (its length changes nothing here).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

PROBLEM = "hotel-reservation/coredns-nxdomain-v1"
BASELINE_S = 90.0  # past the SLO window (60 s), so the healthy baseline checks pass

_CHILD = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from sregym.env import Conductor
    from sregym.problems import get_problem
    from sregym.problems.warm import can_fork, in_fork
    from sregym.problems.warm_prefix import share, shared_run
    from sregym.snapshot.export import export_snapshot

    problem_id, baseline_s, out = sys.argv[1], float(sys.argv[2]), Path(sys.argv[3])
    problem = get_problem(problem_id)

    def setup_fingerprint():
        conductor = Conductor(problem, seed=0, noise="none", phases=("diagnosis",), baseline_s=baseline_s)
        conductor._prepare()
        return conductor._run.cluster.fingerprint()

    def export(name):
        export_snapshot(problem, out / name, seed=0, noise="none", window_s=30.0, baseline_s=baseline_s)
        return True

    fresh = {"setup": setup_fingerprint(), "export": export("fresh")}
    assert shared_run(problem, 0, "none", baseline_s) is None  # nothing shared yet
    assert can_fork()
    share(problem, 0, baseline_s)
    assert shared_run(problem, 0, "none", baseline_s) is None  # never in the process that built it
    forked = {"setup": in_fork(setup_fingerprint), "export": in_fork(lambda: export("forked")),
              "used": in_fork(lambda: shared_run(problem, 0, "none", baseline_s) is not None)}
    print(json.dumps({"fresh": fresh, "forked": forked}))
""")


def test_runs_from_the_shared_prefix_equal_fresh_runs(tmp_path: Path, tree_digest) -> None:
    proc = subprocess.run([sys.executable, "-c", _CHILD, PROBLEM, str(BASELINE_S), str(tmp_path)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["forked"]["used"], "the forked child did not continue from the shared prefix"
    assert got["forked"]["setup"] == got["fresh"]["setup"]
    assert tree_digest(tmp_path / "forked") == tree_digest(tmp_path / "fresh")
