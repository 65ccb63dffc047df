"""A small SQL subset run against the PostgreSQL model: what an engineer types into `psql -c`.

Statements change the model the services authenticate against, so `REVOKE SELECT ON products
FROM app` really makes the application's queries fail with `permission denied for table
products`. Supported: `SELECT 1`, `SELECT current_user`/`version()`/`current_database()`,
`SELECT count(*) FROM t`, `CREATE ROLE|USER`, `ALTER ROLE|USER`, `DROP ROLE|USER`,
`CREATE|DROP DATABASE`, `CREATE|DROP TABLE`, `INSERT INTO ... VALUES`, `DELETE FROM`,
`GRANT|REVOKE ... ON [TABLE] t | ALL TABLES IN SCHEMA s`, and psql's `\\du`, `\\l`, `\\dt`.
Anything else is a `syntax error` the way the parser reports one.

A session bound to a backend (`pg_sessions`) takes the table locks PostgreSQL takes (ACCESS SHARE
for reads, ROW EXCLUSIVE for writes, ACCESS EXCLUSIVE for TRUNCATE, any mode with `LOCK TABLE
... IN <mode> MODE [NOWAIT]` inside a transaction block) and keeps them until COMMIT/ROLLBACK;
a conflicting lock raises `Blocked` and `SELECT pg_sleep(n)` raises `Sleeping`, for the client
to wait out in simulated time. `SET lock_timeout|statement_timeout` are kept per session. SELECTs
over `pg_stat_activity`/`pg_locks` or calling `pg_blocking_pids`, `pg_terminate_backend`,
`pg_cancel_backend`, `pg_backend_pid` run in `pg_activity`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sregym.twin.datastores.pg_activity import run_activity, wants_activity
from sregym.twin.datastores.pg_sessions import SQL_MODES, Backend, stamp
from sregym.twin.datastores.postgres import (
    TABLE_PRIVILEGES,
    VERSION,
    PgDatabase,
    PgError,
    PgRole,
    PgServer,
    PgTable,
)

_IDENT = r'(?:"[^"]+"|[A-Za-z_][A-Za-z0-9_$]*)'
_QNAME = rf"{_IDENT}(?:\.{_IDENT})?"


@dataclass
class Result:
    """One statement's outcome: a command tag (`CREATE ROLE`) or a table to print."""

    tag: str | None = None
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    right: set[int] = field(default_factory=set)  # right-aligned (numeric) columns
    title: str = ""
    footer: bool = True
    notices: list[str] = field(default_factory=list)  # WARNING/NOTICE lines for stderr
    empty_message: str = ""  # describe commands with no rows print this to stderr instead


def ident(text: str) -> str:
    """Identifier folding: unquoted names go to lower case, quoted ones keep their case."""
    text = text.strip()
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    return text.lower()


def qname(text: str) -> str:
    return ".".join(ident(p) for p in re.findall(_IDENT, text))


def split_statements(sql: str) -> list[str]:
    """Split on `;` outside quotes; drop `--` comments and empty statements."""
    out, buf, quote = [], [], ""
    i = 0
    while i < len(sql):
        ch = sql[i]
        if quote:
            buf.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            buf.append(ch)
        elif ch == "-" and sql[i:i + 2] == "--":
            while i < len(sql) and sql[i] != "\n":
                i += 1
            continue
        elif ch == ";":
            out.append("".join(buf).strip())
            buf = []
        else:
            buf.append(ch)
        i += 1
    out.append("".join(buf).strip())
    return [s for s in out if s]


class Blocked(Exception):
    """The statement waits for a lock other backends hold (`pids`); run it again once they let go."""

    def __init__(self, pids: list[int]) -> None:
        super().__init__(pids)
        self.pids = pids


class Sleeping(Exception):
    """`SELECT pg_sleep(n)`: the statement keeps the backend busy for `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds


def duration_ms(value: str) -> float | None:
    """A `lock_timeout`/`statement_timeout` value in ms (`5s`, `250ms`, `1min`, `5000`), 0 = off."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|min|h)?\s*", value, re.IGNORECASE)
    if not m:
        return None
    scale = {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000}[(m.group(2) or "ms").lower()]
    return float(m.group(1)) * scale


