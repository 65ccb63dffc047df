"""The versioned object store: the twin's etcd plus the API server's generic registry logic.

It owns what every Kubernetes object gets from the API server regardless of kind: uid,
resourceVersion (one global counter, with optimistic-concurrency conflicts), generation,
creationTimestamp, generateName, namespace existence, the defaulting and admission chain,
graceful deletion, finalizers, deletion propagation, and watch events.

Invariant: a stored object is never mutated in place. Every write stores a fresh dict, so readers
that use `scan()` (which hands out the stored dicts themselves, for speed) see a consistent
snapshot as long as they do not modify what they get. Everything else returns copies.
"""

from __future__ import annotations

import bisect
import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sregym.errors import (
    ApiError,
    Conflict,
    Forbidden,
    Gone,
    already_exists,
    conflict,
    invalid,
    not_found,
)
from sregym.twin.clock import SimClock
from sregym.twin.machinery.conversion import storage_form
from sregym.twin.machinery.index import Index, KeysFn
from sregym.twin.machinery.kinds import KindRegistry, ResourceKind
from sregym.twin.machinery.managedfields import (
    RECORDED_SUBRESOURCES,
    UNRECORDED_SUBRESOURCES,
    Writer,
    manager_for_user,
    record_update,
    take_request_entries,
)
from sregym.twin.machinery.objects import clone
from sregym.twin.machinery.selectors import (
    FieldSelector,
    LabelSelector,
    parse_field_selector,
    parse_label_selector,
)
from sregym.twin.rng import RngStreams

KindRef = str | ResourceKind

ADMIN_USER = "system:admin"
HISTORY_LIMIT = 20000


@dataclass
class Operation:
    """One write as the defaulting/admission chain sees it.

    `obj` is the new object (mutable: mutators change it in place); `old` is the stored object
    for UPDATE and DELETE. `user` is the authenticated name (`system:admin`, `agent`,
    `system:serviceaccount:kube-system:replicaset-controller` ...).
    """

    verb: str  # CREATE | UPDATE | DELETE
    kind: ResourceKind
    obj: dict[str, Any] | None
    old: dict[str, Any] | None
    user: str = ADMIN_USER
    dry_run: bool = False
    subresource: str | None = None
    namespace: str = ""
    name: str = ""
    # Simulated seconds the admission chain spent on webhook calls, against the write's deadline.
    admission_seconds: float = 0.0


Hook = Callable[[Operation], None]


@dataclass(order=True)
class _HookEntry:
    order: int
    name: str
    fn: Hook = field(compare=False)


@dataclass(frozen=True)
class WatchEvent:
    type: str  # ADDED | MODIFIED | DELETED
    object: dict[str, Any]  # the stored dict: do not mutate
    resource_version: int
    kind: ResourceKind


