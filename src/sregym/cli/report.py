"""`sregym report`: a results page from run directories or snapshot scores.

A thin shell over `sregym.report`: HTML (the default, one self-contained file with figures),
Markdown tables for a README, or the numbers as JSON; `--plots DIR` also writes the figures as
PNG. Figures need the `report` extra (matplotlib): without it HTML and `--plots` stop with one line
naming the install, while Markdown and JSON still work.
"""

from __future__ import annotations

from pathlib import Path

import typer


def report_command(
    paths: list[Path] = typer.Argument(..., metavar="RUN_DIR",
                                       help="Run directories (sregym run) or scored snapshot runs (score.json); "
                                            "several give a comparison."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the report here (default: report.html for html, "
                                                       "standard output for md and json)."),
    fmt: str = typer.Option("html", "--format", help="html, md or json."),
    plots: Path = typer.Option(None, "--plots", help="Also write every figure as a PNG in this directory."),
) -> None:
    """Summarise runs: rates with 95 % intervals, pass^k, by layer, app, difficulty and noise, the
    per-problem matrix, figures, and for several runs a leaderboard and paired significance."""
    from sregym.cli.validate import Args
    from sregym.extras import require
    from sregym.report import FORMATS, NotAReportSource, numbers_of, render

    args = Args("report")
    args.choice(fmt, "--format", FORMATS)
    if out is None and fmt == "html":
        out = Path("report.html")
    args.out_file(out, "--out")
    args.out_dir(plots, "--plots")
    if fmt == "html" or plots is not None:
        require("matplotlib", "sregym report's figures (HTML and --plots)")
    try:
        numbers = numbers_of(paths)
    except NotAReportSource as err:
        args.fail(str(err))
    text = render(numbers, fmt)
    if plots is not None:
        from sregym.report.plots import write_pngs

        for written in write_pngs(numbers, plots):
            typer.echo(f"figure: {written}", err=True)
    if out is None:
        typer.echo(text, nl=False)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    typer.echo(f"report: {out}", err=True)


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
