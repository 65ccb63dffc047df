"""Where a kind holds quantities, and putting them in the form the API server stores.

A real API server decodes `cpu: 1000m` into a Quantity and encodes it back as `cpu: "1"`, so what
`kubectl get -o yaml` shows is never what was applied when it was not canonical. The fields are
found once per kind from the upstream schema (every property whose type is Quantity, through
lists and maps) and kept as path patterns, merged into a trie, so a write costs one walk over
those paths only.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sregym.twin.machinery.decoding import QUANTITY
from sregym.twin.machinery.quantity import QuantityError, canonical_quantity
from sregym.twin.machinery.schemas import resolve, schema_name

ANY = "*"  # a list index or map key in a path pattern
Path = tuple[str, ...]


@cache
def quantity_paths(group: str, version: str, kind: str) -> tuple[Path, ...]:
    name = schema_name(group, version, kind)
    if name is None:
        return ()
    out: list[Path] = []
    _collect({"$ref": "#/components/schemas/" + name}, (), (), out)
    return tuple(out)


def _collect(node: dict[str, Any], path: Path, chain: tuple[str, ...], out: list[Path]) -> None:
    ref, schema = resolve(node)
    if ref == QUANTITY:
        out.append(path)
        return
    if ref is not None:
        if ref in chain:  # recursive types (JSONSchemaProps) hold no quantities
            return
        chain = (*chain, ref)
    for key, prop in (schema.get("properties") or {}).items():
        _collect(prop, (*path, key), chain, out)
    if isinstance(schema.get("items"), dict):
        _collect(schema["items"], (*path, ANY), chain, out)
    if isinstance(schema.get("additionalProperties"), dict):
        _collect(schema["additionalProperties"], (*path, ANY), chain, out)


# A trie of a kind's quantity paths: key (or ANY) → the rest; an empty trie ends a path.
Trie = dict[str, "Trie"]


@cache
def _quantity_trie(group: str, version: str, kind: str) -> Trie:
    """The kind's quantity paths merged on their common prefixes: a Pod has dozens, most under
    `spec.containers` or `status.containerStatuses`, and every write walks them."""
    root: Trie = {}
    for path in quantity_paths(group, version, kind):
        node = root
        for key in path:
            node = node.setdefault(key, {})
    return root


def canonicalize(obj: dict[str, Any], group: str, version: str, kind: str) -> None:
    """Rewrite every quantity of `obj` in place in its canonical form (invalid ones are left for
    validation to refuse)."""
    trie = _quantity_trie(group, version, kind)
    if trie:
        _apply(obj, trie)


def _apply(node: Any, trie: Trie) -> None:
    """Walk the paths of `trie` under `node` once, rewriting the quantities where they end."""
    for key, rest in trie.items():
        if key == ANY:
            slots = list(node.items()) if isinstance(node, dict) else \
                list(enumerate(node)) if isinstance(node, list) else []
        elif isinstance(node, dict) and key in node:
            slots = [(key, node[key])]
        else:
            continue
        for slot, value in slots:
            if value is None:
                continue
            if rest:
                _apply(value, rest)
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                try:
                    node[slot] = canonical_quantity(value)
                except QuantityError:
                    continue


__all__ = ["canonicalize", "quantity_paths"]
