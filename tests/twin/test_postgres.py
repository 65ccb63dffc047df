"""PostgreSQL model and `psql`: official-image initialisation, auth, privileges, output formats."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401 - registers psql
from sregym.twin.dataplane.backends import StoreRequest, ask
from sregym.twin.datastores import datastore_for
from sregym.twin.datastores.postgres import PgServer
from sregym.twin.twin import Twin
from sregym.twin.userland.context import exec_context, run_exec

# The API-server fixture lives in tests/twin/api/conftest.py; load it for the one kubectl test.
_spec = importlib.util.spec_from_file_location("_pg_api_conftest", Path(__file__).parent / "api" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_api)
kube = _api.kube

INIT_SQL = """-- schema for the shop
CREATE USER app WITH PASSWORD 'apppw';
CREATE TABLE products (id int, name text);
INSERT INTO products VALUES (1, 'a'), (2, 'b'), (3, 'c');
GRANT SELECT, INSERT ON TABLE products TO app;
"""

MANIFEST = """
apiVersion: v1
kind: ConfigMap
metadata: {name: pg-init, namespace: default}
data:
  01-schema.sql: |
%s
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pg-data, namespace: default}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: db, namespace: default}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: postgres
        image: postgres:17.2
        env:
        - {name: POSTGRES_PASSWORD, value: secret}
        - {name: POSTGRES_DB, value: shop}
        volumeMounts:
        - {name: data, mountPath: /var/lib/postgresql/data}
        - {name: init, mountPath: /docker-entrypoint-initdb.d}
      volumes:
      - {name: data, persistentVolumeClaim: {claimName: pg-data}}
      - {name: init, configMap: {name: pg-init}}
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec: {selector: {app: db}, ports: [{port: 5432}]}
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: default}
spec:
  containers: [{name: c, image: "postgres:17.2", command: [sleep, "3600"]}]
"""


def _manifest(sql: str = INIT_SQL) -> str:
    return MANIFEST % "\n".join("    " + line for line in sql.splitlines())


@pytest.fixture
def twin() -> Twin:
    twin = Twin(seed=5)
    twin.apply(_manifest())
    twin.advance(30)
    return twin


def _db_pod(twin: Twin) -> dict[str, Any]:
    pods = [p for p in twin.list("pods", "default") if p["metadata"]["name"].startswith("db-")
            and not p["metadata"].get("deletionTimestamp")]
    assert pods
    return pods[0]


def run(twin: Twin, pod: str | dict[str, Any], *argv: str) -> tuple[str, str, int]:
    obj = _db_pod(twin) if pod == "db" else twin.store.peek("Pod", "default", str(pod))
    assert isinstance(obj, dict)
    container = "postgres" if pod == "db" else "c"
    result = run_exec(exec_context(twin, obj, container), list(argv))
    return result.stdout, result.stderr, result.exit_code


def _server(twin: Twin) -> PgServer:
    store = datastore_for(twin, _db_pod(twin))
    assert isinstance(store, PgServer)
    return store


def _app_query(twin: Twin, password: str = "apppw", op: str = "select") -> Any:
    return ask(twin, _db_pod(twin), StoreRequest("postgres", op, "shop", "products", "app", password, "", 20.0), 0.0)


# ------------------------------------------------------------------------------ initialisation
def test_init_from_env_and_scripts(twin: Twin) -> None:
    pg = _server(twin).pg
    assert pg.roles["postgres"].superuser and pg.roles["postgres"].password == "secret"
    assert pg.roles["app"].login and pg.roles["app"].password == "apppw"
    assert sorted(pg.databases) == ["postgres", "shop", "template0", "template1"]
    products = pg.databases["shop"].tables[("public", "products")]
    assert products.rows == 3 and products.grants["app"] == {"SELECT", "INSERT"}
    logs = twin.logs("default", _db_pod(twin)["metadata"]["name"])
    assert "/usr/local/bin/docker-entrypoint.sh: running /docker-entrypoint-initdb.d/01-schema.sql\n" \
           "CREATE ROLE\nCREATE TABLE\nINSERT 0 3\nGRANT\n" in logs
    assert "LOG:  database system is ready to accept connections" in logs
    assert _app_query(twin).ok


def test_no_password_refuses_to_start() -> None:
    twin = Twin(seed=5)
    twin.apply("""
