"""The entry SLO through an attempt as a small inline SVG: success ratio and p95 latency per
bucket against their targets, with the baseline, the injection, each agent action, "done" and
the verification window marked.

Drawn from the result line's `entry_slo` (`env.slo_series`) on the server, as text, like the
timeline (`viewer.timeline`): no plotting library in the page, the same figure for the same line,
and colours from the page's CSS variables so it reads in dark mode too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sregym.viewer.timeline import as_number, format_seconds, tick_step

WIDTH, HEIGHT = 760, 250
LEFT, RIGHT, TOP = 90, 20, 34
PANEL_HEIGHT = 70
GAP = 22
AXIS_Y = TOP + 2 * PANEL_HEIGHT + GAP + 6


def _polylines(points: Sequence[tuple[float, float | None]], css: str) -> list[str]:
    """One polyline per run of points with a value (a bucket without traffic breaks the line)."""
    runs: list[list[tuple[float, float]]] = [[]]
    for x, y in points:
        if y is None:
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append((x, y))
    out = []
    for run in runs:
        if len(run) == 1:
            out.append(f'<circle class="slo-line {css}" cx="{run[0][0]}" cy="{run[0][1]}" r="2"/>')
        elif run:
            coords = " ".join(f"{x},{y}" for x, y in run)
            out.append(f'<polyline class="slo-line {css}" fill="none" points="{coords}"/>')
    return out


def slo_svg(series: Mapping[str, Any] | None) -> str | None:
    """The SVG text, or None when the line has no series (older runs, real clusters, apps
    without entry traffic)."""
    if not isinstance(series, Mapping) or not series.get("points"):
        return None
    bucket = as_number(series.get("bucket_s")) or 1.0
    points = [p for p in series["points"] if isinstance(p, Sequence) and len(p) == 4]
    start = min(as_number(series.get("baseline_start")) or 0.0, as_number(points[0][0]) or 0.0)
    window = series.get("window") if isinstance(series.get("window"), Sequence) else None
    end = max([(as_number(points[-1][0]) or 0.0) + bucket, *([as_number(window[1]) or 0.0] if window else [])])
    span = max(end - start, 1.0)
    scale = (WIDTH - LEFT - RIGHT) / span

    def x(t: float) -> float:
        return round(LEFT + (t - start) * scale, 1)

    target_ok = as_number(series.get("slo_success_ratio")) or 0.0
    target_p95 = as_number(series.get("slo_p95_ms")) or 0.0
    p95s = [v for p in points if (v := as_number(p[2])) is not None]
    p95_top = max([target_p95 * 1.25, *p95s, 1.0])
    ok_top, p95_y0 = TOP, TOP + PANEL_HEIGHT + GAP

    def y_ok(v: float) -> float:
        return round(ok_top + (1.0 - v) * PANEL_HEIGHT, 1)

    def y_p95(v: float) -> float:
        return round(p95_y0 + (1.0 - v / p95_top) * PANEL_HEIGHT, 1)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="slo-plot" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="entry SLO through the attempt">']
    done = as_number(series.get("done"))
    if window:
        w0, w1 = as_number(window[0]) or 0.0, as_number(window[1]) or 0.0
        parts.append(f'<rect class="window" x="{x(w0)}" y="{TOP - 6}" width="{round((w1 - w0) * scale, 1)}" '
                     f'height="{AXIS_Y - TOP + 6}"><title>verification window {w1 - w0:g}s</title></rect>')
    for top, label in ((ok_top, "success"), (p95_y0, "p95 latency")):
        parts.append(f'<text class="lane" x="{LEFT - 8}" y="{top + PANEL_HEIGHT / 2 + 4}" text-anchor="end">{label}</text>')
        parts.append(f'<rect class="slo-frame" x="{LEFT}" y="{top}" width="{WIDTH - LEFT - RIGHT}" '
                     f'height="{PANEL_HEIGHT}" fill="none"/>')
    parts.append(f'<line class="slo-target" x1="{LEFT}" y1="{y_ok(target_ok)}" x2="{WIDTH - RIGHT}" y2="{y_ok(target_ok)}">'
                 f"<title>target success ratio {target_ok:g}</title></line>")
    parts.append(f'<line class="slo-target" x1="{LEFT}" y1="{y_p95(target_p95)}" x2="{WIDTH - RIGHT}" '
                 f'y2="{y_p95(target_p95)}"><title>target p95 {target_p95:g} ms</title></line>')
    parts.append(f'<text class="scale-label" x="{WIDTH - RIGHT - 2}" y="{ok_top + 10}" text-anchor="end">100%</text>')
    parts.append(f'<text class="scale-label" x="{WIDTH - RIGHT - 2}" y="{p95_y0 + 10}" text-anchor="end">'
                 f"{p95_top:.0f} ms</text>")
    centres = [(x((as_number(p[0]) or 0.0) + bucket / 2), p) for p in points]
    parts += _polylines([(cx, None if (v := as_number(p[1])) is None else y_ok(max(0.0, min(1.0, v))))
                         for cx, p in centres], "success")
    parts += _polylines([(cx, None if (v := as_number(p[2])) is None else y_p95(v)) for cx, p in centres], "p95")
    for t in series.get("actions") or ():
        if (at := as_number(t)) is not None:
            parts.append(f'<line class="action" x1="{x(at)}" y1="{AXIS_Y - 7}" x2="{x(at)}" y2="{AXIS_Y}">'
                         f"<title>agent action at {at:g}s</title></line>")
    markers = [(start, "baseline"), (0.0, "injection")]
    if (diagnosed := as_number(series.get("diagnosis"))) is not None:
        markers.append((diagnosed, "diagnosis"))
    if done is not None:
        markers.append((done, "done"))
    for n, (t, name) in enumerate(markers):
        parts.append(f'<line class="marker {name}" x1="{x(t)}" y1="{TOP - 8}" x2="{x(t)}" y2="{AXIS_Y}"/>')
        parts.append(f'<text class="marker-label" x="{x(t) + 3}" y="{TOP - 22 + (n % 2) * 10}">{name}</text>')
    parts.append(f'<line class="axis" x1="{LEFT}" y1="{AXIS_Y}" x2="{WIDTH - RIGHT}" y2="{AXIS_Y}"/>')
    step = tick_step(span)
    tick = (start // step) * step + (step if start % step else 0.0)
    while tick <= end + 1e-9:
        label = format_seconds(abs(tick)) if tick >= 0 else "-" + format_seconds(-tick)
        parts.append(f'<line class="tick" x1="{x(tick)}" y1="{AXIS_Y}" x2="{x(tick)}" y2="{AXIS_Y + 4}"/>')
        parts.append(f'<text class="tick-label" x="{x(tick)}" y="{AXIS_Y + 16}" text-anchor="middle">{label}</text>')
        tick += step
    parts.append(f'<text class="axis-label" x="{LEFT}" y="{HEIGHT - 4}">entry SLO per {bucket:g}s, simulated '
                 "seconds since the injection</text>")
    parts.append("</svg>")
    return "".join(parts)


__all__ = ["slo_svg"]
