"""Astronomy Shop problems where one component's load takes a shared platform piece down:
a producer left in checkout floods Kafka with huge records until the broker's heap runs out.

The fault is Kubernetes writes only (`patch_objects`): the broker is allowed records of 20 MiB
(`KAFKA_MESSAGE_MAX_BYTES`, as a team raising the limit for a bulk feed would) and checkout gains
a sidecar running the Kafka image's own `kafka-producer-perf-test.sh` against the broker. The
twin's broker model (`twin/datastores/kafka_heap.py`) turns it into the symptoms: the records'
bytes sit on the broker's heap while they are read, `-Xmx400M` is exceeded within seconds, the
network thread dies with `java.lang.OutOfMemoryError: Java heap space` and the broker answers no
client while its pod stays Running. Restarting the broker only buys a second or two; the fix is
to remove the producer (and put the broker's limit back, which also restarts the broker).
"""

from __future__ import annotations

from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.problems.builders import object_cause
from sregym.problems.catalog.astronomy_shop.common import (
    APP,
    IMPACT,
    SETTLE_S,
    SUITE,
    deploy,
    mitigation,
)
from sregym.problems.model import Action, CheckSpec, FaultSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.twin.dataplane.kube_proxy_modes import BUGGY_BUILD, BUGGY_TAGS
from sregym.twin.topology import KUBERNETES_VERSION
from sregym.types import GroundTruth

LEAKY_PRODUCER = "order-events-producer"
RECORD_BYTES = 15 * 1024 * 1024
BROKER_LIMIT = "20971520"  # 20 MiB, the broker's raised `message.max.bytes`

PRODUCER_SIDECAR = {
    "name": LEAKY_PRODUCER,
    "image": "ghcr.io/open-telemetry/demo:2.2.0-kafka",
    "command": ["/opt/kafka/bin/kafka-producer-perf-test.sh", "--topic", "order-events",
                "--num-records", "1000000000", "--record-size", str(RECORD_BYTES), "--throughput", "-1",
                "--producer-props", "bootstrap.servers=kafka:9092", f"max.request.size={BROKER_LIMIT}",
                "buffer.memory=67108864"],
    "resources": {"limits": {"memory": "512Mi"}},
}


@problem
def kafka_producer_flood() -> Problem:
    """A producer sidecar in `checkout` (`order-events-producer`, the Kafka image's
    `kafka-producer-perf-test.sh` with 15 MiB records, as fast as it can) floods the broker,
    which was allowed records of up to 20 MiB (`KAFKA_MESSAGE_MAX_BYTES=20971520`).

    Within seconds the bytes being received exceed what the broker's `-Xmx400M` heap has free:
    its log shows `Uncaught exception in thread 'data-plane-kafka-network-thread-...'` and
    `java.lang.OutOfMemoryError: Java heap space`, and from then on it answers nobody -- checkout
    logs `Failed to write message: kafka server: Request exceeded the user-specified time limit
    in the request`, the sidecar's batches expire, accounting and fraud-detection stop consuming.
    The kafka pod stays Running and Ready. A broker restart fails again as soon as the flood
    resumes. Fix: remove the producer sidecar from checkout (and the broker's raised limit).
    """
    return Problem(
        id="astronomy-shop/kafka-producer-flood-v1",
        title="orders are no longer published to Kafka",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app", "config"), difficulty="hard", suites=(SUITE,),
                  sources=("sregym:kafka_producer_leak",)),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [
            {"kind": "Deployment", "namespace": NAMESPACE, "name": "kafka", "patch_type": "strategic",
             "patch": {"spec": {"template": {"spec": {"containers": [
                 {"name": "kafka", "env": [{"name": "KAFKA_MESSAGE_MAX_BYTES", "value": BROKER_LIMIT}]}]}}}}},
            {"kind": "Deployment", "namespace": NAMESPACE, "name": "checkout", "patch_type": "strategic",
             "patch": {"spec": {"template": {"spec": {"containers": [PRODUCER_SIDECAR]}}}}}]}),),
        ground_truth=GroundTruth(
            root_causes=(deploy("checkout"),),
            mechanism="oom",
            detail="a sidecar in checkout (order-events-producer, kafka-producer-perf-test.sh) sends 15 MiB records "
                   "to the broker as fast as it can; with message.max.bytes raised to 20 MiB the broker reads them "
                   "onto its 400M heap and fails with java.lang.OutOfMemoryError: Java heap space, then answers no "
                   "client",
            detail_keywords=("order-events-producer", "sidecar", "OutOfMemoryError", "Java heap space", "heap",
                             "kafka-producer-perf-test", "large messages", "message.max.bytes", "flood"),
            affected=(deploy("kafka"), deploy("accounting"), deploy("fraud-detection")),
            impact_keywords=IMPACT,
            description="A producer left in checkout floods Kafka with huge records; the broker runs out of heap "
                        "and stops serving, so orders are not published and their consumers stall."),
        mitigation=mitigation(*(CheckSpec(check="consumer_group_keeps_up", params={"group": group})
                                for group in ("accounting", "fraud-detection"))),
        gold=(Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="checkout",
                     patch={"spec": {"template": {"spec": {"containers": [
                         {"name": LEAKY_PRODUCER, "$patch": "delete"}]}}}}),
              Action(op="patch", kind="Deployment", namespace=NAMESPACE, name="kafka",
                     patch={"spec": {"template": {"spec": {"containers": [
                         {"name": "kafka", "env": [{"name": "KAFKA_MESSAGE_MAX_BYTES", "$patch": "delete"}]}]}}}})),
        settle_s=SETTLE_S,
    )


