"""Suite-wide hooks: figures a test wants on the terminal even when output is captured.

A test calls `record_property("report", text)`; the text is printed in the terminal summary at
the end of the run. It travels with the test's report, so it also reaches the terminal from
pytest-xdist workers (where a plain `print` is swallowed) — this is how the fuzz test's request
counts appear in every CI log.

Every test process runs with the garbage-collector settings of a simulating `sregym` process
(`sregym/gcpolicy.py`).
"""

from __future__ import annotations

from typing import Any

import pytest

from sregym.gcpolicy import tune_for_simulation

# Most of the suite's CPU is simulated time; the workers collect garbage as `sregym` itself does.
tune_for_simulation()

_REPORTS: list[tuple[str, str]] = []


def pytest_runtest_logreport(report: Any) -> None:
    if report.when != "call":
        return
    for name, value in getattr(report, "user_properties", ()):
        if name == "report":
            _REPORTS.append((report.nodeid, str(value)))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _REPORTS:
        return
    terminalreporter.section("figures reported by tests")
    for nodeid, text in _REPORTS:
        terminalreporter.write_line(f"{nodeid}: {text.strip()}")


@pytest.hookimpl(tryfirst=True)  # before the marks are read into node ids (below)
def pytest_collection_modifyitems(config: pytest.Config, items: list[Any]) -> None:
    """Keep each module whose tests share a module-scoped fixture on one xdist worker.

    A module-scoped fixture (a warm Hotel Reservation twin, an exported snapshot) is built once
    per worker that runs any of the module's tests; spread over two workers it was built twice.
    Such a module's tests get the module as their `xdist_group` (the suite runs with
    `--dist loadgroup`) unless they already name a group.
    """
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        defs = getattr(info, "name2fixturedefs", {}) if info is not None else {}
        if any(d.scope == "module" for fixturedefs in defs.values() for d in fixturedefs):
            item.add_marker(pytest.mark.xdist_group(f"module:{item.nodeid.split('::', 1)[0]}"))
    _name_groups(config, items)


def _name_groups(config: pytest.Config, items: list[Any]) -> None:
    """Make `--dist loadgroup` work on pytest 9.

    xdist (3.8) sends a test to its group's worker by appending `@<group>` to the node id it
    reports, and does so by setting `item._nodeid`; pytest 9 keeps the id in `item._id`, so that
    write is lost and every group was spread over all workers (each one rebuilding the group's
    shared state: the problem batches ran once per worker). Here the id itself carries the suffix.
    """
    if not getattr(config.option, "loadgroup", False) or not hasattr(config, "workerinput"):
        return
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # an older pytest: xdist's own write works
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        old = getattr(item, "_id", None)
        if names and isinstance(old, NodeId) and old.names and not _has_group_suffix(item.nodeid):
            # The suffix goes into the last name (params included), so the id reads the same
            # however pytest rebuilds its string form.
            last = old.names[-1] + (f"[{old.params}]" if old.params is not None else "") + "@" + "_".join(names)
            item._id = NodeId(path=old.path, names=(*old.names[:-1], last))


def _has_group_suffix(nodeid: str) -> bool:
    """Whether `nodeid` already ends in `@<group>`, read the way xdist reads it: an "@" inside the
    parameters (a family variant id, `...[demo-shop/x-v1@key=value]`) is not one. Skipping such
    ids left each of their tests a group of its own, and a module-scoped fixture ran once per worker."""
    return nodeid.rfind("@") > nodeid.rfind("]")
