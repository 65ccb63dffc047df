"""Queries over `pg_stat_activity` and `pg_locks`: the views an engineer joins to find a blocker.

The two views are materialised from the server's backends (`pg_sessions`) into an in-memory
SQLite database and the query runs there, so joins, WHERE clauses, ORDER BY and aggregates
behave as SQL does. The PostgreSQL spellings SQLite lacks are rewritten first: `x::regclass`,
other `::type` casts, `ILIKE`, `pid = ANY(pg_blocking_pids(...))`, `now() - xact_start`
(an interval), `pg_catalog.` prefixes. The functions are real: `pg_blocking_pids`,
`pg_backend_pid`, `pg_terminate_backend` and `pg_cancel_backend` act on the backends (with the
server's permission rules), so `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE
...` ends what it names. Column names and cell texts follow psql (`t`/`f`, `{123}`, `?column?`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sregym.twin.datastores.pg_sessions import BACKGROUND, Backend, Sessions, stamp
from sregym.twin.datastores.postgres import PgError

if TYPE_CHECKING:
    from sregym.twin.datastores.pg_sql import Session

VIEWS = ("pg_stat_activity", "pg_locks")
FUNCTIONS = ("pg_blocking_pids", "pg_terminate_backend", "pg_cancel_backend", "pg_backend_pid")
_ACTIVITY = ("datid", "datname", "pid", "leader_pid", "usesysid", "usename", "application_name", "client_addr",
             "client_hostname", "client_port", "backend_start", "xact_start", "query_start", "state_change",
             "wait_event_type", "wait_event", "state", "backend_xid", "backend_xmin", "query_id", "query",
             "backend_type")
_LOCKS = ("locktype", "database", "relation", "page", "tuple", "virtualxid", "transactionid", "classid", "objid",
          "objsubid", "virtualtransaction", "pid", "mode", "granted", "fastpath", "waitstart")
BOOLEAN_COLUMNS = {"granted", "fastpath", "pg_terminate_backend", "pg_cancel_backend"}
_RESERVED = {"order", "user", "table", "group", "select", "where", "from", "limit", "offset", "check"}


def wants_activity(body: str) -> bool:
    """Whether a SELECT reads the session views or calls a backend function."""
    low = body.lower()
    return any(re.search(rf"\b{name}\b", low) for name in (*VIEWS, *FUNCTIONS))


def relation_oids(session: Session) -> dict[tuple[str, str, str], int]:
    """Stable oids for the user tables of every database (16384 is the first user oid)."""
    out = {}
    for dbname, db in sorted(session.server.pg.databases.items()):
        for index, (schema, table) in enumerate(sorted(db.tables)):
            out[(dbname, schema, table)] = 16384 + index * 3
    return out


def _regclass_name(schema: str, table: str) -> str:
    quoted = f'"{table}"' if table in _RESERVED or not re.fullmatch(r"[a-z_][a-z0-9_$]*", table) else table
    return quoted if schema == "public" else f"{schema}.{quoted}"


def rewrite(sql: str) -> str:
    """The PostgreSQL-only syntax of a monitoring query, in SQLite's spelling."""
    text = re.sub(r"\bpg_catalog\.", "", sql, flags=re.I)
    text = re.sub(r"('[^']*'|[\w.]+)\s*::\s*regclass\b", r"_regclass(\1)", text, flags=re.I)
    text = re.sub(r"::\s*(?:text|varchar|name|int4?|integer|bigint|oid|interval|timestamptz)\b", "", text,
                  flags=re.I)
    text = re.sub(r"\bnot\s+ilike\b", "NOT LIKE", text, flags=re.I)
    text = re.sub(r"\bilike\b", "LIKE", text, flags=re.I)
    text = re.sub(r"=\s*any\s*\(\s*pg_blocking_pids\s*\(([^()]*)\)\s*\)",
                  r"IN (SELECT value FROM json_each(_blocking_json(\1)))", text, flags=re.I)
    text = re.sub(r"\b(?:now|clock_timestamp|statement_timestamp)\s*\(\s*\)\s*-\s*([\w.]+)", r"_age(\1)", text,
                  flags=re.I)
    text = re.sub(r"\bage\s*\(\s*(?:now|clock_timestamp)\s*\(\s*\)\s*,\s*([\w.]+)\s*\)", r"_age(\1)", text,
                  flags=re.I)
    text = re.sub(r"\b(?:now|clock_timestamp|statement_timestamp)\s*\(\s*\)", "_now()", text, flags=re.I)
    text = re.sub(r"\bcurrent_timestamp\b", "_now()", text, flags=re.I)
    text = re.sub(r"\bis\s+distinct\s+from\b", "IS NOT", text, flags=re.I)
    return text


