"""Silent data corruption on the disk behind a pod's volume: blocks come back with wrong bytes.

SREGym builds this with a device-mapper `flakey` target under the volume (`random_read_corrupt`,
`random_write_corrupt`): the block layer reports no error, the bytes are simply wrong. Chaos
Mesh's IOChaos `mistake` action is the same cause at the file level (reads and writes filled with
random bytes); with the twin's device scope (`twin/chaos/devices.py`) it belongs to the disk, so
it stays whichever pod mounts the volume next. Nothing in the node's kernel log: only the
application that checks its data notices (MongoDB's WiredTiger checksums every block).
"""

from __future__ import annotations

from typing import Any

from sregym.faults.base import fault
from sregym.faults.chaos_objects import CHAOS_NAMESPACE, ChaosExperiment, ExperimentParams
from sregym.twin.chaos.devices import DEVICE_SCOPE, SCOPE_ANNOTATION


class DataCorruptionParams(ExperimentParams):
    name: str = "volume-integrity"  # the experiment's name (hidden namespace)
    volume_path: str
    percent: int = 100
    methods: tuple[str, ...] = ("READ", "WRITE")
    max_length: int = 4096  # bytes of one block rewritten per occurrence


@fault
class DiskDataCorruption(ChaosExperiment):
    """Reads and writes on a volume's disk silently return or store wrong bytes."""

    name = "disk_data_corruption"
    twin_only = "device-scoped IOChaos (a disk that corrupts data) is a twin extension of Chaos Mesh"
    Params = DataCorruptionParams
    kind = "IOChaos"

    def manifest(self) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, DataCorruptionParams)
        return {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "IOChaos",
                "metadata": {"name": p.name, "namespace": CHAOS_NAMESPACE,
                             "annotations": {SCOPE_ANNOTATION: DEVICE_SCOPE}},
                "spec": {"action": "mistake", "mode": "one", "volumePath": p.volume_path,
                         "path": p.volume_path.rstrip("/") + "/**", "percent": p.percent,
                         "methods": list(p.methods),
                         "mistake": {"filling": "random", "maxOccurrences": 1, "maxLength": p.max_length},
                         "selector": {"namespaces": [p.namespace], "labelSelectors": dict(p.labels)}}}
