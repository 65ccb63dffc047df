"""The benchmark is invisible to the agent credential (issue #15, item 7).

A namespace the benchmark keeps for itself (`sregym-system`: the load generator; `chaos-mesh`)
must answer every kubectl command exactly as a namespace nobody created does, and the Chaos Mesh
API group exactly as a group nobody installed: same exit code, same stdout, same stderr once the
names are swapped. Then a sweep of the commands an SRE runs first (get/describe everything,
discovery, RBAC reviews, events, logs errors) must not contain a tell-tale word.
"""

from __future__ import annotations

import json
import re

import pytest

from support.kube import KubeHarness

HIDDEN = ("sregym-system", "chaos-mesh")
ABSENT = "payments-prod"  # a namespace that exists nowhere
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


# Chaos Mesh against a group nobody installed: (command, made-up counterpart).
GROUP_COMMANDS = [
    ("get podchaos -A", "get podwidget -A"),
    ("get networkchaos -n hotel-reservation", "get networkwidget -n hotel-reservation"),
    ("get podchaos.chaos-mesh.org -A", "get podwidget.widgets.example.com -A"),
    ("explain podchaos", "explain podwidget"),
    ("auth can-i create podchaos.chaos-mesh.org", "auth can-i create podwidget.widgets.example.com"),
    ("get --raw /apis/chaos-mesh.org", "get --raw /apis/widgets.example.com"),
    ("get --raw /apis/chaos-mesh.org/v1alpha1", "get --raw /apis/widgets.example.com/v1alpha1"),
    ("get --raw /apis/chaos-mesh.org/v1alpha1/namespaces/hotel-reservation/podchaos",
     "get --raw /apis/widgets.example.com/v1alpha1/namespaces/hotel-reservation/podwidget"),
]
_SWAP = (("podwidget", "podchaos"), ("networkwidget", "networkchaos"),
         ("widgets.example.com", "chaos-mesh.org"))


@pytest.mark.parametrize(("chaos", "made_up"), GROUP_COMMANDS)
def test_chaos_mesh_group_answers_like_an_uninstalled_one(cluster: KubeHarness, chaos: str,
                                                          made_up: str) -> None:
    seen = _run(cluster, chaos)
    rc, out, err = _run(cluster, made_up)
    for fake, real in _SWAP:
        out, err = out.replace(fake, real), err.replace(fake, real)
    assert seen == (rc, out, err)


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
    leaks = sorted({m.group(0) for m in TELLTALE.finditer(out + err)})
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
