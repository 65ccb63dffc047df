"""The benchmark is invisible to the agent credential (issue #15, item 7).

A namespace the benchmark keeps for itself (`sregym-system`: the load generator; `chaos-mesh`)
must answer every kubectl command exactly as a namespace nobody created does: same exit code, same
stdout, same stderr once the names are swapped. Chaos Mesh is a platform add-on every cluster
shows (its kinds are discoverable, a team's experiments in user namespaces are the agent's), so
the benchmark's own experiments, kept in `chaos-mesh`, must never show: cluster-wide chaos lists
are empty exactly as on a cluster with no experiment. Then a sweep of the commands an SRE runs
first (get/describe everything, discovery, RBAC reviews, events, logs errors) must not contain a
tell-tale word besides Chaos Mesh's own API vocabulary.
"""

from __future__ import annotations

import json
import re

import pytest

from support.kube import KubeHarness

HIDDEN = ("sregym-system", "chaos-mesh")
ABSENT = "payments-prod"  # a namespace that exists nowhere
# The benchmark's own experiments: a Schedule spawning a pod failure on the app every minute.
BENCHMARK_CHAOS = (
    {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "Schedule",
     "metadata": {"name": "geo-pod-failure-x7", "namespace": "chaos-mesh"},
     "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Forbid", "historyLimit": 1, "type": "PodChaos",
              "podChaos": {"action": "pod-failure", "mode": "one", "duration": "5s",
                           "selector": {"namespaces": ["hotel-reservation"], "labelSelectors": {"io.kompose.service": "geo"}}}}},
)
LOADGEN = "sregym-loadgen"


@pytest.fixture(scope="module")
def hidden_pods(cluster: KubeHarness) -> dict[str, str]:
    """A real pod name in each hidden namespace (chaos-mesh and its contents are created here)."""
    # Set up in-process: an admin kubectl would fill the discovery cache the agent's kubectl
    # shares here (one cache per server), which a real agent's kubectl never sees.
    twin = cluster.twin

    def setup() -> dict[str, str]:
        if twin.store.peek("Namespace", None, "chaos-mesh") is None:
            twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "chaos-mesh"}})
        twin.create({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "daemon-k7x9w", "namespace": "chaos-mesh"},
                     "spec": {"containers": [{"name": "daemon", "image": "nginx:1.27"}]}})
        twin.create({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "settings", "namespace": "chaos-mesh"}, "data": {"a": "b"}})
        for manifest in BENCHMARK_CHAOS:
            twin.create(manifest)
        return {ns: twin.list("pods", ns)[0]["metadata"]["name"] for ns in HIDDEN}

    names = cluster.call(setup)
    cluster.advance(20)
    return names


# Commands with {ns} (the namespace) and {pod} (a pod that exists there, for the hidden one).
NAMESPACE_COMMANDS = [
    "get ns {ns}",
    "get ns {ns} -o yaml",
    "describe ns {ns}",
    "get pods -n {ns}",
    "get pods -n {ns} -o json",
    "get all -n {ns}",
    "get events -n {ns}",
    "get cm -n {ns}",
    "get cm settings -n {ns}",
    "get deploy " + LOADGEN + " -n {ns}",
    "get pod {pod} -n {ns}",
    "get pod {pod} -n {ns} -o yaml",
    "describe pod {pod} -n {ns}",
    "logs {pod} -n {ns}",
    "logs {pod} -n {ns} --previous",
    "exec {pod} -n {ns} -- ls",
    "top pods -n {ns}",
    "top pod {pod} -n {ns}",
    "delete pod {pod} -n {ns}",
    "delete cm settings -n {ns}",
    "scale deploy " + LOADGEN + " -n {ns} --replicas=0",
    "set image deploy/" + LOADGEN + " loadgen=busybox -n {ns}",
    "annotate pod {pod} -n {ns} x=y",
    "create configmap notes -n {ns} --from-literal=a=b",
    "create deployment web --image=nginx -n {ns}",
    "label ns {ns} team=sre",
    "delete ns {ns}",
    "delete events --all -n {ns}",
    "auth can-i get pods -n {ns}",
    "auth can-i delete events -n {ns}",
    "auth can-i create pods/exec -n {ns}",
    "auth can-i --list -n {ns}",
    "get --raw /api/v1/namespaces/{ns}",
    "get --raw /api/v1/namespaces/{ns}/pods/{pod}/log",
    "get schedules -n {ns}",
    "get schedule geo-pod-failure-x7 -n {ns}",
    "get podchaos -n {ns} -o json",
    "describe schedules -n {ns}",
    "delete schedule geo-pod-failure-x7 -n {ns}",
    "annotate schedule geo-pod-failure-x7 -n {ns} experiment.chaos-mesh.org/pause=true",
    "auth can-i delete schedules.chaos-mesh.org -n {ns}",
    "get --raw /apis/chaos-mesh.org/v1alpha1/namespaces/{ns}/schedules",
]


