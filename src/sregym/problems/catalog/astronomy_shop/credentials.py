"""Astronomy Shop problems in how credentials reach a running service: the shop's PostgreSQL
password is rotated in the database and in product-catalog's Secret, but product-catalog keeps
the connection string it read at start (SREGym's `secret_rotation_stale_env_credentials_astronomy_shop`;
Hotel Reservation's `stale-credentials-after-rotation` is the MongoDB equivalent).

The writes are the rotation as a team would run it: product-catalog reads DB_CONNECTION_STRING
from Secret `product-catalog-db-conn`; the other two clients of role `otelu` (accounting,
product-reviews) carry the password in their env and are rolled with the new one; then
`ALTER ROLE` and the Secret update. Only product-catalog is left behind, because env from a
Secret is resolved when the container starts.
"""

from __future__ import annotations

import base64
from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems.catalog.astronomy_shop.common import (
    APP,
    IMPACT,
    SETTLE_S,
    SUITE,
    chart_object,
    deploy,
    error_free,
    mitigation,
    obj,
    restart,
    selector,
)
from sregym.problems.model import FaultSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

SECRET = "product-catalog-db-conn"
KEY = "DB_CONNECTION_STRING"
OLD_PASSWORD = "otelp"
NEW_PASSWORD = "otelp-2q7k9m4x"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _env_index(deployment: str, variable: str) -> int:
    env = chart_object("Deployment", deployment)["spec"]["template"]["spec"]["containers"][0].get("env") or []
    return next(i for i, e in enumerate(env) if e["name"] == variable)


def _env_value(deployment: str) -> str:
    env = chart_object("Deployment", deployment)["spec"]["template"]["spec"]["containers"][0]["env"]
    return env[_env_index(deployment, KEY)]["value"]


def _with_password(text: str, password: str) -> str:
    """A client's connection string with the role's password swapped (each client spells it its way)."""
    for old in (f":{OLD_PASSWORD}@", f"Password={OLD_PASSWORD};", f"password={OLD_PASSWORD} "):
        if old in text:
            return text.replace(old, old.replace(OLD_PASSWORD, password))
    raise ValueError(f"no password {OLD_PASSWORD!r} in {text!r}")


def _secret(connection: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": SECRET, "namespace": NAMESPACE}, "data": {KEY: _b64(connection)}}


def _literal_client(deployment: str) -> dict[str, Any]:
    """A client with the password in its env, rolled to the new password."""
    return {"kind": "Deployment", "namespace": NAMESPACE, "name": deployment, "patch_type": "strategic",
            "patch": {"spec": {"template": {"spec": {"containers": [{"name": deployment, "env": [
                {"name": KEY, "value": _with_password(_env_value(deployment), NEW_PASSWORD)}]}]}}}}}


@problem
def product_catalog_stale_credentials() -> Problem:
    """The PostgreSQL password of role `otelu` is rotated: `ALTER ROLE otelu PASSWORD ...`, Secret
    `product-catalog-db-conn` updated, accounting and product-reviews rolled with the new
    password; product-catalog, which reads DB_CONNECTION_STRING from that Secret, is not
    restarted and keeps the old one.

    Symptoms: product-catalog's queries fail with `pq: password authentication failed for user
    "otelu"`; product pages, ads' product lookups and checkouts fail, while the Secret and the
    database agree with each other and every pod is Running and Ready. Fix: restart
    product-catalog so it reads the rotated password.
    """
    old_connection = _env_value("product-catalog")
    new_connection = _with_password(old_connection, NEW_PASSWORD)
    index = _env_index("product-catalog", KEY)
    return Problem(
        id="astronomy-shop/product-catalog-stale-credentials-v1",
        title="product-catalog fails to authenticate to its database",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app", "config"), difficulty="medium", suites=(SUITE,),
                  sources=("sregym:secret_rotation_stale_env_credentials_astronomy_shop",)),
        faults=(
            FaultSpec(fault="create_objects", params={"objects": [_secret(old_connection)]}),
            FaultSpec(fault="patch_objects", params={"patches": [{
                "kind": "Deployment", "namespace": NAMESPACE, "name": "product-catalog", "patch_type": "json",
                "patch": [{"op": "replace", "path": f"/spec/template/spec/containers/0/env/{index}",
                           "value": {"name": KEY, "valueFrom": {"secretKeyRef": {"name": SECRET, "key": KEY}}}}]}]}),
            FaultSpec(fault="wait_pod_turnover", params={"namespace": NAMESPACE,
                                                         "label_selector": selector("product-catalog"),
                                                         "replace_live": True}),
            FaultSpec(fault="patch_objects", params={"patches": [_literal_client("accounting"),
                                                                 _literal_client("product-reviews")]}),
            FaultSpec(fault="postgres_sql", params={
                "namespace": NAMESPACE, "deployment": "postgresql", "database": "otel",
                "statement": f"ALTER ROLE otelu PASSWORD '{NEW_PASSWORD}'",
                "undo": f"ALTER ROLE otelu PASSWORD '{OLD_PASSWORD}'"}),
            FaultSpec(fault="patch_objects", params={"patches": [{
                "kind": "Secret", "namespace": NAMESPACE, "name": SECRET, "patch_type": "merge", "field": "data",
                "patch": {"data": {KEY: _b64(new_connection)}}}]}),
        ),
        ground_truth=GroundTruth(
            root_causes=(deploy("product-catalog"),), mechanism="db_auth",
            detail=f"the running product-catalog pod still uses the pre-rotation PostgreSQL password of role otelu "
                   f"from its env; Secret {SECRET} and PostgreSQL have the new one",
            detail_keywords=("rotat", "stale", "old password", "restart", KEY, "password authentication failed"),
            affected=(obj("Secret", SECRET), deploy("frontend"), deploy("checkout")), impact_keywords=IMPACT,
            description="The rotation changed the Secret and the database but not the running product-catalog pod, "
                        "which keeps authenticating with the old password."),
        mitigation=mitigation(error_free("product-catalog")),
        gold=(restart("product-catalog"),),
        settle_s=SETTLE_S,
    )
