"""MongoDB: databases, collections, indexes, users with roles, SCRAM auth and authorization.

The state (`MongoState`) lives on the volume mounted at /data/db, so users created by the init
script, roles revoked with `mongosh --eval`, and documents the services inserted survive pod
restarts exactly as far as the volume does. The server (`MongoServer`) is one running mongod
bound to that state with its own command line (`--auth`, `--port`).

Errors carry the server's wording, and `request()` wraps them the way the Go driver used by the
Hotel Reservation services prints them, e.g.
`(Unauthorized) not authorized on geo-db to execute command { find: "geo", ... }`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sregym.twin.datastores.base import DataStore, DbOutcome, bank_of, state_key
from sregym.twin.datastores.cpu_queue import wait_ms
from sregym.twin.datastores.disk import disk_effects

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

DATA_DIR = "/data/db"
# Roles and the actions they grant on their own database (or, for *AnyDatabase, on all).
READ_ACTIONS = frozenset({"find", "count", "aggregate", "distinct", "listCollections", "listIndexes",
                          "collStats", "dbStats"})
WRITE_ACTIONS = READ_ACTIONS | {"insert", "update", "delete", "findAndModify", "createIndexes",
                                "create", "drop"}
USER_ADMIN_ACTIONS = frozenset({"createUser", "dropUser", "updateUser", "grantRolesToUser",
                                "revokeRolesFromUser", "usersInfo", "createRole", "dropAllUsersFromDatabase"})
DB_ADMIN_ACTIONS = frozenset({"dropDatabase", "collStats", "dbStats", "listCollections",
                              "listIndexes", "createIndexes", "drop", "create"})
BUILTIN_ROLES = {
    "read": READ_ACTIONS,
    "readWrite": WRITE_ACTIONS,
    "dbAdmin": DB_ADMIN_ACTIONS,
    "userAdmin": USER_ADMIN_ACTIONS,
    "dbOwner": WRITE_ACTIONS | DB_ADMIN_ACTIONS | USER_ADMIN_ACTIONS,
    "readAnyDatabase": READ_ACTIONS | {"listDatabases"},
    "readWriteAnyDatabase": WRITE_ACTIONS | {"listDatabases"},
    "userAdminAnyDatabase": USER_ADMIN_ACTIONS | {"listDatabases"},
    "dbAdminAnyDatabase": DB_ADMIN_ACTIONS | {"listDatabases"},
    "clusterAdmin": frozenset({"listDatabases", "serverStatus", "shutdown"}),
    "clusterMonitor": frozenset({"listDatabases", "serverStatus"}),
    "backup": READ_ACTIONS | {"listDatabases"},
    "restore": WRITE_ACTIONS,
    "root": WRITE_ACTIONS | DB_ADMIN_ACTIONS | USER_ADMIN_ACTIONS | {"listDatabases", "serverStatus",
                                                                     "shutdown"},
}
ANY_DATABASE_ROLES = frozenset({"readAnyDatabase", "readWriteAnyDatabase", "userAdminAnyDatabase",
                                "dbAdminAnyDatabase", "clusterAdmin", "clusterMonitor", "backup",
                                "restore", "root"})
ADMIN_ONLY_ROLES = ANY_DATABASE_ROLES
# Actions that are always allowed (handshake, ping, auth, own connection status).
OPEN_ACTIONS = frozenset({"ping", "hello", "isMaster", "buildInfo", "saslStart", "saslContinue",
                          "connectionStatus", "logout", "getLastError"})


class MongoError(Exception):
    """A server error reply: `{ ok: 0, errmsg, code, codeName }`."""

    def __init__(self, code: int, code_name: str, errmsg: str) -> None:
        super().__init__(errmsg)
        self.code = code
        self.code_name = code_name
        self.errmsg = errmsg


@dataclass
class Collection:
    docs: int = 0
    avg_doc_bytes: int = 256
    indexes: list[str] = field(default_factory=lambda: ["_id_"])

    def data_bytes(self) -> int:
        return self.docs * self.avg_doc_bytes + len(self.indexes) * max(4096, self.docs * 24)


@dataclass
class MongoUser:
    user: str
    db: str
    password: str
    roles: list[tuple[str, str]] = field(default_factory=list)
    mechanisms: tuple[str, ...] = ("SCRAM-SHA-1", "SCRAM-SHA-256")

    def as_doc(self) -> dict[str, Any]:
        return {"_id": f"{self.db}.{self.user}", "userId": f"UUID(\"{_fake_uuid(self.db + self.user)}\")",
                "user": self.user, "db": self.db,
                "roles": [{"role": r, "db": d} for r, d in self.roles],
                "mechanisms": list(self.mechanisms)}


@dataclass
class MongoState:
    """Everything under /data/db: survives restarts of the pod as long as the volume does."""

    initialized: bool = False
    databases: dict[str, dict[str, Collection]] = field(default_factory=dict)
    users: dict[tuple[str, str], MongoUser] = field(default_factory=dict)
    version: str = "4.4.6"
    fcv: str = ""  # featureCompatibilityVersion of the data files (`mongo_versions`); "" until first start
    init_running: bool = False  # entrypoint init scripts: temporary server without access control

    def collection(self, db: str, name: str, *, create: bool = False) -> Collection | None:
        colls = self.databases.get(db)
        if colls is None:
            if not create:
                return None
            colls = self.databases[db] = {}
        found = colls.get(name)
        if found is None and create:
            found = colls[name] = Collection()
        return found

    def disk_bytes(self) -> int:
        base = 300 * 1024 * 1024 if self.initialized else 0  # journal + WiredTiger metadata
        return base + sum(c.data_bytes() for colls in self.databases.values() for c in colls.values())


def _fake_uuid(seed: str) -> str:
    import hashlib

    h = hashlib.sha256(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


@dataclass
class Principal:
    """Who a connection is authenticated as (None for an unauthenticated connection)."""

    user: str | None = None
    db: str = "admin"
    local: bool = False  # connected over localhost (the localhost exception)


class MongoServer(DataStore):
    """One running mongod, bound to the state on its data volume."""

    kind = "mongodb"

    @property
    def auth(self) -> bool:
        return bool(self.config.get("auth")) and not self.mongo_state.init_running

    @property
    def mongo_state(self) -> MongoState:
        return self.state

    # ------------------------------------------------------------ authn/authz
    def authenticate(self, user: str, password: str, source: str = "admin") -> None:
        """SCRAM: raises AuthenticationFailed exactly when the real server would."""
        found = self.mongo_state.users.get((source, user))
        if found is None or found.password != password:
            reason = (f'UserNotFound: Could not find user "{user}" for db "{source}"' if found is None
                      else "AuthenticationFailed: SCRAM authentication failed, storedKey mismatch")
            self.log("ACCESS", 20249, "Authentication failed",
                     {"mechanism": "SCRAM-SHA-1", "speculative": False, "principalName": user,
                      "authenticationDatabase": source, "remote": "client", "extraInfo": {},
                      "error": reason}, key=f"authfail:{source}.{user}")
            raise MongoError(18, "AuthenticationFailed", "Authentication failed.")

    def _roles_of(self, principal: Principal) -> list[tuple[str, str]]:
        if principal.user is None:
            return []
        found = self.mongo_state.users.get((principal.db, principal.user))
        return list(found.roles) if found else []

    def allowed(self, principal: Principal, action: str, db: str) -> bool:
        if action in OPEN_ACTIONS or not self.auth:
            return True
        if principal.user is None:
            # Localhost exception: with no users at all, a local client may create the first one.
            return principal.local and not self.mongo_state.users and action == "createUser" and db == "admin"
        for role, role_db in self._roles_of(principal):
            actions = BUILTIN_ROLES.get(role, frozenset())
            if action not in actions:
                continue
            if role in ANY_DATABASE_ROLES and role_db == "admin":
                if action in USER_ADMIN_ACTIONS or db not in ("local", "config") or role == "root":
                    return True
            if role_db == db:
                return True
        return False

    def check(self, principal: Principal, action: str, db: str, command_doc: str) -> None:
        if self.allowed(principal, action, db):
            return
        if principal.user is None:
            raise MongoError(13, "Unauthorized", f"command {action} requires authentication")
        raise MongoError(13, "Unauthorized", f"not authorized on {db} to execute command {command_doc}")

    # ---------------------------------------------------------------- commands
    def run(self, principal: Principal, db: str, command: str, args: dict[str, Any]) -> dict[str, Any]:
        """Execute one admin/data command as `principal`; returns the reply or raises MongoError."""
        state = self.mongo_state
        doc = _command_doc(command, args, db)
        if command in ("ping", "hello", "isMaster", "buildInfo"):
            return {"ok": 1} if command == "ping" else {"ok": 1, "version": state.version}
        if command == "connectionStatus":
            users = [{"user": principal.user, "db": principal.db}] if principal.user else []
            return {"authInfo": {"authenticatedUsers": users,
                                 "authenticatedUserRoles": [{"role": r, "db": d}
                                                            for r, d in self._roles_of(principal)]},
                    "ok": 1}
        action = {"updateUser": "updateUser", "getUsers": "usersInfo"}.get(command, command)
        self.check(principal, action, db, doc)
        if command == "createUser":
            name = str(args.get("createUser") or args.get("user") or "")
            if (db, name) in state.users:
                raise MongoError(51003, "Location51003", f"User \"{name}@{db}\" already exists")
            roles = [_role(r, db) for r in args.get("roles") or []]
            state.users[(db, name)] = MongoUser(name, db, str(args.get("pwd", "")), roles)
            state.databases.setdefault("admin", {}).setdefault("system.users", Collection())
            state.databases["admin"]["system.users"].docs = len(state.users)
            self.log("ACCESS", 20437, "Successfully added user", {"user": name, "db": db}, key=None)
            return {"ok": 1}
        if command in ("dropUser", "updateUser", "grantRolesToUser", "revokeRolesFromUser"):
            name = str(args.get(command) or "")
            found = state.users.get((db, name))
            if found is None:
                raise MongoError(11, "UserNotFound", f"Could not find user \"{name}\" for db \"{db}\"")
            if command == "dropUser":
                del state.users[(db, name)]
                state.databases.get("admin", {}).get("system.users", Collection()).docs = len(state.users)
            elif command == "updateUser":
                if "pwd" in args:
                    found.password = str(args["pwd"])
                if "roles" in args:
                    found.roles = [_role(r, db) for r in args["roles"] or []]
            elif command == "grantRolesToUser":
                for role in args.get("roles") or []:
                    item = _role(role, db)
                    if item[0] not in BUILTIN_ROLES:
                        raise MongoError(31, "RoleNotFound", f"Could not find role: {item[0]}@{item[1]}")
                    if item not in found.roles:
                        found.roles.append(item)
            else:
                for role in args.get("roles") or []:
                    item = _role(role, db)
                    if item in found.roles:
                        found.roles.remove(item)
            return {"ok": 1}
        if command == "usersInfo":
            target = args.get("usersInfo")
            users = [u for (udb, _), u in sorted(state.users.items()) if udb == db]
            if isinstance(target, str):
                users = [u for u in users if u.user == target]
            return {"users": [u.as_doc() for u in users], "ok": 1}
        if command == "listDatabases":
            dbs = [{"name": name, "sizeOnDisk": max(8192, sum(c.data_bytes() for c in colls.values())),
                    "empty": False} for name, colls in sorted(state.databases.items())]
            for name in ("admin", "config", "local"):
                if not any(d["name"] == name for d in dbs):
                    dbs.append({"name": name, "sizeOnDisk": 40960 if name != "config" else 12288,
                                "empty": False})
            dbs.sort(key=lambda d: d["name"])
            return {"databases": dbs, "totalSize": sum(d["sizeOnDisk"] for d in dbs), "ok": 1}
        if command == "listCollections":
            return {"collections": sorted(state.databases.get(db, {})), "ok": 1}
        if command in ("count", "find"):
            coll = state.collection(db, str(args.get(command)))
            return {"n": coll.docs if coll else 0, "ok": 1}
        if command == "insert":
            coll = state.collection(db, str(args.get("insert")), create=True)
            assert coll is not None
            added = int(args.get("n", 1))
            coll.docs += added
            return {"n": added, "ok": 1}
        if command == "delete":
            coll = state.collection(db, str(args.get("delete")))
            removed = coll.docs if coll else 0
            if coll:
                coll.docs = 0
            return {"n": removed, "ok": 1}
        if command == "createIndexes":
            coll = state.collection(db, str(args.get("createIndexes")), create=True)
            assert coll is not None
            for index in args.get("indexes") or []:
                name = index.get("name") or "_".join(f"{k}_{v}" for k, v in (index.get("key") or {}).items())
                if name not in coll.indexes:
                    coll.indexes.append(name)
            return {"ok": 1}
        if command == "dropDatabase":
            state.databases.pop(db, None)
            return {"ok": 1}
        if command == "drop":
            state.databases.get(db, {}).pop(str(args.get("drop")), None)
            return {"ok": 1}
        if command == "dbStats":
            colls = state.databases.get(db, {})
            return {"db": db, "collections": len(colls), "objects": sum(c.docs for c in colls.values()),
                    "dataSize": sum(c.docs * c.avg_doc_bytes for c in colls.values()), "ok": 1}
        raise MongoError(59, "CommandNotFound", f"no such command: '{command}'")

    # ------------------------------------------------------------- data plane
    def request(self, op: Any, *, db: str = "", collection: str = "", user: str | None = None,
                password: str | None = None, auth_source: str = "admin",
                filter: dict[str, Any] | None = None, index_field: str | None = None,
                rate: float = 1.0, seed_docs: int = 0, indexes: tuple[str, ...] = ()) -> DbOutcome:
        """A class of driver operations at `rate`/s: `find`, `count`, `insert`, `update`,
        `delete`, `aggregate`, or `seed` (insert `seed_docs` if the collection is empty and create
        `indexes`, what the Hotel Reservation services do at start-up)."""
        if not isinstance(op, str):
            return self.serve(op)  # type: ignore[return-value]
        principal = Principal()
        if user:
            try:
                self.authenticate(user, password or "", auth_source)
            except MongoError as exc:
                mechanism = "SCRAM-SHA-1"
                return DbOutcome.fail("AuthenticationFailed", (
                    "connection() error occurred during connection handshake: auth error: sasl "
                    f'conversation error: unable to authenticate using mechanism "{mechanism}": '
                    f"({exc.code_name}) {exc.errmsg}"))
            principal = Principal(user, auth_source)
        command = {"seed": "insert", "aggregate": "aggregate", "find": "find", "count": "count",
                   "update": "update", "delete": "delete", "insert": "insert"}.get(op, op)
        args: dict[str, Any] = {command: collection}
        if filter is not None:
            args["filter"] = filter
        try:
            if op == "seed":
                self.check(principal, "find", db, _command_doc("find", {"find": collection,
                                                                        "filter": filter or {}}, db))
                coll = self.mongo_state.collection(db, collection)
                if coll is None or coll.docs == 0:
                    self.check(principal, "insert", db, _command_doc("insert", {"insert": collection}, db))
                    coll = self.mongo_state.collection(db, collection, create=True)
                    assert coll is not None
                    coll.docs = seed_docs
                if indexes:
                    self.check(principal, "createIndexes", db,
                               _command_doc("createIndexes", {"createIndexes": collection}, db))
                    for name in indexes:
                        if name not in coll.indexes:
                            coll.indexes.append(name)
            else:
                self.check(principal, "update" if command == "update" else command, db,
                           _command_doc(command, args, db))
        except MongoError as exc:
            return DbOutcome.fail(exc.code_name, f"({exc.code_name}) {exc.errmsg}")
        cost = self.cost_ms(op, db, collection, index_field)
        wait = wait_ms(self, cost)  # behind a CPU limit the queue adds to every operation's duration
        service_ms, failure = disk_effects(self, DATA_DIR, op, rate, cost + wait, db=db, collection=collection)
        if op in ("insert", "update", "delete") and rate > 0 and failure is None:
            coll = self.mongo_state.collection(db, collection, create=op == "insert")
            if coll is not None and op == "insert":
                coll.docs += max(0, int(rate))
        self.account(rate, service_ms - wait)
        if failure is not None:
            return failure
        return DbOutcome(True, None, "", service_ms)

    def cost_ms(self, op: str, db: str, collection: str, index_field: str | None) -> float:
        """Mean server time: an index lookup is ~log(n); a collection scan grows with n."""
        coll = self.mongo_state.collection(db, collection)
        docs = coll.docs if coll else 0
        base = {"find": 0.25, "count": 0.2, "aggregate": 0.6, "insert": 0.35, "update": 0.4,
                "delete": 0.35, "seed": 0.5}.get(op, 0.3)
        if coll is None or docs == 0:
            return base
        indexed = index_field is None or any(i.startswith(f"{index_field}_") for i in coll.indexes)
        if indexed:
            return base + 0.01 * math.log2(docs + 1)
        return base + 0.0008 * docs

    def memory_bytes(self) -> int:
        """WiredTiger cache holds the working set (bounded like the default 50% of RAM - 1 GiB)."""
        return min(self.mongo_state.disk_bytes() - (300 << 20 if self.mongo_state.initialized else 0),
                   256 << 20)

    # -------------------------------------------------------------------- logs
    def log(self, component: str, ident: int, msg: str, attr: dict[str, Any], *, key: str | None,
            severity: str = "I") -> None:
        """A mongod structured log line in the container's log (rate-limited per `key`)."""
        from sregym.twin.node.runtime import runtime_of

        if self.mongo_state.init_running:
            return  # the entrypoint's temporary server: its lines are not in the container log
        now = self.twin.clock.now
        limiter = self.config.setdefault("_log_limiter", {})
        if key is not None:
            if now - limiter.get(key, -math.inf) < 10:
                return
            limiter[key] = now
        instance = runtime_of(self.twin).instance(self.namespace, self.pod_name, self.container)
        if instance is None:
            return
        import json

        date = datetime.fromtimestamp(now, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.000+00:00")
        line = (f'{{"t":{{"$date":"{date}"}},"s":"{severity}",  "c":"{component}",  "id":{ident},   '
                f'"ctx":"conn{int(now) % 997 + 3}","msg":"{msg}","attr":{json.dumps(attr, separators=(",", ":"))}}}')
        logs = self.twin.services.logs
        if logs is not None:
            logs.append(instance.container_id, now, "stdout", line)


def _role(value: Any, default_db: str) -> tuple[str, str]:
    if isinstance(value, dict):
        return str(value.get("role", "")), str(value.get("db", default_db))
    return str(value), default_db


def _command_doc(command: str, args: dict[str, Any], db: str) -> str:
    """The command document as the server echoes it in `not authorized ... command { ... }`."""
    body: dict[str, Any] = {command: args.get(command, 1)}
    for key, value in args.items():
        if key != command and key not in ("pwd",):
            body[key] = value
    if command in ("find", "count", "insert", "update", "delete", "aggregate"):
        body["lsid"] = {"id": 'UUID("5f6c3a5e-4d0e-4a4e-9b7f-2f5c1e0b8a11")'}
    body["$db"] = db
    return _flat(body)


def _flat(value: Any) -> str:
    """One-line mongod rendering: `{ find: "geo", filter: { hotelId: "1" }, $db: "geo-db" }`."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{k}: {_flat(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[ " + ", ".join(_flat(v) for v in value) + " ]" if value else "[]"
    if isinstance(value, str):
        return value if value.startswith("UUID(") else f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def new_state(twin: Twin, version: str) -> MongoState:
    return MongoState(version=version)

def mongo_state(twin: Twin, pod: dict[str, Any], container: str, started_at: float,
                version: str = "4.4.6") -> MongoState:
    key = state_key(twin, pod, container, DATA_DIR, started_at)
    return bank_of(twin).state(key, lambda: MongoState(version=version))
