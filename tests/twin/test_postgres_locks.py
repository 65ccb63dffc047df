"""PostgreSQL sessions and locks: backends in `pg_stat_activity`, locks in `pg_locks`, waiters
blocked behind a transaction, `pg_blocking_pids()`, timeouts, and terminate/cancel that really end
or cancel a backend -- through psql, and through real `kubectl exec` for the blocking chain."""

from __future__ import annotations

from typing import Any

from tests.twin.test_postgres import _db_pod, _manifest, _server, kube, run  # noqa: F401 - kube is a fixture

import sregym.twin.userland  # noqa: F401 - registers psql
from sregym.twin.dataplane.backends import StoreRequest, ask
from sregym.twin.twin import Twin

LOCKING = "BEGIN; LOCK TABLE products IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3600); COMMIT;"
CHAIN = ("SELECT a.pid, a.application_name, a.state, a.wait_event_type, a.wait_event, l.relation::regclass, "
         "l.mode, l.granted, pg_blocking_pids(a.pid) AS blocked_by FROM pg_stat_activity a "
         "JOIN pg_locks l ON l.pid = a.pid WHERE l.locktype = 'relation' ORDER BY l.granted DESC, a.pid")


def _job(name: str, sql: str, backoff: int = 0) -> str:
    quoted = sql.replace('"', '\\"')
    return f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: default}}
spec:
  backoffLimit: {backoff}
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: psql
        image: postgres:17.2
        env: [{{name: PGPASSWORD, value: secret}}, {{name: PGAPPNAME, value: {name}}}]
        command: [psql, -h, db, -U, postgres, -d, shop, -c, "{quoted}"]
