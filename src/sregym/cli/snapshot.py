"""`sregym snapshot ...`: offline incident snapshots.

`export` writes one problem's incident as a snapshot directory plus its ground truth; `dataset`
writes many (problems × seeds) with an index and a dataset card. Export stages go to stderr; a
dataset prints one line per finished task on stdout; errors exit with code 2 and say what to change. `run` and `score` live in sibling modules and are wired
into this group by `register_subcommands`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from sregym.cli import backend as backend_flags
from sregym.cli.progress import ItemProgress, seconds
from sregym.cli.validate import Args

app = typer.Typer(help="Offline incident snapshots: export problems, build datasets, run and score agents "
                       "(reference: docs/snapshots.md).", no_args_is_help=True)

ProblemsDir = typer.Option(None, "--problems-dir", help="Load extra problem files (*.py) from DIR.")
NOISE_LEVELS = ("none", "low", "high")
WINDOW_HELP = ("Observation window after the fault: 15m, 900s, 1h. Metrics, logs and traces reach back "
               "15m or the whole window, whichever is longer.")
BASELINE_HELP = "Healthy period before the fault (checked): 5m, 300s."


def parse_window(text: str, option: str = "--window") -> float:
    """'15m', '900s', '900', '1h' → seconds (> 0)."""
    from sregym.tools.timeparse import TimeParseError, parse_duration_s

    try:
        seconds = parse_duration_s(text)
    except TimeParseError:
        raise typer.BadParameter(f"cannot read {text!r}: use forms like 900, 900s, 15m, 1h",
                                 param_hint=option) from None
    if seconds <= 0:
        raise typer.BadParameter(f"must be positive, got {text!r}", param_hint=option)
    return seconds


def _fail(command: str, message: str) -> typer.Exit:
    typer.echo(f"sregym snapshot {command}: {message}", err=True)
    return typer.Exit(2)


def _unknown(err: KeyError) -> str:
    text = str(err).strip("'\"")
    head, _, _ = text.partition(" (known:")
    return f"{head}; list the problems with `sregym list problems`" if head != text else text


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@app.command("export")
def export(problem_id: str = typer.Argument(..., help="Problem id, e.g. hotel-reservation/network-policy-deny-all-v1."),
           out: Path = typer.Option(..., "--out", help="Directory to write snapshot/ and ground_truth.json into."),
           seed: int = typer.Option(0, "--seed", help="Run seed (the same seed gives the same bytes)."),
           noise: str = typer.Option("none", "--noise", help="Noise profile: none, low or high."),
           window: str = typer.Option("15m", "--window", help=WINDOW_HELP),
           baseline: str = typer.Option("5m", "--baseline", help=BASELINE_HELP),
           force: bool = typer.Option(False, "--force", help="Write into a non-empty --out (replacing a snapshot)."),
           layout: str = typer.Option("sregym", "--layout", help="sregym, or itbench-lite (OUT/Scenario-N/ with "
                                      "ground_truth.yaml; N from the problem's ITBench scenario)."),
           problems_dir: list[Path] = ProblemsDir,
           backend_name: str = backend_flags.backend_option(),
           kubeconfig: str = backend_flags.kubeconfig_option(),
           context: str = backend_flags.context_option(),
           prometheus_url: str = backend_flags.url_option("prometheus"),
           loki_url: str = backend_flags.url_option("loki"),
           jaeger_url: str = backend_flags.url_option("jaeger"),
           cluster_speed: float = backend_flags.speed_option()) -> None:
    """Run a problem up to the end of an observation window and write it as an incident snapshot.

    Writes OUT/snapshot/ (what the agent gets) and OUT/ground_truth.json (never give it to the agent);
    with `--layout itbench-lite`, OUT/Scenario-N/ and OUT/ground_truth/Scenario-N.json. With
    --backend kube the incident runs on that cluster (docs/real-cluster.md).
    """
    from sregym.snapshot.export import SnapshotError, export_snapshot, resolve_problem

    args = Args("snapshot export")
    args.non_negative(seed, "--seed")
    args.choice(noise, "--noise", NOISE_LEVELS)
    args.choice(layout, "--layout", ("sregym", "itbench-lite"))
    window_s = parse_window(window)
    baseline_s = parse_window(baseline, "--baseline")
    args.out_dir(out)
    args.problems_dirs(problems_dir)
    try:
        problem = resolve_problem(problem_id)
    except KeyError as err:
        raise _fail("export", _unknown(err)) from None
    if out.exists() and not out.is_dir():
        raise _fail("export", f"{out} is a file, not a directory: choose another --out")
    if out.exists() and any(out.iterdir()) and not force:
        raise _fail("export", f"{out} exists and is not empty: choose another --out or pass --force")
    target = backend_flags.kube_target("snapshot export", backend_name, kubeconfig, context, prometheus_url,
                                       loki_url, jaeger_url, cluster_speed)
    if target is not None:
        _export_on_cluster(problem, out, target, seed=seed, noise=noise, window_s=window_s, baseline_s=baseline_s,
                           layout=layout)
        return
    try:
        if layout == "itbench-lite":
            from sregym.snapshot.itbench_lite import export_scenario

            snapshot = export_scenario(problem, out, seed=seed, noise=noise, window_s=window_s,
                                       baseline_s=baseline_s, progress=_progress)
            typer.echo(f"scenario: {snapshot}")
            typer.echo(f"ground truth: {out / 'ground_truth' / (snapshot.name + '.json')} (keep it away from the agent)")
            return
        snapshot = export_snapshot(problem, out, seed=seed, noise=noise, window_s=window_s, baseline_s=baseline_s,
                                   progress=_progress)
    except SnapshotError as err:
        raise _fail("export", str(err)) from None
    typer.echo(f"snapshot: {snapshot}")
    typer.echo(f"ground truth: {out / 'ground_truth.json'} (keep it away from the agent)")


def _export_on_cluster(problem: object, out: Path, target: object, *, seed: int, noise: str, window_s: float,
                       baseline_s: float, layout: str) -> None:
    """`snapshot export --backend kube`: the sregym layout only; leftovers of killed runs go first."""
    from sregym.problems.portability import twin_only_reason
    from sregym.snapshot.export import SnapshotError
    from sregym.snapshot.kube_export import export_on_cluster

    if layout != "sregym":
        raise _fail("export", "--layout itbench-lite is not available with --backend kube")
    reason = twin_only_reason(problem)  # type: ignore[arg-type]
    if reason:
        raise _fail("export", f"{problem.id} needs the twin ({reason}); it cannot run on --backend kube")  # type: ignore[attr-defined]
    backend_flags.stop_on_sigterm()  # SIGTERM cleans the cluster up like Ctrl-C
    backend_flags.cleanup_leftovers(target)
    try:
        snapshot = export_on_cluster(problem, out, target, seed=seed, noise=noise,  # type: ignore[arg-type]
                                     window_s=window_s, baseline_s=baseline_s, progress=_progress)
    except SnapshotError as err:
        raise _fail("export", str(err)) from None
    finally:
        backend_flags.cleanup_leftovers(target)
    typer.echo(f"snapshot: {snapshot}")
    typer.echo(f"ground truth: {out / 'ground_truth.json'} (keep it away from the agent)")


@app.command("dataset")
def dataset(problem_ids: list[str] = typer.Argument(None, help="Problem ids (or use --suite/--tag)."),
            out: Path = typer.Option(..., "--out", help="Dataset directory (must be empty unless --force)."),
            suite: str = typer.Option(None, "--suite", help="Every problem of a suite, e.g. lite."),
            tag: str = typer.Option(None, "--tag", help="Every problem with this layer or difficulty tag "
                                                      "(`sregym list problems` shows them)."),
            seeds: int = typer.Option(1, "--seeds", help="Snapshots per problem, with seeds 0..N-1."),
            noise: str = typer.Option("none", "--noise", help="Noise profile: none, low or high."),
            window: str = typer.Option("15m", "--window", help=WINDOW_HELP),
            baseline: str = typer.Option("5m", "--baseline", help=BASELINE_HELP),
            jobs: int = typer.Option(1, "--jobs", "-j", help="Parallel worker processes."),
            force: bool = typer.Option(False, "--force", help="Replace the dataset in a non-empty --out."),
            problems_dir: list[Path] = ProblemsDir) -> None:
    """Export many problems × seeds as a dataset with index.json and DATASET.md.

    Tasks go to OUT/tasks/, their answers to OUT/ground_truth/ (never give that directory to an agent).
    """
    from sregym.cli.problems import check_selection
    from sregym.problems import select
    from sregym.snapshot.dataset import build_dataset
    from sregym.snapshot.export import SnapshotError

    args = Args("snapshot dataset")
    args.choice(noise, "--noise", NOISE_LEVELS)
    window_s = parse_window(window)
    baseline_s = parse_window(baseline, "--baseline")
    args.count(seeds, "--seeds")
    args.count(jobs, "--jobs")
    args.out_dir(out)
    dirs = problem_dir_list(problems_dir)
    args.problems_dirs(dirs)
    check_selection(args, suite, tag)
    ids = list(problem_ids or [])
    if suite or tag:
        chosen = [p.id for p in select(suite=suite, tag=tag)]
        if not chosen:
            asked = " with ".join(f"--{k} {v}" for k, v in (("suite", suite), ("tag", tag)) if v)
            raise _fail("dataset", f"{asked} selects no problem; `sregym list problems` shows every problem "
                                   "with its suites and tags")
        ids += [pid for pid in chosen if pid not in ids]
    if not ids:
        raise _fail("dataset", "no problems: name problem ids, or select them with --suite or --tag "
                               "(`sregym list problems` lists them)")
    try:
        with ItemProgress(len(ids) * seeds, "dataset") as progress:
            root = build_dataset(ids, out, seeds=seeds, noise=noise, window_s=window_s, jobs=jobs,
                                 progress=progress.done, baseline_s=baseline_s, force=force, problems_dirs=dirs)
    except KeyError as err:
        raise _fail("dataset", _unknown(err)) from None
    except FileExistsError as err:
        raise _fail("dataset", str(err)) from None
    except SnapshotError as err:
        raise _fail("dataset", str(err)) from None
    typer.echo(f"dataset: {root} ({len(ids) * seeds} tasks = {len(ids)} problem{'' if len(ids) == 1 else 's'} "
               f"x {seeds} seed{'' if seeds == 1 else 's'}, {seconds(progress.elapsed())})")


def problem_dir_list(dirs: list[Path] | None) -> list[Path]:
    return [Path(d) for d in dirs or []]


def register_subcommands() -> None:
    """Add `run` and `score` (sibling modules, when present) to the group."""
    import importlib

    for module, name in (("sregym.cli.snapshot_run", "run"), ("sregym.cli.snapshot_score", "score")):
        if any(c.name == name for c in app.registered_commands):
            continue
        try:
            fn = getattr(importlib.import_module(module), name)
        except Exception:  # a missing or broken sibling must not take `export`/`dataset` down
            continue
        app.command(name)(fn)


register_subcommands()