apiVersion: v1
kind: Pod
metadata: {name: nopw, namespace: default}
spec:
  containers: [{name: postgres, image: "postgres:17.2"}]
""")
    twin.advance(20)
    pod = twin.get("Pod", "default", "nopw")
    assert datastore_for(twin, pod) is None
    assert "Database is uninitialized and superuser password is not specified" in twin.logs("default", "nopw")


def test_broken_init_script_leaves_half_initialised_cluster_on_the_volume() -> None:
    twin = Twin(seed=5)
    twin.apply(_manifest("CREATE USER app WITH PASSWORD 'apppw';\nGRANT SELECT ON products TO app;\n"))
    twin.advance(60)
    pod = _db_pod(twin)
    logs = twin.logs("default", pod["metadata"]["name"], previous=True) \
        if pod["status"]["containerStatuses"][0].get("restartCount") else ""
    assert 'psql:/docker-entrypoint-initdb.d/01-schema.sql:2: ERROR:  relation "products" does not exist' in logs
    # The restarted container skips initialisation: PGDATA already holds the (incomplete) cluster.
    current = twin.logs("default", pod["metadata"]["name"])
    assert "PostgreSQL Database directory appears to contain a database; Skipping initialization" in current
    pg = _server(twin).pg
    assert "app" in pg.roles and not pg.databases["shop"].tables


# --------------------------------------------------------------------------- auth and privileges
def test_wrong_password_unknown_role_and_database(twin: Twin) -> None:
    bad = _app_query(twin, password="nope")
    assert not bad.ok and bad.error_class == "auth"
    assert bad.error == 'pq: password authentication failed for user "app"'
    _, err, code = run(twin, "client", "psql", "postgresql://app:nope@db:5432/shop", "-c", "SELECT 1")
    ip = twin.get("Service", "default", "db")["spec"]["clusterIP"]
    assert code == 2
    assert err == (f'psql: error: connection to server at "db" ({ip}), port 5432 failed: '
                   'FATAL:  password authentication failed for user "app"\n')
    _, err, code = run(twin, "client", "psql", "-h", "db", "-U", "app", "-d", "shop", "-c", "SELECT 1")
    assert code == 2 and err.endswith("failed: fe_sendauth: no password supplied\n")
    # Over the socket the official image trusts local connections: role and database checks remain.
    _, err, code = run(twin, "db", "psql", "-U", "x", "-c", "SELECT 1")
    assert code == 2 and err == ('psql: error: connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" '
                                 'failed: FATAL:  role "x" does not exist\n')
    _, err, code = run(twin, "db", "psql", "-U", "postgres", "-d", "x", "-c", "SELECT 1")
    assert code == 2 and err.endswith('failed: FATAL:  database "x" does not exist\n')
    _, err, code = run(twin, "client", "psql", "-c", "SELECT 1")
    assert code == 2 and "failed: No such file or directory\n\tIs the server running locally" in err
    _, err, code = run(twin, "client", "psql", "-h", "nodb", "-U", "app", "-c", "SELECT 1")
    assert code == 2 and err == 'psql: error: could not translate host name "nodb" to address: ' \
                                'Name or service not known\n'


def test_revoke_then_app_user_gets_permission_denied(twin: Twin) -> None:
    out, _, code = run(twin, "db", "psql", "-U", "postgres", "-d", "shop", "-c",
                       "REVOKE SELECT ON TABLE products FROM app")
    assert (out, code) == ("REVOKE\n", 0)
    denied = _app_query(twin)
    assert not denied.ok and denied.error == "pq: permission denied for table products"
    assert denied.error_class == "auth"
    assert _app_query(twin, op="insert").ok  # INSERT was not revoked
    _, err, code = run(twin, "client", "sh", "-c",
                       "PGPASSWORD=apppw psql -h db -U app -d shop -c 'SELECT count(*) FROM products'")
    assert (err, code) == ("ERROR:  permission denied for table products\n", 1)
    out, _, code = run(twin, "db", "psql", "-U", "postgres", "-d", "shop", "-c", "GRANT SELECT ON products TO app")
    assert (out, code) == ("GRANT\n", 0) and _app_query(twin).ok


def test_alter_role_password_rotation_survives_pod_restart(twin: Twin) -> None:
    out, _, code = run(twin, "db", "psql", "-U", "postgres", "-c", "ALTER ROLE app WITH PASSWORD 'rotated'")
    assert (out, code) == ("ALTER ROLE\n", 0)
    assert _app_query(twin).error == 'pq: password authentication failed for user "app"'
    assert _app_query(twin, password="rotated").ok
    old = _db_pod(twin)["metadata"]["name"]
    twin.delete("pods", "default", old)
    twin.advance(40)
    assert _db_pod(twin)["metadata"]["name"] != old
    # The catalogue lives on the PV: the new pod skips init and keeps the rotated password.
    assert _app_query(twin, password="rotated").ok
    assert not _app_query(twin).ok
    assert "Skipping initialization" in twin.logs("default", _db_pod(twin)["metadata"]["name"])


def test_role_and_database_ddl_and_errors(twin: Twin) -> None:
    _, err, code = run(twin, "db", "psql", "-U", "postgres", "-c", "CREATE ROLE ro NOLOGIN; CREATE DATABASE inv")
    assert (err, code) == ("ERROR:  CREATE DATABASE cannot run inside a transaction block\n", 1)
    assert "ro" not in _server(twin).pg.roles  # the implicit transaction rolled back
    out, _, code = run(twin, "db", "psql", "-U", "postgres", "-c", "CREATE ROLE ro NOLOGIN",
                       "-c", "CREATE DATABASE inv OWNER app")
    assert (out, code) == ("CREATE ROLE\nCREATE DATABASE\n", 0)
    assert _server(twin).pg.databases["inv"].owner == "app"
    _, err, code = run(twin, "db", "psql", "-U", "postgres", "-c", "CREATE ROLE ro")
    assert (err, code) == ('ERROR:  role "ro" already exists\n', 1)
    _, err, code = run(twin, "db", "psql", "-U", "ro", "-c", "SELECT 1")
    assert code == 2 and err.endswith('FATAL:  role "ro" is not permitted to log in\n')
    _, err, code = run(twin, "db", "psql", "-U", "app", "-d", "shop", "-c", "CREATE ROLE x")
    assert code == 1 and err == ("ERROR:  permission denied to create role\n"
                                 "DETAIL:  Only roles with the CREATEROLE attribute may create roles.\n")
    # A multi-statement -c string is one transaction: a failure rolls back what came before.
    _, err, code = run(twin, "db", "psql", "-U", "postgres", "-c", "CREATE ROLE tmp; DROP ROLE nosuch")
    assert code == 1 and err == 'ERROR:  role "nosuch" does not exist\n'
    assert "tmp" not in _server(twin).pg.roles
    out, _, code = run(twin, "db", "psql", "-U", "postgres", "-c", "DROP ROLE ro")
    assert (out, code) == ("DROP ROLE\n", 0) and "ro" not in _server(twin).pg.roles
    _, err, code = run(twin, "db", "psql", "-U", "postgres", "-d", "shop", "-c", "SELECT count(*) FROM nope")
    assert code == 1 and err == ('ERROR:  relation "nope" does not exist\n'
                                 "LINE 1: SELECT count(*) FROM nope\n"
                                 "                             ^\n")


# --------------------------------------------------------------------------------- output formats
def test_psql_output_formats(twin: Twin) -> None:
    out, _, _ = run(twin, "db", "psql", "-U", "postgres", "-d", "shop", "-c", "SELECT count(*) FROM products")
    assert out == " count \n-------\n     3\n(1 row)\n\n"
    out, _, _ = run(twin, "db", "psql", "-U", "postgres", "-c", "SELECT 1")
    assert out == " ?column? \n----------\n        1\n(1 row)\n\n"
    out, _, _ = run(twin, "db", "psql", "-U", "postgres", "-X", "-t", "-A", "-c", "SELECT 1")
    assert out == "1\n"
    out, _, _ = run(twin, "db", "psql", "-U", "app", "-d", "shop", "-tAc", "SELECT current_user")
    assert out == "app\n"
    out, _, _ = run(twin, "db", "psql", "-U", "postgres", "-A", "-c", "SELECT current_user")
    assert out == "current_user\npostgres\n(1 row)\n"
    out, _, _ = run(twin, "db", "psql", "-U", "postgres", "-t", "-c", "SELECT current_user")
    assert out == " postgres\n\n"
    out, _, _ = run(twin, "db", "psql", "-U", "postgres", "-c", "\\du")
    assert out.split("\n") == [
        "                             List of roles",
        " Role name |                         Attributes                         ",
        "-----------+------------------------------------------------------------",
        " app       | ",
        " postgres  | Superuser, Create role, Create DB, Replication, Bypass RLS",
        "", "",
    ]  # no row-count footer for \du, then the blank line
    out, _, _ = run(twin, "db", "psql", "-U", "postgres", "-d", "shop", "-c", "\\dt")
    assert out == ("          List of relations\n"
                   " Schema |   Name   | Type  |  Owner   \n"
                   "--------+----------+-------+----------\n"
                   " public | products | table | postgres\n"
                   "(1 row)\n\n")
    out, _, _ = run(twin, "db", "psql", "-U", "postgres", "-c", "\\l")
    lines = out.splitlines()
    assert lines[1].startswith("   Name    |  Owner   | Encoding | Locale Provider |")
    assert " template0 | postgres | UTF8     | libc            | en_US.utf8 | en_US.utf8 |        |           " \
           "| =c/postgres          +" in lines
    assert lines[-2:] == ["(4 rows)", ""]
    _, err, code = run(twin, "db", "psql", "-U", "postgres", "-c", "\\dt")
    assert (err, code) == ("Did not find any relations.\n", 0)


# ------------------------------------------------------------------------------ real kubectl exec
def test_kubectl_exec_psql(kube: Any) -> None:
    kube.call(kube.twin.apply, _manifest())
    kube.advance(30)
    pod = kube.call(_db_pod, kube.twin)["metadata"]["name"]
    out = kube.ok("exec", pod, "-c", "postgres", "--", "psql", "-U", "postgres", "-d", "shop", "-tAc",
                  "SELECT count(*) FROM products")
    assert out == "3\n"
    denied = kube.kubectl("exec", "client", "--", "psql", "postgresql://app:wrong@db/shop", "-c", "SELECT 1")
    assert denied.returncode == 2
    assert 'FATAL:  password authentication failed for user "app"' in denied.stderr


# ------------------------------------------------------------------------ an app over the data plane
def _shop_app(twin: Twin) -> None:
    """An HTTP service whose `/products` reads table products with credentials from a Secret."""
    from sregym.twin.dataplane.programs import bind_image
    from sregym.twin.dataplane.spec import (
        Call,
        Dependency,
        Operation,
        ProgramSpec,
        RetryPolicy,
        Setting,
        register_program,
    )
    from sregym.twin.dataplane.workload import RequestMix, WorkloadSpec

    register_program(ProgramSpec(
        name="pg-shop", protocol="http", port=Setting(env="PORT"),
        operations=(Operation(name="/products", calls=(Call(dependency="db", operation="select",
                                                            collection="products"),)),),
        dependencies=(Dependency(name="db", kind="postgres", address=Setting(env="DATABASE_URL"),
                                 password=Setting(env="DB_PASSWORD"),
                                 policy=RetryPolicy(timeout=Setting(default="2s")),
                                 error_log="query failed: {error}"),)))
    bind_image("ghcr.io/sregym/pg-shop", ("1.0",), ["pg-shop"])
    twin.apply("""
