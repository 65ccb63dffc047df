"""`sregym list agents|suites|problems`, `sregym show ID`, `sregym check [ID ...|--all]`.

Every command that takes problems accepts `--problems-dir DIR` (repeatable): each `*.py` there
that registers problems with `@problem` is loaded first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from sregym.cli import backend as backend_flags
from sregym.cli import exitcodes
from sregym.cli.progress import ItemProgress, results_table, seconds
from sregym.cli.validate import Args, one_line

if TYPE_CHECKING:
    from sregym.problems.check import CheckReport

list_app = typer.Typer(help="List benchmark objects: agents, suites, problems.", no_args_is_help=True)

ProblemsDir = typer.Option(None, "--problems-dir", help="Load extra problem files (*.py) from DIR.")
AgentsDir = typer.Option(None, "--agents-dir", help="Load extra agent files (*.py) from DIR.")


def print_rows(header: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    """Plain aligned columns under a header row (the last column is not padded): readable in a
    terminal, and still one record per line for `grep` and `awk`."""
    table = [list(header), *(list(r) for r in rows)]
    widths = [max(len(r[i]) for r in table) for i in range(len(header) - 1)]
    for row in table:
        cells = [c.ljust(w) for c, w in zip(row, widths, strict=False)] + row[len(widths):]
        typer.echo("  ".join(cells).rstrip())


def known_tags() -> list[str]:
    """Every layer and difficulty a problem can be tagged with (the model's own literals)."""
    from typing import get_args

    from sregym.problems.model import Difficulty, Layer

    return [*get_args(Layer), *get_args(Difficulty)]


def suite_counts() -> dict[str, int]:
    """Suite name → number of problems in it, over every registered problem."""
    from sregym.problems import select

    counts: dict[str, int] = {}
    for p in select():
        for suite in p.tags.suites:
            counts[suite] = counts.get(suite, 0) + 1
    return dict(sorted(counts.items()))


def check_selection(args: Args, suite: str | None, tag: str | None) -> None:
    """An unknown `--suite` or `--tag` is a typo, not an empty selection: say which ones exist."""
    if suite is not None and suite not in suite_counts():
        args.bad("--suite", f"unknown suite {suite!r}; known: {', '.join(suite_counts()) or 'none'}")
    if tag is not None and tag not in known_tags():
        args.bad("--tag", f"unknown tag {tag!r}; known: {', '.join(known_tags())}")


@list_app.command("problems")
def list_problems(tag: str = typer.Option(None, "--tag", help="Layer or difficulty tag."),
                  suite: str = typer.Option(None, "--suite", help="Suite name, e.g. lite."),
                  expand: bool = typer.Option(False, "--expand", help="Also list each family's variants "
                                                                      "(id@name=value,...) under it."),
                  problems_dir: list[Path] = ProblemsDir) -> None:
    """List problems (id, kind, layers, difficulty, suites, title); kind is `incident` or
    `control` (a no-incident control). A footer on stderr counts the scenarios and the ids their
    families' variants add."""
    from sregym.problems import select
    from sregym.problems.family import family_of

    args = Args("list problems")
    args.problems_dirs(problems_dir)
    check_selection(args, suite, tag)
    scenarios = select(tag=tag, suite=suite)
    variant_ids = {p.id: family.variant_ids() if (family := family_of(p.id)) else [] for p in scenarios}
    shown = [q for p in scenarios for q in (p, *(family_of(p.id).variants() if expand and variant_ids[p.id] else ()))]
    print_rows(("ID", "KIND", "LAYERS", "DIFFICULTY", "SUITES", "TITLE"),
               ((p.id, p.kind, ",".join(p.tags.layers), p.tags.difficulty, ",".join(p.tags.suites) or "-",
                 p.title)
                for p in shown))
    families = sum(bool(v) for v in variant_ids.values())
    ids = len(scenarios) + sum(len(v) for v in variant_ids.values())
    typer.echo(f"{len(scenarios)} scenarios ({families} of them families with variants), {ids} problem ids"
               + ("" if expand else "; --expand lists the variants"), err=True)


@list_app.command("suites")
def list_suites(problems_dir: list[Path] = ProblemsDir) -> None:
    """List suites and how many problems each holds (`sregym run --suite NAME` runs one)."""
    Args("list suites").problems_dirs(problems_dir)
    print_rows(("SUITE", "PROBLEMS"), ((name, str(n)) for name, n in suite_counts().items()))


@list_app.command("agents")
def list_agents(agents_dir: list[Path] = AgentsDir) -> None:
    """List agents: name, what they need beyond the base install, and what they do."""
    from sregym.agents import AGENTS

    Args("list agents").agents_dirs(agents_dir)
    print_rows(("NAME", "NEEDS", "DESCRIPTION"),
               ((e.name, agent_needs(e.value), summary_line(e.value.__doc__)) for e in AGENTS.entries()))


def agent_needs(cls: type) -> str:
    """The extras (`Agent.extras`) and the program (`binary`, for coding-CLI presets) an agent
    needs, each marked missing when it is not there: "-" when the base install is enough."""
    import shutil

    from sregym.extras import EXTRAS, available

    needs = []
    for extra in getattr(cls, "extras", ()):
        ok = all(available(m) for m in EXTRAS.get(extra, ()))
        needs.append(f"sregym[{extra}]" + ("" if ok else " (missing)"))
    binary = getattr(cls, "binary", "")
    if binary:
        needs.append(f"{binary} on PATH" + ("" if shutil.which(binary) else " (missing)"))
    return ", ".join(needs) or "-"


def summary_line(doc: str | None) -> str:
    """The first sentence of a docstring, on one line."""
    text = " ".join((doc or "").strip().split("\n\n")[0].split())
    head, dot, _ = text.partition(". ")
    return head + ("." if dot else "")


def show(problem_id: str = typer.Argument(..., help="Problem id, e.g. demo-shop/bad-image-tag-v1."),
         reveal: bool = typer.Option(False, "--reveal", help="Also print faults, ground truth and gold."),
         problems_dir: list[Path] = ProblemsDir) -> None:
    """Print a problem's card (ground truth only with --reveal)."""
    args = Args("show")
    args.problems_dirs(problems_dir)
    p = args.problem(problem_id, "PROBLEM_ID")
    typer.echo(p.public_card())
    if p.card and reveal:
        typer.echo("")
        typer.echo(p.card)
    if reveal:
        typer.echo("")
        typer.echo(p.model_dump_json(indent=2, exclude={"card"}))


def check(problem_ids: list[str] = typer.Argument(None, help="Problem ids (default: none; use --all)."),
          all_: bool = typer.Option(False, "--all", help="Check every registered problem."),
          seed: int = typer.Option(0, "--seed", help="Run seed (0 or more)."),
          jobs: int = typer.Option(None, "-j", "--jobs", help="Worker processes (default: one per CPU)."),
          problems_dir: list[Path] = ProblemsDir,
          backend_name: str = backend_flags.backend_option(),
          kubeconfig: str = backend_flags.kubeconfig_option(),
          context: str = backend_flags.context_option(),
          prometheus_url: str = backend_flags.url_option("prometheus"),
          loki_url: str = backend_flags.url_option("loki"),
          jaeger_url: str = backend_flags.url_option("jaeger"),
          cluster_speed: float = backend_flags.speed_option()) -> None:
    """Run the check protocol: must_fix fails after injection, gold passes, noop fails, recover
    restores the baseline, same seed gives identical telemetry and scores.

    With --backend kube the problems are checked one at a time on that cluster, without the
    "same seed" steps (docs/real-cluster.md).

    One line per problem as it finishes (verdict, id, seed, wall time), then a table."""
    import os

    from sregym.problems import all_problem_ids
    from sregym.problems.check import check_many

    args = Args("check")
    args.non_negative(seed, "--seed")
    args.count(jobs, "--jobs")
    args.problems_dirs(problems_dir)
    ids = all_problem_ids() if all_ else list(dict.fromkeys(problem_ids or []))
    if not ids:
        args.fail("no problems given: name ids or pass --all")
    problems = [args.problem(pid, "PROBLEM_IDS") for pid in ids]
    target = backend_flags.kube_target("check", backend_name, kubeconfig, context, prometheus_url, loki_url,
                                       jaeger_url, cluster_speed)

    skipped: list[str] = []
    with ItemProgress(len(problems), "check") as progress:
        def show_report(report: CheckReport) -> None:
            first, *failed_steps = report_lines(report)
            progress.done(first)
            for line in failed_steps:
                typer.echo(line)

        if target is None:
            reports = check_many(problems, seed, jobs=jobs or os.cpu_count() or 1, on_report=show_report)
        else:
            from sregym.env.kube.check import check_on_cluster
            from sregym.problems.portability import twin_only_reason

            reports = []
            backend_flags.cleanup_leftovers(target)  # what an earlier, killed run left
            try:
                for problem in problems:
                    why = twin_only_reason(problem)
                    if why:  # not a failure of the problem: this backend cannot run it
                        skipped.append(problem.id)
                        progress.done(f"SKIP {problem.id}  seed {seed}: needs the twin ({why})")
                        continue
                    reports.append(check_on_cluster(problem, seed, target))
                    show_report(reports[-1])
            finally:
                backend_flags.cleanup_leftovers(target)
    failed = sum(not r.passed for r in reports)
    results_table(f"check, seed {seed}", ("problem", "seed", "verdict", "wall"),
                  [*((r.problem_id, str(r.seed), "PASS" if r.passed else "FAIL", seconds(r.wall_s)) for r in reports),
                   *((pid, str(seed), "SKIP", "-") for pid in skipped)],
                  numeric=(1, 3))
    note = f", {len(skipped)} skipped (twin-only)" if skipped else ""
    typer.echo(f"{len(reports) - failed} passed, {failed} failed{note} in {seconds(progress.elapsed())}")
    if failed:
        raise typer.Exit(exitcodes.FAILED)
    if not reports:
        raise typer.Exit(exitcodes.USAGE)  # nothing could be checked on this backend


def report_lines(report: CheckReport) -> list[str]:
    """The verdict line of one checked problem (verdict, id, seed, wall time), then one line per
    failed step with its detail."""
    verdict = "PASS" if report.passed else "FAIL"
    return [f"{verdict} {report.problem_id}  seed {report.seed}  {seconds(report.wall_s)}",
            *(f"    x {s.name}: {one_line(s.detail)}" for s in report.steps if not s.passed)]


def register(app: typer.Typer) -> None:
    """Wire the commands into the top-level `sregym` app."""
    app.add_typer(list_app, name="list")
    app.command("show")(show)
    app.command("check")(check)
