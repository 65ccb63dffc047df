"""What the official `postgres` image does when the kubelet starts it.

`docker-entrypoint.sh` initialises an empty PGDATA: it refuses to start without
POSTGRES_PASSWORD (unless POSTGRES_HOST_AUTH_METHOD=trust), runs initdb, creates POSTGRES_USER
(default `postgres`) as superuser with that password and POSTGRES_DB (default: the user's name),
then runs `/docker-entrypoint-initdb.d/*.sql` with `psql -v ON_ERROR_STOP=1` and `*.sh` with the
shell against a temporary socket-only server. A failing script stops the container -- and because
PGDATA is already initialised, the next start skips the scripts ("appears to contain a
database"): the famous half-initialised database, reproduced here because the state is on the
volume.
"""

from __future__ import annotations

from typing import Any

from sregym.twin.datastores.pg_sql import Result, Session, Sleeping, split_statements
from sregym.twin.datastores.postgres import PGDATA, VERSION, PgError, PgServer, pg_state
from sregym.twin.node import images
from sregym.twin.node.images import ImageSpec, register_image
from sregym.twin.node.shell import COMMANDS, Invocation, Program

INITDB_DIR = "/docker-entrypoint-initdb.d"
ENTRYPOINT = "/usr/local/bin/docker-entrypoint.sh"


def _postgres(call: Invocation) -> Program:
    """`postgres` with the entrypoint's first-start initialisation, then the server."""
    ctx = call.ctx
    env = call.shell.exported_env()
    twin, pod = ctx.twin, ctx.pod
    port = int(images.argv_flag(call.args, "-p", "--port", default="5432") or 5432)
    ts = images.log_stamp(call, "%Y-%m-%d %H:%M:%S.000 UTC")
    pgdata = env.get("PGDATA") or PGDATA
    state = pg_state(twin, pod, ctx.container, ctx.start_time, pgdata) if twin is not None and pod else None
    if state is None or not state.initialized:
        if not env.get("POSTGRES_PASSWORD") and env.get("POSTGRES_HOST_AUTH_METHOD") != "trust":
            call.write(images._PG_NO_PASSWORD, "stderr")
            return 1
    if twin is not None and pod and state is not None:
        if not state.initialized:
            user = env.get("POSTGRES_USER") or "postgres"
            database = env.get("POSTGRES_DB") or user
            host_auth = env.get("POSTGRES_HOST_AUTH_METHOD") or "scram-sha-256"
            state.bootstrap(user, env.get("POSTGRES_PASSWORD"), database, host_auth)
            call.write('The files belonging to this database system will be owned by user "postgres".\n'
                       "This user must also own the server process.\n\n"
                       'The database cluster will be initialized with locale "en_US.utf8".\n'
                       "fixing permissions on existing directory " + pgdata + " ... ok\n"
                       "Success. You can now start the database server using:\n\n"
                       f"    pg_ctl -D {pgdata} -l logfile start\n\n"
                       "waiting for server to start.... done\nserver started\n")
            if database != "postgres":
                call.write("CREATE DATABASE\n")
            call.write("\n")
            state.init_running = True
            server = PgServer(twin, pod, ctx.container, state, {"port": port, "host_auth": "trust"})
            scripts = sorted(p for p in ctx.files if p.startswith(INITDB_DIR + "/")
                             and p.rsplit("/", 1)[-1].endswith((".sql", ".sh")))
            for path in scripts:
                call.write(f"{ENTRYPOINT}: running {path}\n")
                if path.endswith(".sh"):
                    status = yield from call.shell._invoke(["bash", path], {}, "")
                    if status:
                        state.init_running = False
                        return int(status)
                    continue
                session = Session(server, user, database)
                text = ctx.files.get(path) or ""
                for statement in split_statements(text):
                    try:
                        result = session.run(statement)
                    except Sleeping:  # the init server has no clients to wait for: it returns at once
                        result = Result(columns=["pg_sleep"], rows=[[""]])
                    except PgError as exc:
                        line = text[:max(0, text.find(statement))].count("\n") + 1
                        call.write(f"psql:{path}:{line}: {exc.render()}\n", "stderr")
                        state.init_running = False
                        return 3  # psql's exit status with ON_ERROR_STOP
                    for notice in result.notices:
                        call.write(f"psql:{path}:1: {notice}\n", "stderr")
                    if result.tag:
                        call.write(result.tag + "\n")
                call.write("\n")
            state.init_running = False
            call.write("waiting for server to shut down.... done\nserver stopped\n\n"
                       "PostgreSQL init process complete; ready for start up.\n\n")
        else:
            call.write("\nPostgreSQL Database directory appears to contain a database; Skipping initialization\n\n")
    logs = [f"{ts} [1] LOG:  starting PostgreSQL {VERSION} (Debian 17.2-1.pgdg120+1) on "
            "x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit",
            f'{ts} [1] LOG:  listening on IPv4 address "0.0.0.0", port {port}',
            f'{ts} [1] LOG:  listening on IPv6 address "::", port {port}',
            f'{ts} [1] LOG:  listening on Unix socket "/var/run/postgresql/.s.PGSQL.{port}"']
    ready = [f"{ts} [1] LOG:  database system is ready to accept connections"]
    return (yield from images.serve(call, ports=(port,), http_paths=None, startup_seconds=3,
                                    memory_mb=40, logs=logs, ready_logs=ready))


def _psql(call: Invocation) -> Any:
    """The image's `psql`: the exec userland's client, found in the command registry
    (`sregym.twin.userland` registers it; the twin loads the userland before anything runs)."""
    return COMMANDS["psql"](call)


def register() -> None:
    commands: dict[str, Any] = {"postgres": _postgres,
                                "docker-entrypoint.sh": images.docker_entrypoint("postgres", _postgres),
                                "psql": _psql}
    register_image(ImageSpec("docker.io/library/postgres", ("17.2",), extras={"datastore": "postgres"},
                             commands=commands))
