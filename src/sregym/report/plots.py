"""The report's figures, drawn with matplotlib.

Why matplotlib: it is the plotting library papers are made with (the PNGs of `--plots` drop into
LaTeX as they are), it renders offline to SVG and PNG with no browser or JavaScript runtime, and
with a fixed hash salt and no date in the metadata the same numbers give byte-identical SVG. It is
used through `matplotlib.figure.Figure` only (no `pyplot`: no global state, no display; Agg draws
the PNGs). It is an extra (`sregym[report]`), not a core dependency: with NumPy, Pillow and
fonttools it installs some 120 MB, more than the rest of the base install, for a feature a
benchmark run does not need; Markdown and JSON reports work without it.

Readable in print and in dark mode: every figure is drawn twice. The SVG inlined in the HTML report
has a transparent background and draws its text, axes and grid in `currentColor`, so it takes the
page's text colour (dark on light, light on dark, black when printed); the PNGs are drawn dark on
white for papers. Bars use the Okabe-Ito palette, which stays distinct for the common kinds of
colour blindness, and each series also differs by hatching, so the charts survive greyscale print.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sregym.extras import require

# Okabe & Ito (2008), without black (it would vanish on a dark page).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")
HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo")
_SENTINEL = "#123456"  # the SVG's ink, swapped for currentColor after rendering
PRINT_INK = "#222222"
RC = {"svg.fonttype": "none", "svg.hashsalt": "sregym-report", "font.size": 9, "axes.titlesize": 10,
      "hatch.linewidth": 0.6}


@dataclass(frozen=True)
class Chart:
    """One figure of the report: a file stem, a caption, and how to draw it in a given ink."""

    name: str
    title: str
    draw: Callable[[str], Any]  # ink colour -> matplotlib Figure


def _figure(height: float = 3.0) -> Any:
    require("matplotlib", "sregym report (plots)")
    from matplotlib.figure import Figure

    return Figure(figsize=(6.4, height), layout="constrained")


def _style(ax: Any, ink: str) -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color(ink)
    ax.tick_params(colors=ink, labelcolor=ink)
    ax.xaxis.label.set_color(ink)
    ax.yaxis.label.set_color(ink)
    ax.title.set_color(ink)
    ax.grid(axis="y", color=ink, alpha=0.2, linewidth=0.5)
    ax.set_axisbelow(True)


def _legend(ax: Any, ink: str, count: int) -> None:
    if count > 1:
        legend = ax.legend(frameon=False, fontsize=8, labelcolor=ink, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        legend.get_frame().set_alpha(0)


def _value(block: dict[str, Any] | None) -> tuple[float, float, float]:
    """(estimate, below, above) for an error bar; zeros when the block is missing."""
    if not block:
        return 0.0, 0.0, 0.0
    return block["estimate"], block["estimate"] - block["low"], block["high"] - block["estimate"]


def _label(n: dict[str, Any]) -> str:
    return f"{n['agent']} · {n['name']}"


def headline_metric(n: dict[str, Any]) -> str:
    """End-to-end for runs; the root-cause score for snapshot scores (they have no end to end)."""
    return "end_to_end" if n["kind"] == "run" else "score"


def _grouped_bars(ax: Any, ink: str, categories: Sequence[str], series: Sequence[tuple[str, Sequence[Any]]]) -> None:
    width = 0.8 / max(1, len(series))
    for i, (label, blocks) in enumerate(series):
        values = [_value(b) for b in blocks]
        xs = [c + (i - (len(series) - 1) / 2) * width for c in range(len(categories))]
        ax.bar(xs, [v[0] for v in values], width, label=label, color=PALETTE[i % len(PALETTE)],
               hatch=HATCHES[i % len(HATCHES)], edgecolor=ink, linewidth=0.4,
               yerr=[[v[1] for v in values], [v[2] for v in values]], ecolor=ink, capsize=2,
               error_kw={"elinewidth": 0.7})
    ax.set_xticks(range(len(categories)), list(categories), rotation=30 if len(categories) > 4 else 0,
                  ha="right" if len(categories) > 4 else "center")
    ax.set_ylim(0, 1.05)


def _by_layer(numbers: Sequence[dict[str, Any]]) -> Callable[[str], Any]:
    def draw(ink: str) -> Any:
        fig = _figure()
        ax = fig.add_subplot()
        layers = sorted({k for n in numbers for k in n["by_layer"]})
        series = [(_label(n), [n["by_layer"].get(k, {}).get(headline_metric(n)) for k in layers]) for n in numbers]
        _grouped_bars(ax, ink, layers, series)
        ax.set_ylabel("end-to-end rate" if numbers[0]["kind"] == "run" else "root-cause score")
        ax.set_title("By layer (95 % interval)")
        _style(ax, ink)
        _legend(ax, ink, len(numbers))
        return fig
    return draw


def _overall(numbers: Sequence[dict[str, Any]]) -> Callable[[str], Any]:
    def draw(ink: str) -> Any:
        fig = _figure()
        ax = fig.add_subplot()
        metrics = ["diagnosis", "mitigation", "end_to_end"] if numbers[0]["kind"] == "run" else ["diagnosis", "score"]
        names = {"diagnosis": "diagnosis", "mitigation": "mitigation", "end_to_end": "end to end",
                 "score": "root-cause score"}
        if numbers[0]["kind"] == "snapshot":
            names["diagnosis"] = "exact root cause"
        series = [(_label(n), [n["overall"].get(m) for m in metrics]) for n in numbers]
        _grouped_bars(ax, ink, [names[m] for m in metrics], series)
        ax.set_ylabel("rate")
        ax.set_title("Overall (95 % interval)")
        _style(ax, ink)
        _legend(ax, ink, len(numbers))
        return fig
    return draw


def _scores(numbers: Sequence[dict[str, Any]]) -> Callable[[str], Any]:
    def draw(ink: str) -> Any:
        fig = _figure()
        ax = fig.add_subplot()
        edges = [i / 10 for i in range(11)]
        width = 0.08 / max(1, len(numbers))
        for i, n in enumerate(numbers):
            values = n["score_distribution"]
            counts = [sum(1 for v in values if edges[b] <= v < edges[b + 1] or (b == 9 and v == 1.0))
                      for b in range(10)]
            shares = [c / len(values) if values else 0.0 for c in counts]
            xs = [edges[b] + 0.01 + (i + 0.5) * width for b in range(10)]
            ax.bar(xs, shares, width, label=_label(n), color=PALETTE[i % len(PALETTE)],
                   hatch=HATCHES[i % len(HATCHES)], edgecolor=ink, linewidth=0.4)
        ax.set_xlim(0, 1)
        ax.set_xlabel("root-cause score of the diagnosis (precision at full recall)")
        ax.set_ylabel("share of attempts")
        ax.set_title("Score distribution")
        _style(ax, ink)
        _legend(ax, ink, len(numbers))
        return fig
    return draw


def _pass_k(numbers: Sequence[dict[str, Any]]) -> Callable[[str], Any]:
    def draw(ink: str) -> Any:
        fig = _figure(2.6)
        ax = fig.add_subplot()
        markers = "osD^v<>"
        for i, n in enumerate(numbers):
            ks = sorted(int(k) for k in n["pass_hat_k"])
            ax.plot(ks, [n["pass_hat_k"][str(k)] for k in ks], marker=markers[i % len(markers)],
                    color=PALETTE[i % len(PALETTE)], label=_label(n), linewidth=1.2)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("k")
        ax.set_ylabel("pass^k")
        ax.set_title("pass^k: all of k attempts pass")
        ks_all = sorted({int(k) for n in numbers for k in n["pass_hat_k"]})
        if ks_all:
            ax.set_xticks(ks_all)
        _style(ax, ink)
        _legend(ax, ink, len(numbers))
        return fig
    return draw


def charts(numbers: dict[str, Any]) -> list[Chart]:
    """The report's figures for its sources (one series per source)."""
    sources = numbers["sources"]
    return [Chart("overall", "Overall rates", _overall(sources)),
            Chart("by-layer", "By layer", _by_layer(sources)),
            Chart("score-distribution", "Score distribution", _scores(sources)),
            Chart("pass-k", "pass^k", _pass_k(sources))]


def svg(chart: Chart) -> str:
    """The chart as an inline `<svg>` element: transparent, inked in `currentColor`, no XML
    prologue, DOCTYPE or metadata (nothing that points outside the page)."""
    from matplotlib import rc_context

    with rc_context(RC):
        fig = chart.draw(_SENTINEL)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", transparent=True, metadata={"Date": None, "Creator": None, "Format": None,
                                                                   "Type": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r"\s*xmlns:xlink=\"[^\"]*\"", "", text, count=1)
    text = text.replace("xlink:href", "href")
    return re.sub(re.escape(_SENTINEL), "currentColor", text, flags=re.I)


def png(chart: Chart, path: Path) -> Path:
    """The chart as a PNG for print: dark ink on white, 200 dpi."""
    from matplotlib import rc_context

    with rc_context(RC):
        fig = chart.draw(PRINT_INK)
        fig.savefig(path, format="png", dpi=200, facecolor="white", metadata={"Software": None})
    return path


def write_pngs(numbers: dict[str, Any], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    return [png(c, directory / f"{c.name}.png") for c in charts(numbers)]


__all__ = ["PALETTE", "Chart", "charts", "headline_metric", "png", "svg", "write_pngs"]
