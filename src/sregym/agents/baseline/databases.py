"""Database access as an SRE reconstructs it from the cluster: which database a client uses, the
credentials it logs in with (its env, the Secrets behind it), the administrative credentials
the database was set up with (its env, its init scripts), and what the database itself logs
about failed logins (a wrong password and a user that does not exist read differently).

Only what kubectl shows is used; Secret values are base64-decoded the way `kubectl get secret
-o jsonpath` users do.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from sregym.agents.baseline.context import Ctx, containers, load_json, pod_spec

# What a database logs when the login names a user it does not know (MongoDB, PostgreSQL, MySQL).
USER_MISSING = re.compile(r'UserNotFound|Could not find user|role "[^"]+" does not exist|'
                          r"Access denied for user .* \(using password: YES\).*unknown user", re.IGNORECASE)
_ASSIGN = re.compile(r'^\s*(?:export\s+)?([A-Z][A-Z0-9_]*)=["\']?([^"\'\s]*)["\']?\s*$', re.MULTILINE)
_ROLE = re.compile(r"role:\s*'([\w-]+)',\s*db:\s*'([\w-]+)'")


@dataclass
class Login:
    user: str = ""
    password: str = ""
    auth_db: str = "admin"
    database: str = ""
    secret: str = ""


def _secret(ctx: Ctx, name: str) -> dict[str, str]:
    data = load_json(ctx.get(f"get secret {name} -n {ctx.ns} -o jsonpath={{.data}}")) or {}
    out = {}
    for key, value in data.items() if isinstance(data, dict) else []:
        try:
            out[key] = base64.b64decode(str(value)).decode()
        except (binascii.Error, UnicodeDecodeError):
            continue
    return out


def _env(ctx: Ctx, deployment: str) -> tuple[dict[str, str], list[str]]:
    """The deployment's environment (literal values and Secret references resolved) and the
    Secrets it reads."""
    env: dict[str, str] = {}
    secrets: list[str] = []
    for c in containers(ctx.deployment(deployment)):
        for e in c.get("env") or []:
            ref = (e.get("valueFrom") or {}).get("secretKeyRef") or {}
            if "value" in e:
                env[e["name"]] = str(e["value"])
            elif ref.get("name"):
                secrets.append(ref["name"])
                value = _secret(ctx, ref["name"]).get(ref.get("key", ""))
                if value is not None:
                    env[e["name"]] = value
    return env, list(dict.fromkeys(secrets))


def client_login(ctx: Ctx, client: str) -> Login:
    """The user, password, authentication database and database a client connects with: its env
    first, then the other keys of the credentials Secret it reads (`authSource`, `database`)."""
    env, secrets = _env(ctx, client)
    login = Login(secret=secrets[0] if secrets else "")
    auth_in_env = False
    for name, value in sorted(env.items()):
        upper = name.upper()
        if re.search(r"AUTH_?(SOURCE|DB)", upper):
            login.auth_db, auth_in_env = value, True
        elif "USER" in upper and not re.search(r"ADDR|HOST|URL|PORT", upper):
            login.user = value
        elif re.search(r"PASS|PWD", upper):
            login.password = value
        elif re.search(r"(^|_)(DB|DATABASE)(_NAME)?$", upper):
            login.database = value
    extra = _secret(ctx, login.secret) if login.secret else {}
    login.database = login.database or extra.get("database") or extra.get("db") or extra.get("dbname") or ""
    if not auth_in_env:
        login.auth_db = extra.get("authSource", login.auth_db)
    return login


def database_of(ctx: Ctx, client: str, secret: str = "") -> str | None:
    """The Deployment of the database a client uses: the one its credentials Secret is named after
    (`<db>-credentials`), else one whose name contains the client's and looks like a database."""
    named = [d for d in ctx.facts.deployments if secret.startswith(d + "-") and d != client]
    if named:
        return max(named, key=len)
    cands = [d for d in ctx.facts.deployments if d != client and client in d and re.search(r"mongo|db|sql", d)]
    return cands[0] if cands else None


