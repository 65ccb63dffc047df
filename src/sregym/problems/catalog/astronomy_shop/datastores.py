"""Astronomy Shop problems in its backing stores: Valkey (cart's store), PostgreSQL (the catalogue,
reviews and accounting's database) and Kafka (the orders topic).

One builder, one row of data per scenario: the fault is a change to the store's own Deployment
(its server arguments or its container's resources) rolled out the way an operator would; the
twin's store models turn it into the symptoms (Valkey answers `NOAUTH`/`OOM command not allowed`,
the kubelet OOM-kills a container whose working set is above its limit, clients lose the broker).
ITBench names the store's Deployment as the root cause (scenarios 34, 40); we do the same.
The gold fix puts the chart's container fields back; the checks read the clients' symptom or
the store's readiness, so any fix that makes the store serve again passes. PostgreSQL under a
too-low memory limit (ITBench 46) is in `node_and_secrets.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems.builders import patch_container
from sregym.problems.catalog.astronomy_shop.common import (
    APP,
    IMPACT,
    SETTLE_S,
    SUITE,
    chart_object,
    deploy,
    error_free,
    mitigation,
)
from sregym.problems.model import Action, CheckSpec, Difficulty, FaultSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import GroundTruth

VALKEY_PASSWORD = "c4rt-s3cret"  # what the store now demands; cart still connects without one


@dataclass(frozen=True)
class StoreCase:
    """One change to a store's container: the fields patched in, what the clients see, the
    mechanism and detail a diagnosis should name, and the clients whose calls must succeed again."""

    store: str
    slug: str
    title: str
    fields: dict[str, Any]
    mechanism: str
    detail: str
    keywords: tuple[str, ...]
    clients: tuple[str, ...]
    description: str
    itbench: int = 0
    sources: tuple[str, ...] = ()  # scenarios of benchmarks other than ITBench
    difficulty: Difficulty = "medium"
    stuck: bool = False  # the new pod never gets ready: the rollout stalls while the old pod serves


def _memory(limit: str) -> dict[str, Any]:
    return {"resources": {"limits": {"memory": limit}, "requests": {"memory": limit}}}


CASES: tuple[StoreCase, ...] = (
    StoreCase("valkey-cart", "valkey-cart-password", "shopping carts cannot be read or saved",
              {"args": ["valkey-server", "--requirepass", VALKEY_PASSWORD]}, "db_auth",
              "valkey-cart was restarted with `--requirepass` set; cart connects without a password "
              "and every command is refused with NOAUTH Authentication required",
              ("requirepass", "password", "NOAUTH", "valkey-cart", "auth"), ("cart",),
              "The cart store now requires a password that cart does not send: every cart read and write "
              "fails, so the cart page and checkouts fail.", itbench=34,
              sources=("sregym:valkey_auth_disruption",)),
    StoreCase("valkey-cart", "valkey-cart-maxmemory", "adding to the cart fails for new shoppers",
              {"args": ["valkey-server", "--maxmemory", "512kb", "--maxmemory-policy", "noeviction"]}, "oom",
              "valkey-cart was restarted with maxmemory 512kb and policy noeviction, below what it already holds: "
              "every write fails with OOM command not allowed when used memory > 'maxmemory'",
              ("maxmemory", "noeviction", "OOM command not allowed", "valkey-cart", "512kb"), ("cart",),
              "The cart store's memory cap is far below the carts it holds and it may not evict: writes "
              "are refused, so adding items and emptying carts fail.", difficulty="hard",
              sources=("sregym:valkey_memory_disruption",)),
    StoreCase("valkey-cart", "valkey-cart-oom", "the valkey-cart rollout does not finish",
              _memory("4Mi"), "oom",
              "valkey-cart's memory limit was lowered to 4Mi, below what valkey-server needs: the container "
              "is OOMKilled (exit 137) and restarts into CrashLoopBackOff",
              ("OOMKilled", "memory limit", "4Mi", "valkey-cart", "CrashLoopBackOff"), ("cart",),
              "The new valkey-cart pod cannot stay up under its memory limit; the rollout stalls and only the "
              "old pod is left serving cart.",
              itbench=40, difficulty="easy", stuck=True),
    StoreCase("kafka", "kafka-oom", "the kafka rollout does not finish",
              _memory("64Mi"), "oom",
              "kafka's memory limit was lowered to 64Mi, far below the broker's JVM heap: the container is "
              "OOMKilled (exit 137) and restarts into CrashLoopBackOff, so the broker is down",
              ("OOMKilled", "memory limit", "64Mi", "kafka", "broker", "CrashLoopBackOff"), ("checkout",),
              "The new broker pod cannot stay up under its memory limit; the rollout stalls and only the "
              "old broker pod is left serving the orders topic.", stuck=True,
              sources=("itbench:42",)),
)


def _chart_container(deployment: str) -> dict[str, Any]:
    return chart_object("Deployment", deployment)["spec"]["template"]["spec"]["containers"][0]


def _restore(case: StoreCase) -> dict[str, Any]:
    """The chart's values of the fields the fault set (null removes a field the chart lacks)."""
    original = _chart_container(case.store)
    return {key: original.get(key) for key in case.fields}


