"""What finds an earlier run's leftovers without a cluster: the ledger directory is the cluster's
(two kubeconfig files for one API server share it), lives under `$SREGYM_STATE_DIR`, and only the
ledgers of processes that are gone count as leftovers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sregym.env.kube.leftovers import ledger_home, owner_alive, stale_ledgers


def _kubeconfig(path: Path, server: str) -> str:
    path.write_text("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                    f"clusters: [{{name: k, cluster: {{server: '{server}'}}}}]\n"
                    "users: [{name: u, user: {token: x}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n")
    return str(path)


def test_the_ledger_directory_is_the_clusters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SREGYM_STATE_DIR", str(tmp_path / "state"))
    one = ledger_home(_kubeconfig(tmp_path / "a.yaml", "https://10.0.0.1:6443"), None)
    same = ledger_home(_kubeconfig(tmp_path / "b.yaml", "https://10.0.0.1:6443"), "c")
    other = ledger_home(_kubeconfig(tmp_path / "c.yaml", "https://10.0.0.2:6443"), None)
    assert one == same != other
    assert one.parent == tmp_path / "state" / "kube-ledgers"


def test_only_ledgers_of_processes_that_are_gone_are_stale(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = tmp_path / f"demo-shop_missing-v1-s0-p{int(gone.stdout)}.jsonl"
    mine = tmp_path / f"demo-shop_missing-v1-s1-p{os.getpid()}.jsonl"
    nameless = tmp_path / "something.jsonl"
    for path in (dead, mine, nameless):
        path.write_text('{"kind": "Namespace", "namespace": null, "name": "demo-shop"}\n')
    assert owner_alive(mine) and not owner_alive(dead) and not owner_alive(nameless)
    assert stale_ledgers(tmp_path) == sorted([dead, nameless])


def test_a_killed_worker_not_yet_reaped_is_gone(tmp_path: Path) -> None:
    """A zombie (killed, its parent not reaping it yet) answers `kill(pid, 0)` but runs nothing."""
    import signal
    import time

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ledger = tmp_path / f"x-s0-p{child.pid}.jsonl"
        ledger.write_text("")
        assert owner_alive(ledger)
        os.kill(child.pid, signal.SIGKILL)
        for _ in range(100):  # not reaped (no wait): a zombie
            if not owner_alive(ledger):
                break
            time.sleep(0.05)
        assert not owner_alive(ledger)
    finally:
        child.wait()
