"""An attempt's timeline as a small inline SVG: injection, each agent action at its simulated
time, the diagnosis, "done" and the verification window.

Drawn on the server as plain text so the page needs no plotting library and the figure is the
same for the same attempt (it is tested as a string). A result line carries no SLO series today,
so the plot shows the phases and actions only; an SLO curve needs the entry points' success rate
and latency sampled over the attempt (baseline, after injection, through the window) stored in
the line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

WIDTH, HEIGHT = 760, 160
LEFT, RIGHT, TOP = 90, 20, 32
LANES = ("diagnosis", "mitigation")
LANE_HEIGHT = 34
AXIS_Y = TOP + LANE_HEIGHT * len(LANES) + 8


def as_number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def tick_step(span: float) -> float:
    """A round step giving 4 to 10 ticks over `span` seconds."""
    step = 1.0
    for candidate in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200):
        step = float(candidate)
        if span / step <= 10:
            break
    return step


def format_seconds(seconds: float) -> str:
    return f"{seconds:g}s" if seconds < 120 else f"{seconds / 60:g}m"


def timeline_svg(line: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> str:
    """The SVG text (no XML prolog, ready to inline in HTML)."""
    diagnosed = as_number(line.get("sim_seconds_to_diagnosis"))
    done = as_number(line.get("sim_seconds_to_mitigation"))
    mitigation = line.get("mitigation") if isinstance(line.get("mitigation"), Mapping) else {}
    window = as_number(mitigation.get("window_s")) if done is not None else None
    times = [t for t in (as_number(s.get("sim_time")) for s in steps) if t is not None]
    end = max([1.0, *times, *(t for t in (diagnosed, done) if t is not None),
               (done or 0.0) + (window or 0.0)])
    scale = (WIDTH - LEFT - RIGHT) / end

    def x(t: float) -> float:
        return round(LEFT + max(0.0, t) * scale, 1)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="attempt timeline">']
    if done is not None and window:
        parts.append(f'<rect class="window" x="{x(done)}" y="{TOP - 6}" width="{round(window * scale, 1)}" '
                     f'height="{LANE_HEIGHT * len(LANES) + 6}"><title>verification window {window:g}s</title></rect>')
    for n, lane in enumerate(LANES):
        y = TOP + n * LANE_HEIGHT + LANE_HEIGHT / 2
        parts.append(f'<text class="lane" x="{LEFT - 8}" y="{y + 4}" text-anchor="end">{lane}</text>')
        parts.append(f'<line class="lane-line" x1="{LEFT}" y1="{y}" x2="{WIDTH - RIGHT}" y2="{y}"/>')
    lane_y = {lane: TOP + n * LANE_HEIGHT + LANE_HEIGHT / 2 for n, lane in enumerate(LANES)}
    for step in steps:
        t = as_number(step.get("sim_time"))
        if t is None:
            continue
        y = lane_y.get(str(step.get("phase")), lane_y["mitigation"])
        kind = str(step.get("kind") or "tool")
        css = "error" if step.get("is_error") else kind
        label = escape(f"#{step.get('index')} {step.get('tool')} at {t:g}s")
        if kind == "message":
            parts.append(f'<rect class="mark {css}" x="{x(t) - 3}" y="{y - 3}" width="6" height="6">'
                         f"<title>{label}</title></rect>")
        else:
            parts.append(f'<circle class="mark {css}" cx="{x(t)}" cy="{y}" r="4"><title>{label}</title></circle>')
    markers = [(0.0, "injection")]
    if diagnosed is not None:
        markers.append((diagnosed, "diagnosis"))
    if done is not None:
        markers.append((done, "done"))
    for n, (t, name) in enumerate(markers):
        parts.append(f'<line class="marker {name}" x1="{x(t)}" y1="{TOP - 8}" x2="{x(t)}" y2="{AXIS_Y}"/>')
        parts.append(f'<text class="marker-label" x="{x(t) + 3}" y="{TOP - 20 + (n % 2) * 10}">{name}</text>')
    parts.append(f'<line class="axis" x1="{LEFT}" y1="{AXIS_Y}" x2="{WIDTH - RIGHT}" y2="{AXIS_Y}"/>')
    step_s = tick_step(end)
    tick = 0.0
    while tick <= end + 1e-9:
        parts.append(f'<line class="tick" x1="{x(tick)}" y1="{AXIS_Y}" x2="{x(tick)}" y2="{AXIS_Y + 4}"/>')
        parts.append(f'<text class="tick-label" x="{x(tick)}" y="{AXIS_Y + 16}" text-anchor="middle">{format_seconds(tick)}</text>')
        tick += step_s
    parts.append(f'<text class="axis-label" x="{LEFT}" y="{HEIGHT - 4}">simulated time since the injection</text>')
    parts.append("</svg>")
    return "".join(parts)


__all__ = ["as_number", "format_seconds", "tick_step", "timeline_svg"]
