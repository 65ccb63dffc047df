"""Twin-only problems in a `--backend kube` suite: recorded as skipped with their reason (not as
environment failures), left out of every count and rate of the summary, the viewer and the
report, never re-run by `--resume`; `check --backend kube` on one says why. No cluster is needed:
the skip is decided before one is contacted, and the portable problem's attempt fails to reach
an address where nothing listens (an environment failure, which `--resume` does re-run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sregym.env import AttemptConfig
from sregym.env.kube.target import KubeTarget
from sregym.runner import run
from sregym.runner.rundir import load_run

SREGYM = [sys.executable, "-m", "sregym.cli.main"]
TWIN_ONLY = "hotel-reservation/slow-disk-geo-v1"
PORTABLE = "demo-shop/missing-configmap-key-v1"
NOWHERE = "http://127.0.0.1:9"  # the discard port: nothing answers there on a test machine


def _kubeconfig(path: Path) -> Path:
    """A kubeconfig for an API server that is not there."""
    path.write_text("apiVersion: v1\nkind: Config\ncurrent-context: gone\n"
                    "clusters: [{name: gone, cluster: {server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}}]\n"
                    "users: [{name: gone, user: {token: x}}]\n"
                    "contexts: [{name: gone, context: {cluster: gone, user: gone}}]\n")
    return path


def _lines(out: Path) -> dict[str, dict]:
    rows = [json.loads(raw) for raw in (out / "results.jsonl").read_text().splitlines() if raw.strip()]
    return {r["problem_id"]: r for r in rows}


def test_twin_only_attempts_are_skipped_with_a_reason_and_left_out_of_the_scores(tmp_path: Path) -> None:
    target = KubeTarget(kubeconfig=str(_kubeconfig(tmp_path / "kubeconfig")), prometheus_url=NOWHERE,
                        ledger_dir=str(tmp_path / "ledgers"))
    out = tmp_path / "run"
    summary = run([TWIN_ONLY, PORTABLE], agent="noop", out_dir=out, progress="none",
                  attempt=AttemptConfig(kube=target.to_json()))
    lines = _lines(out)
    skipped = lines[TWIN_ONLY]
    assert skipped["skipped"] is True and skipped["environment_failure"] is False
    assert "needs the twin" in skipped["skipped_reason"] and "device-scoped IOChaos" in skipped["skipped_reason"]
    assert lines[PORTABLE]["environment_failure"] is True and not lines[PORTABLE]["skipped"]
    # Only the attempt that ran counts; the skipped one is named with its reason.
    assert (summary.overall.attempts, summary.overall.environment_failures, summary.skipped) == (1, 1, 1)
    assert [r.problem_id for r in summary.per_problem] == [PORTABLE]
    assert summary.missing == 0
    assert list(summary.skipped_reasons) == [f"{TWIN_ONLY}: {skipped['skipped_reason']}"]
    written = json.loads((out / "summary.json").read_text())
    assert written["skipped"] == 1 and written["overall"]["attempts"] == 1

    data = load_run(out)
    assert [ln["problem_id"] for ln in data.lines] == [PORTABLE]
    assert [ln["problem_id"] for ln in data.skipped] == [TWIN_ONLY]
    assert data.summary_is_final

    from sregym.viewer.views import run_view

    view = run_view(data, "k")
    assert view["overall"]["attempts"] == 1 and view["run"]["planned"] == 2
    assert view["skipped"] == [{"problem_id": TWIN_ONLY, "seed": 0, "reason": skipped["skipped_reason"]}]

    from sregym.report import build_report

    markdown = build_report([out], fmt="md")
    assert "Skipped (not run on this backend" in markdown and TWIN_ONLY in markdown

    # --resume re-runs the environment failure, not the skipped attempt.
    again = run(resume=out, progress="none")
    assert again.ran == 1 and again.skipped == 1
    assert _lines(out)[TWIN_ONLY] == skipped


def test_check_on_the_kube_backend_says_why_a_twin_only_problem_is_not_checked(tmp_path: Path) -> None:
    done = subprocess.run([*SREGYM, "check", TWIN_ONLY, "--backend", "kube",
                           "--kubeconfig", str(_kubeconfig(tmp_path / "kubeconfig")), "--prometheus-url", NOWHERE],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"SKIP {TWIN_ONLY}" in done.stdout and "needs the twin (slow_disk" in done.stdout
    assert "0 passed, 0 failed, 1 skipped" in done.stdout


def test_snapshot_export_on_the_kube_backend_refuses_a_twin_only_problem(tmp_path: Path) -> None:
    done = subprocess.run([*SREGYM, "snapshot", "export", TWIN_ONLY, "--out", str(tmp_path / "out"), "--backend",
                           "kube", "--kubeconfig", str(_kubeconfig(tmp_path / "kubeconfig")), "--prometheus-url",
                           NOWHERE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "needs the twin (slow_disk" in done.stderr, done.stderr
    assert not (tmp_path / "out" / "snapshot").exists()
