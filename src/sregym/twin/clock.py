"""Simulated time.

The twin never reads the wall clock: every timestamp (creationTimestamp, event times, AGE columns,
log lines, metric samples) comes from this clock, which moves only when the twin advances it. That is
what makes runs reproducible and lets ten simulated minutes pass in a fraction of a wall second.
"""

from __future__ import annotations

from datetime import UTC, datetime

DEFAULT_EPOCH = datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)


class SimClock:
    """A monotonic simulated clock that advances in fixed ticks."""

    def __init__(self, *, start: datetime = DEFAULT_EPOCH, tick: float = 1.0) -> None:
        if tick <= 0:
            raise ValueError("tick must be positive")
        self.start = start.timestamp()
        self.tick = float(tick)
        self._elapsed = 0.0
        self.ticks = 0

    @property
    def now(self) -> float:
        """Seconds since the Unix epoch, in simulated time."""
        return self.start + self._elapsed

    @property
    def elapsed(self) -> float:
        """Simulated seconds since the twin started."""
        return self._elapsed

    def step(self) -> float:
        """Advance one tick and return the new time."""
        self.ticks += 1
        self._elapsed = self.ticks * self.tick
        return self.now

    def datetime(self) -> datetime:
        return datetime.fromtimestamp(self.now, tz=UTC)

    def iso(self, at: float | None = None) -> str:
        """RFC 3339 with second precision, as in `metadata.creationTimestamp`."""
        return format_time(self.now if at is None else at)

    def iso_micro(self, at: float | None = None) -> str:
        """RFC 3339 with microseconds, as in `eventTime` and log timestamps."""
        moment = datetime.fromtimestamp(self.now if at is None else at, tz=UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def format_time(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> float:
    """Parse an RFC 3339 timestamp (with or without fractional seconds) to epoch seconds."""
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    return datetime.fromisoformat(value).timestamp()


def format_age(seconds: float) -> str:
    """Humanised duration exactly like kubectl's AGE column (`duration.HumanDuration`)."""
    s = int(seconds)
    if s < 0:
        s = 0
    if s < 60 * 2:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rem = s % 60
        return f"{minutes}m{rem}s" if rem else f"{minutes}m"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        rem = minutes % 60
        return f"{hours}h{rem}m" if rem else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rem = hours % 24
        return f"{hours // 24}d{rem}h" if rem else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24
        rem = days % 365
        return f"{days // 365}y{rem}d" if rem else f"{days // 365}y"
    return f"{hours // 24 // 365}y"
