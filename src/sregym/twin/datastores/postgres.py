"""PostgreSQL: roles with LOGIN and passwords, databases with owners, tables with privileges.

The cluster's catalogue (`PgState`) lives in PGDATA on the data volume, so a role created by an
init script, a password rotated with `ALTER ROLE`, or a privilege revoked from a shell survives a
pod restart exactly as far as the volume does -- and, like the official image, the init scripts
run only when PGDATA is empty: a broken `/docker-entrypoint-initdb.d` script leaves an initialised
but incomplete cluster that the next start skips ("appears to contain a database").

Authentication follows the official image's `pg_hba.conf`: the Unix socket and loopback are
`trust`, every other host is `scram-sha-256` (or `trust` with POSTGRES_HOST_AUTH_METHOD=trust).
Errors carry the server's exact texts (`password authentication failed for user "app"`,
`permission denied for table products` ...); the data plane gets them as lib/pq prints them
(`pq: ...`), which is what a Go service logs.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sregym.twin.datastores.base import (
    DataStore,
    DbOutcome,
    StoreReply,
    bank_of,
    container_spec,
    volume_key,
)
from sregym.twin.datastores.disk import disk_effects, pg_min_duration
from sregym.twin.datastores.pg_sessions import Backend, Lock, Sessions

if TYPE_CHECKING:
    from sregym.twin.node.runtime import ContainerInstance
    from sregym.twin.twin import Twin

PGDATA = "/var/lib/postgresql/data"
SOCKET_DIR = "/var/run/postgresql"
VERSION = "17.2"
TABLE_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")
PRIV_LETTERS = {"INSERT": "a", "SELECT": "r", "UPDATE": "w", "DELETE": "d", "TRUNCATE": "D",
                "REFERENCES": "x", "TRIGGER": "t"}
# Which privilege a data-plane operation needs.
OP_PRIVILEGE = {"select": "SELECT", "find": "SELECT", "query": "SELECT", "count": "SELECT", "get": "SELECT",
                "insert": "INSERT", "seed": "INSERT", "update": "UPDATE", "delete": "DELETE"}


# A pooled client's command timeout (Npgsql's default CommandTimeout) and what it raises when a
# statement waits that long: the driver gives up reading and cancels the statement.
COMMAND_TIMEOUT_S = 30.0
LOCK_WAIT_ERROR = ("Npgsql.NpgsqlException (0x80004005): Exception while reading from stream ---> "
                   "System.TimeoutException: Timeout during reading attempt")


def md5_secret(password: str, user: str) -> str:
    """PostgreSQL's MD5 secret: `md5` + md5(password || username)."""
    return "md5" + hashlib.md5((password + user).encode()).hexdigest()


