"""Social Network problems: what is specific to them. The MongoDB auth change really makes
url-shorten-service fail with mongod's own error text (and recover ends it); nothing a problem
writes into the cluster names the benchmark; the suites, sources and gold restore the manifests.
The check protocol of every problem runs in the registry-wide batch (`sregym check`)."""

from __future__ import annotations

import json
import re

import pytest

from sregym.apps import get_app
from sregym.cluster.twin import TwinCluster
from sregym.faults.base import make_fault
from sregym.oracles.checks import CheckContext
from sregym.oracles.checks_app_config import service_error_free
from sregym.problems.catalog.social_network.common import manifest
from sregym.problems.registry import get_problem, select

NS = "social-network"
# "default" (a defaulting webhook, DEFAULT_* settings) is Kubernetes' word, not a leak.
FORBIDDEN = re.compile(r"(?<!de)fault|inject|sregym|benchmark|chaos|ground.?truth|problem", re.IGNORECASE)


def _ids() -> list[str]:
    return sorted(p.id for p in select(suite="social-network"))


def test_the_social_network_suite_holds_every_social_network_problem() -> None:
    ids = _ids()
    assert len(ids) >= 12
    assert all(get_problem(i).app == NS for i in ids)
    lite = [p.id for p in select(suite="lite") if p.app == NS]
    assert len(lite) == 3
    # Every one reproduces a named published scenario.
    assert all(get_problem(i).tags.sources for i in ids)


@pytest.mark.parametrize("problem_id", _ids())
def test_nothing_a_problem_writes_or_shows_names_the_benchmark(problem_id: str) -> None:
    problem = get_problem(problem_id)
    # A Chaos Mesh experiment's kind (`PodChaos`, `NetworkChaos`) is the real tool's own name; the
    # names and labels the problem chooses must still say nothing.
    written = re.sub(r'"kind": "[A-Za-z]+Chaos"', '"kind": ""', json.dumps([f.params for f in problem.faults]))
    assert not FORBIDDEN.search(written), written
    assert not FORBIDDEN.search(problem.title)


@pytest.mark.parametrize("problem_id", ["social-network/user-service-missing-v1",
                                        "social-network/media-mongodb-configmap-missing-v1"])
def test_gold_recreates_the_object_exactly_as_the_manifests_declare_it(problem_id: str) -> None:
    problem = get_problem(problem_id)
    (deleted,) = (f.params for f in problem.faults if f.fault == "delete_object")
    created = next(a.manifest for a in problem.gold if a.op == "apply")
    assert created == manifest(deleted["kind"], deleted["name"])


@pytest.fixture(scope="module")
def cluster() -> TwinCluster:
    c = TwinCluster.new(3)
    app = get_app(NS)
    app.push_images(c)
    for obj in app.objects():
        c.apply(obj)
    c.advance(150)  # the stores start, then a minute of clean traffic
    return c


def _pod(c: TwinCluster, service: str) -> str:
    pods = [p for p in c.list("Pod", NS, label_selector=f"service={service}")
            if not p["metadata"].get("deletionTimestamp")]
    return sorted(p["metadata"]["name"] for p in pods)[-1]


def test_mongod_auth_makes_url_shorten_fail_with_the_server_error_and_recover_ends_it(cluster: TwinCluster) -> None:
    ctx = CheckContext(cluster=cluster, namespace=NS)
    assert service_error_free(ctx, service="url-shorten-service")[0]
    (spec,) = get_problem("social-network/url-shorten-mongodb-auth-required-v1").faults
    fault = make_fault(spec.fault, spec.params)
    state = fault.inject(cluster)
    cluster.advance(60)
    ok, detail = service_error_free(ctx, service="url-shorten-service")
    assert not ok, detail
    logs = cluster.logs(NS, _pod(cluster, "url-shorten-service"), tail=50)
    assert "requires authentication" in logs, logs
    # The database itself looks healthy: Running, Ready, no restarts.
    pod = cluster.get("Pod", NS, _pod(cluster, "url-shorten-mongodb"))
    assert pod is not None and all(c["ready"] for c in pod["status"]["containerStatuses"])
    fault.recover(cluster, state)
    cluster.advance(90)
    assert service_error_free(ctx, service="url-shorten-service")[0]


def test_text_service_off_cluster_dns_cannot_resolve_its_peers(cluster: TwinCluster) -> None:
    """dnsPolicy None with a public resolver: text-service's Thrift clients fail with the C++
    TSocket text, so every post's ComposeText fails; recover puts ClusterFirst back."""
    ctx = CheckContext(cluster=cluster, namespace=NS)
    (spec,) = get_problem("social-network/text-service-dns-policy-v1").faults
    fault = make_fault(spec.fault, spec.params)
    state = fault.inject(cluster)
    cluster.advance(40)
    assert not service_error_free(ctx, service="text-service")[0]
    logs = cluster.logs(NS, _pod(cluster, "text-service"), tail=20)
    assert "Could not resolve host for client socket" in logs, logs
    fault.recover(cluster, state)
    cluster.advance(90)
    assert service_error_free(ctx, service="text-service")[0]
