"""The viewer in a real browser: `sregym view` served by uvicorn on a free port, Debian's Chromium
driven headless through Selenium and chromedriver. It clicks from the runs list into a run, a
problem and an attempt, checks the trajectory, the checklist and the ground truth render, takes
screenshots, and watches a run in progress update without a reload.

Skips (saying why) only when Chromium or chromedriver is not installed."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
pytestmark = pytest.mark.skipif(not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
                                reason="needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)")

BAD_IMAGE = "demo-shop/bad-image-tag-v1"
README_SHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "viewer.png"
WAIT_S = 60  # an upper bound for a page to settle on a loaded machine, never a measured time


def _serve(*paths: Path) -> Iterator[str]:
    """`sregym view PATHS --port 0 --no-browser` in a child process; yields its URL."""
    code = "from sregym.cli.main import main; main()"
    proc = subprocess.Popen([sys.executable, "-c", code, "view", *map(str, paths), "--port", "0", "--no-browser"],
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        found = re.search(r"(http://\S+/)", first)
        assert found, f"sregym view printed {first!r}"
        yield found.group(1)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def viewer_url(runs_root: Path) -> Iterator[str]:
    yield from _serve(runs_root)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1400"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: object, css: str):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S).until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))


def test_click_from_runs_to_an_attempt(browser, viewer_url: str, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    browser.get(viewer_url)
    _wait(browser, '#runs tr[data-run="gold"] a').click()
    summary = _wait(browser, "#summary")
    assert "100%" in summary.text and "pass^k" in summary.text
    assert _wait(browser, "#by-layer").text.count("%") >= 6  # config and network rows
    browser.save_screenshot(str(tmp_path / "run.png"))

    _wait(browser, f'#problems tr[data-problem="{BAD_IMAGE}"] a.problem-link').click()
    attempts = _wait(browser, "#attempts")
    assert "seed 0" in attempts.text and "seed 1" in attempts.text
    assert "bad_image" in _wait(browser, "#ground-truth").text
    browser.find_element(By.CSS_SELECTOR, "#attempts a.attempt-link").click()

    steps = _wait(browser, "#trajectory").find_elements(By.CSS_SELECTOR, ".step")
    tools = [s.find_element(By.CSS_SELECTOR, ".tool").text for s in steps]
    assert tools[0] == "kubectl" and "submit_diagnosis" in tools and tools[-1] == "submit_mitigation_done"
    assert "ImagePullBackOff" in browser.find_element(By.ID, "trajectory").text  # an observation
    rows = browser.find_elements(By.CSS_SELECTOR, "#checklist tr[data-question]")
    assert len(rows) == 9 and all("pass" in r.text for r in rows)
    assert "root causes named" in browser.find_element(By.ID, "checklist").text  # evidence
    assert "demo-shop/Deployment/catalog" in browser.find_element(By.ID, "submitted").text
    assert "catalog" in browser.find_element(By.ID, "ground-truth").text
    assert "workload_ready" in browser.find_element(By.ID, "checks").text
    marks = browser.find_elements(By.CSS_SELECTOR, "#timeline svg .mark")
    assert len(marks) == len(steps)
    browser.save_screenshot(str(tmp_path / "attempt.png"))
    assert (tmp_path / "attempt.png").stat().st_size > 10_000
    if os.environ.get("SREGYM_UPDATE_README_SHOT"):  # refresh the README's picture on purpose only
        README_SHOT.parent.mkdir(parents=True, exist_ok=True)
        browser.execute_script("window.scrollTo(0, 0)")
        browser.save_screenshot(str(README_SHOT))


def test_a_run_in_progress_updates_without_reload(browser, in_progress: tuple[Path, list[str]]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    path, remaining = in_progress
    for url in _serve(path.parent):
        browser.get(f"{url}#/run/{path.name}")
        _wait(browser, "#problems")
        assert browser.find_element(By.ID, "live").is_displayed()
        assert len(browser.find_elements(By.CSS_SELECTOR, "#problems a.seed-link")) == 1
        with (path / "results.jsonl").open("a") as out:
            out.write("".join(line + "\n" for line in remaining))
        WebDriverWait(browser, WAIT_S).until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, "#problems a.seed-link")) == 4)


def test_the_attempt_shows_the_entry_slo_plot(browser, slo_run: Path, tmp_path: Path) -> None:
    import json
    from urllib.parse import quote

    from selenium.webdriver.common.by import By

    line = json.loads((slo_run / "results.jsonl").read_text().splitlines()[-1])
    series = line["entry_slo"]
    for url in _serve(slo_run):
        browser.get(f"{url}#/run/{slo_run.name}/attempt/{quote(line['problem_id'], safe='')}/{line['seed']}")
        plot = _wait(browser, "#entry-slo svg.slo-plot")
        _wait(browser, "#trajectory")
        markers = {el.get_attribute("class") for el in plot.find_elements(By.CSS_SELECTOR, "line.marker")}
        assert markers == {"marker baseline", "marker injection", "marker diagnosis", "marker done"}
        assert len(plot.find_elements(By.CSS_SELECTOR, "line.action")) == len(series["actions"]) == line["tool_calls"]
        assert plot.find_elements(By.CSS_SELECTOR, "rect.window")
        curves = plot.find_elements(By.CSS_SELECTOR, "polyline.success") + plot.find_elements(By.CSS_SELECTOR, "circle.success")
        drawn = sum(len((c.get_attribute("points") or "x").split()) for c in curves)
        assert drawn == sum(1 for p in series["points"] if p[1] is not None)
        assert plot.size["width"] > 300 and plot.size["height"] > 80  # laid out, not collapsed
        browser.save_screenshot(str(tmp_path / "slo.png"))
        assert (tmp_path / "slo.png").stat().st_size > 10_000


def test_a_snapshot_run_page_shows_its_task_scores(browser, snapshot_runs: Path, tmp_path: Path) -> None:
    import json

    from selenium.webdriver.common.by import By

    score = json.loads((snapshot_runs / "baseline-snap" / "score.json").read_text())
    for url in _serve(snapshot_runs):
        browser.get(url)
        assert "not scored" in _wait(browser, '#runs tr[data-run="noop-snap"]').text
        _wait(browser, '#runs tr[data-run="baseline-snap"] a').click()
        tasks = _wait(browser, "#tasks")
        assert float(browser.find_element(By.ID, "snapshot-score").text) == pytest.approx(score["score"], abs=5e-4)
        rows = tasks.find_elements(By.CSS_SELECTOR, "tr[data-task]")
        assert [r.get_attribute("data-task") for r in rows] == [t["task"] for t in score["tasks"]]
        for row, task in zip(rows, score["tasks"], strict=True):
            assert len(row.find_elements(By.CSS_SELECTOR, ".repeat")) == len(task["repeats"])
        assert browser.find_element(By.ID, "pass-k").text.count("%") == 2
        browser.save_screenshot(str(tmp_path / "snapshot.png"))
