"""`sregym list problems`, `sregym show ID`, `sregym check [ID ...|--all]`.

Every command that takes problems accepts `--problems-dir DIR` (repeatable): each `*.py` there
that registers problems with `@problem` is loaded first.
"""

from __future__ import annotations

from pathlib import Path

import typer

list_app = typer.Typer(help="List benchmark objects.", no_args_is_help=True)

ProblemsDir = typer.Option(None, "--problems-dir", help="Load extra problem files (*.py) from DIR.")


def _load_dirs(dirs: list[Path] | None) -> None:
    from sregym.problems import load_problems_dir

    for d in dirs or []:
        load_problems_dir(d)


@list_app.command("problems")
def list_problems(tag: str = typer.Option(None, "--tag", help="Layer or difficulty tag."),
                  suite: str = typer.Option(None, "--suite", help="Suite name, e.g. lite."),
                  problems_dir: list[Path] = ProblemsDir) -> None:
    """List problems (id, layers, difficulty, suites, title)."""
    from sregym.problems import select

    _load_dirs(problems_dir)
    for p in select(tag=tag, suite=suite):
        typer.echo(f"{p.id}\t{','.join(p.tags.layers)}\t{p.tags.difficulty}\t{','.join(p.tags.suites) or '-'}\t"
                   f"{p.title}")


def show(problem_id: str = typer.Argument(..., help="Problem id, e.g. demo-shop/bad-image-tag-v1."),
         reveal: bool = typer.Option(False, "--reveal", help="Also print faults, ground truth and gold."),
         problems_dir: list[Path] = ProblemsDir) -> None:
    """Print a problem's card (ground truth only with --reveal)."""
    from sregym.problems import get_problem

    _load_dirs(problems_dir)
    try:
        p = get_problem(problem_id)
    except KeyError as err:
        typer.echo(str(err).strip("'\""), err=True)
        raise typer.Exit(2) from None
    typer.echo(p.public_card())
    if p.card and reveal:
        typer.echo("")
        typer.echo(p.card)
    if reveal:
        typer.echo("")
        typer.echo(p.model_dump_json(indent=2, exclude={"card"}))


def check(problem_ids: list[str] = typer.Argument(None, help="Problem ids (default: none; use --all)."),
          all_: bool = typer.Option(False, "--all", help="Check every registered problem."),
          seed: int = typer.Option(0, "--seed", help="Run seed."),
          jobs: int = typer.Option(0, "-j", "--jobs", help="Worker processes (default: one per CPU)."),
          problems_dir: list[Path] = ProblemsDir) -> None:
    """Run the check protocol: must_fix fails after injection, gold passes, noop fails, recover
    restores the baseline, same seed gives identical telemetry and scores."""
    import os

    from sregym.problems import all_problem_ids, get_problem
    from sregym.problems.check import CheckReport, check_many

    _load_dirs(problems_dir)
    ids = all_problem_ids() if all_ else list(problem_ids or [])
    if not ids:
        typer.echo("no problems given: name ids or pass --all", err=True)
        raise typer.Exit(2)
    try:
        problems = [get_problem(pid) for pid in ids]
    except KeyError as err:
        typer.echo(str(err).strip("'\""), err=True)
        raise typer.Exit(2) from None

    def show_report(report: CheckReport) -> None:
        typer.echo(f"{'PASS' if report.passed else 'FAIL'} {report.problem_id}")
        for step in report.steps:
            if not step.passed:
                typer.echo(f"    x {step.name}: {step.detail}")

    reports = check_many(problems, seed, jobs=jobs or os.cpu_count() or 1, on_report=show_report)
    failed = sum(not r.passed for r in reports)
    typer.echo(f"{len(ids) - failed} passed, {failed} failed")
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Wire the commands into the top-level `sregym` app."""
    app.add_typer(list_app, name="list")
    app.command("show")(show)
    app.command("check")(check)
