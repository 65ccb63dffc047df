"""`psql`: the PostgreSQL client, run against the twin's PostgreSQL models.

Options as libpq/psql read them: `-h -p -U -d -c -f -t -A -X -q -w -W -F`, grouped short flags
(`-tAc`), a positional dbname and user, a `postgresql://user:pass@host:port/db` URI or a
`host=... user=...` conninfo string, and the PG* environment (PGHOST, PGPORT, PGUSER,
PGDATABASE, PGPASSWORD). Without a host psql uses the Unix socket of the pod exec'd into; a host
goes through the data plane (DNS, Service, endpoints, NetworkPolicy, chaos), so a broken path
fails here as it fails for the application. The official image trusts the socket and loopback
and asks every other host for a SCRAM password, which is why `psql -U app` works inside the
database pod while the same user fails from the app pod after a password change.

Output is psql's: aligned tables with centred headers, `(N rows)` and a blank line; `-t` drops
headers and footer, `-A` prints `|`-separated rows; command tags (`CREATE ROLE`); errors as
`ERROR:  ...` on stderr with exit 1, connection failures as `psql: error: connection to server
at "db" (10.96.0.12), port 5432 failed: ...` with exit 2.

Each run is a backend of the server (`application_name` from PGAPPNAME, else `psql`) until it
exits. A statement that waits for a lock or runs `pg_sleep` sleeps in simulated time, so a Job's
psql can hold a transaction open for hours; a terminated backend ends psql with PostgreSQL's
`FATAL:  terminating connection due to administrator command ... connection to server was lost`
and exit 2, a cancelled statement with `ERROR:  canceling statement due to user request`. A psql
killed mid-statement leaves its backend running until the statement ends, as the server would.
"""

from __future__ import annotations

import copy
from collections.abc import Generator
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlparse

from sregym.twin.datastores import datastore_for
from sregym.twin.datastores.pg_sessions import CANCELED
from sregym.twin.datastores.pg_sql import Blocked, Result, Session, Sleeping, duration_ms, split_statements
from sregym.twin.datastores.postgres import PgError, PgServer
from sregym.twin.node.shell import Effect, Invocation, Program, Sleep, command

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
NOT_RUNNING_TCP = "\n\tIs the server running on that host and accepting TCP/IP connections?"
NOT_RUNNING_SOCKET = "\n\tIs the server running locally and accepting connections on that socket?"
NET_ERRORS = {"refused": "Connection refused" + NOT_RUNNING_TCP,
              "timeout": "Connection timed out" + NOT_RUNNING_TCP,
              "unreachable": "No route to host" + NOT_RUNNING_TCP,
              "no_route": "No route to host" + NOT_RUNNING_TCP,
              "reset": "server closed the connection unexpectedly\n\tThis probably means the server terminated "
                       "abnormally\n\tbefore or while processing the request.",
              "tls": "SSL SYSCALL error: EOF detected"}


@dataclass
class Options:
    host: str | None = None
    port: int | None = None
    user: str | None = None
    dbname: str | None = None
    password: str | None = None
    commands: list[tuple[str, str]] = field(default_factory=list)  # ("c", sql) | ("f", path)
    tuples_only: bool = False
    unaligned: bool = False
    quiet: bool = False
    separator: str = "|"
    positional: list[str] = field(default_factory=list)
    error: str = ""


_WITH_VALUE = {"h": "host", "p": "port", "U": "user", "d": "dbname", "c": "c", "f": "f", "F": "separator",
               "v": "var", "P": "pset", "o": "output", "L": "log"}
_LONG = {"--host": "h", "--port": "p", "--username": "U", "--dbname": "d", "--command": "c", "--file": "f",
         "--field-separator": "F", "--set": "v", "--variable": "v", "--pset": "P", "--output": "o",
         "--tuples-only": "t", "--no-align": "A", "--no-psqlrc": "X", "--quiet": "q", "--no-password": "w",
         "--password": "W"}