def _checks(case: StoreCase) -> tuple[CheckSpec, ...]:
    """A stalled rollout is read from the store's Deployment (its old pod still serves); a store
    that runs but refuses its clients is read from their errors."""
    if case.stuck:
        return (CheckSpec(check="workloads_ready", params={"names": [case.store]}),)
    return tuple(error_free(c) for c in case.clients)


def store_problem(case: StoreCase) -> Problem:
    """The problem of one store change: a Deployment patch, the store and its clients affected."""
    container = _chart_container(case.store)["name"]
    sources = (f"itbench:{case.itbench}",) * bool(case.itbench) + case.sources
    return Problem(
        id=f"astronomy-shop/{case.slug}-v1",
        title=case.title,
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app", "config"), difficulty=case.difficulty, suites=(SUITE,), sources=sources),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [{
            "kind": "Deployment", "namespace": NAMESPACE, "name": case.store,
            "patch": {"spec": {"template": {"spec": {"containers": [{"name": container, **case.fields}]}}}}}]}),),
        ground_truth=GroundTruth(
            root_causes=(deploy(case.store),), mechanism=case.mechanism, detail=case.detail,
            detail_keywords=case.keywords, affected=tuple(deploy(c) for c in case.clients),
            impact_keywords=IMPACT, description=case.description),
        mitigation=mitigation(*_checks(case)),
        gold=(patch_container(NAMESPACE, case.store, container, _restore(case)),),
        settle_s=SETTLE_S,
    )


@problem
def store_changes() -> list[Problem]:
    """A backing store's Deployment is changed and rolls out: valkey-cart demands a password cart
    does not have (ITBench 34) or caps its memory without eviction, or a store's memory limit is
    set below what its server needs (valkey-cart, ITBench 40; kafka).

    Either cart's calls fail with `NOAUTH` or `OOM command not allowed` while valkey-cart is
    Running and Ready, or the store's new pod is OOMKilled (CrashLoopBackOff) and its rollout
    stalls with the old pod still serving. Fix: the store's server arguments or memory limit back to what the clients need.
    """
    return [store_problem(c) for c in CASES]



@dataclass(frozen=True)
class GrantCase:
    """One privilege a DBA revokes from the application role `otelu`: on which table, who queries
    it, and the check that is green once the privilege is back."""

    slug: str
    title: str
    privilege: str
    table: str
    client: str
    symptom: str


GRANTS: tuple[GrantCase, ...] = (
    GrantCase("catalog-select-revoked", "product pages fail while every pod is running", "SELECT",
              "catalog.products", "product-catalog",
              "product-catalog fails every query, and with it product pages and checkouts"),
    GrantCase("accounting-insert-revoked", "placed orders are not recorded", "INSERT", "accounting.order",
              "accounting", "accounting cannot record any order it consumes from Kafka"),
)


def grant_problem(case: GrantCase) -> Problem:
    """The problem of one revoked privilege: a psql REVOKE in the postgresql pod, one client affected."""
    grant = f"GRANT {case.privilege} ON {case.table} TO otelu"
    short = case.table.split(".", 1)[1]
    return Problem(
        id=f"astronomy-shop/{case.slug}-v1",
        title=case.title,
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app", "config"), difficulty="medium", suites=(SUITE,)),
        faults=(FaultSpec(fault="postgres_sql", params={
            "namespace": NAMESPACE, "deployment": "postgresql", "database": "otel",
            "statement": f"REVOKE {case.privilege} ON {case.table} FROM otelu", "undo": grant}),),
        ground_truth=GroundTruth(
            root_causes=(deploy("postgresql"),), mechanism="db_auth",
            detail=f"{case.privilege} on table {case.table} was revoked from role otelu in PostgreSQL: "
                   f"{case.client}'s queries fail with permission denied for table {short}",
            detail_keywords=("REVOKE", case.privilege, "otelu", case.table, "permission denied", "privilege"),
            affected=(deploy(case.client),), impact_keywords=IMPACT,
            description=f"The application role lost {case.privilege} on {case.table}; {case.symptom}."),
        mitigation=mitigation(error_free(case.client)),
        gold=(Action(op="exec", kind="Deployment", namespace=NAMESPACE, name="postgresql",
                     command=("psql", "-U", "root", "-d", "otel", "-c", grant)),),
        settle_s=SETTLE_S,
    )


@problem
def revoked_privileges() -> list[Problem]:
    """The shop's PostgreSQL role `otelu` loses a privilege on one table (a DBA's `REVOKE` run
    in the `postgresql` pod): `SELECT` on `catalog.products` (product-catalog) or `INSERT` on
    `accounting.order` (accounting, which consumes orders from Kafka).

    The client still connects and authenticates, but its queries fail with `permission denied
    for table ...`; every pod is Running and Ready. Fix: grant the privilege back to `otelu`.
    """
    return [grant_problem(c) for c in GRANTS]
