"""`sregym run`: evaluate an agent on problems × seeds and leave a results directory.

A thin shell over `sregym.runner.run`: it turns flags into the run's configuration, prints the
summary tables at the end, and exits with a code a script can act on (`cli/exitcodes.py`): 0 when
every attempt was scored, 3 when the machine is not set up (before the run) or attempts were
environment failures, 1 when attempts are missing, 130 when interrupted — each time saying how to
`--resume`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from sregym.cli import backend as backend_flags
from sregym.env.config import ATTEMPT_TIMEOUT_S, AttemptConfig


def agent_options(model: str | None, base_url: str | None, api_key_env: str | None,
                   options: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (("model", model), ("base_url", base_url), ("api_key_env", api_key_env)):
        if value is not None:
            out[key] = value
    for item in options or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"agent option {item!r} must look like KEY=VALUE", param_hint="--option")
        try:
            out[key.strip()] = json.loads(raw)
        except ValueError:
            out[key.strip()] = raw
    return out


def run_command(
    problem: list[str] = typer.Option(None, "--problem", "-p", help="Problem id (repeatable)."),
    suite: str = typer.Option(None, "--suite", help="Run every problem of a suite, e.g. lite."),
    tag: str = typer.Option(None, "--tag", help="Run every problem with a layer or difficulty tag."),
    problems_dir: list[Path] = typer.Option(None, "--problems-dir", help="Load extra problem files (*.py)."),
    agent: str = typer.Option("noop", "--agent", help="Registered agent name (e.g. noop, gold)."),
    agents_dir: list[Path] = typer.Option(None, "--agents-dir", help="Load extra agent files (*.py)."),
    model: str = typer.Option(None, "--model", help="Model name, for agents that use one."),
    base_url: str = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint, for LLM agents."),
    api_key_env: str = typer.Option(None, "--api-key-env", help="Environment variable holding the API key."),
    option: list[str] = typer.Option(None, "--option", "-o", help="Extra agent option KEY=VALUE (JSON value)."),
    seeds: int = typer.Option(1, "--seeds", help="Attempts per problem, with seeds 0..N-1."),
    variants: int = typer.Option(0, "--variants", help="Also run N variants of each selected family, drawn "
                                                        "with the run seed (ids family-id@name=value,...)."),
    noise: str = typer.Option(AttemptConfig.default("noise"), "--noise", help="Noise profile: none, low or high."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Parallel worker processes."),
    executor: str = typer.Option("local", "--executor", help="Where attempts run: local (a pool of -j worker "
                                                             "processes) or ray (Ray tasks; needs sregym[ray])."),
    ray_address: str = typer.Option(None, "--ray-address", help="Ray cluster to use with --executor ray (auto, "
                                                                "ray://HOST:10001 ...); default: a local Ray "
                                                                "with -j CPUs."),
    out: Path = typer.Option(None, "--out", help="Results directory (default runs/<timestamp>)."),
    resume: Path = typer.Option(None, "--resume", help="Finish an earlier run in DIR (its own settings)."),
    max_steps: int = typer.Option(None, "--max-steps", help="Step limit per phase (default: the problem's)."),
    seconds_per_call: float = typer.Option(AttemptConfig.default("seconds_per_call"), "--seconds-per-call",
                                           help="Simulated seconds per tool call."),
    attempt_timeout: float = typer.Option(ATTEMPT_TIMEOUT_S, "--attempt-timeout",
                                          help="Wall seconds before a stuck attempt is stopped (an environment "
                                               "failure; the run goes on)."),
    phases: str = typer.Option(",".join(AttemptConfig.default("phases")), "--phases",
                               help="Phases to run, comma-separated: detection (is there an incident?), "
                                    "diagnosis, mitigation."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar or per-attempt lines "
                                                                   "(environment failures are still reported)."),
    progress_mode: str = typer.Option("auto", "--progress", help="auto (a bar on a terminal, one line per "
                                                                 "attempt otherwise), bar, lines or none."),
    judge: str = typer.Option("deterministic", "--judge", help="Diagnosis checklist judge: deterministic or llm."),
    judge_model: str = typer.Option(None, "--judge-model", help="Model of the LLM judge (--judge llm)."),
    judge_base_url: str = typer.Option(None, "--judge-base-url", help="OpenAI-compatible endpoint of the LLM judge."),
    price_in: float = typer.Option(None, "--price-in", help="USD per million input tokens, for the cost of each "
                                                            "attempt (default: $SREGYM_PRICE_IN, else the "
                                                            "price table of common models)."),
    price_out: float = typer.Option(None, "--price-out", help="USD per million output tokens (with --price-in; "
                                                              "default $SREGYM_PRICE_OUT)."),
    judge_api_key_env: str = typer.Option(None, "--judge-api-key-env",
                                          help="Environment variable holding the LLM judge's API key "
                                               "(default SREGYM_JUDGE_API_KEY; the key is never stored)."),
    backend_name: str = backend_flags.backend_option(),
    kubeconfig: str = backend_flags.kubeconfig_option(),
    context: str = backend_flags.context_option(),
    prometheus_url: str = backend_flags.url_option("prometheus"),
    loki_url: str = backend_flags.url_option("loki"),
    jaeger_url: str = backend_flags.url_option("jaeger"),
    cluster_speed: float = backend_flags.speed_option(),
) -> None:
    """Run an agent on problems × seeds; write results.jsonl, trajectories/ and summary.json."""
    import sys

    from sregym.cli import exitcodes
    from sregym.cli.progress import print_fitted
    from sregym.errors import SetupError
    from sregym.runner import render_table, run
    from sregym.runner.summary import render_problems

    phase_list = _check_args(problem=problem, suite=suite, tag=tag, problems_dir=problems_dir, agent=agent,
                             agents_dir=agents_dir, seeds=seeds, noise=noise, jobs=jobs, out=out, resume=resume,
                             max_steps=max_steps, seconds_per_call=seconds_per_call, phases=phases,
                             options=agent_options(model, base_url, api_key_env, option))
    if variants < 0:
        raise typer.BadParameter("must be 0 or more", param_hint="--variants")
    if attempt_timeout <= 0:
        raise typer.BadParameter("must be positive", param_hint="--attempt-timeout")
    if progress_mode not in ("auto", "bar", "lines", "none"):
        raise typer.BadParameter("must be auto, bar, lines or none", param_hint="--progress")
    if executor not in ("local", "ray"):
        raise typer.BadParameter("must be local or ray", param_hint="--executor")
    if ray_address is not None and executor != "ray":
        raise typer.BadParameter("needs --executor ray", param_hint="--ray-address")
    choice = _judge_choice(judge, judge_model, judge_base_url, judge_api_key_env)
    from sregym.runner.pricing import override_price

    try:
        price = override_price(price_in, price_out)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--price-in/--price-out") from None
    if resume is not None and (problem or suite or tag or out or variants):
        typer.echo("note: --resume runs the stored settings of that run; --problem/--suite/--tag/--out/--variants "
                   "are ignored", err=True)
    from sregym.env.models import Limits

    target = backend_flags.kube_target("run", backend_name, kubeconfig, context, prometheus_url, loki_url, jaeger_url,
                                 cluster_speed)
    problem = _portable(problem or [], target)
    attempt = AttemptConfig(noise=noise, seconds_per_call=seconds_per_call, phases=phase_list,
                            limits=Limits(max_steps=max_steps) if max_steps is not None else Limits(),
                            kube=target.to_json() if target is not None else None)
    try:
        summary = run(problem or [], agent=agent, agent_options=agent_options(model, base_url, api_key_env, option),
                      seeds=seeds, variants=variants, jobs=jobs, out_dir=out, resume=resume, suite=suite, tag=tag,
                      problems_dirs=problems_dir or [], agents_dirs=agents_dir or [], attempt=attempt,
                      attempt_timeout_s=attempt_timeout,
                      progress="none" if no_progress else progress_mode,  # type: ignore[arg-type]
                      invocation={"argv": sys.argv[1:], "jobs": jobs, "progress": progress_mode,
                                  **({"executor": executor} if executor != "local" else {})},
                      judge=choice.to_json() if choice.kind != "deterministic" else None,
                      executor=executor, ray_address=ray_address, price=price)
    except SetupError as err:
        typer.echo(f"sregym run: {err}", err=True)
        raise typer.Exit(exitcodes.ENVIRONMENT) from None
    except (KeyError, ValueError, FileNotFoundError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        typer.echo(f"sregym run: {message}", err=True)
        raise typer.Exit(exitcodes.USAGE) from None
    tables = [render_problems(summary)] if summary.per_problem else []
    print_fitted(*tables, render_table(summary))
    typer.echo(f"results: {summary.out_dir}")
    raise typer.Exit(_exit_code(summary))


def _portable(problem_ids: list[str], target: object) -> list[str]:
    """With `--backend kube`, the named problems that can run on a real cluster; the others are
    skipped with their reason (suites and tags are filtered per attempt, with the same reason)."""
    if target is None or not problem_ids:
        return problem_ids
    from sregym.problems import get_problem
    from sregym.problems.portability import twin_only_reason

    kept = []
    for pid in problem_ids:
        reason = twin_only_reason(get_problem(pid))
        if reason:
            typer.echo(f"skipping {pid} on --backend kube: it needs the twin ({reason})", err=True)
        else:
            kept.append(pid)
    if not kept:
        from sregym.cli import exitcodes

        typer.echo("sregym run: no selected problem can run on --backend kube", err=True)
        raise typer.Exit(exitcodes.USAGE)
    return kept


def _judge_choice(kind: str, model: str | None, base_url: str | None, key_env: str | None) -> Any:
    """The run's `JudgeChoice`; a bad combination of the --judge flags is one line and exit 2, and
    `--judge llm` without the `llm` extra one line and exit 3, before anything runs."""
    from sregym.cli import exitcodes
    from sregym.cli.validate import Args
    from sregym.errors import SetupError
    from sregym.oracles.judge_choice import JudgeChoice

    args = Args("run")
    choice = JudgeChoice(kind=kind, model=model, base_url=base_url, api_key_env=key_env)
    for problem in choice.problems():
        args.fail(problem)
    try:
        choice.preflight()
    except SetupError as err:
        args.fail(str(err), exitcodes.ENVIRONMENT)
    return choice


def _exit_code(summary: Any) -> int:
    """Say what is wrong with an incomplete run and how to finish it; return the exit code."""
    from sregym.cli import exitcodes

    resume = f"`sregym run --resume {summary.out_dir}`"
    if summary.interrupted:
        typer.echo(f"interrupted ({summary.missing} attempts missing): finish with {resume}", err=True)
        return exitcodes.INTERRUPTED
    failures = summary.overall.environment_failures
    if failures:
        what = "attempts were environment failures" if failures != 1 else "attempt was an environment failure"
        typer.echo(f"{failures} {what}, not scored:", err=True)
        for reason, count in summary.environment_failure_reasons.items():
            typer.echo(f"  {count} x {reason}", err=True)
        typer.echo(f"fix the environment, then re-run only those attempts with {resume}", err=True)
        return exitcodes.ENVIRONMENT
    if summary.missing:
        typer.echo(f"incomplete ({summary.missing} attempts missing): finish with {resume}", err=True)
        return exitcodes.FAILED
    return exitcodes.OK


def _check_args(*, problem: list[str] | None, suite: str | None, tag: str | None, problems_dir: list[Path] | None,
                agent: str, agents_dir: list[Path] | None, seeds: int, noise: str, jobs: int, out: Path | None,
                resume: Path | None, max_steps: int | None, seconds_per_call: float, phases: str,
                options: dict[str, Any]) -> tuple[str, ...]:
    """Every argument checked before anything runs (one line and exit 2 for a bad one); returns
    the phases. With `--resume` only the flags that still apply are checked."""
    from sregym.cli.problems import check_selection
    from sregym.cli.validate import Args

    args = Args("run")
    args.count(jobs, "--jobs")
    if resume is not None:
        if not resume.is_dir():
            args.bad("--resume", f"{resume} is not a run directory")
        return args.phases(phases)
    args.count(seeds, "--seeds")
    args.count(max_steps, "--max-steps")
    args.positive(seconds_per_call, "--seconds-per-call")
    args.choice(noise, "--noise", ("none", "low", "high"))
    phase_list = args.phases(phases)
    args.out_dir(out)
    args.problems_dirs(problems_dir)
    args.agents_dirs(agents_dir)
    check_selection(args, suite, tag)
    for pid in problem or []:
        args.problem(pid)
    args.agent_options(agent, options)
    return phase_list


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