def parse_args(args: list[str]) -> Options:
    opts = Options()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            short = _LONG.get(name)
            if short is None:
                i += 1
                continue
            if short in _WITH_VALUE and not eq:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            _set(opts, short, value)
            i += 1
            continue
        if arg.startswith("-") and len(arg) > 1:
            j = 1
            while j < len(arg):
                letter = arg[j]
                if letter in _WITH_VALUE:
                    value = arg[j + 1:]
                    if not value:
                        if i + 1 >= len(args):
                            opts.error = f"psql: error: option requires an argument -- '{letter}'"
                            return opts
                        i += 1
                        value = args[i]
                    _set(opts, letter, value)
                    break
                _set(opts, letter, "")
                j += 1
            i += 1
            continue
        opts.positional.append(arg)
        i += 1
    return opts


def _set(opts: Options, letter: str, value: str) -> None:
    if letter == "h":
        opts.host = value
    elif letter == "p":
        opts.port = int(value) if value.isdigit() else opts.port
    elif letter == "U":
        opts.user = value
    elif letter == "d":
        opts.dbname = value
    elif letter in ("c", "f"):
        opts.commands.append((letter, value))
    elif letter == "t":
        opts.tuples_only = True
    elif letter == "A":
        opts.unaligned = True
    elif letter == "q":
        opts.quiet = True
    elif letter == "F":
        opts.separator = value


def _apply_conninfo(opts: Options, text: str) -> None:
    """A URI or `key=value` conninfo in the dbname position fills what the flags left unset."""
    if text.startswith(("postgres://", "postgresql://")):
        url = urlparse(text)
        opts.host = opts.host or url.hostname
        opts.port = opts.port or url.port
        opts.user = opts.user or (unquote(url.username) if url.username else None)
        opts.password = unquote(url.password) if url.password else opts.password
        opts.dbname = unquote(url.path.strip("/")) or None
        for key, values in parse_qs(url.query).items():
            _conninfo_key(opts, key, values[0])
        return
    opts.dbname = None
    for part in text.split():
        key, _, value = part.partition("=")
        _conninfo_key(opts, key, value.strip("'"))


def _conninfo_key(opts: Options, key: str, value: str) -> None:
    if key == "host":
        opts.host = value
    elif key == "port" and value.isdigit():
        opts.port = int(value)
    elif key == "user":
        opts.user = value
    elif key == "password":
        opts.password = value
    elif key == "dbname":
        opts.dbname = value


def os_user(call: Invocation) -> str:
    """The process's user name, libpq's default role (root in most images)."""
    from sregym.twin.userland.identity import passwd_table, process_ids

    uid, _gid, _extra = process_ids(call)
    return passwd_table(call, "/etc/passwd").get(uid, "root" if uid == 0 else str(uid))


# ------------------------------------------------------------------------------ connecting
def _connect(call: Invocation, host: str | None, port: int) -> tuple[PgServer | None, bool, str, str]:
    """(server, local, where, network error): `where` is libpq's `connection to server ...` part."""
    twin, pod = call.ctx.twin, call.ctx.pod
    if not host or host.startswith("/"):
        where = f'connection to server on socket "{host or "/var/run/postgresql"}/.s.PGSQL.{port}"'
        store = datastore_for(twin, pod) if twin is not None else None
        if isinstance(store, PgServer) and store.port == port:
            return store, True, where, ""
        return None, True, where, "No such file or directory" + NOT_RUNNING_SOCKET
    if host in LOCAL_HOSTS:
        ip = "::1" if host == "::1" else "127.0.0.1"
        where = f'connection to server at "{host}" ({ip}), port {port}' if host == "localhost" \
            else f'connection to server at "{host}", port {port}'
        store = datastore_for(twin, pod) if twin is not None else None
        if isinstance(store, PgServer) and store.port == port and not store.pg.init_running:
            return store, True, where, ""
        return None, True, where, NET_ERRORS["refused"]
    dataplane = twin.services.dataplane if twin is not None else None
    if dataplane is None:
        return None, False, "", f'could not translate host name "{host}" to address: Name or service not known'
    result = dataplane.connect(pod, host, port)
    if result.error in ("nxdomain", "servfail") or (not result.ok and result.stage == "dns"):
        reason = "Name or service not known" if result.error == "nxdomain" else "Temporary failure in name resolution"
        return None, False, "", f'could not translate host name "{host}" to address: {reason}'
    ip = result.resolved_ip or result.dst_ip
    numeric = all(part.isdigit() for part in host.split(".")) and host.count(".") == 3
    where = f'connection to server at "{host}", port {port}' if numeric or not ip \
        else f'connection to server at "{host}" ({ip}), port {port}'
    if not result.ok:
        return None, False, where, NET_ERRORS.get(result.error or "", NET_ERRORS["refused"])
    store = datastore_for(twin, result.dst_pod)
    if not isinstance(store, PgServer):
        return None, False, where, "expected authentication request from server, but received H"
    return store, False, where, ""