def _run(cluster: KubeHarness, command: str) -> tuple[int, str, str]:
    result = cluster.kubectl(*command.split())
    return result.returncode, result.stdout, result.stderr


@pytest.mark.parametrize("ns", HIDDEN)
@pytest.mark.parametrize("template", NAMESPACE_COMMANDS)
def test_hidden_namespace_answers_like_an_absent_one(cluster: KubeHarness, hidden_pods: dict[str, str],
                                                     ns: str, template: str) -> None:
    pod = hidden_pods[ns]
    seen = _run(cluster, template.format(ns=ns, pod=pod))
    absent = _run(cluster, template.format(ns=ABSENT, pod=pod))
    swapped = tuple(part.replace(ABSENT, ns) if isinstance(part, str) else part for part in absent)
    assert seen == swapped
    assert pod not in seen[1] or pod in template  # nothing of its content shows


# Chaos Mesh's kinds across all namespaces: the benchmark's Schedule and the experiments it
# spawned stay out, so the agent's view is that of a cluster where no experiment exists.
ALL_NAMESPACES_CHAOS = ["get schedules -A", "get podchaos -A", "get podchaos.chaos-mesh.org -A",
                        "get schedules,podchaos,networkchaos,stresschaos,httpchaos,jvmchaos -A"]


@pytest.mark.parametrize("command", ALL_NAMESPACES_CHAOS)
def test_benchmark_chaos_never_shows_across_namespaces(cluster: KubeHarness, hidden_pods: dict[str, str],
                                                       command: str) -> None:
    cluster.advance(61)  # the Schedule has spawned its child by now
    assert cluster.call(lambda: [c["metadata"]["name"] for c in cluster.twin.list("podchaos", "chaos-mesh")])
    assert _run(cluster, command) == (0, "", "No resources found\n")


def test_chaos_mesh_kinds_are_discoverable_and_the_agents_to_change(cluster: KubeHarness) -> None:
    resources = cluster.ok("api-resources", "--api-group=chaos-mesh.org", "-o", "name").split()
    assert {"schedules.chaos-mesh.org", "podchaos.chaos-mesh.org", "networkchaos.chaos-mesh.org",
            "stresschaos.chaos-mesh.org", "httpchaos.chaos-mesh.org"} <= set(resources)
    for verb in ("delete", "patch"):
        assert cluster.ok("auth", "can-i", verb, "schedules.chaos-mesh.org", "-n", "hotel-reservation").strip() == "yes"


def test_access_reviews_carry_no_reason_naming_the_benchmark(cluster: KubeHarness) -> None:
    review = ('{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":'
              '{"resourceAttributes":{"verb":"list","resource":"pods","namespace":"%s"}}}')
    outs = [cluster.ok("create", "-f", "-", "-o", "json", input=review % ns) for ns in (*HIDDEN, ABSENT)]
    bodies = [o.replace(ns, "NS") for o, ns in zip(outs, (*HIDDEN, ABSENT), strict=True)]
    assert bodies[0] == bodies[1] == bodies[2]
    assert '"allowed": true' in bodies[0]
    assert not TELLTALE.search(bodies[0])


