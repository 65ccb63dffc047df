"""The wall anchor: simulated time as the machine's clock shows it, at the wire and nowhere else.

The twin's clock starts at a fixed epoch and may run ahead of the wall clock (the stepped
conductor advances 15 simulated seconds per tool call) or stand still (a manual server between
calls). A real client computes ages against *its* clock (`kubectl describe` prints
`now - lastTimestamp`) and asks Prometheus, Loki and Jaeger for "the last hour" by *its* clock, so
the served APIs present every simulated instant as `sim + offset`, with `offset` a whole number of
seconds chosen so the twin's "now" reads as the machine's now. Stored state, scores, telemetry and
every relative time (ages, durations, windows) never see the offset: it is added when a response
leaves and removed when a client's timestamp arrives.

Modes:
- `paced` (a server with `speed > 0`): the offset is fixed the first time it is needed;
- `follow` (a manual server: the stepped conductor, tests): the offset is re-chosen whenever the
  presented "now" would be in the future (the simulation ran ahead) or more than `tolerance_s`
  behind the wall clock (it stood still), so ages are right and never negative;
- `fixed` (snapshots, tests asserting exact timestamps): a constant offset; `WallAnchor.fixed()`
  (offset 0) presents the simulated epoch itself (`twin/clock.py`, 2026-01-05T09:00:00Z onward).

The offset is whole seconds so second-precision timestamps shift exactly and a presented time
sent back (`--since-time`, a Prometheus `end`) maps to exactly the simulated instant it came from.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from sregym.twin.clock import SimClock

Mode = Literal["paced", "follow", "fixed"]

# One second: the presented now is always the current wall second, so kubectl's client-side ages
# (wall now - presented time, truncated to seconds) equal the simulated ages.
DEFAULT_TOLERANCE_S = 1.0


class WallAnchor:
    """`presented = simulated + offset` for one served twin (see the module docstring)."""

    def __init__(self, clock: SimClock | None, *, mode: Mode = "follow", offset_s: int = 0,
                 tolerance_s: float = DEFAULT_TOLERANCE_S,
                 wall: Callable[[], float] = time.time) -> None:
        if mode != "fixed" and clock is None:
            raise ValueError("a moving wall anchor needs the simulated clock")
        self.clock = clock
        self.mode: Mode = mode
        self.tolerance_s = float(tolerance_s)
        self._wall = wall
        self._offset: int | None = int(offset_s) if mode == "fixed" else None

    @classmethod
    def fixed(cls, offset_s: int = 0) -> WallAnchor:
        """A constant offset: 0 presents simulated time unchanged (snapshots, exact-time tests)."""
        return cls(None, mode="fixed", offset_s=offset_s)

    @classmethod
    def for_speed(cls, clock: SimClock, speed: float) -> WallAnchor:
        """The anchor a server with this clock speed uses: paced when the clock runs on its
        own, follow when it only moves on request."""
        return cls(clock, mode="paced" if speed > 0 else "follow")

    # ------------------------------------------------------------ offset
    @property
    def offset(self) -> int:
        """Seconds to add to a simulated instant; re-chosen first if the mode says so."""
        if self.mode == "fixed":
            assert self._offset is not None
            return self._offset
        assert self.clock is not None
        sim_now = self.clock.now
        if self._offset is None:
            return self._anchor(sim_now)
        if self.mode == "follow":
            wall_now = self._wall()
            presented = sim_now + self._offset
            if presented > wall_now or presented < wall_now - self.tolerance_s:
                return self._anchor(sim_now, wall_now)
        return self._offset

    def _anchor(self, sim_now: float, wall_now: float | None = None) -> int:
        # floor: the presented now is at most the wall now, so no age is ever negative.
        wall_now = self._wall() if wall_now is None else wall_now
        self._offset = math.floor(wall_now - sim_now)
        return self._offset

    # ------------------------------------------------------- conversions
    def present(self, sim_s: float) -> float:
        """A simulated instant (Unix seconds) as the client sees it."""
        return sim_s + self.offset

    def to_sim(self, wall_s: float) -> float:
        """A client's instant (Unix seconds) as the simulated instant it names."""
        return wall_s - self.offset

    def now(self) -> float:
        """The twin's "now" as presented (the machine's now, to within the tolerance)."""
        if self.clock is None:
            raise ValueError("a fixed anchor without a clock has no now")
        return self.present(self.clock.now)


