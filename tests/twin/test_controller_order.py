"""The documented tick order is the real one.

`sregym.twin.controllers`'s docstring holds the only table of controllers and their `order`;
these tests parse that table and compare it row by row with `CONTROLLERS.entries()`, so adding,
renaming or reordering a controller without updating the table (or the reverse) fails here.
"""

from __future__ import annotations

import re

import sregym.twin.controllers as controllers_package
from sregym.twin.controller import CONTROLLERS
from sregym.twin.twin import Twin

ROW = re.compile(r"^\s+(\d+)\s+([a-z][a-z0-9-]*)\s+\S")


def _documented() -> list[tuple[int, str]]:
    doc = controllers_package.__doc__ or ""
    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split() == ["order", "controller", "what", "it", "does"])
    rows = []
    for line in lines[start + 1:]:
        match = ROW.match(line)
        if match is None:
            break
        rows.append((int(match.group(1)), match.group(2)))
    return rows


def test_documented_table_is_the_registry_order() -> None:
    documented = _documented()
    assert len(documented) > 20  # the parser found the table, not a stray line
    assert documented == [(entry.order, entry.name) for entry in CONTROLLERS.entries()]


def test_a_twin_runs_its_controllers_in_the_documented_order() -> None:
    twin = Twin(seed=0, bootstrap=False)
    assert [(ctl.order, ctl.name) for ctl in twin.controllers] == _documented()
