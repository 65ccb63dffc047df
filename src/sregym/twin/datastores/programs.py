"""What the store images do when the kubelet starts them: the catalogue entries' behaviour.

`mongod` from the official image runs its entrypoint's first-start initialisation when the data
directory is empty: it creates `MONGO_INITDB_ROOT_USERNAME` (role `root` on `admin`) and runs
every `/docker-entrypoint-initdb.d/*.sh|*.js` against a temporary server bound to localhost with
access control off, then restarts with the real command line (`--auth`). The scripts run through
the twin's shell, so a ConfigMap that creates users with `mongo admin --eval "db.createUser(...)"`
really creates them -- and a missing or broken script leaves a database without them.

memcached and redis keep the catalogue's server programs; this module only marks them as stores
(`extras["datastore"]`) and adds Valkey.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sregym.twin.datastores.mongo_versions import incompatible_data, mongod_version
from sregym.twin.datastores.mongodb import MongoUser, mongo_state
from sregym.twin.node import images
from sregym.twin.node.images import ImageSpec, register_image
from sregym.twin.node.shell import COMMANDS, Invocation, Program

INITDB_DIR = "/docker-entrypoint-initdb.d"


def _date(now: float) -> str:
    return datetime.fromtimestamp(now, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.000+00:00")


def _log(call: Invocation, component: str, ident: int, ctx: str, msg: str, attr: str = "") -> None:
    attr_part = f',"attr":{attr}' if attr else ""
    call.write(f'{{"t":{{"$date":"{_date(call.now)}"}},"s":"I",  "c":"{component}",  "id":{ident},'
               f'   "ctx":"{ctx}","msg":"{msg}"{attr_part}}}\n')


def _mongo_client(call: Invocation) -> Any:
    """The image's `mongo`/`mongosh`: the exec userland's client, found in the command registry
    (`sregym.twin.userland` registers it; the twin loads the userland before anything runs)."""
    return COMMANDS["mongosh"](call)


def _mongod(call: Invocation) -> Program:
    """mongod with the official entrypoint's first-start initialisation."""
    ctx = call.ctx
    pod = ctx.pod or {}
    twin = ctx.twin
    port = int(images.argv_flag(call.args, "--port", default="27017") or 27017)
    if twin is not None and pod:
        version = mongod_version(pod, ctx.container)
        state = mongo_state(twin, pod, ctx.container, ctx.start_time, version)
        refusal = incompatible_data(state, version, _date(call.now))
        if refusal is not None:  # the binary cannot open the data files it finds on the volume
            lines, code = refusal
            for line in lines:
                call.write(line + "\n")
            return code
        if not state.initialized:
            state.initialized = True
            state.init_running = True
            env = call.shell.exported_env()
            root_user, root_pwd = env.get("MONGO_INITDB_ROOT_USERNAME"), env.get("MONGO_INITDB_ROOT_PASSWORD")
            scripts = sorted(p for p in ctx.files if p.startswith(INITDB_DIR + "/")
                             and p.rsplit("/", 1)[-1].endswith((".sh", ".js")))
            if root_user or scripts:
                _log(call, "CONTROL", 20698, "main", "***** SERVER RESTARTED *****")
                _log(call, "NETWORK", 23016, "listener", "Waiting for connections",
                     '{"port":27017,"ssl":"off"}')
            if root_user and root_pwd:
                state.users[("admin", root_user)] = MongoUser(root_user, "admin", root_pwd, [("root", "admin")])
                call.write(f'Successfully added user: {{\n\t"user" : "{root_user}",\n\t"roles" : [\n\t\t{{\n'
                           '\t\t\t"role" : "root",\n\t\t\t"db" : "admin"\n\t\t}\n\t]\n}\n')
            for path in scripts:
                call.write(f"\n/usr/local/bin/docker-entrypoint.sh: running {path}\n")
                argv = ["bash", path] if path.endswith(".sh") else ["mongo", "--quiet", path]
                yield from call.shell._invoke(argv, {}, "")
            state.init_running = False
            if root_user or scripts:
                call.write("\nMongoDB init process complete; ready for start up.\n\n")
    date = _date(call.now)

    def entry(component: str, ident: int, ctx_name: str, msg: str, attr: str = "") -> str:
        attr_part = f',"attr":{attr}' if attr else ""
        return (f'{{"t":{{"$date":"{date}"}},"s":"I",  "c":"{component}",  "id":{ident},'
                f'   "ctx":"{ctx_name}","msg":"{msg}"{attr_part}}}')

    auth = "--auth" in call.args
    logs = [
        entry("CONTROL", 23285, "main", "Automatically disabling TLS 1.0, to force-enable TLS 1.0 "
              "specify --sslDisabledProtocols 'none'"),
        entry("CONTROL", 4615611, "initandlisten", "MongoDB starting",
              f'{{"pid":1,"port":{port},"dbPath":"/data/db","architecture":"64-bit",'
              f'"host":"{ctx.hostname}"}}'),
        entry("CONTROL", 21951, "initandlisten", "Options set by command line",
              '{"options":{"net":{"bindIp":"*"}' + (',"security":{"authorization":"enabled"}' if auth else "")
              + "}}"),
        entry("NETWORK", 23015, "listener", "Listening on", '{"address":"0.0.0.0"}'),
        entry("NETWORK", 23016, "listener", "Waiting for connections", f'{{"port":{port},"ssl":"off"}}'),
    ]
    return (yield from images.serve(call, ports=(port,), http_paths=None, startup_seconds=2,
                                    memory_mb=160, logs=logs))


def _entrypoint(call: Invocation) -> Program:
    """`docker-entrypoint.sh`: flags go to mongod; another program is exec'd."""
    args = list(call.args)
    if not args or args[0].startswith("-"):
        args = ["mongod", *args]
    if args[0] == "mongod":
        sub = Invocation(args, call.ctx, call.shell, call.stdin)
        return (yield from images.flush_writes(sub, _mongod(sub)))
    return (yield from images.exec_rest(call, args))


def register() -> None:
    mongo_cmds: dict[str, Any] = {"mongod": _mongod, "docker-entrypoint.sh": _entrypoint,
                                  "mongo": _mongo_client, "mongosh": _mongo_client}
    register_image(ImageSpec("docker.io/library/mongo", ("4.4.6", "5.0.31", "8.0.14-rc0"),
                             extras={"datastore": "mongodb"}, commands=mongo_cmds))
    register_image(ImageSpec("docker.io/library/memcached", ("1.6.7", "1.6.9"),
                             extras={"datastore": "memcached"}))
    register_image(ImageSpec("docker.io/library/redis", ("7.2.4",), extras={"datastore": "redis"}))
    valkey_cmds: dict[str, Any] = {"valkey-server": images.redis_server, "redis-server": images.redis_server,
                                   "docker-entrypoint.sh": images.docker_entrypoint(
                                       "valkey-server", images.redis_server, conf_first=True)}
    register_image(ImageSpec("docker.io/valkey/valkey", ("7.2", "7.2.8", "8.0", "8.0.2", "8.1", "latest",
                                                         "7.2-alpine", "8.0-alpine"),
                             size_mb=41.5, description="Valkey", ports=(6379,), memory_mb=8,
                             entrypoint=("docker-entrypoint.sh",), cmd=("valkey-server",), shell="ash",
                             extras={"datastore": "redis"}, commands=valkey_cmds))


register()
