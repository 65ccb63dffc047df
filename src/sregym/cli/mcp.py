"""`sregym mcp`: serve one attempt's tool catalogue over MCP (stdio or streamable HTTP).

The conductor sets the problem up (fresh twin, baseline, injection), then the MCP server exposes
the agent's tools with the incident brief as the server's instructions. The agent's submit calls
drive the phases; when the attempt is scored its result line goes to stderr (stdout belongs to
the stdio transport) and, with `--result FILE`, to a file.

Over HTTP the default port is 0: a free port picked when the server starts, printed as the
endpoint. A fixed default would clash with whatever else a machine serves (8000 is vLLM's, the
very server an LLM agent under test is likely to use); the socket is bound before the problem is
set up, so a busy `--port` fails at once.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from sregym.cli import backend as backend_flags
from sregym.cli import exitcodes
from sregym.cli.validate import Args
from sregym.env.config import AttemptConfig

if TYPE_CHECKING:
    from sregym.env import Conductor

TRANSPORTS = ("stdio", "http")
NOISE_LEVELS = ("none", "low", "high")
CLOCKS = ("stepped", "realtime")


def mcp_command(
    problem: str = typer.Option(..., "--problem", "-p", help="Problem id."),
    seed: int = typer.Option(0, "--seed", help="Run seed (0 or more)."),
    transport: str = typer.Option("stdio", "--transport", help="stdio or http (streamable HTTP)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (http)."),
    port: int = typer.Option(0, "--port", help="Port to listen on (http; 0, the default: a free port, printed). "
                                               "The endpoint is /mcp."),
    noise: str = typer.Option(AttemptConfig.default("noise"), "--noise", help="Noise profile: none, low or high."),
    clock: str = typer.Option(AttemptConfig.default("clock"), "--clock", help="stepped (per tool call) or realtime."),
    seconds_per_call: float = typer.Option(AttemptConfig.default("seconds_per_call"), "--seconds-per-call",
                                           help="Simulated seconds per tool call."),
    phases: str = typer.Option(",".join(AttemptConfig.default("phases")), "--phases",
                               help="Phases to run, comma-separated."),
    max_steps: int = typer.Option(None, "--max-steps", help="Step limit per phase (default: the problem's)."),
    result: Path = typer.Option(None, "--result", help="Write the scored attempt (JSON) here."),
    problems_dir: list[Path] = typer.Option(None, "--problems-dir", help="Load extra problem files (*.py)."),
    backend_name: str = backend_flags.backend_option(),
    kubeconfig: str = backend_flags.kubeconfig_option(),
    context: str = backend_flags.context_option(),
    prometheus_url: str = backend_flags.url_option("prometheus"),
    loki_url: str = backend_flags.url_option("loki"),
    jaeger_url: str = backend_flags.url_option("jaeger"),
    cluster_speed: float = backend_flags.speed_option(),
) -> None:
    """Serve the agent tools of one problem attempt over MCP (on the twin, or with --backend kube
    on a cluster reached by kubeconfig: docs/real-cluster.md)."""
    from sregym.env import Conductor, EnvironmentFailure, Limits
    from sregym.extras import MissingExtra, require

    args = Args("mcp")
    args.non_negative(seed, "--seed")
    args.choice(transport, "--transport", TRANSPORTS)
    args.port(port, "--port", ephemeral=True)
    args.choice(noise, "--noise", NOISE_LEVELS)
    args.choice(clock, "--clock", CLOCKS)
    args.positive(seconds_per_call, "--seconds-per-call")
    phase_list = args.phases(phases)
    args.count(max_steps, "--max-steps")
    args.out_file(result, "--result")
    args.problems_dirs(problems_dir)
    args.problem(problem)
    target = backend_flags.kube_target("mcp", backend_name, kubeconfig, context, prometheus_url, loki_url,
                                       jaeger_url, cluster_speed)
    if target is not None:
        backend_flags.stop_on_sigterm()  # SIGTERM cleans the cluster up like Ctrl-C
        backend_flags.cleanup_leftovers(target)  # what an earlier, killed run left
    try:
        require("mcp", "sregym mcp")
    except MissingExtra as err:
        args.fail(str(err), exitcodes.ENVIRONMENT)
    sock = _listen(args, host, port) if transport == "http" else None
    try:
        attempt = AttemptConfig(noise=noise, clock=clock, seconds_per_call=seconds_per_call,  # type: ignore[arg-type]
                                phases=phase_list, limits=Limits(max_steps=max_steps),
                                kube=target.to_json() if target is not None else None)
        conductor = Conductor(problem, attempt, seed=seed, agent_name="mcp")
    except (KeyError, ValueError) as err:
        args.fail(err.args[0] if isinstance(err, KeyError) and err.args else str(err))
    try:
        brief = conductor.start()
    except EnvironmentFailure as err:
        conductor.close()
        if target is not None:
            backend_flags.cleanup_leftovers(target)
        args.fail(f"the environment could not be prepared: {err}", exitcodes.ENVIRONMENT)
    try:
        _serve(conductor, brief.text, result, sock)
    finally:
        conductor.close()
        if target is not None:
            backend_flags.cleanup_leftovers(target)


def _listen(args: Args, host: str, port: int) -> socket.socket:
    """The listening socket, bound now: the endpoint is known (and printed) before the problem is
    set up, and a busy port is an error before any work."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as err:
        args.fail(f"cannot listen on {host}:{port}: {err.strerror or err}", exitcodes.ENVIRONMENT)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"MCP endpoint: http://{shown}:{bound}/mcp", err=True)
    return sock


def _serve(conductor: Conductor, instructions: str, result: Path | None, sock: socket.socket | None) -> None:
    from sregym.tools.mcp import build_server

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

    server = build_server(conductor.session, instructions=instructions, on_call=after_call)
    if sock is None:
        server.run("stdio")
        return
    import uvicorn

    host = sock.getsockname()[0]
    config = uvicorn.Config(server.streamable_http_app(host=host), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp_command)
