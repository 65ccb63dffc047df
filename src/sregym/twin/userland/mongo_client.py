"""`mongosh` and the legacy `mongo` shell: `--eval` scripts against the twin's MongoDB models.

They connect like the real clients: `localhost` is the mongod of the pod exec'd into; any other
host goes through the data plane (DNS, Service, endpoints, NetworkPolicy), so a broken path fails
here exactly as it fails for the application. Authentication (`-u/-p/--authenticationDatabase`
or a `mongodb://user:pass@host/db?authSource=admin` URI) and authorization are the model's, and
user commands (`db.createUser`, `db.dropUser`, `db.grantRolesToUser`, `db.revokeRolesFromUser`,
`db.changeUserPassword`, `db.updateUser`) really change the users the services log in as.

Output follows each shell: mongosh prints the value of the last statement (`{ ok: 1 }`) and
errors as `MongoServerError: ...`; the 4.4 shell prints its banner, `Successfully added user`,
and `uncaught exception: Error: ...` with exit code 252 (1 for connection/auth failures).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from sregym.twin.datastores import MongoError, MongoServer, Principal, datastore_for
from sregym.twin.datastores.jsexpr import JsSyntaxError, Statement, Step, parse_script, to_shell
from sregym.twin.node.shell import Invocation, command

LEGACY_VERSION = "4.4.6"
MONGOSH_VERSION = "2.3.8"


class _Conn:
    def __init__(self, server: MongoServer, principal: Principal, db: str, legacy: bool) -> None:
        self.server = server
        self.principal = principal
        self.db = db
        self.legacy = legacy


def _parse_args(args: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {"host": "127.0.0.1", "port": 27017, "db": "test", "user": None,
                            "password": None, "auth_db": None, "eval": [], "quiet": False, "files": []}
    i = 0
    while i < len(args):
        arg = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else ""
        key, eq, val = arg.partition("=")
        pair = (val, 1) if eq else (nxt, 2)

        def take(pair: tuple[str, int] = pair) -> tuple[str, int]:
            return pair
        if key in ("--eval",):
            value, step = take()
            opts["eval"].append(value)
        elif key in ("-u", "--username"):
            value, step = take()
            opts["user"] = value
        elif key in ("-p", "--password"):
            value, step = take()
            opts["password"] = value
        elif key in ("--authenticationDatabase",):
            value, step = take()
            opts["auth_db"] = value
        elif key in ("--host",):
            value, step = take()
            host, _, port = value.partition(":")
            opts["host"] = host
            if port:
                opts["port"] = int(port)
        elif key in ("--port",):
            value, step = take()
            opts["port"] = int(value)
        elif arg in ("--quiet", "--nodb", "--norc"):
            opts["quiet"] = opts["quiet"] or arg == "--quiet"
            step = 1
        elif arg.startswith("-"):
            step = 1
        else:
            step = 1
            if arg.endswith(".js"):
                opts["files"].append(arg)
            else:
                _address(opts, arg)
        i += step
    if opts["auth_db"] is None:
        opts["auth_db"] = opts.get("uri_auth") or (opts["db"] if opts["user"] else "admin")
    return opts


def _address(opts: dict[str, Any], text: str) -> None:
    """`admin`, `host:port/db`, or `mongodb://user:pass@host:port/db?authSource=x`."""
    if text.startswith(("mongodb://", "mongodb+srv://")):
        url = urlparse(text)
        opts["host"] = url.hostname or "127.0.0.1"
        opts["port"] = url.port or 27017
        if url.username:
            opts["user"] = unquote(url.username)
        if url.password:
            opts["password"] = unquote(url.password)
        if url.path.strip("/"):
            opts["db"] = url.path.strip("/")
        source = parse_qs(url.query).get("authSource")
        if source:
            opts["uri_auth"] = source[0]
        return
    if "/" in text or ":" in text:
        hostport, _, db = text.partition("/")
        host, _, port = hostport.partition(":")
        opts["host"] = host or "127.0.0.1"
        if port:
            opts["port"] = int(port)
        if db:
            opts["db"] = db
        return
    opts["db"] = text


def _connect(call: Invocation, host: str, port: int) -> tuple[MongoServer | None, str, str]:
    """(server, resolved address, error text) — error is the Node/C++ driver's wording."""
    twin, pod = call.ctx.twin, call.ctx.pod
    if twin is None:
        return None, host, "ECONNREFUSED"
    if host in ("127.0.0.1", "localhost", "::1"):
        store = datastore_for(twin, pod)
        if isinstance(store, MongoServer) and store.port == port:
            return store, f"127.0.0.1:{port}", ""
        return None, f"127.0.0.1:{port}", "ECONNREFUSED"
    dataplane = twin.services.dataplane
    if dataplane is None:
        return None, host, "ENOTFOUND"
    result = dataplane.connect(pod, host, port)
    address = f"{result.resolved_ip or result.dst_ip or host}:{port}"
    if not result.ok:
        return None, address, {"nxdomain": "ENOTFOUND", "servfail": "ENOTFOUND", "timeout": "ETIMEDOUT",
                               "reset": "ECONNRESET", "unreachable": "EHOSTUNREACH",
                               "no_route": "EHOSTUNREACH"}.get(result.error or "", "ECONNREFUSED")
    store = datastore_for(twin, result.dst_pod)
    if not isinstance(store, MongoServer):
        return None, address, "ECONNRESET"
    return store, address, ""


