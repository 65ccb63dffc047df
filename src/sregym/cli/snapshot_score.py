"""`sregym snapshot score`: score an offline run against its dataset's ground truth.

A thin shell over `sregym.snapshot.score.score_outputs`: prints the table and writes the full
report as JSON (default `OUTPUTS/score.json`, next to the run it scores). The `snapshot` group
(`cli/snapshot.py`) registers `score` as a command.
"""

from __future__ import annotations

from pathlib import Path

import typer


def score(
    dataset: Path = typer.Option(..., "--dataset", help="Dataset directory (with index.json)."),
    outputs: Path = typer.Option(..., "--outputs", help="Run directory written by `sregym snapshot run`."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the report as JSON here "
                                                       "(default OUTPUTS/score.json)."),
) -> None:
    """Score agent outputs: precision at full recall per repeat, mean per task and over tasks.

    A missing or invalid output.json scores 0 (the reason is listed); the 3×3 checklist is scored only
    for answers with an explanation.
    """
    from sregym.snapshot.jsonfile import write_json
    from sregym.snapshot.layout import SCORE_JSON
    from sregym.snapshot.score import ScoreError, score_outputs

    try:
        report = score_outputs(dataset, outputs)
    except ScoreError as err:
        typer.echo(f"sregym snapshot score: {err}", err=True)
        raise typer.Exit(2) from None
    typer.echo(report.table(), nl=False)
    target = json_out if json_out is not None else outputs / SCORE_JSON
    try:
        write_json(target, report.to_json())
    except OSError as err:
        typer.echo(f"sregym snapshot score: cannot write {target}: {err.strerror or err}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"report: {target}")
