"""Garbage collection, namespace lifecycle and per-namespace defaults (kube-controller-manager).

Three loops that a real cluster runs outside the API server and that agents notice when they are
missing: the garbage collector deletes dependents whose owners are gone (that is what makes
`kubectl delete deployment` take its ReplicaSets and pods along) and implements foreground
deletion; the namespace controller empties a Terminating namespace and then releases its
`kubernetes` finalizer; the service-account and root-CA publishers put a `default` ServiceAccount
and the `kube-root-ca.crt` ConfigMap into every namespace.

The collector keeps a uid index fed by a store listener, so each tick only looks at objects whose
owners changed instead of scanning the whole cluster.
"""

from __future__ import annotations

import base64
import contextlib
from typing import TYPE_CHECKING, Any, ClassVar

from sregym.errors import ApiError
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.kinds import ResourceKind
from sregym.twin.machinery.objects import clone, set_condition
from sregym.twin.machinery.store import WatchEvent

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

ObjKey = tuple[tuple[str, str], str, str]  # ((group, kind), namespace, name)

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)
_MAX_PASSES = 16


def cluster_ca_pem(twin: Twin) -> str:
    """The cluster CA certificate (PEM). Uses `twin.services.cluster_ca_pem` when the API
    server provides a real one; otherwise a deterministic certificate-shaped placeholder."""
    pem = twin.services.cluster_ca_pem
    if isinstance(pem, str) and pem:
        return pem
    rng = twin.rng.stream("cluster-ca")
    der = bytes.fromhex("308202e9308201d1a00302010202") + bytes(rng.getrandbits(8) for _ in range(733))
    body = base64.b64encode(der).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    pem = "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----\n"
    twin.services.cluster_ca_pem = pem
    return pem