# ----------------------------------------------------------------------- kube-proxy balancing
PROXY_BUILD = f"{BUGGY_BUILD}:{BUGGY_TAGS[0]}"
UPSTREAM_PROXY = f"registry.k8s.io/kube-proxy:{KUBERNETES_VERSION}"
FRONTEND_REPLICAS = 5
FRONTEND_CPU = "15m"  # the twin's frontend costs ~9m per pod at the shop's traffic spread evenly

mechanisms({
    "load_imbalance": ("imbalance", "imbalanced", "uneven", "unevenly", "skew", "skewed", "hot pod", "hotspot",
                       "hot spot", "load balancing", "balancing", "most of the traffic", "one pod gets"),
}, related={"load_imbalance": ("cpu_throttling", "service_selector")})


def _kube_proxy_image(image: str) -> dict[str, Any]:
    return {"kind": "DaemonSet", "namespace": "kube-system", "name": "kube-proxy", "patch_type": "strategic",
            "patch": {"spec": {"template": {"spec": {"containers": [{"name": "kube-proxy", "image": image}]}}}}}


@problem
def kube_proxy_uneven_balancing() -> Problem:
    """kube-proxy's DaemonSet runs an in-house build (`ghcr.io/platform-netops/kube-proxy:
    v1.32.2-np1`) whose iptables rules give every endpoint but the last a fixed 50 % match
    probability instead of 1/(n-i), while frontend was scaled out to 5 small replicas (15m CPU each,
    enough for an even fifth of the shop's traffic).

    Of frontend's five pods, the first (by IP) gets half of the connections, the second a quarter
    and the last two about 6 % each: the hot pod is pinned at its CPU limit and throttled
    (`container_cpu_cfs_throttled_periods_total`), its requests queue and page latency climbs,
    while its siblings idle. Every pod is Running and Ready; frontend's Service and Endpoints
    are correct. Scaling frontend out further does not spread the load evenly. Fix: put the
    upstream kube-proxy image back on the DaemonSet.
    """
    return Problem(
        id="astronomy-shop/kube-proxy-uneven-balancing-v1",
        title="the shop is slow although most frontend pods are idle",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("network", "k8s"), difficulty="hard", suites=(SUITE,),
                  sources=("sregym:workload_imbalance",)),
        faults=(FaultSpec(fault="patch_objects", params={"patches": [
            _kube_proxy_image(PROXY_BUILD),
            {"kind": "Deployment", "namespace": NAMESPACE, "name": "frontend", "patch_type": "strategic",
             "patch": {"spec": {"replicas": FRONTEND_REPLICAS, "template": {"spec": {"containers": [
                 {"name": "frontend", "resources": {"limits": {"cpu": FRONTEND_CPU}}}]}}}}}]}),),
        ground_truth=GroundTruth(
            root_causes=(object_cause("kube-system", "DaemonSet", "kube-proxy"),),
            mechanism="load_imbalance",
            detail=f"kube-proxy's DaemonSet runs {PROXY_BUILD}, whose iptables rules send half of the connections "
                   "to the first endpoint and halve the rest, so one of frontend's 5 pods gets most of the traffic, "
                   "saturates its 15m CPU limit and is throttled while the others idle",
            detail_keywords=("kube-proxy", "platform-netops", "iptables", "probability", "uneven", "imbalance",
                             "one pod", "throttl", "daemonset"),
            affected=(deploy("frontend"), deploy("frontend-proxy")),
            impact_keywords=IMPACT,
            description="A custom kube-proxy build balances Service connections unevenly; one frontend pod gets "
                        "half the traffic and saturates while its siblings idle, so pages are slow."),
        mitigation=mitigation(CheckSpec(check="service_latency_within",
                                        params={"service": "frontend", "max_p95_ms": 500.0})),
        gold=(Action(op="patch", kind="DaemonSet", namespace="kube-system", name="kube-proxy",
                     patch=_kube_proxy_image(UPSTREAM_PROXY)["patch"]),),
        settle_s=SETTLE_S,
    )
