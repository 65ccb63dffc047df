"""Feature flags flipped in a flagd definition file held in a ConfigMap.

Why a fault of its own: the OpenTelemetry demo keeps every flag in one JSON document
(`flagd-config`, key `demo.flagd.json`); turning a flag on is editing that flag's
`defaultVariant` and restarting flagd (the chart's init container copies the ConfigMap into the
emptyDir flagd watches, so an edit alone reaches nothing). The edit changes only the variant's
text, the rest of the document keeps its bytes, as `kubectl edit` would leave it.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from sregym.faults.app_config import restart_pods
from sregym.faults.base import Fault, FaultParams, fault
from sregym.faults.objects import required, restore_field

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster


def set_default_variant(text: str, flag: str, variant: str) -> str:
    """`text` (a flagd definition) with `flag`'s `defaultVariant` set to `variant`; raises
    LookupError when the flag or the variant does not exist."""
    flags = (json.loads(text) or {}).get("flags") or {}
    if flag not in flags:
        raise LookupError(f"cannot inject: no flag {flag!r} in the flag definitions")
    if variant not in (flags[flag].get("variants") or {}):
        raise LookupError(f"cannot inject: flag {flag!r} has no variant {variant!r}")
    start = re.search(rf'"{re.escape(flag)}"\s*:\s*{{', text)
    assert start is not None
    found = re.compile(r'("defaultVariant"\s*:\s*)"[^"]*"').search(text, start.end())
    if found is None:
        raise LookupError(f"cannot inject: flag {flag!r} has no defaultVariant")
    return text[:found.start()] + found.group(1) + json.dumps(variant) + text[found.end():]


class FlagVariantParams(FaultParams):
    namespace: str
    flags: dict[str, str]  # flag -> the variant to make its default ("adHighCpu": "on")
    configmap: str = "flagd-config"
    key: str = "demo.flagd.json"
    restart_selector: str | None = None  # the flag server's pods (they read a copy made at start)


@fault
class SetFlagVariant(Fault):
    """Turn feature flags to a variant in the flag server's ConfigMap, then restart the flag
    server so it serves them."""

    name = "set_flag_variant"
    Params = FlagVariantParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, FlagVariantParams)
        obj = required(cluster, "ConfigMap", p.namespace, p.configmap)
        text = (obj.get("data") or {}).get(p.key)
        if text is None:
            raise LookupError(f"cannot inject: ConfigMap {p.configmap} has no key {p.key!r}")
        for flag, variant in sorted(p.flags.items()):
            text = set_default_variant(text, flag, variant)
        cluster.patch("ConfigMap", p.namespace, p.configmap, {"data": {p.key: text}}, patch_type="merge")
        restart_pods(cluster, p.namespace, p.restart_selector)
        return {"data": obj.get("data")}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, FlagVariantParams)
        restore_field(cluster, "ConfigMap", p.namespace, p.configmap, "data", state["data"])
        restart_pods(cluster, p.namespace, p.restart_selector)