class Session:
    """One connection: the authenticated role and the database it is connected to, and -- when it
    is a live client connection -- its backend, whose transaction holds the locks it took."""

    def __init__(self, server: PgServer, user: str, database: str, backend: Backend | None = None) -> None:
        self.server = server
        self.user = user
        self.database = database
        self.password_encryption = server.pg.password_encryption  # `SET` changes this session only
        self.in_block = False  # inside a multi-statement query string (an implicit transaction)
        self.explicit = False  # inside BEGIN ... COMMIT
        self.backend = backend
        self.settings: dict[str, str] = {"lock_timeout": "0", "statement_timeout": "0"}
        self.notices: list[str] = []

    # ------------------------------------------------------------------- transactions
    def lock(self, name: str, mode: str) -> None:
        """Take a table lock for the current transaction; raise `Blocked` while others conflict."""
        if self.backend is None:
            return
        schema, _, table = name.rpartition(".")
        sessions = self.server.sessions()
        self.server.sessions_begin(self.backend)
        pids = sessions.acquire(self.backend, (self.database, schema or "public", table), mode)
        if pids:
            raise Blocked(pids)
        if mode != "AccessShareLock":
            sessions.assign_xid(self.backend)

    def statement_done(self) -> None:
        """Autocommit: a statement outside any transaction block releases its locks at its end."""
        if self.backend is not None and not (self.in_block or self.explicit):
            self.server.sessions().end_xact(self.backend)

    def abort(self) -> None:
        """An error ends the transaction: everything it locked is released."""
        self.explicit = False
        if self.backend is not None:
            self.server.sessions().end_xact(self.backend)

    def transaction(self, word: str) -> Result:
        word = word.upper()
        if word in ("BEGIN", "START"):
            if self.explicit:
                return Result(tag="BEGIN", notices=["WARNING:  there is already a transaction in progress"])
            self.explicit = True
            if self.backend is not None:
                self.server.sessions_begin(self.backend)
            return Result(tag="BEGIN")
        tag = "COMMIT" if word in ("COMMIT", "END") else "ROLLBACK"
        notices = [] if (self.explicit or self.in_block) else ["WARNING:  there is no transaction in progress"]
        self.explicit = False
        if self.backend is not None:
            self.server.sessions().end_xact(self.backend)
        return Result(tag=tag, notices=notices)

    def lock_stmt(self, text: str) -> Result:
        m = re.fullmatch(rf"lock\s+(?:table\s+)?(?:only\s+)?((?:{_QNAME}\s*,\s*)*{_QNAME})"
                         r"(?:\s+in\s+([a-z ]+?)\s+mode)?(\s+nowait)?", text, re.IGNORECASE | re.DOTALL)
        if not m:
            raise self.syntax(text, "")
        mode = SQL_MODES.get(" ".join((m.group(2) or "ACCESS EXCLUSIVE").upper().split()))
        if mode is None:
            raise self.syntax(text, (m.group(2) or "").split()[0])
        if not (self.explicit or self.in_block):
            raise PgError("LOCK TABLE can only be used in transaction blocks", sqlstate="25P01")
        for raw in _split_commas(m.group(1)):
            name = qname(raw)
            found = self.server.table(self.database, name)
            if found is None:
                raise PgError(f'relation "{name}" does not exist', sqlstate="42P01")
            privilege = "SELECT" if mode == "AccessShareLock" else "UPDATE"
            if not (self.server.has_privilege(self.user, found, privilege)
                    or self.server.has_privilege(self.user, found, "INSERT")):
                raise PgError(f"permission denied for table {found.name}", sqlstate="42501")
            try:
                self.lock(name, mode)
            except Blocked:
                if m.group(3):
                    self.backend.locks = [lock for lock in self.backend.locks if lock.granted]  # type: ignore[union-attr]
                    self.backend.wait = None  # type: ignore[union-attr]
                    raise PgError(f'could not obtain lock on relation "{found.name}"', sqlstate="55P03") from None
                raise
        return Result(tag="LOCK TABLE")

    @property
    def role(self) -> PgRole:
        return self.server.pg.roles[self.user]

    @property
    def db(self) -> PgDatabase:
        return self.server.pg.databases[self.database]

    # ---------------------------------------------------------------- entry point
    def run(self, sql: str) -> Result:
        self.notices = []
        result = self._run(sql)
        if self.notices:
            result.notices = [*self.notices, *result.notices]
        return result

    def _run(self, sql: str) -> Result:
        text = sql.strip().rstrip(";").strip()
        if text.startswith("\\"):
            return self.meta(text)
        words = text.split()
        head = " ".join(words[:2]).upper() if words else ""
        first = words[0].upper() if words else ""
        handlers = {"SELECT": self.select, "GRANT": self.grant, "REVOKE": self.grant,
                    "INSERT": self.insert, "DELETE": self.delete, "TRUNCATE": self.delete}
        if head in ("CREATE SCHEMA", "CREATE INDEX") or re.match(r"grant\s+usage\s+on\s+schema\b", text, re.I):
            return Result(tag="GRANT" if first == "GRANT" else head)  # schemas/indexes: not modelled
        if first in handlers:
            return handlers[first](text)
        if head in ("CREATE ROLE", "CREATE USER", "ALTER ROLE", "ALTER USER"):
            return self.role_stmt(text)
        if head in ("DROP ROLE", "DROP USER"):
            return self.drop_role(text)
        if head in ("CREATE DATABASE", "DROP DATABASE"):
            return self.database_stmt(text)
        if head in ("CREATE TABLE", "DROP TABLE"):
            return self.table_stmt(text)
        if first in ("SET", "SHOW"):
            return self.setting(text)
        if first in ("BEGIN", "COMMIT", "ROLLBACK", "END", "ABORT") or head == "START TRANSACTION":
            return self.transaction(first)
        if first == "LOCK":
            return self.lock_stmt(text)
        raise self.syntax(text, words[0] if words else "")

    @staticmethod
    def syntax(text: str, token: str) -> PgError:
        message = f'syntax error at or near "{token}"' if token else "syntax error at end of input"
        return _with_line(PgError(message, sqlstate="42601"), text, text.find(token) if token else len(text))

    def setting(self, text: str) -> Result:
        """`SET password_encryption = 'md5'` / `SHOW password_encryption` (other settings: no-ops)."""
        m = re.fullmatch(r"(set|show)\s+(?:session\s+)?(\w+)\s*(?:(?:=|to)\s*'?([\w.-]+)'?)?", text,
                         re.IGNORECASE)
        if not m:
            raise self.syntax(text, "")
        name = m.group(2).lower()
        if m.group(1).lower() == "show":
            value = self.password_encryption if name == "password_encryption" else self.settings.get(name, "")
            return Result(columns=[name], rows=[[value]])
        if name in ("lock_timeout", "statement_timeout"):
            value = m.group(3) or "0"
            if duration_ms(value) is None:
                raise PgError(f'invalid value for parameter "{name}": "{value}"', sqlstate="22023",
                              hint='Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".')
            self.settings[name] = value
            return Result(tag="SET")
        if name == "password_encryption":
            value = (m.group(3) or "").lower()
            if value not in ("md5", "scram-sha-256"):
                raise PgError(f'invalid value for parameter "password_encryption": "{m.group(3)}"',
                              sqlstate="22023", hint="Available values: md5, scram-sha-256.")
            self.password_encryption = value
        return Result(tag="SET")

    # -------------------------------------------------------------------- SELECT
    def select(self, text: str) -> Result:
        body = text[len("select"):].strip()
        sleep = re.fullmatch(r"pg_sleep\s*\(\s*'?(\d+(?:\.\d+)?)'?\s*\)", body, re.IGNORECASE)
        if sleep:
            raise Sleeping(float(sleep.group(1)))
        if wants_activity(body):
            columns, rows, right = run_activity(self, text)
            return Result(columns=columns, rows=rows, right=right)
        m = re.fullmatch(r"count\s*\(\s*\*\s*\)\s+from\s+(" + _QNAME + r")(?:\s+where\s+.*)?", body,
                         re.IGNORECASE | re.DOTALL)
        if m:
            name = qname(m.group(1))
            table = self.server.table(self.database, name)
            if table is None:
                raise _with_line(PgError(f'relation "{name}" does not exist', sqlstate="42P01"),
                                 text, text.lower().find(m.group(1).lower(), len("select")))
            self.server.check_table(self.user, self.database, name, "SELECT", text)
            self.lock(name, "AccessShareLock")
            return Result(columns=["count"], rows=[[str(table.rows)]], right={0})
        m = re.fullmatch(r"\*\s+from\s+(" + _QNAME + r").*", body, re.IGNORECASE | re.DOTALL)
        if m:
            name = qname(m.group(1))
            if self.server.table(self.database, name) is None:
                raise _with_line(PgError(f'relation "{name}" does not exist', sqlstate="42P01"),
                                 text, text.lower().find(m.group(1).lower(), len("select")))
            table = self.server.check_table(self.user, self.database, name, "SELECT", text)
            self.lock(name, "AccessShareLock")
            return Result(columns=["id"], rows=[[str(i + 1)] for i in range(min(table.rows, 50))], right={0})
        values: list[str] = []
        columns: list[str] = []
        right: set[int] = set()
        for index, item in enumerate(_split_commas(body)):
            expr, alias = _alias(item)
            low = expr.lower().replace(" ", "")
            if re.fullmatch(r"-?\d+", expr):
                value, name = expr, "?column?"
                right.add(index)
            elif re.fullmatch(r"'[^']*'", expr):
                value, name = expr[1:-1], "?column?"
            elif low in ("current_user", "user", "session_user", "current_user()"):
                value, name = self.user, low.rstrip("()") if low != "user" else "current_user"
            elif low == "current_database()":
                value, name = self.database, "current_database"
            elif low == "version()":
                value, name = (f"PostgreSQL {VERSION} (Debian {VERSION}-1.pgdg120+1) on x86_64-pc-linux-gnu, "
                               "compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit"), "version"
            elif low in ("now()", "current_timestamp"):
                value, name = str(stamp(self.server.twin.clock.now)), low.rstrip("()")
            else:
                raise _with_line(PgError(f'column "{expr}" does not exist', sqlstate="42703"), text,
                                 text.find(expr))
            values.append(value)
            columns.append(alias or name)
        if not columns:
            raise self.syntax(text, "")
        return Result(columns=columns, rows=[values], right=right)

    # ----------------------------------------------------------------------- roles
    def role_stmt(self, text: str) -> Result:
        m = re.match(rf"(create|alter)\s+(role|user)\s+({_IDENT})\s*(?:with\s+)?(.*)$", text,
                     re.IGNORECASE | re.DOTALL)
        if not m:
            raise self.syntax(text, text.split()[2] if len(text.split()) > 2 else "")
        verb, kind, name, options = m.group(1).upper(), m.group(2).upper(), ident(m.group(3)), m.group(4)
        roles = self.server.pg.roles
        me = self.role
        if verb == "CREATE":
            if not (me.superuser or me.createrole):
                raise PgError("permission denied to create role", sqlstate="42501",
                              detail="Only roles with the CREATEROLE attribute may create roles.")
            if name in roles:
                raise PgError(f'role "{name}" already exists', sqlstate="42710")
            role = PgRole(name, login=kind == "USER")
            _apply_options(role, options, text, self.password_encryption)
            roles[name] = role
            return Result(tag="CREATE ROLE")
        role = roles.get(name)
        if role is None:
            raise PgError(f'role "{name}" does not exist', sqlstate="42704")
        only_password = re.fullmatch(r"\s*(encrypted\s+)?password\s+('[^']*'|null)\s*", options, re.IGNORECASE)
        if not (me.superuser or (me.createrole and not role.superuser) or (name == self.user and only_password)):
            raise PgError("permission denied to alter role", sqlstate="42501",
                          detail=f'Only roles with the CREATEROLE attribute and the ADMIN option on role '
                                 f'"{name}" may alter this role.')
        _apply_options(role, options, text, self.password_encryption)
        return Result(tag="ALTER ROLE")

    def drop_role(self, text: str) -> Result:
        m = re.match(r"drop\s+(?:role|user)\s+(if\s+exists\s+)?(.+)$", text, re.IGNORECASE | re.DOTALL)
        if not m:
            raise self.syntax(text, "")
        if not (self.role.superuser or self.role.createrole):
            raise PgError("permission denied to drop role", sqlstate="42501")
        result = Result(tag="DROP ROLE")
        for raw in _split_commas(m.group(2)):
            name = ident(raw)
            if name not in self.server.pg.roles:
                if m.group(1):
                    result.notices.append(f'NOTICE:  role "{name}" does not exist, skipping')
                    continue
                raise PgError(f'role "{name}" does not exist', sqlstate="42704")
            if name == self.user:
                raise PgError("current user cannot be dropped", sqlstate="55006")
            owned = [d.name for d in self.server.pg.databases.values() if d.owner == name]
            if owned:
                raise PgError(f'role "{name}" cannot be dropped because some objects depend on it',
                              sqlstate="2BP01", detail=f"owner of database {owned[0]}")
            del self.server.pg.roles[name]
            for db in self.server.pg.databases.values():
                for table in db.tables.values():
                    table.grants.pop(name, None)
        return result

    # ------------------------------------------------------------------- databases
    def database_stmt(self, text: str) -> Result:
        m = re.match(rf"(create|drop)\s+database\s+(if\s+exists\s+)?({_IDENT})(.*)$", text,
                     re.IGNORECASE | re.DOTALL)
        if not m:
            raise self.syntax(text, "")
        name = ident(m.group(3))
        dbs = self.server.pg.databases
        if self.in_block:
            raise PgError(f"{m.group(1).upper()} DATABASE cannot run inside a transaction block", sqlstate="25001")
        if m.group(1).lower() == "create":
            if not (self.role.superuser or self.role.createdb):
                raise PgError("permission denied to create database", sqlstate="42501")
            if name in dbs:
                raise PgError(f'database "{name}" already exists', sqlstate="42P04")
            owner_m = re.search(rf"owner\s*=?\s*({_IDENT})", m.group(4), re.IGNORECASE)
            owner = ident(owner_m.group(1)) if owner_m else self.user
            if owner not in self.server.pg.roles:
                raise PgError(f'role "{owner}" does not exist', sqlstate="42704")
            dbs[name] = PgDatabase(name, owner)
            return Result(tag="CREATE DATABASE")
        if name not in dbs:
            if m.group(2):
                return Result(tag="DROP DATABASE", notices=[f'NOTICE:  database "{name}" does not exist, skipping'])
            raise PgError(f'database "{name}" does not exist', sqlstate="3D000")
        if name == self.database:
            raise PgError("cannot drop the currently open database", sqlstate="55006")
        if not (self.role.superuser or dbs[name].owner == self.user):
            raise PgError(f"must be owner of database {name}", sqlstate="42501")
        del dbs[name]
        return Result(tag="DROP DATABASE")

    # ---------------------------------------------------------------------- tables
    def table_stmt(self, text: str) -> Result:
        m = re.match(rf"(create|drop)\s+table\s+(if\s+(?:not\s+)?exists\s+)?({_QNAME})", text,
                     re.IGNORECASE | re.DOTALL)
        if not m:
            raise self.syntax(text, "")
        name = qname(m.group(3))
        schema, _, table = name.rpartition(".")
        key = (schema or "public", table)
        tables = self.db.tables
        if m.group(1).lower() == "create":
            if key in tables:
                if m.group(2):
                    return Result(tag="CREATE TABLE",
                                  notices=[f'NOTICE:  relation "{table}" already exists, skipping'])
                raise PgError(f'relation "{table}" already exists', sqlstate="42P07")
            if not (self.role.superuser or self.db.owner == self.user):
                # PostgreSQL 15+: only the database owner may create in schema public.
                raise _with_line(PgError(f"permission denied for schema {key[0]}", sqlstate="42501"),
                                 text, text.lower().find(m.group(3).lower()))
            tables[key] = PgTable(key[0], table, self.user)
            return Result(tag="CREATE TABLE")
        found = tables.get(key)
        if found is None:
            if m.group(2):
                return Result(tag="DROP TABLE", notices=[f'NOTICE:  table "{table}" does not exist, skipping'])
            raise PgError(f'table "{table}" does not exist', sqlstate="42P01")
        if not (self.role.superuser or found.owner == self.user):
            raise PgError(f"must be owner of table {table}", sqlstate="42501")
        del tables[key]
        return Result(tag="DROP TABLE")

    def insert(self, text: str) -> Result:
        m = re.match(rf"insert\s+into\s+({_QNAME})\s*(?:\([^)]*\))?\s*values\s*(.*)$", text,
                     re.IGNORECASE | re.DOTALL)
        if not m:
            raise self.syntax(text, "")
        name = qname(m.group(1))
        if self.server.table(self.database, name) is None:
            raise _with_line(PgError(f'relation "{name}" does not exist', sqlstate="42P01"), text,
                             text.lower().find(m.group(1).lower()))
        table = self.server.check_table(self.user, self.database, name, "INSERT")
        self.lock(name, "RowExclusiveLock")
        count = len(re.findall(r"\(", m.group(2))) or 1
        table.rows += count
        return Result(tag=f"INSERT 0 {count}")

    def delete(self, text: str) -> Result:
        m = re.match(rf"(?:delete\s+from|truncate(?:\s+table)?)\s+({_QNAME})(.*)$", text, re.IGNORECASE | re.DOTALL)
        if not m:
            raise self.syntax(text, "")
        name = qname(m.group(1))
        truncate = text.lower().startswith("truncate")
        if self.server.table(self.database, name) is None:
            raise PgError(f'relation "{name}" does not exist', sqlstate="42P01")
        table = self.server.check_table(self.user, self.database, name, "TRUNCATE" if truncate else "DELETE")
        self.lock(name, "AccessExclusiveLock" if truncate else "RowExclusiveLock")
        removed = table.rows if not m.group(2).strip() else min(1, table.rows)
        table.rows -= removed
        return Result(tag="TRUNCATE TABLE" if truncate else f"DELETE {removed}")

    # --------------------------------------------------------------- GRANT/REVOKE
    def grant(self, text: str) -> Result:
        grant = text.lower().startswith("grant")
        m = re.match(r"(?:grant|revoke)\s+(.+?)\s+on\s+(.+?)\s+(?:to|from)\s+(.+?)"
                     r"(?:\s+(?:with\s+grant\s+option|cascade|restrict))?$", text, re.IGNORECASE | re.DOTALL)
        if not m:
            raise self.syntax(text, "")
        privs_text, target, grantees_text = m.group(1), m.group(2).strip(), m.group(3)
        privs: set[str] = set()
        for item in _split_commas(privs_text):
            word = item.upper().replace("PRIVILEGES", "").strip()
            if word == "ALL":
                privs |= set(TABLE_PRIVILEGES)
            elif word in TABLE_PRIVILEGES:
                privs.add(word)
            else:
                raise PgError(f"invalid privilege type {word} for relation", sqlstate="0LP01")
        tables: list[PgTable] = []
        all_m = re.fullmatch(rf"all\s+tables\s+in\s+schema\s+({_IDENT})", target, re.IGNORECASE)
        if all_m:
            schema = ident(all_m.group(1))
            tables = [t for (s, _), t in sorted(self.db.tables.items()) if s == schema]
        else:
            target = re.sub(r"^table\s+", "", target, flags=re.IGNORECASE)
            for raw in _split_commas(target):
                name = qname(raw)
                found = self.server.table(self.database, name)
                if found is None:
                    raise PgError(f'relation "{name}" does not exist', sqlstate="42P01")
                tables.append(found)
        grantees = []
        for raw in _split_commas(grantees_text):
            name = "PUBLIC" if raw.strip().upper() == "PUBLIC" else ident(raw)
            if name != "PUBLIC" and name not in self.server.pg.roles:
                raise PgError(f'role "{name}" does not exist', sqlstate="42704")
            grantees.append(name)
        result = Result(tag="GRANT" if grant else "REVOKE")
        for table in tables:
            if not (self.role.superuser or table.owner == self.user):
                verb = "granted" if grant else "revoked"
                result.notices.append(f'WARNING:  no privileges were {verb} for "{table.name}"')
                continue
            for grantee in grantees:
                held = table.grants.setdefault(grantee, set())
                if grant:
                    held |= privs
                else:
                    held -= privs
                    if not held:
                        del table.grants[grantee]
        return result

    # ----------------------------------------------------------------- meta-commands
    def meta(self, text: str) -> Result:
        cmd = text.split()[0]
        base = cmd.rstrip("+S")
        if base == "\\du" or base == "\\dg":
            rows = [[r.name, r.attributes()] for _, r in sorted(self.server.pg.roles.items())]
            return Result(columns=["Role name", "Attributes"], rows=rows, title="List of roles", footer=False)
        if base == "\\l" or base == "\\list":
            rows = []
            for _, db in sorted(self.server.pg.databases.items()):
                acl = ""
                if db.name in ("template0", "template1"):
                    acl = f"=c/{db.owner}\n{db.owner}=CTc/{db.owner}"
                rows.append([db.name, db.owner, "UTF8", "libc", "en_US.utf8", "en_US.utf8", "", "", acl])
            return Result(columns=["Name", "Owner", "Encoding", "Locale Provider", "Collate", "Ctype", "Locale",
                                   "ICU Rules", "Access privileges"], rows=rows, title="List of databases")
        if base == "\\dt":
            rows = [[t.schema, t.name, "table", t.owner] for _, t in sorted(self.db.tables.items())]
            return Result(columns=["Schema", "Name", "Type", "Owner"], rows=rows, title="List of relations",
                          empty_message="Did not find any relations.")
        if base == "\\dp" or base == "\\z":
            rows = [[t.schema, t.name, "table", t.acl(), "", ""] for _, t in sorted(self.db.tables.items())]
            return Result(columns=["Schema", "Name", "Type", "Access privileges", "Column privileges",
                                   "Policies"], rows=rows, title="Access privileges")
        if base == "\\conninfo":
            return Result(tag=f'You are connected to database "{self.database}" as user "{self.user}".')
        raise PgError(f"invalid command {cmd}", severity="")


