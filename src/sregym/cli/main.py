"""Entry point of the `sregym` console script."""

from __future__ import annotations

import typer

from sregym import __version__
from sregym.cli import judge_eval as judge_eval_cli
from sregym.cli import mcp as mcp_cli
from sregym.cli import problems as problems_cli
from sregym.cli import report as report_cli
from sregym.cli import run as run_cli
from sregym.cli import snapshot as snapshot_cli
from sregym.cli import twin as twin_cli
from sregym.cli import view as view_cli
from sregym.cli.validate import CliGroup
from sregym.gcpolicy import tune_for_simulation

app = typer.Typer(
    name="sregym",
    help="sregym: a live benchmark and training gym for AI SRE agents, on an emulated Kubernetes twin.",
    no_args_is_help=True,
    add_completion=False,
    cls=CliGroup,
)
app.add_typer(twin_cli.app, name="twin")
problems_cli.register(app)
run_cli.register(app)
mcp_cli.register(app)
report_cli.register(app)
app.add_typer(snapshot_cli.app, name="snapshot")
view_cli.register(app)
judge_eval_cli.register(app)


@app.command()
def version() -> None:
    """Print the sregym version."""
    typer.echo(f"sregym {__version__}")


def main() -> None:
    """Run the CLI (`CliGroup` turns every user-caused error into one line and its exit code)."""
    tune_for_simulation()  # this process and the workers it forks simulate (`gcpolicy.py`)
    app()


if __name__ == "__main__":
    main()
