"""Entry point of the `sregym` console script."""

from __future__ import annotations

import typer

from sregym import __version__
from sregym.cli import mcp as mcp_cli
from sregym.cli import problems as problems_cli
from sregym.cli import run as run_cli
from sregym.cli import snapshot as snapshot_cli
from sregym.cli import twin as twin_cli

app = typer.Typer(
    name="sregym",
    help="sregym: a live benchmark and training gym for AI SRE agents, on an emulated Kubernetes twin.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(twin_cli.app, name="twin")
problems_cli.register(app)
run_cli.register(app)
mcp_cli.register(app)
app.add_typer(snapshot_cli.app, name="snapshot")


@app.command()
def version() -> None:
    """Print the sregym version."""
    typer.echo(f"sregym {__version__}")


def main() -> None:
    """Run the CLI. A machine that is not set up for what was asked (a missing extra, kubectl,
    an agent's program) is one line on stderr and exit code 3 from any command — never a
    traceback."""
    from sregym.cli import exitcodes
    from sregym.errors import SetupError

    try:
        app()
    except SetupError as err:
        typer.echo(f"sregym: {err}", err=True)
        raise SystemExit(exitcodes.ENVIRONMENT) from None


if __name__ == "__main__":
    main()
