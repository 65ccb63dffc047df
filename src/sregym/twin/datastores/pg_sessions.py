"""PostgreSQL backends and the lock manager: who is connected, what they hold, who waits.

Every client connection is a backend with a pid (a `psql` run from `kubectl exec` or a Job, the
pooled connections of the services that query the database). A backend in a transaction holds
its table locks until COMMIT/ROLLBACK or until it ends; a statement that needs a lock another
backend holds in a conflicting mode waits (`wait_event_type` `Lock`, `wait_event` `relation`),
which is what `pg_stat_activity`, `pg_locks` and `pg_blocking_pids()` show an engineer.

The registry belongs to the running postmaster (it is not in PGDATA): a server restart ends every
backend. `terminate` ends a backend the way `pg_terminate_backend` does -- its transaction rolls
back and its locks are released at once; its client learns it on its next read. A client that
disconnects while its backend runs a statement (`pg_sleep`) is not noticed until the statement
ends, as in PostgreSQL without `client_connection_check_interval`: deleting the pod of a stuck
job does not release its locks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

MODES = ("AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareLock",
         "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock")
# The table-level conflict matrix of PostgreSQL's documentation (explicit locking, table 13.2).
_CONFLICTS = {
    "AccessShareLock": {"AccessExclusiveLock"},
    "RowShareLock": {"ExclusiveLock", "AccessExclusiveLock"},
    "RowExclusiveLock": {"ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"},
    "ShareUpdateExclusiveLock": {"ShareUpdateExclusiveLock", "ShareLock", "ShareRowExclusiveLock",
                                 "ExclusiveLock", "AccessExclusiveLock"},
    "ShareLock": {"RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareRowExclusiveLock", "ExclusiveLock",
                  "AccessExclusiveLock"},
    "ShareRowExclusiveLock": {"RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareLock",
                              "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"},
    "ExclusiveLock": {"RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareLock",
                      "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"},
    "AccessExclusiveLock": set(MODES),
}
# `LOCK TABLE ... IN <mode> MODE` spellings.
SQL_MODES = dict(zip(("ACCESS SHARE", "ROW SHARE", "ROW EXCLUSIVE", "SHARE UPDATE EXCLUSIVE", "SHARE",
                      "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"), MODES, strict=True))
BACKGROUND = (("autovacuum launcher", 27), ("logical replication launcher", 28), ("background writer", 24),
              ("checkpointer", 23), ("walwriter", 26))
TERMINATED = "terminating connection due to administrator command"
CANCELED = "canceling statement due to user request"


def conflicts(held: str, wanted: str) -> bool:
    return wanted in _CONFLICTS.get(held, set())


def stamp(now: float | None) -> str | None:
    """A timestamptz as PostgreSQL prints it (`2026-01-01 00:00:05.000000+00`)."""
    if now is None:
        return None
    return datetime.fromtimestamp(now, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f+00")


@dataclass
class Lock:
    relation: tuple[str, str, str]  # (database, schema, table)
    mode: str
    granted: bool = True


@dataclass
class Backend:
    pid: int
    user: str
    database: str
    application_name: str = ""
    client_addr: str | None = None  # None on the Unix socket
    client_port: int = -1
    backend_start: float = 0.0
    state: str = "idle"
    query: str = ""
    query_start: float | None = None
    xact_start: float | None = None
    state_change: float | None = None
    wait: tuple[str, str] | None = None  # (wait_event_type, wait_event)
    locks: list[Lock] = field(default_factory=list)
    busy_until: float | None = None  # a statement that keeps running (pg_sleep) until then
    client_gone: bool = False
    terminated: bool = False
    canceled: bool = False
    key: tuple[str, ...] = ()  # a pooled client's identity (pod, user, database)
    client_pod: tuple[str, str] | None = None  # (namespace, name) of a network client
    xid: int | None = None
    vxid: str = ""

    def waiting(self) -> Lock | None:
        return next((lock for lock in self.locks if not lock.granted), None)


class Sessions:
    """The backends of one running server and the lock table they share."""

    def __init__(self, started: float) -> None:
        self.backends: dict[int, Backend] = {}
        self.next_pid = 61
        self.next_xid = 750
        self.next_vxid = 1
        self.started = started

    # ----------------------------------------------------------------------- lifecycle
    def connect(self, user: str, database: str, now: float, *, application_name: str = "",
                client_addr: str | None = None, key: tuple[str, ...] = ()) -> Backend:
        pid = self.next_pid
        self.next_pid += 1 + pid % 7  # not consecutive, like pids of a busy host
        port = -1 if client_addr is None else 40000 + pid % 20000
        backend = Backend(pid, user, database, application_name, client_addr, port, now, state_change=now, key=key,
                          vxid=f"{3 + len(self.backends) % 5}/{self.next_vxid}")
        self.next_vxid += 1
        self.backends[pid] = backend
        return backend

    def pooled(self, key: tuple[str, ...], user: str, database: str, now: float, client_addr: str) -> Backend:
        """The pooled connection of a service's client (one per pod, user and database)."""
        for backend in self.backends.values():
            if backend.key == key:
                return backend
        return self.connect(user, database, now, client_addr=client_addr, key=key)

    def end(self, backend: Backend) -> None:
        """The backend exits: its transaction rolls back, its locks go."""
        backend.locks.clear()
        self.backends.pop(backend.pid, None)

    def terminate(self, pid: int) -> bool:
        backend = self.backends.get(pid)
        if backend is None:
            return False
        backend.terminated = True
        self.end(backend)
        return True

    def cancel(self, pid: int) -> bool:
        backend = self.backends.get(pid)
        if backend is None:
            return False
        if backend.state == "active":
            backend.canceled = True
            backend.busy_until = None
            backend.locks = [lock for lock in backend.locks if lock.granted]
            backend.wait = None
        return True

    def reap(self, now: float) -> None:
        """Backends whose client left: they exit once their running statement ends."""
        for backend in list(self.backends.values()):
            if backend.client_gone and (backend.busy_until is None or backend.busy_until <= now):
                self.end(backend)

    # --------------------------------------------------------------------------- locks
    def blockers(self, backend: Backend, relation: tuple[str, str, str], mode: str) -> list[int]:
        """The pids holding `relation` in a mode that conflicts with `mode` (other backends)."""
        out = []
        for other in self.backends.values():
            if other.pid == backend.pid:
                continue
            if any(lock.granted and lock.relation == relation and conflicts(lock.mode, mode) for lock in other.locks):
                out.append(other.pid)
        return sorted(out)

    def acquire(self, backend: Backend, relation: tuple[str, str, str], mode: str) -> list[int]:
        """Take a lock, or queue for it: [] when granted, else the pids it waits behind."""
        if any(lock.granted and lock.relation == relation and lock.mode == mode for lock in backend.locks):
            return []
        blocking = self.blockers(backend, relation, mode)
        backend.locks = [lock for lock in backend.locks if lock.granted]
        if blocking:
            backend.locks.append(Lock(relation, mode, granted=False))
            backend.wait = ("Lock", "relation")
            return blocking
        backend.locks.append(Lock(relation, mode))
        backend.wait = None
        return []

    def blocking_pids(self, pid: int) -> list[int]:
        backend = self.backends.get(pid)
        wanted = backend.waiting() if backend is not None else None
        if backend is None or wanted is None:
            return []
        return self.blockers(backend, wanted.relation, wanted.mode)

    def begin_xact(self, backend: Backend, now: float) -> None:
        if backend.xact_start is None:
            backend.xact_start = now

    def assign_xid(self, backend: Backend) -> None:
        if backend.xid is None:
            backend.xid = self.next_xid
            self.next_xid += 1

    def end_xact(self, backend: Backend) -> None:
        backend.locks.clear()
        backend.wait = None
        backend.xact_start = None
        backend.xid = None


__all__ = ["BACKGROUND", "CANCELED", "MODES", "SQL_MODES", "TERMINATED", "Backend", "Lock", "Sessions",
           "conflicts", "stamp"]
