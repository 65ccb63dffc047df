"""Adding an app is one folder: `third_app/` holds an app folder (`ticket_desk/`: its AppSpec,
manifests, program and image) and one problem on it, loaded like any `--problems-dir`. Also the
per-twin image registry and the closed-loop (Locust) load generator it uses."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.apps import OpenLoop, RequestClass, deploy_app, get_app, list_apps
from sregym.apps.catalog import register
from sregym.apps.loadgen import locust, wrk2
from sregym.cli.main import app as cli
from sregym.problems import get_problem, load_problems_dir
from sregym.problems.check import check_problem
from sregym.problems.registry import PROBLEMS
from sregym.twin.dataplane.loadgen import mix_from_script
from sregym.twin.dataplane.locust import ClosedLoopWorkload, parse_locustfile
from sregym.twin.node.images import lookup, resolve_pull
from sregym.twin.twin import Twin

DIR = Path(__file__).parent / "third_app"
APP = "ticket-desk"
PROBLEM = "ticket-desk/api-bad-image-tag-v1"
NS = "ticket-desk"
IMAGE = "ghcr.io/example/ticket-desk:1.0"


@pytest.fixture(scope="module", autouse=True)
def _loaded() -> Iterator[None]:
    """The app folder's problems, registered for this module only: the registry-wide tests that
    share the worker (catalogue counts, churn ranks) see the built-in catalogue."""
    before = set(PROBLEMS.names())
    load_problems_dir(DIR)
    yield
    for name in set(PROBLEMS.names()) - before:
        PROBLEMS._entries.pop(name)


def _deployed(name: str = APP, seed: int = 1) -> Twin:
    twin = Twin(seed=seed)
    deploy_app(twin, name)
    twin.advance(60)
    return twin


def test_the_app_folder_loads_with_its_problems_and_deploys_with_its_load() -> None:
    assert APP in list_apps()
    assert get_problem(PROBLEM).app == APP
    spec = get_app(APP)
    assert spec.entry == ("api", 80)
    assert spec.generators == ("Deployment/sregym-system/sregym-loadgen",)
    twin = _deployed()
    [api] = twin.list("pods", NS)
    assert api["status"]["phase"] == "Running"
    [gen] = twin.list("pods", "sregym-system")
    assert "Ramping to 40 users" in twin.logs("sregym-system", gen["metadata"]["name"])
    dp = twin.services.dataplane
    assert isinstance(dp.workloads[APP], ClosedLoopWorkload)
    stats = dp.entry_stats(30, app=APP)
    # 40 users, each a two-request flow per ~1 s of thinking: ~80 req/s, all answered.
    assert 60 < stats.rps < 81 and stats.success_ratio == 1.0


def test_cli_lists_the_problem_of_a_problems_dir_with_an_app_folder() -> None:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["list", "problems", "--problems-dir", str(DIR)])
    assert result.exit_code == 0, result.output
    assert PROBLEM in result.output


def test_its_problem_passes_the_check_protocol() -> None:
    report = check_problem(get_problem(PROBLEM), 0)
    assert report.passed, [s for s in report.steps if not s.passed]


def test_app_images_live_in_the_registry_of_the_twins_it_is_deployed_into() -> None:
    twin, other = _deployed(), Twin(seed=1)
    assert resolve_pull(IMAGE, twin).ok
    assert lookup(IMAGE)[0] is None  # never pushed to the shared base images
    assert not resolve_pull(IMAGE, other).ok
    missing = resolve_pull("ghcr.io/example/ticket-desk:1.1", twin)
    assert not missing.ok and missing.error.endswith("ghcr.io/example/ticket-desk:1.1: not found")
    # Base images stay visible everywhere; a fault's faulty build only where it was injected.
    assert resolve_pull("nginx:1.27", other).ok
    assert not resolve_pull("yinfangchen/geo:app3", twin).ok


def _throughput_before_and_after_slowdown(name: str) -> tuple[float, float]:
    twin = _deployed(name)
    dp = twin.services.dataplane
    before = dp.entry_stats(30, app=name).rps
    # A tenth of a core for ~4 ms of CPU per request: about 23 req/s of capacity left.
    twin.patch("Deployment", NS, "api", {"spec": {"template": {"spec": {"containers": [
        {"name": "api", "resources": {"requests": {"cpu": "50m"}, "limits": {"cpu": "100m"}}}]}}}})
    twin.advance(90)
    return before, dp.entry_stats(30, app=name).rps


def test_closed_loop_load_backs_off_when_the_app_slows_down_open_loop_does_not() -> None:
    closed = _throughput_before_and_after_slowdown(APP)
    spec = get_app(APP)
    register(dataclasses.replace(spec, name="ticket-desk-open", load=OpenLoop(
        target=spec.load.target, rate=80.0,
        mix=(RequestClass("list", 0.75, "GET", "/tickets"), RequestClass("file", 0.25, "POST", "/tickets")))))
    opened = _throughput_before_and_after_slowdown("ticket-desk-open")
    assert closed[0] > 60 and closed[1] < 0.4 * closed[0], closed
    assert opened[0] == pytest.approx(80.0) and opened[1] == pytest.approx(80.0), opened


def test_generated_scripts_round_trip_through_the_generators_parsers() -> None:
    load = get_app(APP).load
    plan = parse_locustfile(locust.locustfile(load))
    assert plan.think_s == 1.0
    assert [(t.name, t.weight, t.requests) for t in plan.tasks] == [
        ("browse", 3, (("GET", "/tickets"), ("GET", "/tickets?page=2"))),
        ("file_ticket", 1, (("POST", "/login"), ("POST", "/tickets")))]
    open_loop = OpenLoop(target="http://api:80", rate=10.0, mix=(
        RequestClass("a", 0.7, "GET", "/a?x=1"), RequestClass("b", 0.2, "POST", "/b"),
        RequestClass("c", 0.1, "GET", "/c")))
    mix = mix_from_script(wrk2.script(open_loop))
    assert [(m.method, m.operation, round(m.weight, 6)) for m in mix] == [
        ("GET", "/a", 0.7), ("POST", "/b", 0.2), ("GET", "/c", 0.1)]
