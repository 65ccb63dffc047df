"""Calico IPAM: pod addresses come from `IPPool`s (crd.projectcalico.org/v1) in per-node blocks.

Without Calico (no IPPool objects, the twin's default) every node hands out addresses from its
`spec.podCIDR` (host-local IPAM, in the kubelet). Once IPPools exist, the twin allocates the way
Calico does: each enabled pool (`spec.disabled` not true) is cut into blocks of `/blockSize`
(26 by default); a node claims a free block when its own blocks are full, and, unless the
`default` IPAMConfig sets `strictAffinity`, borrows a free address from another node's block
when none is left. When nothing is left the CNI ADD fails and the pod stays ContainerCreating
with the kubelet's `FailedCreatePodSandBox` carrying Calico's own text:
`plugin type="calico" failed (add): failed to request IPv4 addresses: Assigned 0 out of 1
requested IPv4 addresses; No IPs available in pools: [<cidr>]`.

Addresses held by running pods are never taken back (disabling a pool or adding one does not
move them); deleting pods frees addresses, enabling or adding a pool adds some. Block affinities
persist like Calico's BlockAffinity objects (in the IPAM state here, not as API objects).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

GROUP = "crd.projectcalico.org"
DEFAULT_BLOCK_SIZE = 26
_PREFIX = "plugin type=\"calico\" failed (add): "


class AllocationFailed(Exception):
    """The CNI plugin's error text (after `failed to setup network for sandbox "<id>": `)."""


def _objects(twin: Twin, kind: str) -> list[dict[str, Any]]:
    try:
        found = twin.kinds.by_kind(f"{GROUP}/v1", kind)
    except ApiError:
        return []
    return list(twin.store.scan(found))


def calico_active(twin: Twin) -> bool:
    """Does any IPPool exist (Calico owns pod addressing)?"""
    return bool(_objects(twin, "IPPool"))


def _strict_affinity(twin: Twin) -> bool:
    for config in _objects(twin, "IPAMConfig"):
        if config["metadata"].get("name") == "default":
            return bool((config.get("spec") or {}).get("strictAffinity"))
    return False


def _enabled_pools(twin: Twin) -> list[tuple[str, ipaddress.IPv4Network, int]]:
    pools = []
    for pool in _objects(twin, "IPPool"):
        spec = pool.get("spec") or {}
        if spec.get("disabled"):
            continue
        try:
            network = ipaddress.ip_network(str(spec.get("cidr", "")), strict=False)
        except ValueError:
            continue
        if network.version != 4:
            continue
        size = int(spec.get("blockSize") or DEFAULT_BLOCK_SIZE)
        pools.append((pool["metadata"]["name"], network, max(size, network.prefixlen)))
    return pools


class CalicoIPAM:
    """Block affinities of one cluster and the allocation rule over them."""

    def __init__(self) -> None:
        self.affinity: dict[str, str] = {}  # block CIDR -> node

    def assign(self, twin: Twin, node: str, used: set[str]) -> str:
        """One IPv4 address for a pod on `node` (not in `used`); raise AllocationFailed."""
        pools = _enabled_pools(twin)
        if not pools:
            raise AllocationFailed(f"{_PREFIX}failed to request IPv4 addresses: no configured Calico pools "
                                   f"for node {node}")
        blocks = [(name, block) for name, network, size in pools for block in network.subnets(new_prefix=size)]
        # 1. the node's own blocks, then 2. a block nobody has claimed yet.
        for _name, block in blocks:
            if self.affinity.get(str(block)) == node and (ip := _free(block, used)):
                return ip
        for _name, block in blocks:
            if str(block) not in self.affinity and (ip := _free(block, used)):
                self.affinity[str(block)] = node
                return ip
        strict = _strict_affinity(twin)
        if not strict:  # 3. borrow from another node's block
            for _name, block in blocks:
                if ip := _free(block, used):
                    return ip
        reason = ("No more free affine blocks and strict affinity enabled" if strict else
                  f"No IPs available in pools: [{' '.join(str(n) for _name, n, _s in pools)}]")
        raise AllocationFailed(f"{_PREFIX}failed to request IPv4 addresses: Assigned 0 out of 1 requested "
                               f"IPv4 addresses; {reason}")


def _free(block: ipaddress.IPv4Network, used: set[str]) -> str | None:
    for address in block:
        text = str(address)
        if text not in used:
            return text
    return None


def sandbox_error(pod_uid: str, attempt: int, cause: str) -> str:
    """The kubelet's FailedCreatePodSandBox message for a failed CNI ADD (sandbox id is stable)."""
    import hashlib

    sandbox = hashlib.sha256(f"{pod_uid}/{attempt}".encode()).hexdigest()
    return (f"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for "
            f'sandbox "{sandbox}": {cause}')


def calico_crd(kind: str, plural: str) -> dict[str, Any]:
    """The cluster-scoped CustomResourceDefinition of one Calico kind (crd.projectcalico.org/v1)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Cluster",
                 "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "properties": {
                         "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                         "metadata": {"type": "object"},
                         "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]},
    }


def calico_crds() -> list[dict[str, Any]]:
    """The CustomResourceDefinitions a Calico install adds for IPAM (IPPool, IPAMConfig)."""
    return [calico_crd("IPPool", "ippools"), calico_crd("IPAMConfig", "ipamconfigs")]


def ip_pool(name: str, cidr: str, *, block_size: int = DEFAULT_BLOCK_SIZE, disabled: bool = False) -> dict[str, Any]:
    """An IPPool as `calicoctl`/the operator writes it (IP-in-IP, NAT outgoing)."""
    return {"apiVersion": f"{GROUP}/v1", "kind": "IPPool", "metadata": {"name": name},
            "spec": {"cidr": cidr, "blockSize": block_size, "ipipMode": "Always", "natOutgoing": True,
                     "nodeSelector": "all()", "disabled": disabled}}