apiVersion: v1
kind: Secret
metadata: {name: shop-db, namespace: default}
stringData: {password: apppw}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers:
      - name: shop
        image: ghcr.io/sregym/pg-shop:1.0
        command: [pg-shop]
        env:
        - {name: PORT, value: "8080"}
        - {name: DATABASE_URL, value: "postgresql://app@db:5432/shop?sslmode=disable"}
        - name: DB_PASSWORD
          valueFrom: {secretKeyRef: {name: shop-db, key: password}}
---
apiVersion: v1
kind: Service
metadata: {name: shop, namespace: default}
spec: {selector: {app: shop}, ports: [{port: 8080}]}
""")
    twin.advance(20)
    twin.services.dataplane.add_workload(WorkloadSpec(
        name="shop", target="http://shop.default.svc.cluster.local:8080", rps=20,
        mix=(RequestMix(operation="/products"),)))
    twin.advance(20)


def test_app_authenticates_with_secret_and_fails_after_revoke(twin: Twin) -> None:
    _shop_app(twin)
    dp = twin.services.dataplane
    assert dp.entry_stats(10).success_ratio > 0.99
    run(twin, "db", "psql", "-U", "postgres", "-d", "shop", "-c", "REVOKE ALL ON products FROM app")
    twin.advance(20)
    assert dp.entry_stats(10).success_ratio < 0.01
    shop = twin.list("pods", "default", label_selector="app=shop")[0]["metadata"]["name"]
    assert "query failed: pq: permission denied for table products" in twin.logs("default", shop)


def test_md5_secret_fails_scram_host_auth_and_server_logs_say_why(twin: Twin) -> None:
    out, _, code = run(twin, "db", "psql", "-U", "postgres", "-c",
                       "SET password_encryption = 'md5'; ALTER ROLE app PASSWORD 'apppw'")
    assert (out, code) == ("SET\nALTER ROLE\n", 0)
    assert _server(twin).pg.roles["app"].method == "md5"
    failed = _app_query(twin)  # same password, but pg_hba.conf asks for SCRAM
    assert failed.error == 'pq: password authentication failed for user "app"'
    logs = twin.logs("default", _db_pod(twin)["metadata"]["name"])
    assert 'FATAL:  password authentication failed for user "app"' in logs
    assert 'DETAIL:  User "app" does not have a valid SCRAM secret.' in logs
    assert '"host all all all scram-sha-256"' in logs
    # Re-setting it under scram-sha-256 repairs the login.
    run(twin, "db", "psql", "-U", "postgres", "-c", "ALTER ROLE app PASSWORD 'apppw'")
    assert _app_query(twin).ok
    run(twin, "db", "psql", "-U", "postgres", "-d", "shop", "-c", "REVOKE SELECT ON products FROM app")
    twin.advance(1)
    assert not _app_query(twin).ok
    logs = twin.logs("default", _db_pod(twin)["metadata"]["name"])
    assert "ERROR:  permission denied for table products" in logs
    assert "STATEMENT:  SELECT * FROM products" in logs


def test_shell_init_script_runs_psql_over_the_socket() -> None:
    script = ('#!/bin/bash\nset -e\n'
              'psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" '
              '-c "CREATE USER docker WITH PASSWORD \'dpw\'" -c "CREATE DATABASE docker OWNER docker"\n')
    twin = Twin(seed=5)
    twin.apply([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "init", "namespace": "default"},
         "data": {"init-user-db.sh": script}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db", "namespace": "default"},
         "spec": {"containers": [{"name": "postgres", "image": "postgres:16",
                                  "env": [{"name": "POSTGRES_PASSWORD", "value": "pw"},
                                          {"name": "POSTGRES_USER", "value": "admin"}],
                                  "volumeMounts": [{"name": "init", "mountPath": "/docker-entrypoint-initdb.d"}]}],
                  "volumes": [{"name": "init", "configMap": {"name": "init"}}]}},
    ])
    twin.advance(20)
    store = datastore_for(twin, twin.get("Pod", "default", "db"))
    assert isinstance(store, PgServer)
    assert store.pg.databases["docker"].owner == "docker" and store.pg.databases["admin"].owner == "admin"
    assert store.request("select", db="docker", user="docker", password="dpw").ok
    logs = twin.logs("default", "db")
    assert "running /docker-entrypoint-initdb.d/init-user-db.sh\nCREATE ROLE\nCREATE DATABASE\n" in logs
