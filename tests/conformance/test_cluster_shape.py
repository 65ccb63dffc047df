"""The rest of a real kind v1.32 cluster with Chaos Mesh 2.7 installed (issue #15, items 5 and 8).

What `kubectl api-versions` / `api-resources` list, what `kubectl get` prints for the cluster's
plumbing kinds right after `kind create cluster` (with metrics-server installed), the node and
leader leases renewing, `kubectl describe node` with its real sections and node identity, and an
HPA that reads metrics-server like `kubectl top` does.
"""

from __future__ import annotations

import re

import pytest

from support.kube import KubeHarness

NODES = ("kind-control-plane", "kind-worker", "kind-worker2", "kind-worker3")

# `kubectl api-versions` of kind v1.32 with metrics-server and Chaos Mesh (a platform add-on every
# problem's cluster shows alike, as on the peers' clusters).
API_VERSIONS = """admissionregistration.k8s.io/v1
apiextensions.k8s.io/v1
apiregistration.k8s.io/v1
apps/v1
authentication.k8s.io/v1
authorization.k8s.io/v1
autoscaling/v1
autoscaling/v2
batch/v1
certificates.k8s.io/v1
chaos-mesh.org/v1alpha1
coordination.k8s.io/v1
discovery.k8s.io/v1
events.k8s.io/v1
flowcontrol.apiserver.k8s.io/v1
metrics.k8s.io/v1beta1
networking.k8s.io/v1
node.k8s.io/v1
policy/v1
rbac.authorization.k8s.io/v1
scheduling.k8s.io/v1
storage.k8s.io/v1
v1
"""

# Rows of `kubectl api-resources` (NAME SHORTNAMES APIVERSION NAMESPACED KIND) a kind 1.32 lists.
API_RESOURCES = [
    ("bindings", "", "v1", "true", "Binding"),
    ("componentstatuses", "cs", "v1", "false", "ComponentStatus"),
    ("configmaps", "cm", "v1", "true", "ConfigMap"),
    ("events", "ev", "v1", "true", "Event"),
    ("namespaces", "ns", "v1", "false", "Namespace"),
    ("pods", "po", "v1", "true", "Pod"),
    ("validatingadmissionpolicies", "", "admissionregistration.k8s.io/v1", "false",
     "ValidatingAdmissionPolicy"),
    ("validatingadmissionpolicybindings", "", "admissionregistration.k8s.io/v1", "false",
     "ValidatingAdmissionPolicyBinding"),
    ("apiservices", "", "apiregistration.k8s.io/v1", "false", "APIService"),
    ("tokenreviews", "", "authentication.k8s.io/v1", "false", "TokenReview"),
    ("localsubjectaccessreviews", "", "authorization.k8s.io/v1", "true", "LocalSubjectAccessReview"),
    ("subjectaccessreviews", "", "authorization.k8s.io/v1", "false", "SubjectAccessReview"),
    ("certificatesigningrequests", "csr", "certificates.k8s.io/v1", "false",
     "CertificateSigningRequest"),
    ("leases", "", "coordination.k8s.io/v1", "true", "Lease"),
    ("events", "ev", "events.k8s.io/v1", "true", "Event"),
    ("flowschemas", "", "flowcontrol.apiserver.k8s.io/v1", "false", "FlowSchema"),
    ("prioritylevelconfigurations", "", "flowcontrol.apiserver.k8s.io/v1", "false",
     "PriorityLevelConfiguration"),
    ("networkchaos", "", "chaos-mesh.org/v1alpha1", "true", "NetworkChaos"),
    ("schedules", "", "chaos-mesh.org/v1alpha1", "true", "Schedule"),
    ("runtimeclasses", "", "node.k8s.io/v1", "false", "RuntimeClass"),
    ("csidrivers", "", "storage.k8s.io/v1", "false", "CSIDriver"),
    ("csinodes", "", "storage.k8s.io/v1", "false", "CSINode"),
    ("csistoragecapacities", "", "storage.k8s.io/v1", "true", "CSIStorageCapacity"),
]


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_api_versions_are_those_of_kind_1_32(cluster: KubeHarness) -> None:
    assert cluster.ok("api-versions") == API_VERSIONS


def test_api_resources_header_and_count(cluster: KubeHarness) -> None:
    out = cluster.ok("api-resources")
    header = out.splitlines()[0]
    assert re.fullmatch(r"NAME +SHORTNAMES +APIVERSION +NAMESPACED +KIND", header)
    assert len(out.splitlines()) - 1 == 60 + 12  # kind's own kinds, then Chaos Mesh's experiments


@pytest.mark.parametrize("row", API_RESOURCES, ids=lambda r: f"{r[0]}.{r[2]}")
def test_api_resources_lists_the_row(cluster: KubeHarness, row: tuple[str, ...]) -> None:
    name, short, version, namespaced, kind = row
    group = version.rpartition("/")[0]
    out = cluster.ok("api-resources", f"--api-group={group}")
    expected = [c for c in (name, short, version, namespaced, kind) if c]
    assert expected in _rows(out)


