"""Server-side printing glue: turn objects into a `meta.k8s.io/v1` Table when kubectl asks.

The columns themselves belong to `sregym.twin.machinery.printers.table` (the real API server's printers).
This module only calls it with the server's parameters, copies the list metadata (resourceVersion,
continue) into the Table, and falls back to the default NAME/AGE table (what the real server
prints for a custom resource without printer columns) when a kind has no printer or the printers
module is not available.
"""

from __future__ import annotations

import logging
from typing import Any

from sregym.twin.clock import format_age, parse_time
from sregym.twin.machinery.kinds import ResourceKind

log = logging.getLogger("sregym.twin.api")

INCLUDE_OBJECT = ("None", "Metadata", "Object")


def table(kind: ResourceKind, objects: list[dict[str, Any]], *, now: float,
          include_object: str = "Metadata",
          list_meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Table for `objects`, with every column (kubectl hides priority > 0 unless `-o wide`)."""
    result: dict[str, Any] | None = None
    if not kind.custom:
        try:
            from sregym.twin.machinery import printers

            result = printers.table(kind, objects, now=now, wide=True, include_object=include_object)
        except (ImportError, AttributeError):
            result = None
        except Exception:  # a printer bug must not hide the objects: print NAME/AGE instead
            log.exception("printing %s failed", kind.plural)
            result = None
    if result is None:
        result = default_table(objects, now=now, include_object=include_object)
    result["metadata"] = dict(list_meta or {})
    return result


def default_table(objects: list[dict[str, Any]], *, now: float,
                  include_object: str = "Metadata") -> dict[str, Any]:
    """NAME and AGE, as for a CRD whose versions declare no additionalPrinterColumns."""
    rows = []
    for obj in objects:
        meta = obj.get("metadata") or {}
        created = meta.get("creationTimestamp")
        age = format_age(now - parse_time(created)) if created else "<unknown>"
        rows.append({"cells": [meta.get("name", ""), age], "object": row_object(obj, include_object)})
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name", "priority": 0,
             "description": "Name must be unique within a namespace. More info: "
                            "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"},
            {"name": "Age", "type": "date", "format": "", "priority": 0,
             "description": "CreationTimestamp is a timestamp representing the server time when "
                            "this object was created."},
        ],
        "rows": rows,
    }


def row_object(obj: dict[str, Any], include_object: str) -> Any:
    """What a row carries: nothing, the object's metadata, or the whole object."""
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata") or {}}


__all__ = ["INCLUDE_OBJECT", "default_table", "row_object", "table"]
