"""`redis-cli` (and `valkey-cli`): one command against the twin's Redis/Valkey model.

`-h/-p/-a/--user/--pass` and `-u redis://...` like the real client; `localhost` is the server
of the pod exec'd into, other hosts go through the data plane. Replies print in redis-cli's
non-tty format (exec has no tty): `PONG`, `OK`, bulk strings bare, `CONFIG GET` as alternating
lines, errors as `(error) ...` on stdout with exit code 0 -- as the real client does.
"""

from __future__ import annotations

from urllib.parse import unquote, urlparse

from sregym.twin.datastores import Redis, datastore_for
from sregym.twin.datastores.valkey import server_section
from sregym.twin.node.shell import Invocation, command

AUTH_WARNING = "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe."


def _connect(call: Invocation, host: str, port: int) -> tuple[Redis | None, str]:
    twin, pod = call.ctx.twin, call.ctx.pod
    if twin is None:
        return None, "Connection refused"
    if host in ("127.0.0.1", "localhost", "::1"):
        store = datastore_for(twin, pod)
        if isinstance(store, Redis) and store.port == port:
            return store, ""
        return None, "Connection refused"
    dataplane = twin.services.dataplane
    if dataplane is None:
        return None, "Name or service not known"
    result = dataplane.connect(pod, host, port)
    if not result.ok:
        return None, {"nxdomain": "Name or service not known", "timeout": "Connection timed out",
                      "servfail": "Temporary failure in name resolution"}.get(result.error or "",
                                                                             "Connection refused")
    store = datastore_for(twin, result.dst_pod)
    return (store, "") if isinstance(store, Redis) else (None, "Connection reset by peer")


@command("redis-cli", "valkey-cli")
def redis_cli(call: Invocation) -> int:
    args = list(call.args)
    host, port, password, user = "127.0.0.1", 6379, None, None
    words: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if arg == "-h":
            host, i = nxt, i + 2
        elif arg == "-p":
            port, i = int(nxt or 6379), i + 2
        elif arg in ("-a", "--pass"):
            password, i = nxt, i + 2
        elif arg == "--user":
            user, i = nxt, i + 2
        elif arg == "-u":
            url = urlparse(nxt)
            host, port = url.hostname or host, url.port or port
            password = unquote(url.password) if url.password else password
            user = unquote(url.username) if url.username else user
            i += 2
        elif arg in ("--no-auth-warning", "--raw", "--no-raw") or (arg.startswith("-") and not words):
            i += 1
        else:
            words.append(arg)
            i += 1
    if password is not None and "--no-auth-warning" not in args:
        call.error(AUTH_WARNING)
    store, error = _connect(call, host, port)
    if store is None:
        call.error(f"Could not connect to Redis at {host}:{port}: {error}")
        return 1
    if not words:
        return 0
    name = words[0].upper()
    rest = words[1:]
    if name == "AUTH":
        password = rest[-1] if rest else ""
        user = rest[0] if len(rest) == 2 else None
        denied = store.auth_error(password, user)
        if denied is None and not store.requirepass and user is None:
            call.write("(error) ERR AUTH <password> called without any password configured for the default "
                       "user. Are you sure your configuration is correct?\n")
            return 0
        call.write(f"(error) {denied.message}\n" if denied else "OK\n")
        return 0
    denied = store.auth_error(password, user)
    if denied is not None:
        call.write(f"(error) {denied.message}\n" if name != "PING" or store.requirepass else "PONG\n")
        return 0
    if name == "PING":
        call.write("PONG\n")
    elif name == "CONFIG" and rest:
        sub = rest[0].upper()
        if sub == "GET" and len(rest) > 1:
            for key, value in store.config_get(rest[1]):
                call.write(f"{key}\n{value}\n")
        elif sub == "SET" and len(rest) > 2:
            err = store.config_set(rest[1], rest[2])
            call.write(f"(error) {err}\n" if err else "OK\n")
        elif sub == "REWRITE":
            call.write("OK\n")
        else:
            call.write(f"(error) ERR unknown subcommand or wrong number of arguments for '{rest[0]}'. Try CONFIG HELP.\n")
    elif name == "INFO":
        section = (rest[0] if rest else "memory").lower()
        used = store.used_memory()
        if section == "server":
            call.write("\r\n".join(server_section(store)) + "\r\n\n")
            return 0
        head = [*server_section(store), ""] if not rest or section in ("all", "everything", "default") else []
        lines = [*head, "# Memory", f"used_memory:{used}", f"used_memory_human:{used / 1024 / 1024:.2f}M",
                 f"maxmemory:{store.maxmemory}",
                 f"maxmemory_human:{store.maxmemory / 1024 / 1024:.2f}M" if store.maxmemory else "maxmemory_human:0B",
                 f"maxmemory_policy:{store.policy}"]
        if section in ("stats", "all", "everything"):
            lines += ["", "# Stats", f"keyspace_hits:{int(store.data.hits)}",
                      f"keyspace_misses:{int(store.data.misses)}", f"evicted_keys:{int(store.data.evicted)}"]
        if section in ("keyspace", "all", "everything"):
            lines += ["", "# Keyspace"] + ([f"db0:keys={int(store.data.keys)},expires=0,avg_ttl=0"]
                                           if store.data.keys >= 1 else [])
        call.write("\r\n".join(lines) + "\r\n\n")
    elif name == "DBSIZE":
        call.write(f"{int(store.data.keys)}\n")
    elif name in ("SET", "GET", "DEL", "FLUSHALL", "FLUSHDB"):
        if name == "SET":
            out = store.request("SET", rate=1.0, password=password, user=user,
                                keyspace=store.data.keyspace + 1, value_bytes=len(rest[-1]) if rest else 1)
            call.write(f"(error) {out.message}\n" if not out.ok else "OK\n")
        elif name == "GET":
            call.write("\n")
        elif name in ("FLUSHALL", "FLUSHDB"):
            store.data.keys = 0
            call.write("OK\n")
        else:
            call.write("0\n")
    else:
        call.write(f"(error) ERR unknown command '{words[0]}', with args beginning with: "
                   + " ".join(f"'{w}'" for w in rest) + " \n")
    return 0