@pytest.mark.parametrize(("command", "expected"), [
    ("api-resources --namespaced=false --api-group=flowcontrol.apiserver.k8s.io -o name",
     "flowschemas.flowcontrol.apiserver.k8s.io\nprioritylevelconfigurations.flowcontrol.apiserver.k8s.io\n"),
    ("api-resources --api-group=apiregistration.k8s.io -o name", "apiservices.apiregistration.k8s.io\n"),
    ("api-resources --api-group=node.k8s.io -o name", "runtimeclasses.node.k8s.io\n"),
])
def test_api_resources_names(cluster: KubeHarness, command: str, expected: str) -> None:
    assert cluster.ok(*command.split()) == expected


def test_events_k8s_io_serves_the_same_events_under_new_names(cluster: KubeHarness) -> None:
    core = cluster.ok("get", "events", "-n", "kube-system", "--no-headers")
    grouped = cluster.ok("get", "events.events.k8s.io", "-n", "kube-system", "--no-headers")
    assert [r[1:] for r in _rows(grouped)] == [r[1:] for r in _rows(core)] and core
    path = "jsonpath={.items[0].apiVersion} {.items[0].regarding.kind} {.items[0].deprecatedCount}"
    version, regarding, count = cluster.ok("get", "events.v1.events.k8s.io", "-n", "kube-system",
                                           "-o", path).split()
    assert version == "events.k8s.io/v1" and regarding and int(count) >= 1
    item = cluster.ok("get", "events.events.k8s.io", "-n", "kube-system", "-o",
                      "jsonpath={.items[0]}")
    assert '"note":' in item and '"message":' not in item and '"involvedObject":' not in item


def test_componentstatuses_with_the_deprecation_warning(cluster: KubeHarness) -> None:
    result = cluster.kubectl("get", "cs")
    assert result.returncode == 0
    assert _rows(result.stdout) == [["NAME", "STATUS", "MESSAGE", "ERROR"],
                                    ["controller-manager", "Healthy", "ok"], ["etcd-0", "Healthy", "ok"],
                                    ["scheduler", "Healthy", "ok"]]
    assert result.stderr == "Warning: v1 ComponentStatus is deprecated in v1.19+\n"


def test_apiservices_local_and_metrics_server(cluster: KubeHarness) -> None:
    rows = _rows(cluster.ok("get", "apiservices"))
    assert rows[0] == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    by_name = {r[0]: r[1:3] for r in rows[1:]}
    assert by_name["v1beta1.metrics.k8s.io"] == ["kube-system/metrics-server", "True"]
    assert by_name["v1."] == by_name["v1.apps"] == by_name["v2.autoscaling"] == ["Local", "True"]
    served = {f"{v.rpartition('/')[2]}.{v.rpartition('/')[0]}" for v in API_VERSIONS.split()}
    assert set(by_name) == served
    group = cluster.ok("get", "apiservice", "v1.apps", "-o",
                       "jsonpath={.spec.groupPriorityMinimum}/{.spec.versionPriority}")
    assert group == "17800/15"


def test_flowschemas_and_priority_levels(cluster: KubeHarness) -> None:
    rows = _rows(cluster.ok("get", "flowschemas"))
    assert rows[0] == ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE",
                       "MISSINGPL"]
    by_name = {r[0]: r for r in rows[1:]}
    assert by_name["exempt"][1:4] == ["exempt", "1", "<none>"] and by_name["exempt"][5] == "False"
    assert by_name["catch-all"][1:4] == ["catch-all", "10000", "ByUser"]
    assert by_name["kube-system-service-accounts"][1:4] == ["workload-high", "900", "ByNamespace"]
    assert len(by_name) == 13
    levels = _rows(cluster.ok("get", "prioritylevelconfigurations"))
    assert levels[0] == ["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE",
                         "QUEUELENGTHLIMIT", "AGE"]
    by_level = {r[0]: r[1:6] for r in levels[1:]}
    assert by_level["exempt"] == ["Exempt", "<none>", "<none>", "<none>", "<none>"]
    assert by_level["catch-all"] == ["Limited", "5", "<none>", "<none>", "<none>"]
    assert by_level["global-default"] == ["Limited", "20", "128", "6", "50"]
    assert by_level["leader-election"] == ["Limited", "10", "16", "4", "50"]


def test_csinodes_one_per_node(cluster: KubeHarness) -> None:
    rows = _rows(cluster.ok("get", "csinodes"))
    assert rows[0] == ["NAME", "DRIVERS", "AGE"]
    assert [r[:2] for r in rows[1:]] == [[n, "0"] for n in NODES]


@pytest.mark.parametrize("resource", ["runtimeclasses", "validatingadmissionpolicies",
                                      "validatingadmissionpolicybindings", "csistoragecapacities"])
