"""The viewer's Starlette app: one HTML page, its static assets and four JSON endpoints (plain
functions, so Starlette runs the file reading in its thread pool). A scored snapshot run
(`score.json`) is listed and has a run page (`viewer.snapshot_views`); it has no attempt pages.

The run directories are found again on every request (`find_runs`), and each is read afresh
(`load_run`), so a run that is still going, or a new run that appears under `runs/`, shows up on
the next poll without restarting the viewer. A run is addressed by a short key (its directory
name, made unique with a numeric suffix), never by a path taken from the request, so the server
only ever reads the directories it was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sregym.runner.rundir import NotARunDirectory, find_runs, load_run
from sregym.viewer.snapshot_views import is_snapshot_dir, snapshot_card, snapshot_view
from sregym.viewer.views import attempt_view, problem_view, run_card, run_view

STATIC = Path(str(files("sregym.viewer") / "static"))


def run_keys(paths: Sequence[str | Path]) -> dict[str, Path]:
    """Every run directory under `paths`, keyed by its name (a name seen twice gets `-2`, `-3` ...)."""
    keys: dict[str, Path] = {}
    for path in find_runs(list(paths)):
        key, n = path.name, 1
        while key in keys:
            n += 1
            key = f"{path.name}-{n}"
        keys[key] = path
    return keys


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(paths: Sequence[str | Path]) -> Starlette:
    """The viewer over the run directories in (or directly under) `paths`."""
    roots = [Path(p) for p in paths]

    def lookup(request: Request):  # -> (key, RunData) | JSONResponse
        key = request.path_params["run"]
        path = run_keys(roots).get(key)
        if path is None:
            return _error(404, f"no run {key!r}")
        if is_snapshot_dir(path):
            return _error(404, f"{key!r} is a snapshot run: it has tasks and repeats (on its run page), "
                               "not attempts with trajectories here")
        try:
            return key, load_run(path)
        except NotARunDirectory as err:
            return _error(404, str(err))

    async def index(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    def runs(request: Request) -> JSONResponse:
        cards = []
        for key, path in run_keys(roots).items():
            if is_snapshot_dir(path):
                cards.append(snapshot_card(path, key))
                continue
            try:
                cards.append(run_card(load_run(path), key))
            except NotARunDirectory:
                continue  # removed between the listing and the read
        return JSONResponse({"runs": cards})

    def run(request: Request) -> JSONResponse:
        from sregym.report.source import NotAReportSource

        path = run_keys(roots).get(request.path_params["run"])
        if path is not None and is_snapshot_dir(path):
            try:
                return JSONResponse(snapshot_view(path, request.path_params["run"]))
            except NotAReportSource as err:
                return _error(404, str(err))
        found = lookup(request)
        if isinstance(found, JSONResponse):
            return found
        return JSONResponse(run_view(found[1], found[0]))

    def problem(request: Request) -> JSONResponse:
        found = lookup(request)
        if isinstance(found, JSONResponse):
            return found
        problem_id = request.query_params.get("id", "")
        view = problem_view(found[1], found[0], problem_id)
        return _error(404, f"no problem {problem_id!r} in this run") if view is None else JSONResponse(view)

    def attempt(request: Request) -> JSONResponse:
        found = lookup(request)
        if isinstance(found, JSONResponse):
            return found
        problem_id = request.query_params.get("problem", "")
        try:
            seed = int(request.query_params.get("seed", ""))
        except ValueError:
            return _error(400, "seed must be an integer")
        view = attempt_view(found[1], found[0], problem_id, seed)
        if view is None:
            return _error(404, f"no attempt of {problem_id!r} with seed {seed} in this run")
        return JSONResponse(view)

    return Starlette(routes=[
        Route("/", index),
        Route("/api/runs", runs),
        Route("/api/runs/{run}", run),
        Route("/api/runs/{run}/problem", problem),
        Route("/api/runs/{run}/attempt", attempt),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ])


__all__ = ["create_app", "run_keys"]
