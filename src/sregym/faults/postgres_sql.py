"""A change made inside a PostgreSQL server with its own shell: `kubectl exec deploy/postgresql --
psql -U <admin> -d <db> -c '<statement>'`, as a DBA with an admin kubeconfig would (a REVOKE,
an ALTER ROLE). The server's model applies it, so the application's next queries meet it; recover
runs the statement that undoes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.faults.app_config import running_pod
from sregym.faults.base import Fault, FaultParams, fault

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster


class PostgresSqlParams(FaultParams):
    namespace: str
    deployment: str  # the PostgreSQL Deployment ("postgresql")
    database: str
    statement: str
    undo: str  # the statement that puts things back (recover)
    admin_user: str = "root"


def psql(cluster: Cluster, p: PostgresSqlParams, statement: str) -> str:
    """Run one statement with psql inside the database pod as the admin role; raise on failure."""
    pod = running_pod(cluster, p.namespace, p.deployment)
    result = cluster.exec(p.namespace, pod, ["psql", "-U", p.admin_user, "-d", p.database, "-c", statement])
    if result.exit_code != 0 or "ERROR" in (result.stderr or ""):
        raise RuntimeError(f"psql in {pod} failed ({result.exit_code}): {result.stderr or result.stdout}")
    return result.stdout


@fault
class PostgresSql(Fault):
    """One SQL statement run by the database's admin role inside the PostgreSQL pod."""

    name = "postgres_sql"
    Params = PostgresSqlParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, PostgresSqlParams)
        psql(cluster, p, p.statement)
        return {}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, PostgresSqlParams)
        psql(cluster, p, p.undo)
