"""`date` formatting, shared by the commands that print times."""

from __future__ import annotations

from datetime import UTC, datetime


def format_date(ts: float, fmt: str | None = None) -> str:
    """`date` output in the C locale (`Mon Jan  5 09:00:00 UTC 2026`) or a `+FORMAT`."""
    moment = datetime.fromtimestamp(ts, tz=UTC)
    if fmt:
        fmt = fmt.replace("%N", "000000000").replace("%Z", "UTC").replace("%s", str(int(ts)))
        return moment.strftime(fmt)
    return moment.strftime("%a %b ") + f"{moment.day:2d}" + moment.strftime(" %H:%M:%S UTC %Y")
