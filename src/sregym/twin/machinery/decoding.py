"""Decoding a write into a built-in kind the way the API server's Go types do.

The real API server unmarshals every create, update and patch into its Go structs, so:

- a value of the wrong JSON type is a decoding error in encoding/json's words (`json: cannot
  unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`), and only
  the first one is reported;
- a field the struct does not have is an *unknown field* and a key given twice a *duplicate
  field* (`unknown field "spec.template.spec.containers[0].foo"`), which the `fieldValidation`
  mode turns into an error (Strict), warnings (Warn, the server's default) or nothing (Ignore);
- either way the unknown field is gone: it has nowhere to be stored.

The schemas come from `schemas.py` (upstream 1.32); kinds without one (custom resources) are
left alone. The caller words the final error, since that depends on the verb.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sregym.twin.machinery.quantity import is_valid_quantity
from sregym.twin.machinery.schemas import resolve, schema_name

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY_PATTERN_ERROR = ("quantities must match the regular expression "
                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


class DuplicateKeys(dict):
    """A decoded JSON object that had a key more than once: `keys_in_order` keeps every
    occurrence (the last value wins, as in Go), so duplicates are reported where they were."""

    keys_in_order: list[str]


def object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json.loads(object_pairs_hook=...)`: a plain dict unless a key repeats."""
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    dup = DuplicateKeys(out)
    dup.keys_in_order = [k for k, _ in pairs]
    return dup


@dataclass
class Decoded:
    """What decoding found: the first type error (wins over everything else) and the strict
    decoding findings (`unknown field "..."`, `duplicate field "..."`) in the order Go reports."""

    type_error: str | None = None
    strict: list[str] = field(default_factory=list)


def has_schema(group: str, version: str, kind: str) -> bool:
    return schema_name(group, version, kind) is not None


def decode(obj: dict[str, Any], group: str, version: str, kind: str, *,
           sorted_keys: bool = False) -> Decoded:
    """Check `obj` against the kind's schema, pruning unknown fields in place.

    `sorted_keys` walks objects in key order, as the server does for a patched object (which it
    re-encodes from a map); a posted body is walked in the order it was written.
    """
    found = Decoded()
    name = schema_name(group, version, kind)
    if name is None:
        return found
    _, schema = resolve({"$ref": "#/components/schemas/" + name})
    walker = _Walker(found, sorted_keys)
    walker.struct(obj, name, schema, "", "")
    return found


def go_type(node: dict[str, Any]) -> str:
    """The Go type encoding/json names in its errors for a schema node."""
    ref, schema = resolve(node)
    if ref is not None and (schema.get("properties") is not None or "oneOf" in schema
                            or schema.get("type") in (None, "object") or ref.endswith(".Time")):
        parts = ref.split(".")
        return f"{parts[-2]}.{parts[-1]}"
    kind = schema.get("type")
    if kind == "array":
        return "[]" + go_type(schema.get("items") or {})
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return "map[string]" + go_type(schema["additionalProperties"])
    if kind == "integer":
        return schema.get("format") or "int64"
    if kind == "number":
        return "float64"
    if kind == "boolean":
        return "bool"
    if kind == "string":
        return "[]uint8" if schema.get("format") == "byte" else "string"
    return "interface {}"


def json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class _Walker:
    def __init__(self, found: Decoded, sorted_keys: bool) -> None:
        self.found = found
        self.sorted_keys = sorted_keys

    def type_error(self, value: Any, struct: str, field_path: str, node: dict[str, Any],
                   literal: bool = False) -> None:
        if self.found.type_error is not None:
            return
        what = json_kind(value)
        if literal:
            what = f"number {value!r}" if isinstance(value, float) else f"number {value}"
        self.found.type_error = (f"json: cannot unmarshal {what} into Go struct field "
                                 f"{struct}.{field_path} of type {go_type(node)}")

    def struct(self, obj: dict[str, Any], name: str, schema: dict[str, Any], field_path: str,
               path: str) -> None:
        props = schema.get("properties") or {}
        struct = name.rsplit(".", 1)[-1]
        keys = getattr(obj, "keys_in_order", None) or list(obj)
        if self.sorted_keys:
            keys = sorted(keys)
        seen: set[str] = set()
        for key in keys:
            where = f"{path}.{key}" if path else key
            if key in seen:
                if key in props:
                    self.found.strict.append(f'duplicate field "{where}"')
                continue
            seen.add(key)
            if key not in props:
                self.found.strict.append(f'unknown field "{where}"')
                del obj[key]
                continue
            go_path = f"{field_path}.{key}" if field_path else key
            obj[key] = self.value(obj[key], props[key], struct, go_path, where)

    def value(self, value: Any, node: dict[str, Any], struct: str, field_path: str,
              path: str) -> Any:
        if value is None:
            return value
        ref, schema = resolve(node)
        if ref == QUANTITY:
            if isinstance(value, bool) or not isinstance(value, str | int | float) \
                    or not is_valid_quantity(value):
                if self.found.type_error is None:
                    self.found.type_error = QUANTITY_PATTERN_ERROR
            return value
        if ref == INT_OR_STRING:
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                self.type_error(value, struct, field_path, node)
            elif isinstance(value, float) and not value.is_integer():
                self.type_error(value, struct, field_path, {"type": "integer", "format": "int32"},
                                literal=True)
            return value
        kind = schema.get("type")
        if kind == "object" or (kind is None and schema.get("properties") is not None):
            if not isinstance(value, dict):
                self.type_error(value, struct, field_path, node)
                return value
            if schema.get("properties") is not None:
                self.struct(value, ref or struct, schema, field_path, path)
            elif isinstance(schema.get("additionalProperties"), dict):
                item = schema["additionalProperties"]
                for key in list(value):
                    value[key] = self.value(value[key], item, struct, field_path, f"{path}[{key}]")
            return value
        if kind == "array":
            if not isinstance(value, list):
                self.type_error(value, struct, field_path, node)
                return value
            item = schema.get("items") or {}
            for i, element in enumerate(value):
                value[i] = self.value(element, item, struct, field_path, f"{path}[{i}]")
            return value
        if kind == "string":
            if not isinstance(value, str):
                self.type_error(value, struct, field_path, node)
        elif kind == "boolean":
            if not isinstance(value, bool):
                self.type_error(value, struct, field_path, node)
        elif kind == "integer":
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.type_error(value, struct, field_path, node)
            elif isinstance(value, float) and not value.is_integer():
                self.type_error(value, struct, field_path, node, literal=True)
            else:
                low, high = _INT_RANGES.get(schema.get("format") or "int64", _INT_RANGES["int64"])
                if not low <= value <= high:
                    self.type_error(value, struct, field_path, node, literal=True)
                elif isinstance(value, float):
                    value = int(value)
        elif kind == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.type_error(value, struct, field_path, node)
        return value


__all__ = ["INT_OR_STRING", "QUANTITY", "Decoded", "DuplicateKeys", "decode", "go_type",
           "has_schema", "json_kind", "object_pairs"]
