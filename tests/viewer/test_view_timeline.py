"""The attempt timeline SVG: one mark per step at its simulated time, the injection, diagnosis
and done markers, the verification window, and text from the run escaped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from sregym.viewer.timeline import LEFT, RIGHT, WIDTH, timeline_svg

SVG = "{http://www.w3.org/2000/svg}"


def _steps() -> list[dict]:
    return [
        {"index": 0, "kind": "tool", "tool": "kubectl", "phase": "diagnosis", "sim_time": 15.0, "is_error": False},
        {"index": 1, "kind": "message", "tool": "assistant", "phase": "diagnosis", "sim_time": 15.0, "is_error": False},
        {"index": 2, "kind": "tool", "tool": "<b>odd</b>", "phase": "mitigation", "sim_time": 60.0, "is_error": True},
    ]


def test_marks_markers_and_window() -> None:
    line = {"sim_seconds_to_diagnosis": 30.0, "sim_seconds_to_mitigation": 60.0, "mitigation": {"window_s": 40.0}}
    root = ET.fromstring(timeline_svg(line, _steps()))  # well-formed XML, so any injected tag would break it
    marks = [el for el in root.iter() if "mark " in (el.get("class") or "")]
    assert [m.get("class") for m in marks] == ["mark tool", "mark message", "mark error"]
    titles = [m.find(f"{SVG}title").text for m in marks]
    assert titles[2] == "#2 <b>odd</b> at 60s"  # shown as text, not markup
    markers = {el.get("class"): float(el.get("x1")) for el in root.iter(f"{SVG}line")
               if (el.get("class") or "").startswith("marker")}
    scale = (WIDTH - LEFT - RIGHT) / 100.0  # the axis ends at done + window = 100 s
    assert markers == {"marker injection": LEFT, "marker diagnosis": round(LEFT + 30 * scale, 1),
                       "marker done": round(LEFT + 60 * scale, 1)}
    window = next(el for el in root.iter(f"{SVG}rect") if el.get("class") == "window")
    assert float(window.get("x")) == markers["marker done"] and float(window.get("width")) == round(40 * scale, 1)
    assert float(marks[2].get("cx")) == markers["marker done"]


def test_without_diagnosis_or_done_only_the_injection_is_marked() -> None:
    svg = timeline_svg({"sim_seconds_to_diagnosis": None, "sim_seconds_to_mitigation": None, "mitigation": None}, [])
    assert re.findall(r'class="marker (\w+)"', svg) == ["injection"]
    assert 'class="window"' not in svg and "mark " not in svg
    ET.fromstring(svg)


def test_same_input_same_svg() -> None:
    line = {"sim_seconds_to_diagnosis": 30, "sim_seconds_to_mitigation": 60, "mitigation": {"window_s": 300}}
    assert timeline_svg(line, _steps()) == timeline_svg(dict(line), [dict(s) for s in _steps()])