@command("mongosh", "mongo")
def mongo_shell(call: Invocation) -> int:
    legacy = call.name == "mongo"
    opts = _parse_args(call.args)
    host, port = opts["host"], opts["port"]
    uri = f"mongodb://{host}:{port}/{opts['db']}?directConnection=true&serverSelectionTimeoutMS=2000"
    if legacy and not opts["quiet"]:
        call.write(f"MongoDB shell version v{LEGACY_VERSION}\n")
        call.write(f"connecting to: mongodb://{host}:{port}/{opts['db']}?compressors=disabled&gssapiServiceName=mongodb\n")
    server, address, error = _connect(call, host, port)
    if server is None:
        if legacy:
            reason = {"ECONNREFUSED": "Connection refused", "ETIMEDOUT": "Connection timed out",
                      "ENOTFOUND": "Name or service not known"}.get(error, "Connection reset by peer")
            call.error(f"Error: couldn't connect to server {host}:{port}, connection attempt failed: "
                       f"SocketException: Error connecting to {host}:{port} ({address}) :: caused by :: {reason} :")
            call.error("connect@src/mongo/shell/mongo.js:374:17\n@(connect):2:6")
            call.error("exception: connect failed\nexiting with code 1")
        elif error == "ENOTFOUND":
            call.error(f"MongoNetworkError: getaddrinfo ENOTFOUND {host}")
        elif error == "ETIMEDOUT":
            call.error("MongoServerSelectionError: connection timed out")
        else:
            call.error(f"MongoNetworkError: connect {error} {address}")
        return 1
    if not legacy and not opts["quiet"]:
        call.write(f"Current Mongosh Log ID:\t{int(call.now):x}a1b2c3d4e5f60718\n")
        call.write(f"Connecting to:\t\t{uri}&appName=mongosh+{MONGOSH_VERSION}\n")
    principal = Principal(local=host in ("127.0.0.1", "localhost", "::1"))
    if opts["user"]:
        try:
            server.authenticate(opts["user"], opts["password"] or "", opts["auth_db"])
        except MongoError as exc:
            if legacy:
                call.error(f"Error: {exc.errmsg} :\nconnect@src/mongo/shell/mongo.js:374:17\n@(connect):2:6")
                call.error("exception: connect failed\nexiting with code 1")
            else:
                call.error(f"MongoServerError: {exc.errmsg}")
            return 1
        principal = Principal(opts["user"], opts["auth_db"], principal.local)
    if legacy and not opts["quiet"]:
        call.write('Implicit session: session { "id" : UUID("3b1f0d2e-8c4a-4e7b-9a51-6d2c0f4e8b17") }\n')
        call.write(f"MongoDB server version: {server.mongo_state.version}\n")
    elif not legacy and not opts["quiet"]:
        call.write(f"Using MongoDB:\t\t{server.mongo_state.version}\nUsing Mongosh:\t\t{MONGOSH_VERSION}\n\n")
    conn = _Conn(server, principal, opts["db"], legacy)
    sources = list(opts["eval"]) + [call.read_file(f) or "" for f in opts["files"]]
    for source in sources:
        code = _run_source(call, conn, source)
        if code:
            return code
    return 0


