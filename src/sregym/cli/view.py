"""`sregym view`: serve the local web viewer over run directories.

Each RUN_DIR is a run directory or a directory of them (the default, `runs/`, lists every run).
The socket is bound before anything else, so a busy port is one line at once; the viewer then
serves until Ctrl-C. It listens on loopback by default: it shows ground truths, which belong on
the researcher's machine only.
"""

from __future__ import annotations

import socket
from pathlib import Path

import typer

from sregym.cli import exitcodes
from sregym.cli.validate import Args

DEFAULT_DIR = Path("runs")


def check_run_dirs(args: Args, paths: list[Path]) -> None:
    """Every path exists and is a run directory or holds at least one."""
    from sregym.runner.rundir import find_runs

    for path in paths:
        if not path.exists():
            hint = " (run `sregym run` first, or name a run directory)" if path == DEFAULT_DIR else ""
            args.bad("RUN_DIR", f"{path} does not exist{hint}")
        if not path.is_dir():
            args.bad("RUN_DIR", f"{path} is not a directory; give a run directory (with run.json or results.jsonl)")
        if not find_runs([path]):
            args.bad("RUN_DIR", f"{path} is not a run directory (no run.json or results.jsonl) and holds none")


def _listen(args: Args, host: str, port: int) -> socket.socket:
    """Bound and listening before the URL is printed, so whoever reads it (a browser, a test)
    never meets a refused connection."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)  # connections wait in the backlog while uvicorn starts
    except OSError as err:
        args.fail(f"cannot listen on {host}:{port}: {err.strerror or err}", exitcodes.ENVIRONMENT)
    return sock


def view_command(
    run_dirs: list[Path] = typer.Argument(None, help="Run directories, or directories of runs (default: runs/)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8765, "--port", help="Port to listen on (0: a free port, printed)."),
    no_browser: bool = typer.Option(False, "--no-browser", help="Do not open a web browser."),
) -> None:
    """Browse run results in a local web viewer (updates while a run is in progress)."""
    args = Args("view")
    args.port(port, "--port", ephemeral=True)
    paths = list(run_dirs or [DEFAULT_DIR])
    check_run_dirs(args, paths)
    sock = _listen(args, host, port)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}/"
    typer.echo(f"sregym view: {url} (Ctrl-C to stop)", err=True)

    import uvicorn

    from sregym.viewer import create_app

    if not no_browser:
        import webbrowser

        webbrowser.open(url)
    config = uvicorn.Config(create_app(paths), log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


def register(app: typer.Typer) -> None:
    app.command("view")(view_command)


__all__ = ["check_run_dirs", "register", "view_command"]
