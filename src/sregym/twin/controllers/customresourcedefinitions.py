"""CustomResourceDefinitions: serving the kinds they define (the apiextensions-apiserver's job).

Creating a CRD adds one `ResourceKind` per served version to `twin.kinds` at once, through a store
listener, so a manifest that creates a CRD and then a custom resource works in one apply (in-process
and over the API); deleting the CRD removes the kinds (and, like the real server, its custom
resources). The reconcile loop then reports what the real controllers report: the
`NamesAccepted` and `Established` conditions and `status.acceptedNames`, which
`kubectl wait --for condition=established` waits on. A CRD cannot redefine a built-in kind:
the twin's own kinds (Chaos Mesh included) keep their definitions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.kinds import BUILTIN_KINDS, ResourceKind
from sregym.twin.machinery.objects import set_condition
from sregym.twin.machinery.store import WatchEvent

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

_BUILTIN = {(k.group, k.kind) for k in BUILTIN_KINDS}


def kinds_of(crd: dict[str, Any]) -> list[ResourceKind]:
    """The kinds a CRD serves, storage version first."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group") or ""
    kind = names.get("kind") or ""
    plural = names.get("plural") or ""
    if not (group and kind and plural) or (group, kind) in _BUILTIN:
        return []
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("served", True)]
    versions.sort(key=lambda v: not v.get("storage", False))
    out = []
    for version in versions:
        subresources = version.get("subresources") or {}
        out.append(ResourceKind(
            group=group, version=str(version.get("name") or "v1"), kind=kind, plural=plural,
            namespaced=(spec.get("scope") or "Namespaced") == "Namespaced",
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()),
            subresources=tuple(s for s in ("status", "scale") if s in subresources),
            generation=True, custom=True,
            list_kind=names.get("listKind") or f"{kind}List"))
    return out


@controller
class CustomResourceDefinitionController(Controller):
    name = "customresourcedefinitions"
    order = 1
    user = "system:apiextensions-apiserver"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._pending: set[str] = set()
        twin.store.add_listener(self._on_event)

    def _on_event(self, event: WatchEvent) -> None:
        if event.kind.key != ("apiextensions.k8s.io", "CustomResourceDefinition"):
            return
        crd = event.object
        spec = crd.get("spec") or {}
        group = spec.get("group") or ""
        kind = (spec.get("names") or {}).get("kind") or ""
        if (group, kind) in _BUILTIN:
            return
        kinds = self.twin.kinds
        if event.type == "DELETED":
            self._drop_custom_resources(group, kind)
            kinds.remove_group_kind(group, kind)
            return
        served = kinds_of(crd)
        kinds.remove_group_kind(group, kind)
        for k in served:
            kinds.add(k)
        self._pending.add(crd["metadata"]["name"])

    def _drop_custom_resources(self, group: str, kind: str) -> None:
        for k in list(self.twin.kinds.kinds):
            if k.group == group and k.kind == kind:
                for obj in list(self.twin.store.scan(k)):
                    meta = obj.get("metadata") or {}
                    self.twin.store.remove_now(k, meta.get("namespace"), meta.get("name", ""))
                return

    def reconcile(self) -> None:
        if not self._pending:
            return
        pending, self._pending = sorted(self._pending), set()
        now = self.twin.clock.iso()
        for name in pending:
            def establish(crd: dict[str, Any]) -> None:
                names = (crd.get("spec") or {}).get("names") or {}
                status = crd.setdefault("status", {})
                status["acceptedNames"] = {k: v for k, v in names.items()}
                status.setdefault("acceptedNames", {}).setdefault(
                    "listKind", f"{names.get('kind', '')}List")
                status["storedVersions"] = [v.get("name") for v in (crd.get("spec") or {}).get(
                    "versions") or [] if isinstance(v, dict) and v.get("storage")]
                conditions = status.setdefault("conditions", [])
                set_condition(conditions, "NamesAccepted", "True", now, "NoConflicts",
                              "no conflicts found")
                set_condition(conditions, "Established", "True", now, "InitialNamesAccepted",
                              "the initial names have been accepted")

            try:
                self.twin.store.mutate("CustomResourceDefinition", None, name, establish,
                                       status=True, user=self.user)
            except ApiError:
                continue