def _run_source(call: Invocation, conn: _Conn, source: str) -> int:
    try:
        statements = parse_script(source)
    except JsSyntaxError as exc:
        if conn.legacy:
            call.error(f"uncaught exception: SyntaxError: {exc} :\n@(shell eval):1:1")
            return 252
        call.error(f"SyntaxError: {exc}")
        return 1
    last: Any = _NOTHING
    for stmt in statements:
        try:
            last = _statement(call, conn, stmt)
        except MongoError as exc:
            if conn.legacy:
                call.error(f"uncaught exception: Error: {exc.errmsg} :\n_getErrorWithCode@src/mongo/shell/utils.js:25:13")
                call.error("@(shell eval):1:1")
                return 252
            call.error(f"MongoServerError: {exc.errmsg}")
            return 1
        except _ShellError as exc:
            call.error(f"uncaught exception: {exc}" if conn.legacy else str(exc))
            return 252 if conn.legacy else 1
    if not conn.legacy and last is not _NOTHING and last is not None:
        call.write(_render(last, conn) + "\n")
    return 0


class _ShellError(Exception):
    pass


_NOTHING = object()


def _render(value: Any, conn: _Conn) -> str:
    if isinstance(value, str) and not conn.legacy:
        return value
    return to_shell(value, legacy=conn.legacy)


def _statement(call: Invocation, conn: _Conn, stmt: Statement) -> Any:
    if stmt.kind == "use":
        conn.db = stmt.word
        call.write(f"switched to db {stmt.word}\n")
        return _NOTHING
    if stmt.kind == "show":
        return _show(call, conn, stmt.word)
    if stmt.kind == "var":
        return _NOTHING
    steps = list(stmt.steps)
    head = steps.pop(0)
    if head.name in ("print", "printjson") and head.args is not None:
        text = " ".join(a if isinstance(a, str) and head.name == "print" else to_shell(a, legacy=conn.legacy)
                        for a in head.args)
        call.write(text + "\n")
        return _NOTHING
    if head.name != "db":
        raise _ShellError(f"ReferenceError: {head.name} is not defined")
    db = conn.db
    if steps and steps[0].name == "getSiblingDB" and steps[0].args:
        db = str(steps[0].args[0])
        steps.pop(0)
    if not steps:
        return db
    step = steps.pop(0)
    if step.args is None and steps and steps[0].args is not None and step.name not in ("getName",):
        return _collection(call, conn, db, step.name, steps)
    return _db_method(call, conn, db, step)


