"""`sregym judge-eval`: how well the diagnosis judges agree with the labelled set.

Prints Cohen's κ per checklist question and pooled over every answer, with raw agreement, for the
deterministic judge on the whole set, its development problems and its held-out problems (and the
hand-written items alone); with `--base-url` and `--model` the LLM judge is measured the same way.
"""

from __future__ import annotations

from pathlib import Path

import typer


def judge_eval_command(
    set_dir: Path = typer.Option(None, "--set", help="Labelled-set directory (default: tests/data/judge of the "
                                                     "source tree)."),
    base_url: str = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint: also measure the LLM judge."),
    model: str = typer.Option(None, "--model", help="Model of the LLM judge."),
    api_key_env: str = typer.Option(None, "--api-key-env", help="Environment variable holding the API key "
                                                                "(default SREGYM_JUDGE_API_KEY)."),
    limit: int = typer.Option(None, "--limit", help="Judge only the first N items (an LLM judge is slow)."),
    show: int = typer.Option(0, "--show", help="Also list the first N disagreements of each judge."),
) -> None:
    """Cohen's κ of the deterministic judge (and the LLM judge) against the labelled diagnoses."""
    from sregym.cli.validate import Args
    from sregym.oracles.agreement import default_set_dir, deterministic, evaluate, load_set, render

    args = Args("judge-eval")
    args.count(limit, "--limit")
    directory = set_dir or default_set_dir()
    if not (directory / "split.json").is_file():
        args.fail(f"no labelled set in {directory} (expected split.json there); pass --set DIR")
    if (base_url is None) != (model is None):
        args.fail("the LLM judge needs both --base-url and --model")
    items, held_out = load_set(directory)
    items = items[:limit] if limit else items
    judges = [("deterministic judge", deterministic)]
    if base_url is not None:
        judges.append((f"LLM judge ({model})", _llm(str(model), base_url, api_key_env)))
    for title, judge in judges:
        results = evaluate(judge, items, held_out)
        hand = [i for i in items if i.source == "hand"]
        if hand:
            results["hand-only"] = evaluate(judge, hand, held_out)["all"]
        typer.echo(render(results, f"{title}: {len(items)} diagnoses over {len({i.problem for i in items})} problems"))
        for item_id, question, label, answer in results["all"].disagreements[:show]:
            typer.echo(f"  {item_id} {question}: label {'yes' if label else 'no'}, judge {'yes' if answer else 'no'}")
        typer.echo("")
    if base_url is None:
        typer.echo("LLM judge: not measured (give --base-url and --model to measure it)")


def _llm(model: str, base_url: str, api_key_env: str | None):
    from sregym.oracles.judge_choice import JudgeChoice

    choice = JudgeChoice(kind="llm", model=model, base_url=base_url, api_key_env=api_key_env)
    choice.preflight()
    judge, _, _ = choice.build()
    return lambda _problem, truth, sub: judge(truth, sub)


def register(app: typer.Typer) -> None:
    app.command("judge-eval")(judge_eval_command)
