"""`sregym snapshot score`: score an offline run against its dataset's ground truth.

A thin shell over `sregym.snapshot.score.score_outputs`: prints the table (fitted to the terminal,
80 columns in a log) and writes the full report as JSON (default `OUTPUTS/score.json`, next to the
run it scores). The `snapshot` group (`cli/snapshot.py`) registers `score` as a command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    from sregym.cli.validate import Args
    from sregym.snapshot.jsonfile import write_json
    from sregym.snapshot.layout import SCORE_JSON
    from sregym.snapshot.score import ScoreError, score_outputs

    Args("snapshot score").out_file(json_out, "--json")
    try:
        report = score_outputs(dataset, outputs)
    except ScoreError as err:
        typer.echo(f"sregym snapshot score: {err}", err=True)
        raise typer.Exit(2) from None
    print_report(report)
    target = json_out if json_out is not None else outputs / SCORE_JSON
    try:
        write_json(target, report.to_json())
    except OSError as err:
        typer.echo(f"sregym snapshot score: cannot write {target}: {err.strerror or err}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"report: {target}")


def print_report(report: Any) -> None:
    """The report's table fitted to the terminal (80 columns without one): the repeats of a task
    share one column, so a run with many repeats folds that cell instead of wrapping the line;
    the totals and reasons below it are the report's own lines, wrapped at the same width."""
    from sregym.cli.progress import print_fitted, results_table

    rows = [(t.task, t.problem, "-" if t.seed is None else str(t.seed),
             " ".join(f"{r.score:.3f}" + ("" if r.valid else "*") for r in t.repeats), f"{t.score:.3f}",
             "-" if t.checklist is None else f"{t.checklist:.3f}") for t in report.tasks]
    results_table("snapshot score", ("task", "problem", "seed", "repeats", "score", "checklist"), rows,
                  numeric=(2, 4, 5))
    _, _, rest = report.table().partition("\n\n")  # the lines after the table: totals, layers, reasons
    print_fitted(*rest.splitlines())