# One anchor per request: the wire layers bind it while they answer, so encoders deep inside a
# handler (JSON/YAML bodies, watch events, log lines) present times without threading it through.
_ACTIVE: ContextVar[WallAnchor | None] = ContextVar("sregym_wall_anchor", default=None)


def active() -> WallAnchor | None:
    """The anchor of the request being answered, None outside a served request."""
    return _ACTIVE.get()


def active_offset() -> int:
    """The active anchor's offset, 0 when none is bound (in-process callers see simulated time)."""
    anchor = _ACTIVE.get()
    return anchor.offset if anchor is not None else 0


@contextmanager
def bound(anchor: WallAnchor | None) -> Iterator[None]:
    """Bind `anchor` for the code inside (and the tasks it starts, which copy the context)."""
    token = _ACTIVE.set(anchor)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def bind(anchor: WallAnchor | None) -> None:
    """Bind `anchor` for the rest of the current task (a request's task: streamed bodies are
    sent after the handler returns, still inside it)."""
    _ACTIVE.set(anchor)


def presenter() -> Callable[[float], float] | None:
    """The active anchor's `present` (simulated → client's instant), None outside a served
    request: for work that outlives the request's first answer (an exec session prints `date`
    later, on the anchor's current offset)."""
    anchor = _ACTIVE.get()
    return anchor.present if anchor is not None else None


_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def shift_stamp(text: str, seconds: int) -> str:
    """An RFC 3339 timestamp moved by whole `seconds`, fraction and zone kept (anything else is
    returned unchanged)."""
    match = _STAMP.fullmatch(text)
    if match is None or not seconds:
        return text
    base, fraction, zone = match.groups()
    moved = _move_rfc3339(base, seconds)
    return text if moved is None else moved + (fraction or "") + zone


@functools.lru_cache(maxsize=4096)
def _move_rfc3339(base: str, seconds: int) -> str | None:
    """`_move` for the API's `YYYY-MM-DDTHH:MM:SS`, remembered: a list of thousands of objects
    repeats the same few creation and transition instants, and `strptime` is the walk's cost."""
    return _move(base, "%Y-%m-%dT%H:%M:%S", seconds)


def _move(text: str, layout: str, seconds: int) -> str | None:
    try:
        moment = datetime.strptime(text, layout).replace(tzinfo=UTC) + timedelta(seconds=seconds)
    except (ValueError, OverflowError):
        return None
    return moment.strftime(layout)


# Date-times inside log lines, as the apps' logging libraries print them: RFC 3339 (zerolog,
# logfmt, JSON, MongoDB's `$date`, the `--timestamps` prefix), `YYYY-MM-DD HH:MM:SS` (PostgreSQL)
# and Go's `log` (`YYYY/MM/DD HH:MM:SS`). Only the date-time digits change; fraction and zone stay.
_EMBEDDED = re.compile(r"\d{4}([-/])\d{2}\1\d{2}([T ])\d{2}:\d{2}:\d{2}")


def shift_embedded(text: str, seconds: int) -> str:
    """Every date-time printed inside `text` (log lines) moved by whole `seconds`: a program in
    the twin reads the simulated clock where a real one reads the machine's. klog's year-less
    header moves too."""
    if not seconds or not text:
        return text

    def move(match: re.Match[str]) -> str:
        sep, mid = match.group(1), match.group(2)
        layout = f"%Y{sep}%m{sep}%d{mid}%H:%M:%S"
        return _move(match.group(0), layout, seconds) or match.group(0)

    return _KLOG.sub(_move_klog(seconds), _EMBEDDED.sub(move, text))


# klog's header (`I1201 22:01:17.123456`, Kubernetes components and the kubelet) has no year. The
# twin's clock starts early in its epoch year and runs for hours, so that year is the stamp's.
_KLOG = re.compile(r"(?<![\w.:-])([IWEF])(\d{4} \d{2}:\d{2}:\d{2})(?=\.\d{6})")


def _move_klog(seconds: int) -> Callable[[re.Match[str]], str]:
    from sregym.twin.clock import DEFAULT_EPOCH

    year = DEFAULT_EPOCH.year

    def move(match: re.Match[str]) -> str:
        moved = _move(f"{year}{match.group(2)}", "%Y%m%d %H:%M:%S", seconds)
        return match.group(0) if moved is None else match.group(1) + moved[4:]
    return move


__all__ = ["DEFAULT_TOLERANCE_S", "WallAnchor", "active", "active_offset", "bind", "bound", "presenter", "shift_embedded",
           "shift_stamp"]
