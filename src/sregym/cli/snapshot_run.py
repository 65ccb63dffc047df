"""`sregym snapshot run`: run an agent on every task of a snapshot dataset, N repeats each.

A thin shell over `sregym.snapshot.run.run_dataset`: flags become the agent's options exactly
as in `sregym run` (`--model`, `--base-url`, `--api-key-env`, `-o KEY=VALUE`, plus `--command`
for the command agent), then it prints a one-line summary and how to score the run. The
`snapshot` group (`cli/snapshot.py`) registers `run` as a command.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import typer

from sregym.cli.run import _agent_options


def run(
    dataset: Path = typer.Option(..., "--dataset", help="Dataset directory (with index.json)."),
    agent: str = typer.Option(..., "--agent", help="noop, baseline, command, claude-code, codex or react."),
    repeats: int = typer.Option(3, "--repeats", help="Runs per task (the task score is their mean)."),
    out: Path = typer.Option(..., "--out", help="Output directory (new or empty; with --resume, an earlier run)."),
    command: str = typer.Option(None, "--command", help="Program of the command agent (same as -o command=...)."),
    model: str = typer.Option(None, "--model", help="Model name, for agents that use one."),
    base_url: str = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint, for LLM agents."),
    api_key_env: str = typer.Option(None, "--api-key-env", help="Environment variable holding the API key."),
    option: list[str] = typer.Option(None, "--option", "-o", help="Extra agent option KEY=VALUE (JSON value)."),
    time_limit: float = typer.Option(None, "--time-limit", help="Wall seconds per repeat (default: baseline 300, "
                                                                  "react and command agents 1800)."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Repeats run in parallel."),
    resume: bool = typer.Option(False, "--resume", help="Finish the run in --out (repeats without status.json)."),
) -> None:
    """Run an agent on read-only copies of a dataset's snapshots; write OUT/<task>/repeat-<k>/.

    Each repeat gets a fresh read-only copy of one task's snapshot (never the ground truth) and leaves
    output.json, status.json and trajectory.jsonl. Score the run with `sregym snapshot score`.
    """
    from sregym.errors import SetupError
    from sregym.snapshot.run import run_dataset

    options = _agent_options(model, base_url, api_key_env, option)
    if command is not None:
        options["command"] = command
    if repeats < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--repeats")
    if jobs < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--jobs")
    if time_limit is not None and time_limit <= 0:
        raise typer.BadParameter("must be positive", param_hint="--time-limit")
    previous = signal.signal(signal.SIGTERM, _terminate)  # cleaned up like Ctrl-C: no stray copies, resumable
    try:
        summary = run_dataset(dataset, agent, repeats, out, options=options, jobs=jobs, time_limit_s=time_limit,
                              resume=resume)
    except SetupError as err:  # the machine is not set up (no sandbox, the agent's program missing)
        typer.echo(f"sregym snapshot run: {err}", err=True)
        raise typer.Exit(3) from None
    except (KeyError, ValueError, FileNotFoundError, FileExistsError) as err:
        # A KeyError's str() is its message in quotes: print the message itself (stripping quotes
        # off any message would also cut a hint that ends in one).
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        typer.echo(f"sregym snapshot run: {message}", err=True)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        typer.echo(f"interrupted: finish with `sregym snapshot run --dataset {dataset} --agent {agent} "
                   f"--repeats {repeats} --out {out} --resume` (same agent options)", err=True)
        raise typer.Exit(130) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    typer.echo(f"{summary.ran} repeat{'' if summary.ran == 1 else 's'} run ({summary.ok} ok, {summary.failed} failed"
               + (f", {summary.skipped} already done" if summary.skipped else "") + f") in {summary.wall_s:.1f}s")
    typer.echo(f"outputs: {summary.out}")
    typer.echo(f"score with: sregym snapshot score --dataset {Path(dataset).resolve()} --outputs {summary.out}")


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