class PgError(Exception):
    """A server error: `severity` ("ERROR" or "FATAL"), the message, optional DETAIL/HINT."""

    def __init__(self, message: str, severity: str = "ERROR", sqlstate: str = "XX000",
                 detail: str = "", hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.severity = severity
        self.sqlstate = sqlstate
        self.detail = detail
        self.hint = hint
        self.context = ""  # `LINE 1: ...` with a caret, for errors with a position

    def render(self) -> str:
        """As psql prints it: `ERROR:  permission denied for table products` (+ DETAIL/HINT)."""
        text = f"{self.severity}:  {self.message}" if self.severity else self.message
        if self.context:
            text += f"\n{self.context}"
        if self.detail:
            text += f"\nDETAIL:  {self.detail}"
        if self.hint:
            text += f"\nHINT:  {self.hint}"
        return text


@dataclass
class PgRole:
    name: str
    login: bool = False
    superuser: bool = False
    createdb: bool = False
    createrole: bool = False
    replication: bool = False
    bypassrls: bool = False
    password: str | None = None  # the clear text, or for `method` "md5" the stored `md5<hex>` hash
    method: str = "scram-sha-256"  # how the secret is stored (password_encryption when it was set)

    def set_password(self, value: str | None, encryption: str = "scram-sha-256") -> None:
        """Store a password as the server would: a literal `md5...` hash stays an MD5 secret,
        anything else is hashed with `password_encryption`."""
        if value is None:
            self.password, self.method = None, "scram-sha-256"
        elif re.fullmatch(r"md5[0-9a-f]{32}", value):
            self.password, self.method = value, "md5"
        elif encryption == "md5":
            self.password, self.method = md5_secret(value, self.name), "md5"
        else:
            self.password, self.method = value, "scram-sha-256"

    def verify(self, password: str, hba_method: str) -> str:
        """"" when the password is accepted, else the server log's DETAIL text."""
        if self.password is None:
            return f'User "{self.name}" has no password assigned.'
        if self.method == "md5":
            if hba_method == "scram-sha-256":
                return f'User "{self.name}" does not have a valid SCRAM secret.'
            ok = md5_secret(password, self.name) == self.password
        else:
            ok = password == self.password
        return "" if ok else f'Password does not match for user "{self.name}".'

    def attributes(self) -> str:
        """The `\\du` Attributes column."""
        parts = []
        if self.superuser:
            parts.append("Superuser")
        if self.createrole:
            parts.append("Create role")
        if self.createdb:
            parts.append("Create DB")
        if not self.login:
            parts.append("Cannot login")
        if self.replication:
            parts.append("Replication")
        if self.bypassrls:
            parts.append("Bypass RLS")
        return ", ".join(parts)


@dataclass
class PgTable:
    schema: str
    name: str
    owner: str
    rows: int = 0
    grants: dict[str, set[str]] = field(default_factory=dict)  # grantee -> privileges
    pending: float = 0.0  # a fluid insert flow's fraction of a row, carried to the next tick

    def acl(self) -> str:
        """`\\dp`-style access privileges (owner first, then grantees sorted)."""
        entries = []
        for grantee in [self.owner, *sorted(g for g in self.grants if g != self.owner)]:
            privs = self.grants.get(grantee, set())
            if not privs:
                continue
            letters = "".join(PRIV_LETTERS[p] for p in TABLE_PRIVILEGES if p in privs)
            entries.append(f"{'' if grantee == 'PUBLIC' else grantee}={letters}/{self.owner}")
        return "\n".join(entries)


@dataclass
class PgDatabase:
    name: str
    owner: str
    tables: dict[tuple[str, str], PgTable] = field(default_factory=dict)
    allow_connections: bool = True


@dataclass
class PgState:
    """Everything in PGDATA: survives restarts as long as the volume does."""

    initialized: bool = False
    roles: dict[str, PgRole] = field(default_factory=dict)
    databases: dict[str, PgDatabase] = field(default_factory=dict)
    init_running: bool = False  # the entrypoint's temporary server (socket only)
    hba_method: str = "scram-sha-256"  # the `host all all all` line pg_hba.conf got at init
    password_encryption: str = "scram-sha-256"  # postgresql.conf

    def bootstrap(self, superuser: str, password: str | None, database: str,
                  host_auth: str = "scram-sha-256") -> None:
        """What initdb + the entrypoint's `docker_setup_db` leave in PGDATA (pg_hba.conf included:
        POSTGRES_HOST_AUTH_METHOD is read once, changing the env later changes nothing)."""
        self.initialized = True
        self.hba_method = host_auth or "scram-sha-256"
        if self.hba_method == "md5":
            self.password_encryption = "md5"  # the entrypoint sets it for md5 host auth
        role = PgRole(superuser, login=True, superuser=True, createdb=True, createrole=True,
                      replication=True, bypassrls=True)
        role.set_password(password or None, self.password_encryption)
        self.roles[superuser] = role
        for name in ("postgres", "template0", "template1"):
            self.databases[name] = PgDatabase(name, superuser, allow_connections=name != "template0")
        if database not in self.databases:
            self.databases[database] = PgDatabase(database, superuser)


class PgServer(DataStore):
    """One running postmaster bound to the cluster on its data volume."""

    kind = "postgres"

    @property
    def pg(self) -> PgState:
        return self.state

    @property
    def host_auth(self) -> str:
        return str(self.config.get("host_auth") or self.pg.hba_method)

    # ------------------------------------------------------------------ connections
    def authenticate(self, user: str, password: str | None, database: str, *, local: bool) -> PgRole:
        """Client authentication then the database check, in the server's order; raises the FATAL
        a client sees. `local` is the socket or loopback (trust in the official pg_hba.conf)."""
        role = self.pg.roles.get(user)
        trust = local or self.host_auth == "trust"
        if not trust:
            if password is None:
                raise PgError("fe_sendauth: no password supplied", severity="")
            detail = f'Role "{user}" does not exist.' if role is None else role.verify(password, self.host_auth)
            if detail:
                message = f'password authentication failed for user "{user}"'
                self.log("FATAL", message, f"auth:{user}", [
                    ("DETAIL", f"{detail}\n\tConnection matched file \"{PGDATA}/pg_hba.conf\" line 128: "
                               f'"host all all all {self.host_auth}"')])
                raise PgError(message, "FATAL", "28P01")
        if role is None:
            raise PgError(f'role "{user}" does not exist', "FATAL", "28000")
        if not role.login:  # checked with the session user, before the database is looked up
            raise PgError(f'role "{user}" is not permitted to log in', "FATAL", "28000")
        db = self.pg.databases.get(database)
        if db is None:
            raise PgError(f'database "{database}" does not exist', "FATAL", "3D000")
        if not db.allow_connections:
            raise PgError(f'database "{database}" is not currently accepting connections', "FATAL", "55000")
        return role

    def sessions(self) -> Sessions:
        """This postmaster's backends (a restart starts with none); clients that left are reaped."""
        found = self.config.get("_sessions")
        now = self.twin.clock.now
        if found is None:
            found = self.config["_sessions"] = Sessions(now)
        found.reap(now)
        return found

    def sessions_begin(self, backend: Backend) -> None:
        self.sessions().begin_xact(backend, self.twin.clock.now)

    def table(self, database: str, name: str) -> PgTable | None:
        schema, _, table = name.rpartition(".")
        return self.pg.databases[database].tables.get((schema or "public", table)) \
            if database in self.pg.databases else None

    def has_privilege(self, user: str, table: PgTable, privilege: str) -> bool:
        role = self.pg.roles.get(user)
        if role is not None and role.superuser:
            return True
        if table.owner == user:
            return True
        return privilege in table.grants.get(user, set()) or privilege in table.grants.get("PUBLIC", set())

    def check_table(self, user: str, database: str, name: str, privilege: str,
                    statement: str = "") -> PgTable:
        found = self.table(database, name)
        if found is None:
            raise PgError(f'relation "{name}" does not exist', sqlstate="42P01")
        if not self.has_privilege(user, found, privilege):
            message = f"permission denied for table {found.name}"
            self.log("ERROR", message, f"denied:{user}:{found.name}", [("STATEMENT", statement or (
                f"SELECT * FROM {found.name}" if privilege == "SELECT" else f"{privilege} ... {found.name}"))])
            raise PgError(message, sqlstate="42501")
        return found

    def log(self, severity: str, message: str, key: str | None, extra: list[tuple[str, str]]) -> None:
        """A server log line (stderr of the container), rate-limited per `key` like a busy
        server's repeated errors would be sampled."""
        from sregym.twin.node.runtime import runtime_of

        if self.pg.init_running:
            return
        now = self.twin.clock.now
        limiter = self.config.setdefault("_log_limiter", {})
        if key is not None:
            if now - limiter.get(key, -math.inf) < 10:
                return
            limiter[key] = now
        instance = runtime_of(self.twin).instance(self.namespace, self.pod_name, self.container)
        logs = self.twin.services.logs
        if instance is None or logs is None:
            return
        stamp = datetime.fromtimestamp(now, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.000 UTC")
        pid = 100 + int(now) % 9000
        for level, text in [(severity, message), *extra]:
            logs.append(instance.container_id, now, "stderr", f"{stamp} [{pid}] {level}:  {text}")

    # ------------------------------------------------------------------ data plane
    def request(self, op: Any = "select", *, db: str = "", collection: str = "", user: str | None = None,
                password: str | None = None, rate: float = 1.0, local: bool = False,
                client: dict[str, Any] | None = None, **_: object) -> DbOutcome:
        """A class of queries at `rate`/s on table `collection` of database `db` (default: the
        user's name, as libpq defaults it)."""
        if not isinstance(op, str):
            return self.serve_pg(op)  # type: ignore[return-value]
        user = user or "postgres"
        database = db or user
        try:
            self.authenticate(user, password, database, local=local)
            table = None
            if collection:
                privilege = OP_PRIVILEGE.get(op.lower(), "SELECT")
                table = self.check_table(user, database, collection, privilege)
        except PgError as exc:
            code = {"28P01": "AuthenticationFailed", "28000": "AuthenticationFailed",
                    "42501": "Unauthorized", "42P01": "NotFound", "3D000": "NotFound"}.get(exc.sqlstate, "Error")
            return DbOutcome.fail(code, f"pq: {exc.message}")
        if table is not None and client is not None:
            waiting = self._pooled_statement(client, user, database, table, op.lower())
            if waiting is not None:
                self.account(rate, 0.05)
                return waiting
        service_ms = 0.3 + (0.00005 * table.rows if table is not None and op.lower() == "count" else 0.0)
        service_ms, failure = disk_effects(self, self.config.get("data_mount") or PGDATA, op.lower(), rate,
                                           service_ms, db=database, collection=collection)
        if failure is not None:
            self.account(rate, service_ms)
            return failure
        if table is not None and op.lower() in ("insert", "seed") and rate > 0:
            flow = table.pending + rate * self.twin.clock.tick  # rows this tick, fractions carried
            table.rows += int(flow)
            table.pending = flow - int(flow)
        self.account(rate, service_ms)
        return DbOutcome(True, None, "", service_ms)

    def _pooled_statement(self, client: dict[str, Any], user: str, database: str, table: PgTable,
                          op: str) -> DbOutcome | None:
        """A service's pooled connection runs this tick's statement: None when it goes through, else
        the client's command timeout while it waits for a lock another backend holds."""
        meta = client.get("metadata") or {}
        addr = str((client.get("status") or {}).get("podIP") or "")
        key = (str(meta.get("namespace", "")), str(meta.get("name", "")), user, database)
        sessions = self.sessions()
        now = self.twin.clock.now
        backend = sessions.pooled(key, user, database, now, addr)
        relation = (database, table.schema, table.name)
        mode = "RowExclusiveLock" if op in ("insert", "seed", "update", "delete") else "AccessShareLock"
        target = f'{table.schema}."{table.name}"' if table.name in ("order", "user") else f"{table.schema}.{table.name}"
        statement = (f"INSERT INTO {target} VALUES ($1, $2, $3)" if mode == "RowExclusiveLock"
                     else f"SELECT * FROM {target} WHERE id = $1")
        blockers = sessions.blockers(backend, relation, mode)
        if not blockers:
            if backend.wait is not None and backend.state_change is not None and backend.xact_start == now:
                return None  # this tick's transaction already waits on an earlier statement
            if backend.state != "idle" or backend.query != statement:
                backend.state, backend.wait, backend.state_change = "idle", None, now
                backend.locks.clear()
                backend.query, backend.query_start = statement, now
            return None
        if backend.wait is None:
            backend.query_start = now
        elif now - (backend.query_start or now) >= COMMAND_TIMEOUT_S:
            # The client's command timeout fired: it cancels and sends the next statement.
            self.log("ERROR", "canceling statement due to user request", f"cancel:{key}",
                     [("STATEMENT", backend.query)])
            backend.query_start = now
        backend.state, backend.query, backend.state_change = "active", statement, backend.query_start
        backend.xact_start = now  # marks the tick: the transaction's later statements never run
        backend.wait = ("Lock", "relation")
        backend.locks = [Lock(relation, mode, granted=False)]
        return DbOutcome.fail("Timeout", LOCK_WAIT_ERROR, service_ms=COMMAND_TIMEOUT_S * 1000.0)

    def serve_pg(self, req: Any) -> StoreReply:
        out = self.request(str(req.operation), db=getattr(req, "database", "") or "",
                           collection=getattr(req, "collection", "") or "",
                           user=getattr(req, "username", None), password=getattr(req, "password", None),
                           rate=float(getattr(req, "rate", 0.0) or 0.0), client=getattr(req, "client", None))
        cls = "" if out.ok else ("auth" if out.error in ("AuthenticationFailed", "Unauthorized")
                                 else "timeout" if out.error == "Timeout" else "server_error")
        return StoreReply(out.ok and out.error_ratio < 0.5, out.service_ms, out.message, cls, None,
                          out.error_ratio, out.error or "")

    def serve(self, req: Any) -> StoreReply:
        return self.serve_pg(req)

    def memory_bytes(self) -> int:
        rows = sum(t.rows for d in self.pg.databases.values() for t in d.tables.values())
        return min(rows * 120, 128 << 20)


# ---------------------------------------------------------------------- state and the server
def data_mount(pod: dict[str, Any], container: str, pgdata: str = PGDATA) -> str:
    """The mount path holding PGDATA (the longest mount that is a prefix), else PGDATA itself."""
    best = ""
    for mount in container_spec(pod, container).get("volumeMounts") or []:
        path = str(mount.get("mountPath", "")).rstrip("/")
        if path and (pgdata == path or pgdata.startswith(path + "/")) and len(path) > len(best):
            best = path
    return best or pgdata


def pg_state(twin: Twin, pod: dict[str, Any], container: str, started_at: float,
             pgdata: str = PGDATA) -> PgState:
    uid = (pod.get("metadata") or {}).get("uid", "")
    key = volume_key(twin, pod, container_spec(pod, container), data_mount(pod, container, pgdata),
                     f"{uid}/{container}@{started_at:.3f}")  # :g would merge nearby restarts
    return bank_of(twin).state(key, PgState)


def runs_postgres(argv: list[str]) -> bool:
    """Whether a container's command starts the server (not `sleep`, not a one-off `psql`)."""
    names = [a.rsplit("/", 1)[-1] for a in argv]
    if not names:
        return True
    if names[0] == "docker-entrypoint.sh":
        return len(names) == 1 or names[1] == "postgres" or argv[1].startswith("-")
    return names[0] == "postgres"


def make_server(twin: Twin, pod: dict[str, Any], container: str,
                instance: ContainerInstance) -> PgServer | None:
    """The `SERVER_FACTORIES` entry for postgres images (None when the server is not running)."""
    from sregym.twin.datastores.base import flag

    if not runs_postgres(list(instance.argv)):
        return None
    env = instance.env
    pgdata = env.get("PGDATA") or PGDATA
    port = int(flag(list(instance.argv), "-p", "--port", default="5432") or 5432)
    config = {"port": port, "data_mount": data_mount(pod, container, pgdata),
              "log_min_duration_statement": pg_min_duration(list(instance.argv))}
    return PgServer(twin, pod, container, pg_state(twin, pod, container, instance.started_at, pgdata), config)


def register(factories: dict[str, Callable[..., DataStore]]) -> None:
    factories["postgres"] = make_server


__all__ = ["PGDATA", "PgDatabase", "PgError", "PgRole", "PgServer", "PgState", "PgTable", "data_mount",
           "make_server", "pg_state"]