def _run(conn: _Conn, db: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return conn.server.run(conn.principal, db, name, args)


def _db_method(call: Invocation, conn: _Conn, db: str, step: Step) -> Any:
    args = list(step.args or [])
    name = step.name
    if name == "getName":
        return db
    if name == "createUser":
        doc = dict(args[0]) if args else {}
        user = doc.pop("user", "")
        result = _run(conn, db, "createUser", {"createUser": user, **doc})
        if conn.legacy:
            shown = {"user": user, "roles": doc.get("roles", [])}
            call.write("Successfully added user: " + _legacy_pretty(shown) + "\n")
            return _NOTHING
        return result
    if name in ("dropUser", "removeUser"):
        result = _run(conn, db, "dropUser", {"dropUser": args[0] if args else ""})
        return True if conn.legacy else result
    if name in ("grantRolesToUser", "revokeRolesFromUser"):
        result = _run(conn, db, name, {name: args[0] if args else "", "roles": args[1] if len(args) > 1 else []})
        return _NOTHING if conn.legacy else result
    if name == "changeUserPassword":
        result = _run(conn, db, "updateUser", {"updateUser": args[0] if args else "",
                                               "pwd": args[1] if len(args) > 1 else ""})
        return _NOTHING if conn.legacy else result
    if name == "updateUser":
        result = _run(conn, db, "updateUser", {"updateUser": args[0] if args else "",
                                               **(args[1] if len(args) > 1 else {})})
        return _NOTHING if conn.legacy else result
    if name == "getUsers":
        return _run(conn, db, "usersInfo", {"usersInfo": 1})["users"]
    if name == "getUser":
        users = _run(conn, db, "usersInfo", {"usersInfo": args[0] if args else ""})["users"]
        return users[0] if users else None
    if name == "auth":
        conn.server.authenticate(str(args[0]), str(args[1]) if len(args) > 1 else "", db)
        conn.principal = Principal(str(args[0]), db, conn.principal.local)
        return 1 if conn.legacy else {"ok": 1}
    if name in ("runCommand", "adminCommand"):
        doc = args[0] if args else {}
        if isinstance(doc, str):
            doc = {doc: 1}
        target = "admin" if name == "adminCommand" else db
        command_name = next(iter(doc), "")
        return _run(conn, target, command_name, dict(doc))
    if name == "getCollectionNames":
        return _run(conn, db, "listCollections", {"listCollections": 1})["collections"]
    if name == "stats":
        return _run(conn, db, "dbStats", {"dbStats": 1})
    if name == "dropDatabase":
        _run(conn, db, "dropDatabase", {"dropDatabase": 1})
        return {"ok": 1, "dropped": db}
    if name == "version":
        return conn.server.mongo_state.version
    if name == "getMongo":
        return f"connection to {conn.server.pod_name}:{conn.server.port}"
    raise _ShellError(f"TypeError: db.{name} is not a function")


def _collection(call: Invocation, conn: _Conn, db: str, coll: str, steps: list[Step]) -> Any:
    step = steps.pop(0)
    args = list(step.args or [])
    name = step.name
    if name in ("find", "findOne", "count", "countDocuments", "estimatedDocumentCount"):
        counting = not name.startswith("find") or bool(steps and steps[0].name == "count")
        verb = "count" if counting else "find"
        n = _run(conn, db, verb, {verb: coll, ("query" if counting else "filter"): args[0] if args else {}})["n"]
        if counting:
            return n
        if name == "findOne":
            return {"_id": "ObjectId(...)"} if n else None
        return [] if not n else f"Type \"it\" for more ({n} documents)"
    if name in ("insert", "insertOne", "insertMany"):
        count = len(args[0]) if name == "insertMany" and args and isinstance(args[0], list) else 1
        _run(conn, db, "insert", {"insert": coll, "n": count})
        return {"acknowledged": True, "insertedId": "ObjectId(...)"} if not conn.legacy else _NOTHING
    if name == "createIndex":
        key = args[0] if args else {}
        index = "_".join(f"{k}_{v}" for k, v in key.items())
        _run(conn, db, "createIndexes", {"createIndexes": coll, "indexes": [{"key": key, "name": index}]})
        return index
    if name == "getIndexes":
        _run(conn, db, "listIndexes", {"listIndexes": coll})
        found = conn.server.mongo_state.collection(db, coll)
        return [{"v": 2, "key": {"_id": 1} if i == "_id_" else {i.rsplit("_", 1)[0]: 1}, "name": i}
                for i in (found.indexes if found else [])]
    if name in ("deleteMany", "remove"):
        n = _run(conn, db, "delete", {"delete": coll})["n"]
        return {"acknowledged": True, "deletedCount": n}
    if name == "drop":
        _run(conn, db, "drop", {"drop": coll})
        return True
    raise _ShellError(f"TypeError: db.{coll}.{name} is not a function")


def _show(call: Invocation, conn: _Conn, what: str) -> Any:
    if what == "dbs" or what == "databases":
        dbs = _run(conn, "admin", "listDatabases", {"listDatabases": 1})["databases"]
        width = max(len(d["name"]) for d in dbs) + 2
        for d in dbs:
            size = d["sizeOnDisk"] / 1024
            text = f"{size / 1024:.2f} MiB" if size >= 1024 else f"{size:.2f} KiB"
            call.write(f"{d['name']:<{width}}{text}\n")
        return _NOTHING
    if what == "users":
        for user in _run(conn, conn.db, "usersInfo", {"usersInfo": 1})["users"]:
            call.write(to_shell(user, legacy=conn.legacy) + "\n")
        return _NOTHING
    if what in ("collections", "tables"):
        for name in _run(conn, conn.db, "listCollections", {"listCollections": 1})["collections"]:
            call.write(name + "\n")
        return _NOTHING
    raise _ShellError(f"MongoshInvalidInputError: [COMMON-10001] '{what}' is not a valid argument for \"show\".")


def _legacy_pretty(value: dict[str, Any]) -> str:
    roles = ",\n".join("\t\t{\n" + ",\n".join(f'\t\t\t"{k}" : "{v}"' for k, v in r.items()) + "\n\t\t}"
                       if isinstance(r, dict) else f'\t\t"{r}"' for r in value.get("roles", []))
    return "{\n" + f'\t"user" : "{value["user"]}",\n\t"roles" : [\n{roles}\n\t]\n' + "}"
