"""`sregym snapshot run`: run an agent on every task of a snapshot dataset, N repeats each.

A thin shell over `sregym.snapshot.run.run_dataset`: flags become the agent's options exactly
as in `sregym run` (`--model`, `--base-url`, `--api-key-env`, `-o KEY=VALUE`, plus `--command`
for the command agent). One line per finished repeat goes to stdout as it finishes; at the end a
table per task and how to score the run. `--resume DIR` means what it means for `sregym run`:
finish the run in DIR with the settings stored in its `run.json`. The `snapshot` group
(`cli/snapshot.py`) registers `run` as a command.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import typer

from sregym.cli import exitcodes
from sregym.cli.progress import ItemProgress, results_table, seconds
from sregym.cli.run import agent_options
from sregym.cli.validate import Args


def run(
    dataset: Path = typer.Option(None, "--dataset", help="Dataset directory (with index.json)."),
    agent: str = typer.Option(None, "--agent", help="noop, baseline, command, claude-code, codex or react."),
    repeats: int = typer.Option(None, "--repeats", help="Runs per task (the task score is their mean; default 3)."),
    out: Path = typer.Option(None, "--out", help="Output directory (new or empty)."),
    command: str = typer.Option(None, "--command", help="Program of the command agent (same as -o command=...)."),
    model: str = typer.Option(None, "--model", help="Model name, for agents that use one."),
    base_url: str = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint, for LLM agents."),
    api_key_env: str = typer.Option(None, "--api-key-env", help="Environment variable holding the API key."),
    option: list[str] = typer.Option(None, "--option", "-o", help="Extra agent option KEY=VALUE (JSON value)."),
    time_limit: float = typer.Option(None, "--time-limit", help="Wall seconds per repeat (default: baseline 300, "
                                                                  "react and command agents 1800)."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Repeats run in parallel."),
    resume: Path = typer.Option(None, "--resume", help="Finish the run in DIR with its stored settings "
                                                       "(repeats without status.json run again)."),
) -> None:
    """Run an agent on read-only copies of a dataset's snapshots; write OUT/<task>/repeat-<k>/.

    Each repeat gets a fresh read-only copy of one task's snapshot (never the ground truth) and leaves
    output.json, status.json and trajectory.jsonl. Score the run with `sregym snapshot score`.
    """
    args = Args("snapshot run")
    args.count(repeats, "--repeats")
    args.count(jobs, "--jobs")
    args.positive(time_limit, "--time-limit")
    options = agent_options(model, base_url, api_key_env, option)
    if command is not None:
        options["command"] = command
    if resume is not None:
        given = {"--dataset": dataset, "--agent": agent, "--repeats": repeats, "--out": out,
                 "--time-limit": time_limit}
        settings = _resume_settings(args, resume, options, [flag for flag, v in given.items() if v is not None])
    else:
        for value, flag in ((dataset, "--dataset"), (agent, "--agent"), (out, "--out")):
            if value is None:
                args.fail(f"missing option {flag} (or --resume DIR to finish an earlier run)")
        args.out_dir(out)
        if agent == "noop" and options:  # the other agents' drivers check their own options
            args.agent_options(agent, options)
        settings = {"dataset": dataset, "agent": agent, "repeats": repeats or 3, "out": out, "options": options,
                    "time_limit_s": time_limit}
    summary = _run(args, settings, jobs)
    _report(settings["dataset"], summary.out)
    typer.echo(f"{summary.ran} repeat{'' if summary.ran == 1 else 's'} run ({summary.ok} ok, {summary.failed} failed"
               + (f", {summary.skipped} already done" if summary.skipped else "") + f") in {summary.wall_s:.1f}s")
    typer.echo(f"outputs: {summary.out}")
    typer.echo(f"score with: sregym snapshot score --dataset {Path(settings['dataset']).resolve()} "
               f"--outputs {summary.out}")


def _resume_settings(args: Args, resume: Path, given: dict[str, Any], flags: list[str]) -> dict[str, Any]:
    """The stored settings of the run in `resume`. Flags that would change it are ignored with a
    note, as in `sregym run --resume`; only `-j` applies, and `-o env=...` when the stored run
    could not keep its env values (they may be secrets)."""
    from sregym.snapshot.run import stored_run

    args.out_dir(resume, "--resume")
    try:
        stored = stored_run(resume)
    except (FileNotFoundError, ValueError) as err:
        args.bad("--resume", str(err))
    options = dict(stored.options)
    if "env" in stored.unstored:
        if "env" not in given:
            args.bad("--resume", "the run's env option values were not stored (they may be secrets): pass them "
                                 "again with -o env='{...}'")
        options["env"] = given.pop("env")
    ignored = flags + (["the agent options"] if given else [])
    if ignored:
        typer.echo(f"note: --resume runs the stored settings of that run; {', '.join(ignored)} ignored", err=True)
    return {"dataset": stored.dataset, "agent": stored.agent, "repeats": stored.repeats, "out": resume,
            "options": options, "time_limit_s": stored.time_limit_s, "resume": True}


def _run(args: Args, settings: dict[str, Any], jobs: int) -> Any:
    from sregym.errors import SetupError
    from sregym.snapshot.run import run_dataset

    previous = signal.signal(signal.SIGTERM, _terminate)  # cleaned up like Ctrl-C: no stray copies, resumable
    try:
        with ItemProgress(0, "snapshot run") as progress:
            return run_dataset(settings["dataset"], settings["agent"], settings["repeats"], settings["out"],
                               options=settings["options"], jobs=jobs, time_limit_s=settings["time_limit_s"],
                               resume=bool(settings.get("resume")), progress=progress.done)
    except SetupError as err:  # the machine is not set up (no sandbox, the agent's program missing)
        typer.echo(f"sregym snapshot run: {err}", err=True)
        raise typer.Exit(exitcodes.ENVIRONMENT) from None
    except (KeyError, ValueError, FileNotFoundError, FileExistsError) as err:
        # A KeyError's str() is its message in quotes: print the message itself.
        args.fail(err.args[0] if isinstance(err, KeyError) and err.args else str(err))
    except KeyboardInterrupt:
        typer.echo(f"interrupted: finish with `sregym snapshot run --resume {settings['out']}`", err=True)
        raise typer.Exit(exitcodes.INTERRUPTED) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def _report(dataset: Path, out: Path) -> None:
    """Per task: its problem and seed, the repeats that ended ok, and their wall time."""
    from sregym.snapshot import layout
    from sregym.snapshot.jsonfile import read_json
    from sregym.snapshot.run import load_tasks

    rows = []
    for task in load_tasks(Path(dataset).resolve()):
        statuses = [read_json(p, "repeat status") for p in sorted((out / task.name).glob(f"*/{layout.STATUS_JSON}"))]
        ok = sum(bool(s.get("ok")) for s in statuses if isinstance(s, dict))
        wall = sum(float(s.get("wall_s") or 0) for s in statuses if isinstance(s, dict))
        rows.append((task.name, task.problem or "-", "-" if task.seed is None else str(task.seed),
                     f"{ok}/{len(statuses)}", seconds(wall)))
    results_table("snapshot run", ("task", "problem", "seed", "ok", "wall"), rows, numeric=(2, 3, 4))


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
