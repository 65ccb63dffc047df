"""Objects an earlier sregym process left on a cluster, found through its ledger and removed.

An attempt records what it creates in a ledger file (`env/kube/ledger.py`) named after the
process that runs it (`...-p<pid>.jsonl`). A normal close deletes the objects and the ledger; the
command that started the attempt sweeps the ledgers of its killed workers before it exits. What
survives both (the whole run killed with SIGKILL, a machine that went down) stays on the cluster
and would make the next attempt fail ("namespace ... already exists"). So the ledgers live in a
directory per cluster that outlives the run (`ledger_home`), and every run on that cluster —
fresh or `--resume` — first removes what the ledgers of processes that are no longer alive
recorded, saying what it removed.

Why a local ledger and not labels on the cluster: anything on the objects (a label, an
annotation) is visible to the agent through the API and would name the benchmark. The ledgers
are read only by the machine that ran the attempts; a run started on another machine does not
see them (docs/real-cluster.md).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

STATE_ENV = "SREGYM_STATE_DIR"
OWNER = re.compile(r"-p(\d+)$")


def state_dir() -> Path:
    """Where sregym keeps state between runs: `$SREGYM_STATE_DIR`, else `$XDG_STATE_HOME/sregym`,
    else `~/.local/state/sregym`."""
    if os.environ.get(STATE_ENV):
        return Path(os.environ[STATE_ENV]).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "sregym"


def cluster_identity(kubeconfig: str, context: str | None) -> str:
    """The API server's URL (and the context's user) that `kubeconfig`/`context` name: the same
    cluster reached through another kubeconfig file shares its ledgers."""
    import yaml

    try:
        doc = yaml.safe_load(Path(kubeconfig).expanduser().read_text()) or {}
        name = context or doc.get("current-context")
        ctx = next(c["context"] for c in doc.get("contexts") or [] if c.get("name") == name)
        server = next(c["cluster"]["server"] for c in doc.get("clusters") or [] if c.get("name") == ctx["cluster"])
        return f"{server}|{ctx.get('namespace') or ''}"
    except (OSError, ValueError, KeyError, TypeError, AttributeError, StopIteration, yaml.YAMLError):
        return f"{Path(kubeconfig).expanduser().resolve()}|{context or ''}"


def ledger_home(kubeconfig: str, context: str | None) -> Path:
    """The ledger directory of the cluster `kubeconfig`/`context` reach."""
    key = hashlib.sha256(cluster_identity(kubeconfig, context).encode()).hexdigest()[:16]
    return state_dir() / "kube-ledgers" / key


def owner_alive(ledger: Path) -> bool:
    """Whether the process that writes `ledger` still runs (a ledger without an owner is stale)."""
    match = OWNER.search(ledger.stem)
    if not match:
        return False
    pid = int(match.group(1))
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A killed worker whose parent died too stays a zombie until it is reaped; it runs nothing."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # not Linux, or gone meanwhile
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] == ["Z"]


def stale_ledgers(ledger_dir: Path) -> list[Path]:
    return [p for p in sorted(ledger_dir.glob("*.jsonl")) if not owner_alive(p)]


def remove_leftovers(target: Any, say: Callable[[str], None]) -> list[str]:
    """Delete what the stale ledgers of `target.ledger_dir` recorded, then those ledgers; one
    line per ledger says what was removed. Returns what could not be deleted."""
    from sregym.env.kube.ledger import cleanup, read_ledger

    if not target.ledger_dir:
        return []
    stale = stale_ledgers(Path(target.ledger_dir))
    if not stale:
        return []
    try:
        cluster = target.admin_cluster()
    except Exception as exc:  # the attempts will say the cluster is unreachable
        say(f"could not look for what an earlier run left on the cluster: {type(exc).__name__}: {exc}")
        return []
    failed: list[str] = []
    for path in stale:
        entries = read_ledger(path)
        errors = cleanup(cluster, entries)
        failed += errors
        if not errors:
            path.unlink(missing_ok=True)
        namespaces = {name for kind, _, name in entries if kind == "Namespace"}
        top = [(kind, ns, name) for kind, ns, name in entries if kind == "Namespace" or ns not in namespaces]
        if top:
            named = ", ".join(f"{kind} {ns + '/' if ns else ''}{name}" for kind, ns, name in top)
            verb = "removed" if not errors else "tried to remove"
            say(f"{verb} what an interrupted attempt left on the cluster ({path.stem}): {named}")
    return failed


__all__ = ["STATE_ENV", "cluster_identity", "ledger_home", "owner_alive", "remove_leftovers", "stale_ledgers",
           "state_dir"]
