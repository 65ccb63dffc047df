"""Each node's stored kubelet configuration, and the eviction thresholds a kubelet read from it.

A kubeadm node keeps its KubeletConfiguration in `/var/lib/kubelet/config.yaml`; the kubelet
reads it once, when it starts, so an edit takes effect only at the next `systemctl restart
kubelet`. Here the file lives in the node's OS state (`NodeState.kubelet_config`, the text an SRE
reads and writes through `kubectl debug node` or nsenter) and the thresholds in force are parsed
from it at every kubelet start (`load_thresholds`), so the eviction manager acts on what the
kubelet loaded, not on what the file says now.

Thresholds follow the kubelet's syntax: `evictionHard` maps a signal (`memory.available`,
`nodefs.available`, `nodefs.inodesFree`, `imagefs.available`) to a percentage of capacity
(`10%`) or a quantity (`100Mi`). A signal missing from the map keeps its Linux default, as the
1.32 kubelet merges defaults for the signals it is not given. `evictionSoft` is read but only
acts once its grace period is reached, which the twin does not model: soft thresholds are not
enforced (docs say so).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import yaml

from sregym.twin.machinery.quantity import memory_bytes

PATH = "/var/lib/kubelet/config.yaml"
DEFAULT_HARD = {"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%",
                "imagefs.available": "15%"}
# The disk signals in the order the eviction manager reclaims them.
DISK_SIGNALS = ("nodefs.available", "imagefs.available", "nodefs.inodesFree")


@dataclass(frozen=True)
class Threshold:
    """One eviction threshold: a fraction of capacity, or an absolute quantity."""

    signal: str
    fraction: float = 0.0
    quantity: int | None = None


def default_text() -> str:
    """The file kind's kubeadm writes on every node."""
    return ("apiVersion: kubelet.config.k8s.io/v1beta1\nauthentication:\n  anonymous:\n    enabled: false\n"
            "  webhook:\n    enabled: true\n  x509:\n    clientCAFile: /etc/kubernetes/pki/ca.crt\n"
            "authorization:\n  mode: Webhook\ncgroupDriver: systemd\nclusterDNS:\n- 10.96.0.10\n"
            "clusterDomain: cluster.local\ncontainerRuntimeEndpoint: unix:///run/containerd/containerd.sock\n"
            "evictionHard:\n  imagefs.available: 15%\n  memory.available: 100Mi\n  nodefs.available: 10%\n"
            "  nodefs.inodesFree: 5%\nkind: KubeletConfiguration\nmaxPods: 110\nrotateCertificates: true\n"
            "staticPodPath: /etc/kubernetes/manifests\n")


def parse_threshold(signal: str, value: Any) -> Threshold | None:
    """`10%` or `100Mi` as the kubelet reads it; None for a value it would refuse."""
    text = str(value).strip()
    try:
        if text.endswith("%"):
            percent = float(text[:-1])
            return Threshold(signal, fraction=percent / 100.0) if 0 <= percent <= 100 else None
        return Threshold(signal, quantity=memory_bytes(text))
    except (TypeError, ValueError):
        return None


def load_thresholds(text: str) -> dict[str, Threshold]:
    """The hard thresholds a starting kubelet takes from its config file (defaults where the
    file names none or cannot be read). A fresh dict each call; the parse is memoised by text
    (every node of every problem starts from the same few files, and YAML parsing is slow)."""
    return dict(_parsed_thresholds(text))


@functools.lru_cache(maxsize=64)
def _parsed_thresholds(text: str) -> dict[str, Threshold]:
    try:
        config = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        config = {}
    hard = dict(DEFAULT_HARD)
    given = config.get("evictionHard") if isinstance(config, dict) else None
    if isinstance(given, dict):
        hard.update({str(k): v for k, v in given.items()})
    out = {}
    for signal, value in hard.items():
        threshold = parse_threshold(signal, value)
        if threshold is not None:
            out[signal] = threshold
    return out


def disk_thresholds(thresholds: dict[str, Threshold]) -> tuple[Threshold, ...]:
    return tuple(thresholds[s] for s in DISK_SIGNALS if s in thresholds)
