"""Twin services are typed attributes, never looked up by string key.

A string key (`twin.services["runtime"]`) hid typos and made which subsystem owns what a matter
of grepping; `TwinServices` has one slot per service, and this test keeps string lookups out of
the source.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sregym
from sregym.twin.services import TwinServices
from sregym.twin.twin import Twin

SRC = Path(sregym.__file__).parent


def _string_lookups(tree: ast.AST) -> list[int]:
    """Lines that subscript, `.get`, `.setdefault` or `.pop` something named `services`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in {"get", "setdefault", "pop", "__setitem__", "__getitem__"}:
            target = node.func.value
        else:
            continue
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if name == "services":
            found.append(node.lineno)
    return found


def test_no_string_keyed_service_lookups_in_the_source() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        offenders += [f"{path.relative_to(SRC)}:{line}" for line in _string_lookups(ast.parse(text))]
        offenders += [f"{path.relative_to(SRC)}: {line.strip()}" for line in text.splitlines() if "services[" in line]
    assert offenders == []


def test_the_lookup_finder_sees_a_string_key() -> None:
    tree = ast.parse('twin.services["runtime"]\nself.twin.services.get("tsdb")\nservices.setdefault("x", 1)\n')
    assert _string_lookups(tree) == [1, 2, 3]


def test_services_are_slots_so_a_misspelt_one_fails() -> None:
    twin = Twin(seed=0, bootstrap=False)
    assert isinstance(twin.services, TwinServices)
    with pytest.raises(AttributeError):
        twin.services.runtme = object()  # type: ignore[attr-defined]