def _interval(seconds: float) -> str:
    seconds = max(0.0, seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{int(hours):02d}:{int(minutes):02d}:{secs:09.6f}"


def _array(pids: list[int]) -> str:
    return "{" + ",".join(str(p) for p in pids) + "}"


def _column_name(raw: str) -> str:
    """psql's header for a select item: the column, the function's name, or `?column?`."""
    name = raw.strip()
    if re.fullmatch(r"(?:\w+\.)?\w+", name):
        return name.rsplit(".", 1)[-1].lower()
    cast = re.fullmatch(r"_regclass\((?:\w+\.)?(\w+)\)", name)
    if cast:
        return cast.group(1).lower()
    call = re.fullmatch(r"(\w+)\s*\(.*\)", name, re.S)
    if call and not call.group(1).startswith("_") and _balanced(name[len(call.group(1)):]):
        return call.group(1).lower()
    return "?column?"


def _balanced(text: str) -> bool:
    """Whether `(...)` is one parenthesised group (so `f(a) - g(b)` is not a single call)."""
    depth = 0
    for index, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and index < len(text.strip()) - 1 and ch == ")":
            return False
    return depth == 0


def run_activity(session: Session, sql: str) -> tuple[list[str], list[list[str]], set[int]]:
    """(column names, cell texts, right-aligned columns) of a query over the session views."""
    server = session.server
    sessions: Sessions = server.sessions()
    now = server.twin.clock.now
    oids = relation_oids(session)
    names = {oid: _regclass_name(schema, table) for (_db, schema, table), oid in oids.items()}
    by_name = {f"{schema}.{table}": oid for (db, schema, table), oid in oids.items() if db == session.database}
    by_name.update({table: oid for (db, schema, table), oid in oids.items()
                    if db == session.database and schema == "public"})
    db_oids = {name: 16384 - 100 + index for index, name in enumerate(sorted(server.pg.databases))}
    pending: list[PgError] = []
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE TABLE pg_stat_activity ({', '.join(_ACTIVITY)})")
    conn.execute(f"CREATE TABLE pg_locks ({', '.join(_LOCKS)})")
    for backend in sorted(sessions.backends.values(), key=lambda b: b.pid):
        lock = backend.waiting()
        wait = backend.wait or (("Timeout", "PgSleep") if backend.busy_until is not None else (None, None))
        if lock is None and backend.wait == ("Lock", "relation"):
            wait = (None, None)
        conn.execute(f"INSERT INTO pg_stat_activity VALUES ({', '.join('?' * len(_ACTIVITY))})", (
            db_oids.get(backend.database), backend.database, backend.pid, None, 10 if backend.user == "root" else 16389,
            backend.user, backend.application_name, _client_addr(server.twin, backend), None, backend.client_port,
            stamp(backend.backend_start), stamp(backend.xact_start), stamp(backend.query_start),
            stamp(backend.state_change), wait[0], wait[1], backend.state,
            backend.xid, None, None, backend.query, "client backend"))
        if backend.xact_start is not None or backend.locks:
            conn.execute(f"INSERT INTO pg_locks VALUES ({', '.join('?' * len(_LOCKS))})", (
                "virtualxid", None, None, None, None, backend.vxid, None, None, None, None, backend.vxid, backend.pid,
                "ExclusiveLock", 1, 1, None))
        if backend.xid is not None:
            conn.execute(f"INSERT INTO pg_locks VALUES ({', '.join('?' * len(_LOCKS))})", (
                "transactionid", None, None, None, None, None, backend.xid, None, None, None, backend.vxid,
                backend.pid, "ExclusiveLock", 1, 0, None))
        for held in backend.locks:
            conn.execute(f"INSERT INTO pg_locks VALUES ({', '.join('?' * len(_LOCKS))})", (
                "relation", db_oids.get(held.relation[0]), oids.get(held.relation), None, None, None, None, None,
                None, None, backend.vxid, backend.pid, held.mode, int(held.granted),
                int(held.granted and held.mode in ("AccessShareLock", "RowShareLock", "RowExclusiveLock")),
                None if held.granted else stamp(backend.query_start)))
    for kind, pid in BACKGROUND:
        conn.execute(f"INSERT INTO pg_stat_activity VALUES ({', '.join('?' * len(_ACTIVITY))})", (
            None, None, pid, None, 10 if kind == "logical replication launcher" else None,
            "root" if kind == "logical replication launcher" else None, "", None, None, None,
            stamp(sessions.started), None, None, None, "Activity", _WAIT_OF.get(kind), None, None, None, None, "",
            kind))

    def guard(fn: Callable[..., object]) -> Callable[..., object]:
        def wrapped(*args: object) -> object:
            try:
                return fn(*args)
            except PgError as exc:
                pending.append(exc)
                raise
        return wrapped

    def signal(pid: object, verb: str) -> int:
        if pid is None:
            return 0
        target = sessions.backends.get(int(pid))  # type: ignore[arg-type]
        if target is None:
            session.notices.append(f"WARNING:  PID {pid} is not a PostgreSQL backend process")
            return 0
        me = server.pg.roles.get(session.user)
        other = server.pg.roles.get(target.user)
        if not (me and me.superuser):
            if other is not None and other.superuser:
                raise PgError(f"permission denied to {verb} process", sqlstate="42501",
                              detail=f"Only roles with the SUPERUSER attribute may {verb} processes of roles "
                                     "with the SUPERUSER attribute.")
            if target.user != session.user:
                raise PgError(f"permission denied to {verb} process", sqlstate="42501",
                              detail=f'Only roles with privileges of the role whose process is being '
                                     f'{"terminated" if verb == "terminate" else "canceled"} or with privileges '
                                     f'of the "pg_signal_backend" role may {verb} this process.')
        ok = sessions.terminate(target.pid) if verb == "terminate" else sessions.cancel(target.pid)
        if ok and verb == "terminate":
            server.log("FATAL", "terminating connection due to administrator command", None, [])
        return int(ok)

    def regclass(value: object) -> object:
        if isinstance(value, str):
            key = value.strip("'").lower()
            if key not in by_name:
                raise PgError(f'relation "{key}" does not exist', sqlstate="42P01")
            return by_name[key]
        return names.get(int(value)) if value is not None else None  # type: ignore[arg-type]

    def age(value: object) -> str | None:
        if not value:
            return None
        moment = datetime.strptime(str(value), "%Y-%m-%d %H:%M:%S.%f+00").replace(tzinfo=UTC).timestamp()
        return _interval(now - moment)

    conn.create_function("pg_blocking_pids", 1, guard(lambda pid: _array(sessions.blocking_pids(int(pid)))))
    conn.create_function("_blocking_json", 1, guard(lambda pid: "[" + ",".join(
        str(p) for p in sessions.blocking_pids(int(pid))) + "]"))
    conn.create_function("pg_backend_pid", 0, lambda: session.backend.pid if session.backend else 0)
    conn.create_function("pg_terminate_backend", 1, guard(lambda pid: signal(pid, "terminate")))
    conn.create_function("pg_terminate_backend", 2, guard(lambda pid, _timeout: signal(pid, "terminate")))
    conn.create_function("pg_cancel_backend", 1, guard(lambda pid: signal(pid, "cancel")))
    conn.create_function("cardinality", 1, lambda arr: len([p for p in str(arr or "{}").strip("{}").split(",") if p]))
    conn.create_function("array_length", 2, lambda arr, _dim: len([p for p in str(arr or "{}").strip("{}")
                                                                   .split(",") if p]) or None)
    conn.create_function("_regclass", 1, guard(regclass))
    conn.create_function("_age", 1, age)
    conn.create_function("_now", 0, lambda: stamp(now))
    conn.create_function("left", 2, lambda text, n: None if text is None else str(text)[:int(n)])
    conn.create_function("substr", 3, lambda text, a, n: None if text is None else str(text)[int(a) - 1:int(a) - 1 + int(n)])
    try:
        cursor = conn.execute(rewrite(sql))
        rows = cursor.fetchall()
    except sqlite3.Error as exc:
        if pending:
            raise pending[0] from None
        raise _translate(exc, sql) from None
    finally:
        conn.close()
    columns = [_column_name(d[0]) for d in cursor.description or ()]
    right = {index for index, _ in enumerate(columns)
             if rows and all(isinstance(row[index], int | float) or row[index] is None for row in rows)
             and any(isinstance(row[index], int | float) for row in rows) and columns[index] not in BOOLEAN_COLUMNS}
    cells = [[_cell(value, columns[index]) for index, value in enumerate(row)] for row in rows]
    return columns, cells, right


_WAIT_OF = {"autovacuum launcher": "AutovacuumMain", "logical replication launcher": "LogicalLauncherMain",
            "background writer": "BgwriterHibernate", "checkpointer": "CheckpointerMain", "walwriter": "WalWriterMain"}


def _client_addr(twin: object, backend: Backend) -> str | None:
    if backend.client_addr or backend.client_pod is None:
        return backend.client_addr or None
    pod = twin.store.peek("Pod", *backend.client_pod)  # type: ignore[attr-defined]
    return str(((pod or {}).get("status") or {}).get("podIP") or "") or None


def _cell(value: object, column: str) -> str:
    if value is None:
        return ""
    if column in BOOLEAN_COLUMNS and isinstance(value, int):
        return "t" if value else "f"
    return str(value)


def _translate(exc: sqlite3.Error, sql: str) -> PgError:
    message = str(exc)
    m = re.match(r"no such column: (?:\w+\.)?(\S+)", message)
    if m:
        return PgError(f'column "{m.group(1)}" does not exist', sqlstate="42703")
    m = re.match(r"no such table: (\S+)", message)
    if m:
        return PgError(f'relation "{m.group(1)}" does not exist', sqlstate="42P01")
    m = re.match(r"no such function: (\S+)", message)
    if m:
        return PgError(f"function {m.group(1)}() does not exist", sqlstate="42883",
                       hint="No function matches the given name and argument types. You might need to add "
                            "explicit type casts.")
    m = re.search(r'near "([^"]+)"', message)
    token = m.group(1) if m else ""
    return PgError(f'syntax error at or near "{token}"' if token else "syntax error at end of input", sqlstate="42601")


__all__ = ["VIEWS", "relation_oids", "rewrite", "run_activity", "wants_activity"]