"""


def _pods_of(twin: Twin, job: str) -> list[dict[str, Any]]:
    return sorted((p for p in twin.list("pods", "default") if p["metadata"]["name"].startswith(job + "-")),
                  key=lambda p: p["metadata"]["creationTimestamp"] + p["metadata"]["name"])


def _client_insert(twin: Twin) -> Any:
    """The data plane's INSERT from the `client` pod's pooled connection, as the app role."""
    client = twin.store.peek("Pod", "default", "client")
    req = StoreRequest("postgres", "insert", "shop", "products", "app", "apppw", "", 5.0, client=client)
    return ask(twin, _db_pod(twin), req, 0.0)


def _sql(twin: Twin, sql: str, *flags: str) -> tuple[str, str, int]:
    return run(twin, "db", "psql", "-U", "postgres", "-d", "shop", *flags, "-c", sql)


def _locked_twin() -> Twin:
    twin = Twin(seed=5)
    twin.apply(_manifest())
    twin.advance(30)
    twin.apply(_job("nightly-report", LOCKING))
    twin.advance(20)
    return twin


def test_a_transaction_holds_its_lock_and_waiters_show_who_blocks_them() -> None:
    twin = _locked_twin()
    holder = [b for b in _server(twin).sessions().backends.values() if b.application_name == "nightly-report"]
    assert len(holder) == 1
    waiting = _client_insert(twin)
    assert not waiting.ok and waiting.error_class == "timeout" and "Timeout during reading attempt" in waiting.error
    out, _, code = _sql(twin, "SELECT pid, state, wait_event_type, wait_event, backend_type, query "
                              "FROM pg_stat_activity WHERE application_name = 'nightly-report'", "-A", "-t")
    assert code == 0
    assert out == f"{holder[0].pid}|active|Timeout|PgSleep|client backend|{LOCKING}\n"
    out, _, _ = _sql(twin, CHAIN, "-A", "-t")
    app = next(b for b in _server(twin).sessions().backends.values() if b.user == "app")
    assert out.splitlines() == [
        f"{holder[0].pid}|nightly-report|active|Timeout|PgSleep|products|AccessExclusiveLock|t|{{}}",
        f"{app.pid}||active|Lock|relation|products|RowExclusiveLock|f|{{{holder[0].pid}}}"]
    # The server's own processes are there too, as in any pg_stat_activity.
    out, _, _ = _sql(twin, "SELECT backend_type FROM pg_stat_activity WHERE usename IS NULL ORDER BY pid", "-At")
    assert out.split("\n")[:3] == ["checkpointer", "background writer", "walwriter"]


def test_terminate_ends_the_backend_rolls_back_and_unblocks() -> None:
    twin = _locked_twin()
    assert not _client_insert(twin).ok
    rows_before = _server(twin).pg.databases["shop"].tables[("public", "products")].rows
    out, _, code = _sql(twin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE application_name = 'nightly-report'")
    assert (out, code) == (" pg_terminate_backend \n----------------------\n t\n(1 row)\n\n", 0)
    twin.advance(5)
    assert _client_insert(twin).ok  # the lock is gone with the backend
    assert _server(twin).pg.databases["shop"].tables[("public", "products")].rows > rows_before
    pod = _pods_of(twin, "nightly-report")[0]
    assert pod["status"]["phase"] == "Failed"
    assert twin.logs("default", pod["metadata"]["name"]) == (
        "BEGIN\nLOCK TABLE\nFATAL:  terminating connection due to administrator command\n"
        "server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n"
        "\tbefore or while processing the request.\nconnection to server was lost\n")
    out, _, _ = _sql(twin, "SELECT count(*) FROM pg_locks WHERE locktype = 'relation'", "-At")
    assert out == "0\n"
    assert "FATAL:  terminating connection due to administrator command" in twin.logs(
        "default", _db_pod(twin)["metadata"]["name"])


def test_a_killed_client_leaves_its_running_backend_holding_the_lock() -> None:
    twin = _locked_twin()
    twin.delete("Job", "default", "nightly-report")
    twin.advance(60)
    assert not _pods_of(twin, "nightly-report")
    # PostgreSQL notices a gone client only when the running statement ends: the lock stays.
    assert not _client_insert(twin).ok
    out, _, _ = _sql(twin, "SELECT application_name, mode, granted FROM pg_locks l JOIN pg_stat_activity a "
                           "USING (pid) WHERE l.locktype = 'relation' AND l.granted", "-At")
    assert out == "nightly-report|AccessExclusiveLock|t\n"
    _sql(twin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'nightly-report'")
    assert _client_insert(twin).ok


def test_lock_and_statement_timeouts_nowait_and_cancel() -> None:
    twin = _locked_twin()
    client = ("client", "sh", "-c")
    base = "PGPASSWORD=secret psql -h db -U postgres -d shop -c "
    _, err, code = run(twin, *client, base + "'SET lock_timeout = 2s; SELECT count(*) FROM products'")
    assert (err, code) == ("ERROR:  canceling statement due to lock timeout\n", 1)
    _, err, code = run(twin, *client, base + "'SET statement_timeout = 1500; SELECT pg_sleep(10)'")
    assert (err, code) == ("ERROR:  canceling statement due to statement timeout\n", 1)
    _, err, code = run(twin, *client, base + "'BEGIN; LOCK TABLE products IN SHARE MODE NOWAIT'")
    assert (err, code) == ('ERROR:  could not obtain lock on relation "products"\n', 1)
    _, err, code = run(twin, *client, base + "'LOCK TABLE products'")
    assert (err, code) == ("ERROR:  LOCK TABLE can only be used in transaction blocks\n", 1)
    out, _, code = run(twin, *client, base + "'SELECT pg_sleep(2)'")
    assert (out, code) == (" pg_sleep \n----------\n \n(1 row)\n\n", 0)
    # A second job queues behind the first; cancelling it ends its statement, not its session.
    twin.apply(_job("late-report", "SELECT count(*) FROM products"))
    twin.advance(20)
    late = next(b for b in _server(twin).sessions().backends.values() if b.application_name == "late-report")
    out, _, _ = _sql(twin, "SELECT wait_event_type || '/' || wait_event, pg_blocking_pids(pid) FROM pg_stat_activity "
                           f"WHERE pid = {late.pid}", "-At")
    holder = next(b.pid for b in _server(twin).sessions().backends.values() if b.application_name == "nightly-report")
    assert out == f"Lock/relation|{{{holder}}}\n"
    out, _, _ = _sql(twin, f"SELECT pg_cancel_backend({late.pid})", "-At")
    assert out == "t\n"
    twin.advance(5)
    pod = _pods_of(twin, "late-report")[0]
    assert twin.logs("default", pod["metadata"]["name"]) == "ERROR:  canceling statement due to user request\n"


def test_signalling_needs_the_right_role_and_a_real_pid() -> None:
    twin = _locked_twin()
    holder = next(b.pid for b in _server(twin).sessions().backends.values() if b.application_name == "nightly-report")
    _, err, code = run(twin, "client", "sh", "-c", "PGPASSWORD=apppw psql -h db -U app -d shop -c "
                                                   f"'SELECT pg_terminate_backend({holder})'")
    assert code == 1 and err == ("ERROR:  permission denied to terminate process\nDETAIL:  Only roles with the "
                                 "SUPERUSER attribute may terminate processes of roles with the SUPERUSER attribute.\n")
    out, err, code = _sql(twin, "SELECT pg_terminate_backend(99999)", "-At")
    assert (out, err, code) == ("f\n", "WARNING:  PID 99999 is not a PostgreSQL backend process\n", 0)
    assert holder in _server(twin).sessions().backends


def test_kubectl_exec_psql_shows_the_chain_and_terminate_unblocks(kube: Any) -> None:  # noqa: F811
    kube.call(kube.twin.apply, _manifest())
    kube.advance(30)
    kube.call(kube.twin.apply, _job("nightly-report", LOCKING))
    kube.advance(20)
    assert not kube.call(_client_insert, kube.twin).ok
    pod = kube.call(_db_pod, kube.twin)["metadata"]["name"]
    chain = kube.ok("exec", pod, "-c", "postgres", "--", "psql", "-U", "postgres", "-d", "shop", "-c", CHAIN)
    lines = chain.splitlines()
    assert lines[0].split("|")[0].strip() == "pid" and [c.strip() for c in lines[0].split("|")][1:] == [
        "application_name", "state", "wait_event_type", "wait_event", "relation", "mode", "granted", "blocked_by"]
    holder = lines[2].split("|")
    waiter = lines[3].split("|")
    assert [c.strip() for c in holder[1:]] == ["nightly-report", "active", "Timeout", "PgSleep", "products",
                                              "AccessExclusiveLock", "t", "{}"]
    assert [c.strip() for c in waiter[2:]] == ["active", "Lock", "relation", "products", "RowExclusiveLock", "f",
                                              "{" + holder[0].strip() + "}"]
    assert lines[-2] == "(2 rows)"
    out = kube.ok("exec", pod, "-c", "postgres", "--", "psql", "-U", "postgres", "-d", "shop", "-tAc",
                  f"SELECT pg_terminate_backend({holder[0].strip()})")
    assert out == "t\n"
    kube.advance(5)
    assert kube.call(_client_insert, kube.twin).ok
    out = kube.ok("exec", pod, "-c", "postgres", "--", "psql", "-U", "postgres", "-d", "shop", "-tAc",
                  "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'nightly-report'")
    assert out == "0\n"