@controller
class GarbageCollector(Controller):
    name = "garbage-collector"
    order = 10
    user = "system:serviceaccount:kube-system:generic-garbage-collector"
    namespace_user: ClassVar[str] = "system:serviceaccount:kube-system:namespace-controller"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._live: dict[str, ObjKey] = {}
        self._owners: dict[ObjKey, tuple[str, ...]] = {}
        self._dependents: dict[str, set[ObjKey]] = {}
        self._dirty: set[ObjKey] = set()
        self._foreground: set[ObjKey] = set()
        for kind, obj in twin.store.all_objects():
            self._observe(kind, obj)
        twin.store.add_listener(self._on_event)

    # ------------------------------------------------------------------ index
    def _key(self, kind: ResourceKind, obj: dict[str, Any]) -> ObjKey:
        meta = obj.get("metadata") or {}
        return (kind.key, meta.get("namespace", ""), meta.get("name", ""))

    def _observe(self, kind: ResourceKind, obj: dict[str, Any]) -> None:
        if kind.key == ("", "Event"):
            return
        meta = obj.get("metadata") or {}
        key = self._key(kind, obj)
        uid = meta.get("uid")
        if uid:
            self._live[uid] = key
        owners = tuple(ref.get("uid", "") for ref in meta.get("ownerReferences") or ())
        previous = self._owners.get(key, ())
        if owners != previous:
            for uid_ in previous:
                deps = self._dependents.get(uid_)
                if deps is not None:
                    deps.discard(key)
                    if not deps:
                        del self._dependents[uid_]
            for uid_ in owners:
                self._dependents.setdefault(uid_, set()).add(key)
            if owners:
                self._owners[key] = owners
            else:
                self._owners.pop(key, None)
        if owners and any(o not in self._live for o in owners):
            self._dirty.add(key)
        if meta.get("deletionTimestamp"):
            if FOREGROUND in (meta.get("finalizers") or ()):
                self._foreground.add(key)
            # Owners waiting in foreground deletion need to re-check their blockers.
            for uid_ in owners:
                owner_key = self._live.get(uid_)
                if owner_key is not None:
                    self._foreground_recheck(owner_key)

    def _foreground_recheck(self, owner_key: ObjKey) -> None:
        obj = self._peek(owner_key)
        if obj is not None and FOREGROUND in ((obj.get("metadata") or {}).get("finalizers") or ()):
            self._foreground.add(owner_key)

    def _forget(self, kind: ResourceKind, obj: dict[str, Any]) -> None:
        if kind.key == ("", "Event"):
            return
        meta = obj.get("metadata") or {}
        key = self._key(kind, obj)
        uid = meta.get("uid")
        if uid and self._live.get(uid) == key:
            del self._live[uid]
        for owner_uid in self._owners.pop(key, ()):
            deps = self._dependents.get(owner_uid)
            if deps is not None:
                deps.discard(key)
                if not deps:
                    del self._dependents[owner_uid]
            owner_key = self._live.get(owner_uid)
            if owner_key is not None:
                self._foreground_recheck(owner_key)
        if uid:
            self._dirty.update(self._dependents.get(uid, ()))
        self._dirty.discard(key)
        self._foreground.discard(key)

    def _on_event(self, event: WatchEvent) -> None:
        if event.type == "DELETED":
            self._forget(event.kind, event.object)
        else:
            self._observe(event.kind, event.object)

    def _peek(self, key: ObjKey) -> dict[str, Any] | None:
        (group, kind_name), ns, name = key
        kind = self._kind(group, kind_name)
        if kind is None:
            return None
        return self.twin.store.peek(kind, ns or None, name)

    def _kind(self, group: str, kind_name: str) -> ResourceKind | None:
        for k in self.twin.store.kinds.kinds:
            if k.group == group and k.kind == kind_name and not k.virtual:
                return k
        return None

    # ------------------------------------------------------------------ reconcile
    def reconcile(self) -> None:
        for _ in range(_MAX_PASSES):
            if not self._dirty and not self._foreground:
                break
            self._process_foreground()
            self._process_dirty()
        self._namespaces()

    def _process_dirty(self) -> None:
        dirty = sorted(self._dirty)
        self._dirty.clear()
        for key in dirty:
            obj = self._peek(key)
            if obj is not None:
                self._attempt_to_delete(key, obj)

    def _classify(self, obj: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                      list[dict[str, Any]]]:
        """Owner references split into solid (owner exists), dangling (owner gone) and waiting
        (owner is being deleted in the foreground)."""
        solid: list[dict[str, Any]] = []
        dangling: list[dict[str, Any]] = []
        waiting: list[dict[str, Any]] = []
        ns = (obj.get("metadata") or {}).get("namespace", "")
        for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
            owner_key = self._live.get(ref.get("uid", ""))
            # An owner in another namespace cannot own this object: kube treats it as absent.
            if owner_key is None or (owner_key[1] and owner_key[1] != ns):
                dangling.append(ref)
                continue
            owner = self._peek(owner_key)
            if owner is None:
                dangling.append(ref)
                continue
            ometa = owner.get("metadata") or {}
            if ometa.get("deletionTimestamp") and FOREGROUND in (ometa.get("finalizers") or ()):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting

    def _attempt_to_delete(self, key: ObjKey, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        if not meta.get("ownerReferences"):
            return
        solid, dangling, waiting = self._classify(obj)
        if solid:
            if not dangling and not waiting:
                return
            drop = {r.get("uid") for r in dangling + waiting}

            def strip(o: dict[str, Any]) -> None:
                refs = [r for r in o["metadata"].get("ownerReferences") or [] if r.get("uid") not in drop]
                if refs:
                    o["metadata"]["ownerReferences"] = refs
                else:
                    o["metadata"].pop("ownerReferences", None)

            self._write(key, lambda kind, ns, name: self.twin.store.mutate(kind, ns, name, strip,
                                                                           user=self.user))
            return
        if meta.get("deletionTimestamp"):
            return
        finalizers = meta.get("finalizers") or ()
        if waiting and self._dependents.get(meta.get("uid", "")):
            policy = "Foreground"
        elif ORPHAN in finalizers:
            policy = "Orphan"
        elif FOREGROUND in finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        self._write(key, lambda kind, ns, name: self.twin.store.delete(
            kind, ns, name, propagation=policy, user=self.user,
            preconditions={"uid": meta.get("uid", "")}))

    def _write(self, key: ObjKey, action: Any) -> None:
        (group, kind_name), ns, name = key
        kind = self._kind(group, kind_name)
        if kind is None:
            return
        try:
            action(kind, ns or None, name)
        except ApiError:
            return  # gone, changed or refused: the next change re-queues it

    def _process_foreground(self) -> None:
        """Owners deleted with propagationPolicy=Foreground: delete their dependents, and drop
        the finalizer once no dependent with blockOwnerDeletion remains."""
        for key in sorted(self._foreground):
            self._foreground.discard(key)
            owner = self._peek(key)
            if owner is None:
                continue
            ometa = owner.get("metadata") or {}
            if not ometa.get("deletionTimestamp") or FOREGROUND not in (ometa.get("finalizers") or ()):
                continue
            uid = ometa.get("uid", "")
            blocking = False
            for dep_key in sorted(self._dependents.get(uid, ())):
                dep = self._peek(dep_key)
                if dep is None:
                    continue
                refs = [r for r in (dep.get("metadata") or {}).get("ownerReferences") or []
                        if r.get("uid") == uid]
                if any(r.get("blockOwnerDeletion") for r in refs):
                    blocking = True
                if not (dep.get("metadata") or {}).get("deletionTimestamp"):
                    self._attempt_to_delete(dep_key, dep)
            if blocking:
                continue

            def release(o: dict[str, Any]) -> None:
                rest = [f for f in o["metadata"].get("finalizers") or [] if f != FOREGROUND]
                if rest:
                    o["metadata"]["finalizers"] = rest
                else:
                    o["metadata"].pop("finalizers", None)

            self._write(key, lambda kind, ns, name: self.twin.store.mutate(kind, ns, name, release,
                                                                           user=self.user))

    # ------------------------------------------------------------------ namespaces
    def _namespaces(self) -> None:
        store = self.twin.store
        for ns in list(store.scan("Namespace")):
            meta = ns.get("metadata") or {}
            if meta.get("deletionTimestamp"):
                self._finalize_namespace(ns)
            else:
                self._ensure_namespace_defaults(meta.get("name", ""))

    def _ensure_namespace_defaults(self, ns: str) -> None:
        store = self.twin.store
        if store.peek("ServiceAccount", ns, "default") is None:
            with contextlib.suppress(ApiError):
                store.create({"apiVersion": "v1", "kind": "ServiceAccount",
                              "metadata": {"name": "default", "namespace": ns}},
                             user="system:serviceaccount:kube-system:service-account-controller")
        pem = cluster_ca_pem(self.twin)
        current = store.peek("ConfigMap", ns, ROOT_CA_CONFIGMAP)
        user = "system:serviceaccount:kube-system:root-ca-cert-publisher"
        if current is None:
            with contextlib.suppress(ApiError):
                store.create({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": ns,
                                           "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
                              "data": {"ca.crt": pem}}, user=user)
        elif (current.get("data") or {}) != {"ca.crt": pem}:
            def restore(o: dict[str, Any]) -> None:
                o["data"] = {"ca.crt": pem}

            with contextlib.suppress(ApiError):
                store.mutate("ConfigMap", ns, ROOT_CA_CONFIGMAP, restore, user=user)

    def _finalize_namespace(self, ns_obj: dict[str, Any]) -> None:
        store = self.twin.store
        ns = ns_obj["metadata"]["name"]
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        for kind in list(store.kinds.kinds):
            if not kind.namespaced or kind.virtual:
                continue
            for obj in list(store.scan(kind, ns)):
                meta = obj.get("metadata") or {}
                if not meta.get("deletionTimestamp"):
                    with contextlib.suppress(ApiError):
                        store.delete(kind, ns, meta.get("name", ""), propagation="Background",
                                     user=self.namespace_user)
                if store.peek(kind, ns, meta.get("name", "")) is not None:
                    label = f"{kind.plural}.{kind.group}"  # kube prints core as "pods."
                    remaining[label] = remaining.get(label, 0) + 1
                    for fin in (store.peek(kind, ns, meta.get("name", "")) or {}).get("metadata", {}).get(
                            "finalizers") or []:
                        finalizers[fin] = finalizers.get(fin, 0) + 1
        now = self.twin.clock.iso()
        if remaining:
            content = "Some resources are remaining: " + ", ".join(
                f"{k} has {remaining[k]} resource instances" for k in sorted(remaining))
            fins = ", ".join(f"{f} in {n} resource instances" for f, n in sorted(finalizers.items()))

            def mark(o: dict[str, Any]) -> None:
                conds = [clone(c) for c in (o.get("status") or {}).get("conditions") or []]
                set_condition(conds, "NamespaceDeletionDiscoveryFailure", "False", now,
                              "ResourcesDiscovered", "All resources successfully discovered")
                set_condition(conds, "NamespaceDeletionGroupVersionParsingFailure", "False", now,
                              "ParsedGroupVersions", "All legacy kube types successfully parsed")
                set_condition(conds, "NamespaceDeletionContentFailure", "False", now,
                              "ContentDeleted", "All content successfully deleted, may be waiting on finalization")
                set_condition(conds, "NamespaceContentRemaining", "True", now, "SomeResourcesRemain", content)
                if fins:
                    set_condition(conds, "NamespaceFinalizersRemaining", "True", now, "SomeFinalizersRemain",
                                  f"Some content in the namespace has finalizers remaining: {fins}")
                else:
                    set_condition(conds, "NamespaceFinalizersRemaining", "False", now,
                                  "ContentHasNoFinalizers", "All content-preserving finalizers finished")
                o.setdefault("status", {})["conditions"] = conds
                o["status"]["phase"] = "Terminating"

            with contextlib.suppress(ApiError):
                store.mutate("Namespace", None, ns, mark, status=True, user=self.namespace_user)
            return

        def finalize(o: dict[str, Any]) -> None:
            spec = o.setdefault("spec", {})
            spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != "kubernetes"]

        with contextlib.suppress(ApiError):
            store.mutate("Namespace", None, ns, finalize, user=self.namespace_user)