class Watch:
    """A subscription to changes. Events queue up until `drain()`; `notify` (if given) is called
    after each event is queued, so an async server can wake its streaming task."""

    def __init__(self, store: ObjectStore, kind: ResourceKind | None, namespace: str | None,
                 label_selector: LabelSelector, field_selector: FieldSelector,
                 notify: Callable[[], None] | None) -> None:
        self._store = store
        self.kind = kind
        self.namespace = namespace or None
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.notify = notify
        self.events: deque[WatchEvent] = deque()
        self.closed = False

    def matches(self, event: WatchEvent) -> bool:
        if self.kind is not None and event.kind.key != self.kind.key:
            return False
        obj_meta = event.object.get("metadata") or {}
        if self.namespace is not None and obj_meta.get("namespace", "") != self.namespace:
            return False
        return (self.label_selector.matches(obj_meta.get("labels"))
                and self.field_selector.matches(event.object))

    def push(self, event: WatchEvent) -> None:
        if not self.closed and self.matches(event):
            self.events.append(event)
            if self.notify is not None:
                self.notify()

    def drain(self) -> list[WatchEvent]:
        out = list(self.events)
        self.events.clear()
        return out

    def close(self) -> None:
        self.closed = True
        self._store._unwatch(self)

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class ObjectStore:
    def __init__(self, clock: SimClock, rng: RngStreams, kinds: KindRegistry | None = None) -> None:
        self.clock = clock
        self.rng = rng
        self.kinds = kinds or KindRegistry()
        self._objects: dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]]] = {}
        self._rv = 0
        self._mutators: list[_HookEntry] = []
        self._validators: list[_HookEntry] = []
        self._watches: list[Watch] = []
        self._history: deque[WatchEvent] = deque(maxlen=HISTORY_LIMIT)
        self._listeners: list[Callable[[WatchEvent], None]] = []
        self._indexes: dict[tuple[str, str], list[Index]] = {}
        # Each kind's (namespace, name) keys in order, kept until a key is added or removed:
        # controllers and collectors scan the same kinds every tick, and updates keep the keys.
        self._ordered: dict[tuple[str, str], list[tuple[str, str]]] = {}

    # ----------------------------------------------------------------- hooks
    def add_mutator(self, name: str, fn: Hook, order: int = 100) -> None:
        """Register a defaulting (order < 100) or mutating-admission (>= 100) step."""
        self._mutators = sorted([*self._mutators, _HookEntry(order, name, fn)])

    def add_validator(self, name: str, fn: Hook, order: int = 100) -> None:
        """Register a validation (order < 100) or validating-admission (>= 100) step."""
        self._validators = sorted([*self._validators, _HookEntry(order, name, fn)])

    def add_listener(self, fn: Callable[[WatchEvent], None]) -> None:
        """Synchronous callback for every change (change feeds that mark work for a controller)."""
        self._listeners.append(fn)

    def add_index(self, kind: KindRef, keys: KeysFn) -> Index:
        """An index of `kind`'s objects by `keys(obj)`, filled from what is stored now (in
        (namespace, name) order) and kept current on every write."""
        k = self.kind(kind)
        index = Index(k.key, keys)
        for obj in self.scan(k):
            index.observe(False, obj)
        self._indexes.setdefault(k.key, []).append(index)
        return index

    def _admit(self, op: Operation) -> None:
        for entry in self._mutators:
            entry.fn(op)
        for entry in self._validators:
            entry.fn(op)

    # ------------------------------------------------------------- resolving
    def kind(self, ref: KindRef) -> ResourceKind:
        return ref if isinstance(ref, ResourceKind) else self.kinds.resolve(ref)

    def kind_of(self, obj: dict[str, Any]) -> ResourceKind:
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        if not api_version or not kind:
            raise invalid("Object", (obj.get("metadata") or {}).get("name", ""),
                          [("FieldValueRequired", "apiVersion" if not api_version else "kind",
                            "Required value")])
        return self.kinds.by_kind(api_version, kind)

    @property
    def resource_version(self) -> int:
        return self._rv

    def _bucket(self, kind: ResourceKind) -> dict[tuple[str, str], dict[str, Any]]:
        return self._objects.setdefault(kind.key, {})

    def _keys_in_order(self, kind_key: tuple[str, str], bucket: dict[tuple[str, str], Any]) -> list[tuple[str, str]]:
        """The bucket's keys sorted; the list is replaced, never changed, so a scan in progress
        keeps the keys it started with."""
        keys = self._ordered.get(kind_key)
        if keys is None:
            keys = self._ordered[kind_key] = sorted(bucket)
        return keys

    # ----------------------------------------------------------------- reads
    def try_get(self, kind: KindRef, namespace: str | None, name: str) -> dict[str, Any] | None:
        k = self.kind(kind)
        obj = self._bucket(k).get((namespace or "" if k.namespaced else "", name))
        return clone(obj) if obj is not None else None

    def get(self, kind: KindRef, namespace: str | None, name: str) -> dict[str, Any]:
        k = self.kind(kind)
        obj = self.peek(k, namespace, name)
        if obj is None:
            raise not_found(k.plural, name, k.group)
        return clone(obj)

    def peek(self, kind: KindRef, namespace: str | None, name: str) -> dict[str, Any] | None:
        """The stored object itself (no copy). Read-only."""
        k = self.kind(kind)
        return self._bucket(k).get(((namespace or "") if k.namespaced else "", name))

    def scan(self, kind: KindRef, namespace: str | None = None) -> Iterator[dict[str, Any]]:
        """Stored objects of a kind in (namespace, name) order, without copying. Read-only."""
        k = self.kind(kind)
        bucket = self._bucket(k)
        keys = self._keys_in_order(k.key, bucket)
        if namespace and k.namespaced:
            # the keys are sorted, so one namespace's objects are one run of them
            start = bisect.bisect_left(keys, (namespace, ""))
            for key in itertools.islice(keys, start, None):
                if key[0] != namespace:
                    return
                obj = bucket.get(key)
                if obj is not None:
                    yield obj
            return
        for key in keys:
            obj = bucket.get(key)
            if obj is not None:
                yield obj

    def list(self, kind: KindRef, namespace: str | None = None,
             label_selector: str | LabelSelector | None = None,
             field_selector: str | FieldSelector | None = None) -> list[dict[str, Any]]:
        ls = label_selector if isinstance(label_selector, LabelSelector) else \
            parse_label_selector(label_selector)
        fs = field_selector if isinstance(field_selector, FieldSelector) else \
            parse_field_selector(field_selector)
        out = []
        for obj in self.scan(kind, namespace):
            if ls.matches((obj.get("metadata") or {}).get("labels")) and fs.matches(obj):
                out.append(clone(obj))
        return out

    def count(self, kind: KindRef) -> int:
        return len(self._bucket(self.kind(kind)))

    def all_objects(self) -> Iterator[tuple[ResourceKind, dict[str, Any]]]:
        """Every stored object, in a stable order (by group, kind, namespace, name)."""
        by_key: dict[tuple[str, str], ResourceKind] = {}
        for k in self.kinds.kinds:  # the first row of a kind is its storage version
            by_key.setdefault(k.key, k)
        for key in sorted(self._objects):
            kind = by_key.get(key)
            if kind is None:
                continue
            bucket = self._objects[key]
            for obj_key in self._keys_in_order(key, bucket):
                obj = bucket.get(obj_key)
                if obj is not None:
                    yield kind, obj

    # ---------------------------------------------------------------- writes
    def _next_rv(self) -> str:
        self._rv += 1
        return str(self._rv)

    def _emit(self, etype: str, kind: ResourceKind, obj: dict[str, Any]) -> None:
        event = WatchEvent(etype, obj, self._rv, kind)
        self._history.append(event)
        for index in self._indexes.get(kind.key, ()):
            index.observe(etype == "DELETED", obj)
        for watch in list(self._watches):
            watch.push(event)
        for listener in self._listeners:
            listener(event)

    def create(self, obj: dict[str, Any], *, namespace: str | None = None, dry_run: bool = False,
               user: str = ADMIN_USER, keep_status: bool = False,
               writer: Writer | None = None) -> dict[str, Any]:
        """Create an object; returns the stored copy (with uid, resourceVersion ...). `writer`
        names the field manager recorded in managedFields (default: derived from `user`)."""
        if not isinstance(obj, dict):
            raise invalid("Object", "", [("FieldValueInvalid", "body", "must be an object")])
        kind = self.kind_of(obj)
        sent_version = str(obj.get("apiVersion") or kind.api_version)
        if kind.virtual:
            raise Forbidden(f"{kind.plural}.{kind.group} cannot be stored")
        kind, obj = storage_form(self.kinds, kind, obj)
        new = clone(obj)
        meta = new.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
            new["metadata"] = meta
        if kind.namespaced:
            ns = meta.get("namespace") or namespace or "default"
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
            ns = ""
        if not meta.get("name"):
            if meta.get("generateName"):
                meta["name"] = meta["generateName"] + self.rng.suffix(5)
            else:
                raise invalid(kind.kind, "", [("FieldValueRequired", "metadata.name",
                                                "Required value: name or generateName is required")],
                              kind.group)
        name = meta["name"]
        if kind.namespaced:
            self._check_namespace_accepts(kind, ns, name)
        if (ns, name) in self._bucket(kind):
            raise already_exists(kind.plural, name, kind.group)
        if kind.reset_status_on_create and not keep_status:
            new.pop("status", None)
        for server_field in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                             "deletionGracePeriodSeconds", "generation", "selfLink"):
            meta.pop(server_field, None)
        op = Operation("CREATE", kind, new, None, user=user, dry_run=dry_run,
                       namespace=ns, name=name)
        self._admit(op)
        new = op.obj or new
        meta = new["metadata"]
        # The admission chain may pre-assign the uid (the Job strategy derives its selector from it).
        meta["uid"] = meta.get("uid") or self.rng.uuid("uid")
        meta["creationTimestamp"] = self.clock.iso()
        if kind.generation:
            meta["generation"] = 1
        if writer is None or not writer.applied:
            record_update(None, new, writer or Writer(manager_for_user(user)),
                          api_version=sent_version, now=meta["creationTimestamp"], request=obj,
                          kind_key=kind.key)
        if dry_run:
            meta["resourceVersion"] = str(self._rv)
            return clone(new)
        meta["resourceVersion"] = self._next_rv()
        self._bucket(kind)[(ns, name)] = new
        self._ordered.pop(kind.key, None)
        self._emit("ADDED", kind, new)
        return clone(new)

    def restore(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Store an object exactly as recorded (uid, resourceVersion, creationTimestamp,
        ownerReferences and status kept), bypassing defaulting and admission: for rebuilding a
        cluster from a recorded snapshot, where the server-assigned fields are the evidence. The
        global resourceVersion moves past the object's own, so later writes stay ordered."""
        kind = self.kind_of(obj)
        new = clone(obj)
        meta = new.get("metadata")
        if not isinstance(meta, dict) or not meta.get("name"):
            raise invalid(kind.kind, "", [("FieldValueRequired", "metadata.name", "Required value")], kind.group)
        if kind.namespaced:
            ns = meta.get("namespace") or "default"
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
            ns = ""
        recorded = str(meta.get("resourceVersion") or "")
        if recorded.isdigit():
            self._rv = max(self._rv, int(recorded))
        else:
            meta["resourceVersion"] = self._next_rv()
        self._bucket(kind)[(ns, meta["name"])] = new
        self._ordered.pop(kind.key, None)
        self._emit("ADDED", kind, new)
        return clone(new)

    def _check_namespace_accepts(self, kind: ResourceKind, ns: str, name: str) -> None:
        ns_obj = self._bucket(self.kinds.by_kind("v1", "Namespace")).get(("", ns))
        if ns_obj is None:
            raise not_found("namespaces", ns)
        if (ns_obj.get("metadata") or {}).get("deletionTimestamp"):
            raise Forbidden(
                f'{kind.resource} "{name}" is forbidden: unable to create new content in namespace '
                f"{ns} because it is being terminated",
                details={"name": name, "group": kind.group, "kind": kind.plural,
                         "causes": [{"reason": "NamespaceTerminating",
                                     "message": f"namespace {ns} is being terminated",
                                     "field": "metadata.namespace"}]})

    def update(self, obj: dict[str, Any], *, dry_run: bool = False, user: str = ADMIN_USER,
               subresource: str | None = None, writer: Writer | None = None) -> dict[str, Any]:
        """Replace an object (PUT). With `subresource="status"` only the status changes; for kinds
        with a status subresource a main-resource update keeps the stored status. `writer` names
        the field manager recorded in managedFields (default: derived from `user`)."""
        sent_version = str(obj.get("apiVersion") or "") if isinstance(obj, dict) else ""
        kind, obj = storage_form(self.kinds, self.kind_of(obj), obj)
        meta = obj.get("metadata") or {}
        ns = (meta.get("namespace") or "default") if kind.namespaced else ""
        name = meta.get("name", "")
        stored = self._bucket(kind).get((ns, name))
        if stored is None:
            raise not_found(kind.plural, name, kind.group)
        sent_rv = meta.get("resourceVersion")
        if sent_rv and str(sent_rv) != stored["metadata"]["resourceVersion"]:
            raise conflict(kind.plural, name, kind.group)
        if subresource == "status":
            # The stored object with the sent status: only the parts kept are copied (the stored
            # status and the sent spec are dropped anyway), in the stored key order.
            new = {key: None if key == "status" else clone(value) for key, value in stored.items()}
            if "status" in obj:
                new["status"] = clone(obj["status"])
            else:
                new.pop("status", None)
            if writer is not None and writer.applied:
                new["metadata"]["managedFields"] = clone((obj.get("metadata") or {}).get("managedFields"))
        else:
            new = clone(obj)
        if "status" in kind.subresources and subresource is None:
            if "status" in stored:
                new["status"] = clone(stored["status"])
            else:
                new.pop("status", None)
        new_meta = new.setdefault("metadata", {})
        old_meta = stored["metadata"]
        for fixed in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                      "generation", "name"):
            if fixed in old_meta:
                new_meta[fixed] = old_meta[fixed]
            else:
                new_meta.pop(fixed, None)
        if kind.namespaced:
            new_meta["namespace"] = ns
        else:
            new_meta.pop("namespace", None)
        new_meta["resourceVersion"] = old_meta["resourceVersion"]
        if writer is None or not writer.applied:
            take_request_entries(new, stored)
        op = Operation("UPDATE", kind, new, stored, user=user, dry_run=dry_run,
                       subresource=subresource, namespace=ns, name=name)
        self._admit(op)
        new = op.obj or new
        if new == stored:
            return clone(stored)
        if subresource not in UNRECORDED_SUBRESOURCES and (writer is None or not writer.applied):
            recorded = subresource if subresource in RECORDED_SUBRESOURCES else None
            record_update(stored, new, writer or Writer(manager_for_user(user), recorded),
                          api_version=sent_version or kind.api_version, now=self.clock.iso(),
                          request=obj, kind_key=kind.key)
        if kind.generation and _spec_changed(stored, new):
            new["metadata"]["generation"] = int(old_meta.get("generation", 1)) + 1
        if dry_run:
            return clone(new)
        new["metadata"]["resourceVersion"] = self._next_rv()
        if _ready_to_remove(kind, new):
            self._remove(kind, ns, name, new)
            return clone(new)
        self._bucket(kind)[(ns, name)] = new
        self._emit("MODIFIED", kind, new)
        return clone(new)

    def update_status(self, obj: dict[str, Any], *, user: str = ADMIN_USER) -> dict[str, Any]:
        return self.update(obj, subresource="status", user=user)

    def mutate(self, kind: KindRef, namespace: str | None, name: str,
               change: Callable[[dict[str, Any]], object], *, status: bool = False,
               user: str = ADMIN_USER) -> dict[str, Any] | None:
        """Read-modify-write in one call: `change` edits a copy in place. Returns the result, or
        None when the object does not exist. No write happens when nothing changed."""
        k = self.kind(kind)
        stored = self.peek(k, namespace, name)
        if stored is None:
            return None
        copy = clone(stored)
        change(copy)
        if copy == stored:
            return copy
        return self.update(copy, subresource="status" if status else None, user=user)

    def delete(self, kind: KindRef, namespace: str | None, name: str, *,
               propagation: str | None = None, grace_period: int | None = None,
               dry_run: bool = False, user: str = ADMIN_USER,
               preconditions: dict[str, str] | None = None) -> dict[str, Any]:
        """Delete with the API server's semantics; returns the object as it was deleted or as it
        now is (Terminating)."""
        k = self.kind(kind)
        ns = (namespace or "default") if k.namespaced else ""
        stored = self._bucket(k).get((ns, name))
        if stored is None:
            raise not_found(k.plural, name, k.group)
        meta = stored["metadata"]
        if preconditions:
            if preconditions.get("uid") and preconditions["uid"] != meta.get("uid"):
                raise Conflict(
                    f"Precondition failed: UID in precondition: {preconditions['uid']}, "
                    f"UID in object meta: {meta.get('uid')}")
            if (preconditions.get("resourceVersion")
                    and preconditions["resourceVersion"] != meta.get("resourceVersion")):
                raise conflict(k.plural, name, k.group)
        op = Operation("DELETE", k, None, stored, user=user, dry_run=dry_run, namespace=ns, name=name)
        self._admit(op)
        if dry_run:
            return clone(stored)
        policy = propagation or "Background"
        if policy == "Orphan":
            self._orphan_dependents(meta.get("uid", ""))
        new = clone(stored)
        new_meta = new["metadata"]
        graceful = self._grace_for(k, stored, grace_period)
        finalizers = list(new_meta.get("finalizers") or [])
        if policy == "Foreground" and "foregroundDeletion" not in finalizers:
            if self._has_dependents(meta.get("uid", "")):
                finalizers.append("foregroundDeletion")
                new_meta["finalizers"] = finalizers
        namespace_finalizers = k.key == ("", "Namespace") and (new.get("spec") or {}).get("finalizers")
        if k.key == ("", "Namespace"):
            new.setdefault("status", {})["phase"] = "Terminating"
        if finalizers or graceful or namespace_finalizers:
            if new_meta.get("deletionTimestamp"):
                # Already terminating: a second delete may only shorten the grace period.
                if graceful is not None and graceful < int(new_meta.get("deletionGracePeriodSeconds") or 0):
                    new_meta["deletionGracePeriodSeconds"] = graceful
                    new_meta["deletionTimestamp"] = self.clock.iso(self.clock.now + graceful)
                else:
                    return clone(stored)
            else:
                new_meta["deletionTimestamp"] = self.clock.iso(self.clock.now + (graceful or 0))
                new_meta["deletionGracePeriodSeconds"] = graceful or 0
                if k.generation:
                    new_meta["generation"] = int(new_meta.get("generation", 1)) + 1
            new_meta["resourceVersion"] = self._next_rv()
            self._bucket(k)[(ns, name)] = new
            self._emit("MODIFIED", k, new)
            return clone(new)
        new_meta["resourceVersion"] = self._next_rv()
        self._remove(k, ns, name, new)
        return clone(new)

    def _grace_for(self, kind: ResourceKind, stored: dict[str, Any], requested: int | None) -> int | None:
        """Pods bound to a node terminate gracefully; everything else goes at once."""
        if kind.key != ("", "Pod"):
            return None
        spec = stored.get("spec") or {}
        phase = (stored.get("status") or {}).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return None
        grace = requested if requested is not None else spec.get("terminationGracePeriodSeconds", 30)
        grace = int(grace if grace is not None else 30)
        return grace if grace > 0 else None

    def _remove(self, kind: ResourceKind, ns: str, name: str, final: dict[str, Any]) -> None:
        self._bucket(kind).pop((ns, name), None)
        self._ordered.pop(kind.key, None)
        self._emit("DELETED", kind, final)

    def _dependents(self, owner_uid: str) -> Iterable[tuple[ResourceKind, dict[str, Any]]]:
        for kind, obj in list(self.all_objects()):
            for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
                if ref.get("uid") == owner_uid:
                    yield kind, obj
                    break

    def _has_dependents(self, owner_uid: str) -> bool:
        return any(True for _ in self._dependents(owner_uid))

    def _orphan_dependents(self, owner_uid: str) -> None:
        for kind, obj in list(self._dependents(owner_uid)):
            meta = obj["metadata"]
            refs = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != owner_uid]

            def drop(o: dict[str, Any], refs: list[dict[str, Any]] = refs) -> None:
                if refs:
                    o["metadata"]["ownerReferences"] = refs
                else:
                    o["metadata"].pop("ownerReferences", None)

            self.mutate(kind, meta.get("namespace"), meta["name"], drop)

    def remove_now(self, kind: KindRef, namespace: str | None, name: str) -> None:
        """Drop an object immediately (grace period 0 with finalizers already gone): what the
        kubelet does once a pod's containers are stopped. No-op if already gone."""
        k = self.kind(kind)
        ns = (namespace or "default") if k.namespaced else ""
        stored = self._bucket(k).get((ns, name))
        if stored is None:
            return
        final = clone(stored)
        final["metadata"]["resourceVersion"] = self._next_rv()
        self._remove(k, ns, name, final)

    # ----------------------------------------------------------------- watch
    def watch(self, kind: KindRef | None = None, namespace: str | None = None, *,
              resource_version: str | int | None = None,
              label_selector: str | LabelSelector | None = None,
              field_selector: str | FieldSelector | None = None,
              notify: Callable[[], None] | None = None) -> Watch:
        """Subscribe to changes. With a resource_version, past events after it are replayed first
        (410 Gone when it is older than the retained history)."""
        k = self.kind(kind) if kind is not None else None
        ls = label_selector if isinstance(label_selector, LabelSelector) else \
            parse_label_selector(label_selector)
        fs = field_selector if isinstance(field_selector, FieldSelector) else \
            parse_field_selector(field_selector)
        watch = Watch(self, k, namespace, ls, fs, notify)
        if resource_version not in (None, "", "0", 0):
            since = int(resource_version)  # type: ignore[arg-type]
            if self._history and since < self._history[0].resource_version - 1 and since < self._rv:
                raise Gone(f"too old resource version: {since} ({self._history[0].resource_version})")
            for event in self._history:
                if event.resource_version > since and watch.matches(event):
                    watch.events.append(event)
        self._watches.append(watch)
        return watch

    def _unwatch(self, watch: Watch) -> None:
        if watch in self._watches:
            self._watches.remove(watch)


def _spec_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    for key in set(old) | set(new):
        if key in ("metadata", "status", "apiVersion", "kind"):
            continue
        if old.get(key) != new.get(key):
            return True
    return False


def _ready_to_remove(kind: ResourceKind, obj: dict[str, Any]) -> bool:
    meta = obj.get("metadata") or {}
    if not meta.get("deletionTimestamp") or meta.get("finalizers"):
        return False
    if kind.key == ("", "Namespace") and (obj.get("spec") or {}).get("finalizers"):
        return False
    if kind.key == ("", "Pod") and int(meta.get("deletionGracePeriodSeconds") or 0) > 0:
        return False
    return True


__all__ = ["ADMIN_USER", "ApiError", "ObjectStore", "Operation", "Watch", "WatchEvent"]