def _with_line(err: PgError, text: str, pos: int) -> PgError:
    """Add psql's `LINE 1: ...` context with a caret under the offending token."""
    if pos < 0:
        return err
    line = text.splitlines()[0] if text else ""
    err.context = f"LINE 1: {line}\n" + " " * (len("LINE 1: ") + pos) + "^"
    return err


def _split_commas(text: str) -> list[str]:
    parts, depth, buf = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(buf).strip())
            buf = []
        else:
            buf.append(ch)
    if "".join(buf).strip():
        parts.append("".join(buf).strip())
    return parts


def _alias(item: str) -> tuple[str, str]:
    m = re.fullmatch(rf"(.+?)\s+(?:as\s+)?({_IDENT})", item.strip(), re.IGNORECASE)
    if m and not re.fullmatch(r"\w+\s*\(.*\)", item.strip()):
        return m.group(1).strip(), ident(m.group(2))
    return item.strip(), ""


def _apply_options(role: PgRole, options: str, text: str, encryption: str = "scram-sha-256") -> None:
    tokens = re.findall(r"'[^']*'|\S+", options)
    i = 0
    flags = {"LOGIN": ("login", True), "NOLOGIN": ("login", False), "SUPERUSER": ("superuser", True),
             "NOSUPERUSER": ("superuser", False), "CREATEDB": ("createdb", True), "NOCREATEDB": ("createdb", False),
             "CREATEROLE": ("createrole", True), "NOCREATEROLE": ("createrole", False),
             "REPLICATION": ("replication", True), "NOREPLICATION": ("replication", False),
             "BYPASSRLS": ("bypassrls", True), "NOBYPASSRLS": ("bypassrls", False)}
    while i < len(tokens):
        word = tokens[i].upper()
        if word in flags:
            attr, value = flags[word]
            setattr(role, attr, value)
        elif word in ("INHERIT", "NOINHERIT") or word == "ENCRYPTED":
            pass
        elif word == "PASSWORD" and i + 1 < len(tokens):
            value = tokens[i + 1]
            role.set_password(None if value.upper() == "NULL" else value.strip("'"), encryption)
            i += 1
        elif word in ("CONNECTION", "VALID") and i + 2 < len(tokens):
            i += 2
        else:
            raise _with_line(PgError(f'syntax error at or near "{tokens[i]}"', sqlstate="42601"), text,
                             text.find(tokens[i]))
        i += 1


__all__ = ["Blocked", "Result", "Session", "Sleeping", "duration_ms", "ident", "split_statements"]
