"""The entry-SLO plot: both curves against their targets, broken where a bucket had no traffic,
the baseline / injection / diagnosis / done markers, a tick per agent action and the window."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from sregym.viewer.slo_plot import LEFT, RIGHT, WIDTH, slo_svg

SVG = "{http://www.w3.org/2000/svg}"


def _series(**changes) -> dict:
    series = {"bucket_s": 10.0, "baseline_start": -20.0, "agent_start": 20.0, "actions": [20.0, 35.0, 50.0],
              "diagnosis": 35.0, "done": 50.0, "window": [50.0, 80.0], "slo_success_ratio": 0.99, "slo_p95_ms": 500.0,
              "points": [[-20.0, 1.0, 9.0, 100.0], [-10.0, 1.0, 9.0, 100.0], [0.0, 0.4, 6.0, 100.0],
                         [10.0, None, None, 0.0], [20.0, 0.4, 6.0, 100.0], [30.0, 0.5, 700.0, 100.0],
                         [40.0, 0.9, 9.0, 100.0], [50.0, 1.0, 9.0, 100.0], [60.0, 1.0, 9.0, 100.0],
                         [70.0, 1.0, 9.0, 100.0]]}
    series.update(changes)
    return series


def test_curves_targets_markers_actions_and_window() -> None:
    root = ET.fromstring(slo_svg(_series()))
    lines = [el for el in root.iter(f"{SVG}polyline")]
    # The empty bucket at 10 s splits each curve in two.
    assert [el.get("class") for el in lines] == ["slo-line success"] * 2 + ["slo-line p95"] * 2
    first = lines[0].get("points").split()
    assert len(first) == 3 and len(lines[1].get("points").split()) == 6
    scale = (WIDTH - LEFT - RIGHT) / 100.0  # -20 s .. 80 s
    assert first[0] == f"{round(LEFT + 5 * scale, 1)},34.0"  # the first bucket's centre at 100 %
    markers = {el.get("class"): float(el.get("x1")) for el in root.iter(f"{SVG}line")
               if (el.get("class") or "").startswith("marker")}
    assert markers == {"marker baseline": LEFT, "marker injection": round(LEFT + 20 * scale, 1),
                       "marker diagnosis": round(LEFT + 55 * scale, 1), "marker done": round(LEFT + 70 * scale, 1)}
    actions = [float(el.get("x1")) for el in root.iter(f"{SVG}line") if el.get("class") == "action"]
    assert actions == [round(LEFT + (t + 20) * scale, 1) for t in (20.0, 35.0, 50.0)]
    window = next(el for el in root.iter(f"{SVG}rect") if el.get("class") == "window")
    assert float(window.get("x")) == markers["marker done"] and float(window.get("width")) == round(30 * scale, 1)
    targets = [el for el in root.iter(f"{SVG}line") if el.get("class") == "slo-target"]
    assert len(targets) == 2 and "0.99" in targets[0].find(f"{SVG}title").text
    assert "700 ms" in ET.tostring(root, encoding="unicode")  # the p95 scale grows to the worst bucket


def test_no_series_no_plot_and_same_input_same_svg() -> None:
    assert slo_svg(None) is None and slo_svg({"points": []}) is None
    assert slo_svg(_series()) == slo_svg(_series())
    without = ET.fromstring(slo_svg(_series(done=None, window=None, diagnosis=None, actions=[])))
    classes = [el.get("class") for el in without.iter()]
    assert "marker done" not in classes and "window" not in classes and "action" not in classes
    assert "marker injection" in classes and "marker baseline" in classes
