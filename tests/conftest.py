"""Suite-wide hooks: figures a test wants on the terminal even when output is captured.

A test calls `record_property("report", text)`; the text is printed in the terminal summary at
the end of the run. It travels with the test's report, so it also reaches the terminal from
pytest-xdist workers (where a plain `print` is swallowed) — this is how the fuzz test's request
counts appear in every CI log.
"""

from __future__ import annotations

from typing import Any

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