def user_missing(ctx: Ctx, database: str) -> str | None:
    """The part of the database's own log saying a login named an unknown user, if it says so."""
    logs = ctx.get(f"logs deployment/{database} -n {ctx.ns} --tail=30")
    for line in reversed(logs.splitlines()):
        match = USER_MISSING.search(line)
        if match:
            return line[max(0, match.start() - 60):match.end() + 80].strip()
    return None


def _init_scripts(ctx: Ctx, database: str) -> list[str]:
    """Text of the ConfigMaps the database mounts (init scripts), with shell variables expanded."""
    out = []
    for v in pod_spec(ctx.deployment(database)).get("volumes") or []:
        name = (v.get("configMap") or {}).get("name")
        if not name:
            continue
        for text in (ctx.json(f"get configmap {name} -n {ctx.ns}").get("data") or {}).values():
            out.append(_expand(str(text)))
    return out


def _expand(script: str) -> str:
    """Substitute the script's own `NAME="value"` assignments for `$NAME` / `${NAME}`."""
    variables = dict(_ASSIGN.findall(script))
    return re.sub(r"\$\{?([A-Z][A-Z0-9_]*)\}?", lambda m: variables.get(m.group(1), m.group(0)), script)


def admin_login(ctx: Ctx, database: str, exclude: str = "") -> tuple[str, str] | None:
    """Administrative credentials the database was set up with: root variables in its env, or a
    user/password pair its init scripts define (root first), other than `exclude`."""
    env, _ = _env(ctx, database)
    user = next((v for k, v in sorted(env.items()) if re.search(r"ROOT_USER(NAME)?$", k)), "")
    password = next((v for k, v in sorted(env.items()) if re.search(r"ROOT_PASS(WORD)?$", k)), "")
    if user and user != exclude:
        return user, password
    pairs = []
    for script in _init_scripts(ctx, database):
        variables = dict(_ASSIGN.findall(script))
        for key, value in variables.items():
            prefix = re.match(r"^(\w*?)_?USER(NAME)?$", key)
            if not prefix or value == exclude:
                continue
            for suffix in ("PWD", "PASS", "PASSWORD"):
                secret = variables.get(f"{prefix.group(1)}_{suffix}" if prefix.group(1) else suffix)
                if secret is not None:
                    pairs.append((prefix.group(1) != "ROOT", value, secret))
    return min(pairs)[1:] if pairs else None


def roles_for(ctx: Ctx, database: str, login: Login) -> list[tuple[str, str]]:
    """The roles the init scripts gave `login.user` (createUser / grantRolesToUser), else
    readWrite on the client's database."""
    roles: list[tuple[str, str]] = []
    quoted = re.escape(login.user)
    for script in _init_scripts(ctx, database):
        for statement in re.findall(rf"createUser\(\{{user:\s*'{quoted}'.*?\]\}}\)|grantRolesToUser\('{quoted}'.*?\]\)",
                                    script, re.DOTALL):
            roles += [r for r in _ROLE.findall(statement) if r not in roles]
    if login.database and not any(db == login.database for _, db in roles):
        roles.append(("readWrite", login.database))
    return roles


def is_mongo(ctx: Ctx, database: str) -> bool:
    return any("mongo" in c.get("image", "") for c in containers(ctx.deployment(database)))


def mongo_eval(ctx: Ctx, database: str, admin: tuple[str, str] | None, script: str) -> str:
    """`kubectl exec` into the database pod with the legacy shell, authenticated as `admin`."""
    auth = f" -u {admin[0]} -p {admin[1]} --authenticationDatabase admin" if admin else ""
    return f"exec deployment/{database} -n {ctx.ns} -- mongo admin --quiet{auth} --eval \"{script}\""


__all__ = ["USER_MISSING", "Login", "admin_login", "client_login", "database_of", "is_mongo", "mongo_eval",
           "roles_for", "user_missing"]