# ------------------------------------------------------------------------------- printing
def aligned(result: Result, tuples_only: bool) -> str:
    """psql's default format: centred headers, `|` between columns, `+` marks wrapped cells."""
    cells = [[cell.split("\n") for cell in row] for row in result.rows]
    widths = [len(c) for c in result.columns]
    for row in cells:
        for index, lines in enumerate(row):
            widths[index] = max(widths[index], *(len(line) for line in lines))
    last = len(widths) - 1
    out: list[str] = []
    if not tuples_only:
        if result.title:
            total = sum(widths) + 3 * len(widths) - 1
            out.append(" " * max(0, (total - len(result.title)) // 2) + result.title)
        heads = []
        for name, width in zip(result.columns, widths, strict=True):
            left = (width - len(name)) // 2
            heads.append(" " * left + name + " " * (width - len(name) - left))
        out.append(" " + " | ".join(heads) + " ")
        out.append("+".join("-" * (w + 2) for w in widths))
    for row in cells:
        height = max((len(lines) for lines in row), default=1)
        for k in range(height):
            line = ""
            for index, lines in enumerate(row):
                text = lines[k] if k < len(lines) else ""
                more = k + 1 < len(lines)
                if index in result.right:
                    text = text.rjust(widths[index])
                elif index < last or more:
                    text = text.ljust(widths[index])
                line += (" " if index == 0 else "") + text
                if index < last:
                    line += ("+" if more else " ") + "| "
                elif more:
                    line += "+"
            out.append(line)
    if not tuples_only and result.footer:
        count = len(result.rows)
        out.append(f"({count} row{'' if count == 1 else 's'})")
    return "\n".join(out) + "\n\n"


def unaligned(result: Result, tuples_only: bool, sep: str) -> str:
    out: list[str] = []
    if not tuples_only:
        if result.title:
            out.append(result.title)
        out.append(sep.join(result.columns))
    out += [sep.join(row) for row in result.rows]
    if not tuples_only and result.footer:
        count = len(result.rows)
        out.append(f"({count} row{'' if count == 1 else 's'})")
    return "\n".join(out) + "\n" if out else ""


def render(result: Result, opts: Options) -> tuple[str, str]:
    """(stdout, stderr) for one statement's result."""
    err = "".join(n + "\n" for n in result.notices)
    if result.tag is not None:
        return ("" if opts.quiet else result.tag + "\n"), err
    if not result.rows and result.empty_message:
        return "", err + result.empty_message + "\n"
    if opts.unaligned:
        return unaligned(result, opts.tuples_only, opts.separator), err
    return aligned(result, opts.tuples_only), err


# --------------------------------------------------------------------------------- command
LOST = ("FATAL:  terminating connection due to administrator command\n"
        "server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n"
        "\tbefore or while processing the request.\nconnection to server was lost\n")
WAIT_SLICE_S = 1.0  # how often a waiting client looks again (locks released, pid terminated)


class ConnectionLost(Exception):
    """The server ended this client's backend (`pg_terminate_backend`): psql reports it and exits 2."""


def _wait(session: Session, elapsed: float, until: float | None) -> Generator[Effect, None, float]:
    """Sleep in slices while the statement waits for a lock (`until` None: one slice) or runs
    `pg_sleep` (until `elapsed` reaches `until`), ending early on a terminate or cancel or at
    `lock_timeout`/`statement_timeout`, raised as the server's error. Time is counted from the
    slept slices, so it runs on the process's clock (an exec's own, or the node's)."""
    backend = session.backend
    slept = 0.0
    while True:
        if backend is not None and backend.terminated:
            raise ConnectionLost
        if backend is not None and backend.canceled:
            backend.canceled = False
            raise PgError(CANCELED, sqlstate="57014")
        lock_ms = duration_ms(session.settings.get("lock_timeout", "0")) or 0.0
        stmt_ms = duration_ms(session.settings.get("statement_timeout", "0")) or 0.0
        if stmt_ms and (elapsed + slept) * 1000.0 >= stmt_ms:
            raise PgError("canceling statement due to statement timeout", sqlstate="57014")
        if lock_ms and until is None and (elapsed + slept) * 1000.0 >= lock_ms:
            raise PgError("canceling statement due to lock timeout", sqlstate="55P03")
        if until is not None and elapsed + slept >= until - 1e-9:
            return slept
        step = WAIT_SLICE_S if until is None else min(WAIT_SLICE_S, until - elapsed - slept)
        yield Sleep(step)
        slept += step
        if until is None:
            return slept


def _execute(call: Invocation, session: Session, statement: str) -> Generator[Effect, None, Result]:
    """One statement, waiting out lock waits and `pg_sleep` in simulated time."""
    backend = session.backend
    clock = session.server.twin.clock
    elapsed = 0.0
    while True:
        try:
            return session.run(statement)
        except Blocked:
            elapsed += yield from _wait(session, elapsed, None)
        except Sleeping as sleeping:
            if backend is not None:
                backend.busy_until = clock.now + sleeping.seconds
                backend.wait = ("Timeout", "PgSleep")
            try:
                elapsed += yield from _wait(session, elapsed, elapsed + sleeping.seconds)
            except GeneratorExit:
                raise  # the client was killed: the backend keeps sleeping, unaware
            except BaseException:
                _awake(session)
                raise
            _awake(session)
            return Result(columns=["pg_sleep"], rows=[[""]])


def _awake(session: Session) -> None:
    if session.backend is not None:
        session.backend.busy_until = None
        session.backend.wait = None


def _run_sql(call: Invocation, session: Session, text: str, opts: Options,
             origin: str | None) -> Generator[Effect, None, bool]:
    """Run one -c string (one implicit transaction) or a script; False on an error."""
    statements = [text.strip()] if text.strip().startswith("\\") else split_statements(text)
    snapshot = copy.deepcopy(session.server.pg) if origin is None and len(statements) > 1 else None
    session.in_block = snapshot is not None
    backend = session.backend
    now = session.server.twin.clock.now
    if backend is not None and origin is None:
        backend.query, backend.query_start, backend.state, backend.state_change = text, now, "active", now
    closing = False
    try:
        for statement in statements:
            if backend is not None and origin is not None:
                now = session.server.twin.clock.now
                backend.query, backend.query_start, backend.state, backend.state_change = statement, now, "active", now
            try:
                result = yield from _execute(call, session, statement)
            except PgError as exc:
                prefix = ""
                if origin is not None:
                    line = text[:max(0, text.find(statement))].count("\n") + 1
                    prefix = f"psql:{origin}:{line}: "
                message = exc.render() if exc.severity else f"{exc.message}"
                if exc.severity == "" and statement.startswith("\\"):
                    message = f"{exc.message}\nTry \\? for help."
                call.write(prefix + message + "\n", "stderr")
                if snapshot is not None:
                    # A multi-statement -c string is one transaction: earlier statements roll back.
                    server = session.server
                    server.pg.roles, server.pg.databases = snapshot.roles, snapshot.databases
                session.abort()
                return False
            session.statement_done()
            out, err = render(result, opts)
            call.write(err, "stderr")
            call.write(out)
        return True
    except GeneratorExit:
        closing = True  # killed mid-statement: the backend keeps its transaction until it notices
        raise
    finally:
        if not closing:
            session.in_block = False
            session.statement_done()
        if backend is not None and not closing:
            now = session.server.twin.clock.now
            backend.state = "idle in transaction" if session.explicit else "idle"
            backend.state_change = now


@command("psql")
def psql(call: Invocation) -> Program:
    opts = parse_args(list(call.args))
    if opts.error:
        call.error(opts.error + "\npsql: hint: Try \"psql --help\" for more information.")
        return 1
    env = call.shell.exported_env()
    if opts.positional:
        first = opts.positional[0]
        if first.startswith(("postgres://", "postgresql://")) or "=" in first:
            _apply_conninfo(opts, first)
        elif opts.dbname is None:
            opts.dbname = first
        if len(opts.positional) > 1 and opts.user is None:
            opts.user = opts.positional[1]
    if opts.dbname and (opts.dbname.startswith(("postgres://", "postgresql://")) or "=" in opts.dbname):
        _apply_conninfo(opts, opts.dbname)
    host = opts.host or env.get("PGHOST") or None
    port = opts.port or (int(env["PGPORT"]) if env.get("PGPORT", "").isdigit() else 5432)
    user = opts.user or env.get("PGUSER") or os_user(call)
    database = opts.dbname or env.get("PGDATABASE") or user
    password = opts.password if opts.password is not None else env.get("PGPASSWORD")
    server, local, where, net_error = _connect(call, host, port)
    if server is None:
        call.error(f"psql: error: {where} failed: {net_error}" if where else f"psql: error: {net_error}")
        return 2
    try:
        server.authenticate(user, password, database, local=local)
    except PgError as exc:
        call.error(f"psql: error: {where} failed: {exc.render()}")
        return 2
    sessions = server.sessions()
    addr = None if not host or host.startswith("/") else ("127.0.0.1" if local else "")
    backend = sessions.connect(user, database, server.twin.clock.now,
                               application_name=env.get("PGAPPNAME") or "psql", client_addr=addr)
    if addr == "":  # over the network: the client pod's IP (known once the kubelet reports it)
        meta = (call.ctx.pod or {}).get("metadata") or {}
        backend.client_pod = (str(meta.get("namespace", "")), str(meta.get("name", "")))
    session = Session(server, user, database, backend)
    server.account(1.0, 0.5)
    finished = False
    try:
        status = yield from _session(call, session, opts)
        finished = True
        return status
    except ConnectionLost:
        finished = True
        call.write(LOST, "stderr")
        return 2
    finally:
        # The client goes away: an idle backend exits at once; one still running a statement
        # (the pod was killed mid-`pg_sleep`) exits when the statement ends.
        backend.client_gone = True
        if finished:
            backend.busy_until = None
        sessions.reap(server.twin.clock.now)


def _session(call: Invocation, session: Session, opts: Options) -> Program:
    if not opts.commands:
        if call.stdin:
            ok = yield from _run_sql(call, session, call.stdin, opts, "<stdin>")
            return 0 if ok else 3
        return 0  # an interactive session without a tty reads nothing and exits
    ok = True
    for kind, value in opts.commands:
        if kind == "f":
            script = call.read_file(value)
            if script is None:
                call.error(f"psql: error: {value}: No such file or directory")
                return 1
            ok = (yield from _run_sql(call, session, script, opts, value)) and ok
        else:
            ok = (yield from _run_sql(call, session, value, opts, None)) and ok
    return 0 if ok else 1
