"""`sregym mcp`: serve one attempt's tool catalogue over MCP (stdio or streamable HTTP).

The conductor sets the problem up (fresh twin, baseline, injection), then the MCP server exposes
the agent's tools with the incident brief as the server's instructions. The agent's submit calls
drive the phases; when the attempt is scored its result line goes to stderr (stdout belongs to
the stdio transport) and, with `--result FILE`, to a file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer


def mcp_command(
    problem: str = typer.Option(..., "--problem", "-p", help="Problem id."),
    seed: int = typer.Option(0, "--seed", help="Run seed."),
    transport: str = typer.Option("stdio", "--transport", help="stdio or http (streamable HTTP)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (http)."),
    port: int = typer.Option(8000, "--port", help="Port to listen on (http); the endpoint is /mcp."),
    noise: str = typer.Option("none", "--noise", help="Noise profile: none, low or high."),
    clock: str = typer.Option("stepped", "--clock", help="stepped (per tool call) or realtime."),
    seconds_per_call: float = typer.Option(15.0, "--seconds-per-call", help="Simulated seconds per tool call."),
    phases: str = typer.Option("diagnosis,mitigation", "--phases", help="Phases to run, comma-separated."),
    max_steps: int = typer.Option(None, "--max-steps", help="Step limit per phase (default: the problem's)."),
    result: Path = typer.Option(None, "--result", help="Write the scored attempt (JSON) here."),
    problems_dir: list[Path] = typer.Option(None, "--problems-dir", help="Load extra problem files (*.py)."),
) -> None:
    """Serve the agent tools of one problem attempt over MCP."""
    from sregym.env import Conductor, EnvironmentFailure, Limits
    from sregym.runner.plan import load_problem_dirs
    from sregym.tools.mcp import build_server

    if transport not in ("stdio", "http"):
        raise typer.BadParameter("must be stdio or http", param_hint="--transport")
    load_problem_dirs(problems_dir or [])
    phase_list = tuple(p.strip() for p in phases.split(",") if p.strip())
    try:
        conductor = Conductor(problem, seed=seed, noise=noise, clock=clock,  # type: ignore[arg-type]
                              seconds_per_call=seconds_per_call, phases=phase_list,
                              limits=Limits(max_steps=max_steps), agent_name="mcp")
    except (KeyError, ValueError) as err:
        typer.echo(str(err).strip("'\""), err=True)
        raise typer.Exit(2) from None
    try:
        brief = conductor.start()
    except EnvironmentFailure as err:
        conductor.close()
        typer.echo(f"sregym mcp: the environment could not be prepared: {err}", err=True)
        raise typer.Exit(1) from None
    reported = False

    def after_call() -> None:
        nonlocal reported
        if conductor.finished and not reported:
            reported = True
            line = conductor.result().model_dump_json()
            print(line, file=sys.stderr, flush=True)
            if result is not None:
                result.parent.mkdir(parents=True, exist_ok=True)
                result.write_text(line + "\n")

    server = build_server(conductor.session, instructions=brief.text, on_call=after_call)
    try:
        if transport == "stdio":
            server.run("stdio")
        else:
            typer.echo(f"MCP endpoint: http://{host}:{port}/mcp", err=True)
            server.run("streamable-http", host=host, port=port)
    finally:
        conductor.close()


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp_command)
