"""Chaos Mesh's `Workflow`: templates run as a tree of `WorkflowNode` objects.

As the controller manager's workflow reconcilers do it:

- entry: a new Workflow gets its entry node (`<entry template>-<5 characters>`), `status.entryNode`,
  `status.startTime` and the condition `Scheduled` (reason `EntryCreated`);
- every node is named `<template>-<5 characters>`, owned by its parent node (the Workflow for the
  entry), labelled `chaos-mesh.org/controlled-by` (parent) and `chaos-mesh.org/workflow`, and
  carries its template's type, children, embedded experiment and `deadline` (start + the
  template's duration);
- deadline: a node past its deadline gets `DeadlineExceed` True (`NodeDeadlineExceed`); before it
  False (`NodeDeadlineNotExceed`), or `NodeDeadlineOmitted` without one;
- chaos nodes (`NetworkChaos`, `PodChaos` ...) create their experiment (`<node>-<5 characters>`,
  `ChaosInjected` True / `ChaosCRCreated`, `status.chaosResource`) and delete it once the node
  has finished; `Suspend` nodes just wait for their deadline;
- `Serial` runs its children one after the other, `Parallel` all at once; either is
  `Accomplished` (`NodeAccomplished`) when every child has finished; `status.activeChildren` /
  `finishedChildren` list them;
- the Workflow is `Accomplished` when its entry node finished, with `status.endTime`.

A node has finished when it is Accomplished or past its deadline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.errors import ApiError
from sregym.twin.chaos.goduration import parse_duration
from sregym.twin.chaos.spawn import (
    API_VERSION,
    EMBEDDED,
    GROUP,
    LABEL_CONTROLLED_BY,
    LABEL_WORKFLOW,
    embedded_spec,
    generate_name,
    owner_reference,
)
from sregym.twin.clock import format_time, parse_time

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

USER = "system:serviceaccount:chaos-mesh:chaos-controller-manager"
COMPOSITE = ("Serial", "Parallel")


def reconcile_workflows(twin: Twin) -> None:
    if not twin.store.count("Workflow"):
        return
    for workflow in list(twin.store.scan("Workflow")):
        if workflow["metadata"].get("deletionTimestamp"):
            continue
        _Run(twin, workflow).reconcile()


def _condition(conditions: list[dict[str, Any]], kind: str, status: bool, reason: str) -> list[dict[str, Any]]:
    out = [c for c in conditions if c.get("type") != kind]
    out.append({"type": kind, "status": "True" if status else "False", "reason": reason})
    return sorted(out, key=lambda c: c["type"])


def _true(obj: dict[str, Any], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def node_finished(node: dict[str, Any]) -> bool:
    return _true(node, "Accomplished") or _true(node, "DeadlineExceed")


class _Run:
    """One Workflow's reconcile pass."""

    def __init__(self, twin: Twin, workflow: dict[str, Any]) -> None:
        self.twin = twin
        self.workflow = workflow
        self.namespace = workflow["metadata"].get("namespace", "default")
        self.name = workflow["metadata"]["name"]
        self.templates = {t.get("name"): t for t in (workflow.get("spec") or {}).get("templates") or []}

    def event(self, obj: dict[str, Any], kind: str, reason: str, message: str) -> None:
        self.twin.events.record(obj, kind, reason, message, component="workflow")

    def nodes(self) -> list[dict[str, Any]]:
        return [n for n in self.twin.store.scan("WorkflowNode", self.namespace)
                if (n["metadata"].get("labels") or {}).get(LABEL_WORKFLOW) == self.name]

    def reconcile(self) -> None:
        status = self.workflow.get("status") or {}
        if not status.get("entryNode"):
            entry = (self.workflow.get("spec") or {}).get("entry") or ""
            node = self.spawn_node(entry, self.workflow)
            if node is None:
                return
            now = format_time(self.twin.clock.now)

            def begin(obj: dict[str, Any]) -> None:
                st = obj.setdefault("status", {})
                st["entryNode"] = node["metadata"]["name"]
                st["startTime"] = now
                st["conditions"] = _condition(st.get("conditions") or [], "Scheduled", True, "EntryCreated")

            self.workflow = self.twin.store.mutate("Workflow", self.namespace, self.name, begin, status=True,
                                                   user=USER) or self.workflow
            self.event(self.workflow, "Normal", "EntryCreated", f"Entry node created: {node['metadata']['name']}")
        for node in sorted(self.nodes(), key=lambda n: n["metadata"].get("creationTimestamp", "")):
            self.node(node)
        entry_name = (self.workflow.get("status") or {}).get("entryNode")
        entry = self.twin.store.peek("WorkflowNode", self.namespace, entry_name) if entry_name else None
        if entry is not None and node_finished(entry) and not _true(self.workflow, "Accomplished"):
            now = format_time(self.twin.clock.now)

            def finish(obj: dict[str, Any]) -> None:
                st = obj.setdefault("status", {})
                st["endTime"] = now
                st["conditions"] = _condition(st.get("conditions") or [], "Accomplished", True, "")

            self.twin.store.mutate("Workflow", self.namespace, self.name, finish, status=True, user=USER)
            self.event(self.workflow, "Normal", "WorkflowAccomplished", "Workflow accomplished")

    # ------------------------------------------------------------------ nodes
    def spawn_node(self, template_name: str, parent: dict[str, Any]) -> dict[str, Any] | None:
        template = self.templates.get(template_name)
        if template is None:
            self.event(self.workflow, "Warning", "InvalidEntry",
                       f"workflow {self.name} do not contains template called {template_name}")
            return None
        now = self.twin.clock.now
        spec: dict[str, Any] = {"templateName": template_name, "workflowName": self.name,
                                "type": template.get("templateType") or "", "startTime": format_time(now)}
        deadline = parse_duration(template.get("deadline"))
        if deadline is not None:
            spec["deadline"] = format_time(now + deadline)
        if template.get("children"):
            spec["children"] = list(template["children"])
        kind = spec["type"]
        if kind in EMBEDDED and embedded_spec(template, kind) is not None:
            spec[EMBEDDED[kind]] = embedded_spec(template, kind)
        node = {"apiVersion": API_VERSION, "kind": "WorkflowNode",
                "metadata": {"name": generate_name(self.twin, template_name + "-"), "namespace": self.namespace,
                             "labels": {LABEL_CONTROLLED_BY: parent["metadata"]["name"], LABEL_WORKFLOW: self.name},
                             "ownerReferences": [owner_reference(parent)]},
                "spec": spec}
        try:
            created = self.twin.store.create(node, user=USER)
        except ApiError as exc:
            self.event(self.workflow, "Warning", "Failed", f"Failed to create workflow node: {exc}")
            return None
        self.event(parent, "Normal", "NodesCreated", f"Nodes created: {created['metadata']['name']}")
        return created

    def node(self, node: dict[str, Any]) -> None:
        if node["metadata"].get("deletionTimestamp"):
            return
        spec = node.get("spec") or {}
        conditions = list((node.get("status") or {}).get("conditions") or [])
        extra: dict[str, Any] = {}
        if spec.get("deadline"):
            exceeded = parse_time(spec["deadline"]) <= self.twin.clock.now
            conditions = _condition(conditions, "DeadlineExceed", exceeded,
                                    "NodeDeadlineExceed" if exceeded else "NodeDeadlineNotExceed")
        else:
            conditions = _condition(conditions, "DeadlineExceed", False, "NodeDeadlineOmitted")
        kind = spec.get("type")
        finished = any(c["type"] in ("Accomplished", "DeadlineExceed") and c["status"] == "True" for c in conditions)
        if kind in EMBEDDED:
            conditions, extra = self.chaos_node(node, kind, finished, conditions)
        elif kind in COMPOSITE:
            conditions, extra = self.composite(node, kind, finished, conditions)
        new_status = {**(node.get("status") or {}), **extra, "conditions": conditions}
        for key in ("activeChildren", "finishedChildren", "chaosResource"):
            if key in new_status and not new_status[key]:
                new_status.pop(key)
        if new_status != (node.get("status") or {}):
            self.twin.store.mutate("WorkflowNode", self.namespace, node["metadata"]["name"],
                                   lambda o: o.__setitem__("status", new_status), status=True, user=USER)

    def chaos_node(self, node: dict[str, Any], kind: str, finished: bool,
                   conditions: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        name = node["metadata"]["name"]
        mine = [c for c in self.twin.store.scan(kind, self.namespace)
                if (c["metadata"].get("labels") or {}).get(LABEL_CONTROLLED_BY) == name]
        if finished:
            for child in mine:
                if child["metadata"].get("deletionTimestamp"):
                    continue
                self.twin.store.delete(kind, self.namespace, child["metadata"]["name"], user=USER)
                self.event(node, "Normal", "ChaosCustomResourceDeleted",
                           f"Chaos CR {kind}/{child['metadata']['name']} deleted")
            return conditions, {"chaosResource": None}
        if not mine:
            body = embedded_spec(node.get("spec") or {}, kind) or {}
            child = {"apiVersion": API_VERSION, "kind": kind,
                     "metadata": {"name": generate_name(self.twin, name + "-"), "namespace": self.namespace,
                                  "labels": {LABEL_CONTROLLED_BY: name, LABEL_WORKFLOW: self.name},
                                  "ownerReferences": [owner_reference(node)]},
                     "spec": body}
            try:
                mine = [self.twin.store.create(child, user=USER)]
            except ApiError:
                self.event(node, "Warning", "ChaosCustomResourceCreateFailed", "Failed to create chaos CR")
                return _condition(conditions, "ChaosInjected", False, "ChaosCRNotExists"), {}
            self.event(node, "Normal", "ChaosCustomResourceCreated",
                       f"Chaos CR {kind}/{mine[0]['metadata']['name']} created")
        reference = {"apiGroup": GROUP, "kind": kind, "name": mine[0]["metadata"]["name"]}
        return _condition(conditions, "ChaosInjected", True, "ChaosCRCreated"), {"chaosResource": reference}

    def composite(self, node: dict[str, Any], kind: str, finished: bool,
                  conditions: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        name = node["metadata"]["name"]
        templates = list((node.get("spec") or {}).get("children") or [])
        mine = sorted((n for n in self.twin.store.scan("WorkflowNode", self.namespace)
                       if (n["metadata"].get("labels") or {}).get(LABEL_CONTROLLED_BY) == name),
                      key=lambda n: (n["metadata"].get("creationTimestamp", ""), n["metadata"]["name"]))
        if not finished:
            if kind == "Parallel" and not mine:
                mine = [n for n in (self.spawn_node(t, node) for t in templates) if n is not None]
            elif kind == "Serial" and all(node_finished(n) for n in mine) and len(mine) < len(templates):
                spawned = self.spawn_node(templates[len(mine)], node)
                mine = [*mine, spawned] if spawned is not None else mine
        done = [n for n in mine if node_finished(n)]
        active = [n for n in mine if not node_finished(n)]
        extra = {"activeChildren": [{"name": n["metadata"]["name"]} for n in active],
                 "finishedChildren": [{"name": n["metadata"]["name"]} for n in done]}
        if len(done) == len(templates) and not active:
            conditions = _condition(conditions, "Accomplished", True, "NodeAccomplished")
        return conditions, extra