def test_kinds_kind_leaves_empty(cluster: KubeHarness, resource: str) -> None:
    result = cluster.kubectl("get", resource)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "No resources found\n") or \
        result.stderr == "No resources found in default namespace.\n"


def test_kubelet_csrs_of_tls_bootstrap(cluster: KubeHarness) -> None:
    rows = _rows(cluster.ok("get", "csr"))
    assert rows[0] == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
    assert all(re.fullmatch(r"csr-[a-z0-9]{5}", r[0]) for r in rows[1:])
    assert sorted(r[2:] for r in rows[1:]) == sorted(
        [["kubernetes.io/kube-apiserver-client-kubelet", "system:bootstrap:abcdef", "<none>",
          "Approved,Issued"]] * 3
        + [["kubernetes.io/kube-apiserver-client-kubelet", "system:node:kind-control-plane", "<none>",
            "Approved,Issued"]])


def test_node_and_leader_leases_renew(cluster: KubeHarness) -> None:
    rows = _rows(cluster.ok("get", "leases", "-n", "kube-node-lease"))
    assert rows[0] == ["NAME", "HOLDER", "AGE"]
    assert [r[:2] for r in rows[1:]] == [[n, n] for n in NODES]
    system = [r[0] for r in _rows(cluster.ok("get", "leases", "-n", "kube-system", "--no-headers"))]
    assert system[1:] == ["kube-controller-manager", "kube-scheduler"]
    assert re.fullmatch(r"apiserver-[a-z2-7]{26}", system[0])
    # Renewals compared in simulated time: in the stepped clock the presented timestamps move with
    # the wall anchor between calls (api/wall_time.py), the stored renewTime does not.
    def renewed() -> dict[str, str]:
        leases = {n: cluster.twin.store.peek("Lease", "kube-node-lease", n) for n in NODES}
        leases["kube-scheduler"] = cluster.twin.store.peek("Lease", "kube-system", "kube-scheduler")
        return {n: lease["spec"]["renewTime"] for n, lease in leases.items()}

    before = cluster.call(renewed)
    cluster.advance(12)
    after = cluster.call(renewed)
    assert all(after[n] > before[n] for n in before)


def test_node_identity(cluster: KubeHarness) -> None:
    out = cluster.ok("get", "nodes", "-o",
                     'jsonpath={range .items[*]}{.status.nodeInfo.machineID} {.status.nodeInfo.systemUUID} '
                     '{.status.nodeInfo.bootID}{"\\n"}{end}')
    rows = _rows(out)
    uuid = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
    assert len(rows) == len(NODES)
    for machine, system, boot in rows:
        assert re.fullmatch(r"[0-9a-f]{32}", machine)
        assert re.fullmatch(uuid, system) and re.fullmatch(uuid, boot)
    assert len({r[0] for r in rows}) == len(NODES)  # one machine-id per node container
    assert len({(r[1], r[2]) for r in rows}) == 1  # one host kernel under every kind node


SECTIONS = ["Name:", "Roles:", "Labels:", "Annotations:", "CreationTimestamp:", "Taints:",
            "Unschedulable:", "Lease:", "Conditions:", "Addresses:", "Capacity:", "Allocatable:",
            "System Info:", "PodCIDR:", "PodCIDRs:", "ProviderID:", "Non-terminated Pods:",
            "Allocated resources:", "Events:"]


@pytest.mark.parametrize("node", NODES)
def test_describe_node_sections(cluster: KubeHarness, node: str) -> None:
    result = cluster.kubectl("describe", "node", node)
    assert result.returncode == 0 and result.stderr == ""
    starts = [line.split(":")[0] + ":" for line in result.stdout.splitlines()
              if line and not line.startswith(" ")]
    assert starts == SECTIONS
    assert re.search(r"^  HolderIdentity:  " + node + "$", result.stdout, re.M)
    assert re.search(r"^  Machine ID:                 [0-9a-f]{32}$", result.stdout, re.M)
    assert re.search(r"^  System UUID:                [0-9a-f-]{36}$", result.stdout, re.M)
    assert re.search(r"^  Boot ID:                    [0-9a-f-]{36}$", result.stdout, re.M)


def test_hpa_targets_show_a_real_percentage(cluster: KubeHarness) -> None:
    ns = "hotel-reservation"
    cluster.ok("autoscale", "deployment", "search", "-n", ns, "--cpu-percent=50", "--min=1", "--max=3")
    try:
        cluster.advance(60)
        row = _rows(cluster.ok("get", "hpa", "search", "-n", ns))
        assert row[0][:5] == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS"]
        assert row[1][:2] == ["search", "Deployment/search"]
        assert re.fullmatch(r"\d+%/50%", row[1][3]), row
        described = cluster.ok("describe", "hpa", "search", "-n", ns)
        assert "FailedGetResourceMetric" not in described and "<unknown>" not in described
        assert re.search(r"resource cpu on pods  \(as a percentage of request\):  \d+% \(\d+m\) / 50%",
                         described)
    finally:
        cluster.ok("delete", "hpa", "search", "-n", ns)