# --------------------------------------------------------------------------- leak sweep
SWEEP = [
    "get all -A",
    "get all -A -o yaml",
    "get ns",
    "get ns -o yaml",
    "get events -A",
    "events -A",
    "get pods -A -o wide",
    "get cm -A",
    "get sa -A",
    "get secrets -A",
    "get deploy,sts,ds,rs -A -o yaml",
    "get leases -A",
    "get endpoints -A",
    "get endpointslices -A",
    "get clusterroles",
    "get clusterrolebindings -o yaml",
    "get rolebindings -A",
    "get crd",
    "get apiservices",
    "get validatingwebhookconfigurations,mutatingwebhookconfigurations",
    "describe nodes",
    "describe ns",
    "top pods -A",
    "top nodes",
    "api-resources",
    "api-versions",
    "auth can-i --list",
    "auth can-i --list -n kube-system",
    "auth whoami",
    "get --raw /apis",
    "get --raw /openapi/v2",
    "get --raw /openapi/v3",
    "logs deploy/frontend -n hotel-reservation --tail=50",
    "logs no-such-pod -n hotel-reservation",
    "get pods -l app=loadgen -A",
]
# Words that betray the benchmark (word-bounded: "default" is not a fault). The cluster is named
# like the kind cluster it mirrors (nodes, kubeconfig), so "sregym" appears nowhere.
TELLTALE = re.compile(r"sregym-system|sregym-loadgen|chaos|benchmark|\binject|\bfault|ground.?truth"
                      r"|\boracle|sregym:|sregym", re.IGNORECASE)
# Chaos Mesh's API vocabulary, which every cluster shows alike (group, kinds, their category and
# the pause annotation in their schemas), is left out before the scan; its namespace is not.
PLATFORM = re.compile(r'chaos-mesh\.org|\b\w*chaos(?!-mesh)(es)?\b|"categories":\s*\["chaos-mesh"\]', re.IGNORECASE)


# Upstream's own API documentation says "injected" (env vars, host aliases): a real cluster's
# OpenAPI does too, so only descriptions the vendored 1.32 schemas do not contain are scanned.
def _without_upstream_descriptions(text: str) -> str:
    import gzip
    from importlib import resources

    data = resources.files("sregym.twin.machinery") / "data" / "kubernetes-1.32-schemas.json.gz"
    upstream = gzip.decompress(data.read_bytes()).decode()
    doc = json.loads(text)

    def strip(node: object) -> object:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items()
                    if not (k == "description" and isinstance(v, str) and json.dumps(v)[1:-1] in upstream)}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return json.dumps(strip(doc))


@pytest.mark.parametrize("command", SWEEP)
def test_agent_sees_no_trace_of_the_benchmark(cluster: KubeHarness, hidden_pods: dict[str, str],
                                              command: str) -> None:
    _rc, out, err = _run(cluster, command)
    if command.startswith("get --raw /openapi"):
        out = _without_upstream_descriptions(out)
    leaks = sorted({m.group(0) for m in TELLTALE.finditer(PLATFORM.sub("", out + err))})
    assert not leaks, f"{command}: {leaks}"
    for pod in hidden_pods.values():
        assert pod not in out + err


# A create is decoded before namespace lifecycle refuses it: a malformed or mistyped body is the
# same 400 in a hidden namespace as in an absent one, and a good body is the same NotFound.
CREATE_BODIES = [
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata: {a: 1}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata: {a: b}\nbogus: 1\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata: {a: b}\n",
]


@pytest.mark.parametrize("ns", HIDDEN)
@pytest.mark.parametrize("body", CREATE_BODIES)
def test_a_create_into_a_hidden_namespace_is_decoded_first(cluster: KubeHarness, hidden_pods: dict[str, str],
                                                           ns: str, body: str) -> None:
    def create(namespace: str) -> tuple[int, str, str]:
        result = cluster.kubectl("create", "-f", "-", "-n", namespace, input=body)
        return result.returncode, result.stdout, result.stderr

    seen, absent = create(ns), create(ABSENT)
    assert seen == tuple(p.replace(ABSENT, ns) if isinstance(p, str) else p for p in absent)
    assert seen[0] != 0
