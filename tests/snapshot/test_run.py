"""`sregym snapshot run` end to end on a real exported dataset (two hotel-reservation problems):

- the `command` agent: a small shell script greps the snapshot for a pod in CrashLoopBackOff and
  writes output.json; `score` then gives exactly what the script's answers deserve, and the
  ground truth next to the snapshots stays out of reach;
- the `react` agent against a real loopback OpenAI-compatible server that scripts the model: a
  shell grep, read_file, a malformed tool call, a path escape (refused), an invalid then a valid
  submission;
- failures (timeout, crash, no answer, invalid answer, endpoint errors) are results, the run goes
  on; resume; noop and baseline; the CLI.
"""

from __future__ import annotations

import json
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from sregym.cli.snapshot_run import run as run_cli
from sregym.snapshot.dataset import build_dataset
from sregym.snapshot.index import DatasetError
from sregym.snapshot.output import load_output
from sregym.snapshot.run import run_dataset
from sregym.snapshot.score import score_outputs
from support.scripted_openai import ScriptedModel, tool_call

CRASHING = "hotel-reservation/crashing-image-geo-v1"  # root cause: Deployment geo (pod in CrashLoopBackOff)
SELECTOR = "hotel-reservation/service-selector-nothing-v1"  # root cause: Service reservation (no BackOff)

# Finds the first Pod with a Warning BackOff event and names its Deployment (the pod name minus its
# ReplicaSet hash and pod suffix); with none, answers nothing. Also probes what it must not reach.
GREP_AGENT = r"""#!/bin/sh
set -eu
echo "cwd=$(pwd) snapshot=$SREGYM_SNAPSHOT"
test -f README.md && grep -q "sregym-snapshot/1\|snapshot" README.md && echo "readme ok"
grep -q "submit_root_causes\|SREGYM_OUTPUT" "$SREGYM_INSTRUCTIONS" && echo "instructions ok"
if echo tampered >> k8s_events.tsv 2>/dev/null; then echo "WROTE INTO THE SNAPSHOT"; fi
if cat "$PROBE_TRUTH" 2>/dev/null; then echo "READ THE GROUND TRUTH"; fi
row=$(awk -F'\t' 'NR > 1 && $3 == "Pod" && $5 == "Warning" && $6 == "BackOff" {print $2 "\t" $4; exit}' k8s_events.tsv)
if [ -n "$row" ]; then
  ns=$(printf '%s' "$row" | cut -f1)
  pod=$(printf '%s' "$row" | cut -f2)
  deploy=$(printf '%s' "$pod" | sed -E 's/-[a-z0-9]+-[a-z0-9]+$//')
  printf '{"entities": [{"kind": "Deployment", "namespace": "%s", "name": "%s"}], "explanation": "pod %s keeps crashing: Back-off restarting failed container (CrashLoopBackOff)"}\n' "$ns" "$deploy" "$pod" > "$SREGYM_OUTPUT"
  echo "answer: $ns/Deployment/$deploy"
else
  printf '{"entities": []}\n' > "$SREGYM_OUTPUT"
  echo "answer: none"
fi
"""


def _script(directory: Path, name: str, body: str) -> Path:
    path = directory / name
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("snapdata") / "dataset"
    build_dataset([CRASHING, SELECTOR], out, seeds=1, window_s=180.0, baseline_s=60.0)
    return out


def _subset(dataset: Path, task: str, dest: Path) -> Path:
    """A one-task dataset made of `task` of `dataset`."""
    index = json.loads((dataset / "index.json").read_text())
    entry = next(e for e in index["tasks"] if e["task"] == task)
    dest.mkdir(parents=True)
    shutil.copytree(dataset / entry["snapshot"], dest / entry["snapshot"])
    (dest / entry["ground_truth"]).parent.mkdir(parents=True)
    shutil.copyfile(dataset / entry["ground_truth"], dest / entry["ground_truth"])
    (dest / "index.json").write_text(json.dumps({**index, "tasks": [entry]}))
    return dest


def _truth(dataset: Path, task: str) -> set[tuple[str, str | None, str]]:
    index = json.loads((dataset / "index.json").read_text())
    entry = next(e for e in index["tasks"] if e["task"] == task)
    doc = json.loads((dataset / entry["ground_truth"]).read_text())
    return {(r["kind"], r.get("namespace"), r["name"]) for r in doc["root_causes"]}


def _expected_score(answer: Path, truth: set[tuple[str, str | None, str]]) -> float:
    """Precision at full recall computed by hand from what the agent wrote (exact matches; the
    script names objects exactly as the ground truth does)."""
    entities = {(e["kind"], e.get("namespace"), e["name"]) for e in json.loads(answer.read_text())["entities"]}
    if not entities or not truth <= entities:
        return 0.0
    return len(truth & entities) / len(entities)


def _status(out: Path, task: str, k: int) -> dict[str, Any]:
    return json.loads((out / task / f"repeat-{k}" / "status.json").read_text())


def _trajectory(out: Path, task: str, k: int) -> list[dict[str, Any]]:
    lines = (out / task / f"repeat-{k}" / "trajectory.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


# ============================================================ command agent
def test_command_agent_greps_the_snapshot_and_is_scored(dataset: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, "grep-agent.sh", GREP_AGENT)
    out = tmp_path / "run"
    lines: list[str] = []
    summary = run_dataset(dataset, "command", 3, out, jobs=2, progress=lines.append,
                          options={"command": [str(script)], "time_limit_s": 60,
                                   "env": {"PROBE_TRUTH": str(dataset / "ground_truth" / "task-0001.json")}})
    assert (summary.attempts, summary.ran, summary.ok, summary.failed) == (6, 6, 6, 0)
    assert len(lines) == 6 and all("ok" in line for line in lines)
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["agent"] == "command" and run_json["repeats"] == 3
    assert run_json["dataset"] == str(dataset.resolve()) and run_json["options"]["env"] == {"PROBE_TRUTH": "***"}
    # the snapshot copies were read-only and the dataset hidden; the dataset itself is untouched
    for task in ("task-0001", "task-0002"):
        assert "tampered" not in (dataset / "tasks" / task / "k8s_events.tsv").read_text()
        for k in (1, 2, 3):
            status = _status(out, task, k)
            assert status["ok"] is True and status["error"] is None and status["wall_s"] > 0
            [entry] = _trajectory(out, task, k)
            assert entry["tool"] == "command" and entry["exit_code"] == 0
            observation = entry["observation"]
            assert "readme ok" in observation and "instructions ok" in observation
            assert "WROTE INTO THE SNAPSHOT" not in observation and "READ THE GROUND TRUTH" not in observation
            assert str(dataset) not in observation.split("cwd=")[1].split(" snapshot=")[0]
    assert "answer: hotel-reservation/Deployment/geo" in _trajectory(out, "task-0001", 1)[0]["observation"]
    assert load_output(out / "task-0002" / "repeat-1" / "output.json").entities == ()

    report = score_outputs(dataset, out)
    expected = {task: [_expected_score(out / task / f"repeat-{k}" / "output.json", _truth(dataset, task))
                       for k in (1, 2, 3)] for task in ("task-0001", "task-0002")}
    assert expected == {"task-0001": [1.0, 1.0, 1.0], "task-0002": [0.0, 0.0, 0.0]}
    for task in report.tasks:
        assert [r.score for r in task.repeats] == expected[task.task]
        assert all(r.valid for r in task.repeats)
    assert report.score == pytest.approx(0.5)
    assert report.tasks[0].problem == CRASHING and report.tasks[0].checklist is not None


def test_command_agent_failures_are_results(dataset: Path, tmp_path: Path) -> None:
    small = _subset(dataset, "task-0001", tmp_path / "one")
    cases = {
        "sleeper": ("#!/bin/sh\necho started\nsleep 60\n", "time limit of 1s reached"),
        "crasher": ('#!/bin/sh\necho \'{"entities": []}\' > "$SREGYM_OUTPUT"\necho boom >&2\nexit 3\n',
                    "exited with code 3"),
        "silent": ("#!/bin/sh\necho thinking\n", "wrote no answer"),
        "invalid": ('#!/bin/sh\necho \'{"entites": []}\' > "$SREGYM_OUTPUT"\n', "entities: missing"),
    }
    for name, (body, error) in cases.items():
        out = tmp_path / f"run-{name}"
        summary = run_dataset(small, "command", 2, out, progress=lambda _line: None, time_limit_s=1.0,
                              options={"command": str(_script(tmp_path, f"{name}.sh", body))})
        assert (summary.ran, summary.ok, summary.failed) == (2, 0, 2), name
        for k in (1, 2):
            status = _status(out, "task-0001", k)
            assert status["ok"] is False and error in status["error"], (name, status)
            kept = (out / "task-0001" / f"repeat-{k}" / "output.json").exists()
            assert kept == (name == "invalid"), name  # an invalid answer is kept for the scorer's reason
        observation = _trajectory(out, "task-0001", 1)[0]["observation"]
        assert ("started" in observation) if name == "sleeper" else True
        assert ("boom" in observation) if name == "crasher" else True
        report = score_outputs(small, out)
        assert report.score == 0.0
        reason = report.tasks[0].repeats[0].reason or ""
        assert ("entities: missing" in reason) if name == "invalid" else error in reason


def test_resume_runs_only_missing_repeats_and_refuses_mismatches(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = run_dataset(dataset, "noop", 2, out, progress=lambda _line: None)
    assert (first.ran, first.ok) == (4, 4)
    assert json.loads((out / "task-0002" / "repeat-2" / "output.json").read_text()) == {"entities": []}
    (out / "task-0002" / "repeat-2" / "status.json").unlink()
    again = run_dataset(dataset, "noop", 2, out, progress=lambda _line: None, resume=True)
    assert (again.ran, again.skipped) == (1, 3)
    assert _status(out, "task-0002", 2)["ok"] is True
    with pytest.raises(FileExistsError, match="not empty"):
        run_dataset(dataset, "noop", 2, out, progress=lambda _line: None)
    with pytest.raises(ValueError, match="repeats=2"):
        run_dataset(dataset, "noop", 3, out, progress=lambda _line: None, resume=True)
    assert score_outputs(dataset, out).score == 0.0
    # a dataset built again in the same place is another dataset: its run cannot be resumed
    small = _subset(dataset, "task-0001", tmp_path / "one")
    run_dataset(small, "noop", 1, tmp_path / "small-run", progress=lambda _line: None)
    index = json.loads((small / "index.json").read_text())
    (small / "index.json").write_text(json.dumps({**index, "noise": "high"}))
    with pytest.raises(ValueError, match="dataset changed"):
        run_dataset(small, "noop", 1, tmp_path / "small-run", progress=lambda _line: None, resume=True)


def test_an_interrupted_run_is_finished_by_resume(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    seen: list[str] = []

    def interrupt(line: str) -> None:
        seen.append(line)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_dataset(dataset, "noop", 2, out, progress=interrupt)
    done = sorted(p.parent.name + "/" + p.parent.parent.name for p in out.glob("*/repeat-*/status.json"))
    assert done == ["repeat-1/task-0001", "repeat-2/task-0001"]
    finished = run_dataset(dataset, "noop", 2, out, progress=lambda _line: None, resume=True)
    assert (finished.ran, finished.skipped, finished.ok) == (2, 2, 2)
    assert len(list(out.glob("*/repeat-*/status.json"))) == 4


def test_bad_inputs_fail_before_anything_runs(dataset: Path, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"no index\.json"):
        run_dataset(tmp_path, "noop", 1, tmp_path / "x")
    with pytest.raises(ValueError, match="needs a command"):
        run_dataset(dataset, "command", 1, tmp_path / "y")
    with pytest.raises(ValueError, match="cannot run on snapshots"):
        run_dataset(dataset, "gold", 1, tmp_path / "z")
    with pytest.raises(KeyError, match="offline agents: noop, baseline"):
        run_dataset(dataset, "no-such-agent", 1, tmp_path / "w")
    assert not (tmp_path / "y").exists() and not (tmp_path / "z").exists()
    # a snapshot entry that would hand over the ground truth is refused
    bad = _subset(dataset, "task-0001", tmp_path / "bad")
    index = json.loads((bad / "index.json").read_text())
    index["tasks"][0]["snapshot"] = "."
    (bad / "index.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match="inside the dataset"):
        run_dataset(bad, "noop", 1, tmp_path / "v")


# ============================================================ react agent
@pytest.fixture(autouse=True)
def _no_real_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield


def _tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_react_agent_investigates_with_snapshot_tools_and_submits(dataset: Path, tmp_path: Path) -> None:
    small = _subset(dataset, "task-0001", tmp_path / "one")
    answer = {"entities": [{"kind": "Deployment", "namespace": "hotel-reservation", "name": "geo"}],
              "explanation": "geo pods crash-loop after the image update (BackOff events)"}
    script = [
        tool_call("shell", {"command": "grep -l BackOff *.tsv"}),
        tool_call("read_file", {"path": "k8s_events.tsv", "offset": 1, "limit": 2}),
        tool_call("grep", '{"pattern": "BackOff", "path": "k8s_events'),  # malformed JSON
        tool_call("read_file", {"path": "../../ground_truth/task-0001.json"}),  # escape: refused
        tool_call("shell", {"command": "cat ../../ground_truth/task-0001.json; echo x > probe"}),
        tool_call("submit_root_causes", {"entities": [{"kind": "Deployment", "namespace": "hotel-reservation"}]}),
        tool_call("submit_root_causes", answer),
    ]
    out = tmp_path / "run"
    with ScriptedModel(script) as model:
        summary = run_dataset(small, "react", 1, out, progress=lambda _line: None,
                              options={"model": "scripted", "base_url": model.base_url})
    assert (summary.ran, summary.ok) == (1, 1)
    assert len(model.requests) == 7
    first = model.requests[0]
    assert {t["function"]["name"] for t in first["tools"]} == {"shell", "list_files", "read_file", "grep",
                                                              "submit_root_causes"}
    submit_schema = next(t for t in first["tools"] if t["function"]["name"] == "submit_root_causes")
    assert submit_schema["function"]["parameters"]["required"] == ["entities"]
    assert "README.md" in first["messages"][0]["content"]
    assert "INCIDENT SNAPSHOT" in first["messages"][1]["content"] and CRASHING not in json.dumps(first)
    observations = _tool_messages(model.requests[-1])
    assert observations[0].strip() == "k8s_events.tsv" or "k8s_events.tsv" in observations[0]
    assert observations[1].startswith("k8s_events.tsv: lines 1-2 of ") and "timestamp\tnamespace" in observations[1]
    assert "not a valid JSON object" in observations[2]
    assert observations[3].startswith("error: refused:") and "outside the snapshot" in observations[3]
    assert "No such file" in observations[4] and "Read-only file system" in observations[4]
    assert "root_causes" not in observations[4]
    assert "entities[0].name: missing" in observations[5] and "again" in observations[5]
    written = load_output(out / "task-0001" / "repeat-1" / "output.json")
    assert [(e.kind, e.name) for e in written.entities] == [("Deployment", "geo")]
    status = _status(out, "task-0001", 1)
    assert status["ok"] is True and status["tool_calls"] == 6  # the malformed call never reached a tool
    everything = _trajectory(out, "task-0001", 1)
    entries = [e for e in everything if e.get("kind") != "message"]
    # the model's turns are kept too (seven completions, the malformed one included)
    turns = [e for e in everything if e.get("kind") == "message"]
    assert len(turns) == 7 and all(t["tool"] == "assistant" and t["tool_calls"] for t in turns)
    assert [e.get("tool") for e in entries] == ["shell", "read_file", "read_file", "shell", "submit_root_causes",
                                               "submit_root_causes", None]
    assert entries[2]["is_error"] and entries[-1]["event"] == "end" and entries[-1]["tokens_in"] == 700
    assert score_outputs(small, out).score == 1.0


def test_react_agent_budgets_and_endpoint_errors_are_results(dataset: Path, tmp_path: Path) -> None:
    small = _subset(dataset, "task-0001", tmp_path / "one")
    loop = lambda: tool_call("list_files", {})  # noqa: E731
    with ScriptedModel([], default=loop) as model:
        summary = run_dataset(small, "react", 2, tmp_path / "turns", progress=lambda _line: None,
                              options={"model": "scripted", "base_url": model.base_url, "max_steps": 3})
    assert (summary.ran, summary.ok) == (2, 0) and len(model.requests) == 6
    status = _status(tmp_path / "turns", "task-0001", 1)
    assert "step budget" in status["error"] and status["tool_calls"] == 3
    assert not (tmp_path / "turns" / "task-0001" / "repeat-1" / "output.json").exists()
    with ScriptedModel([(401, {"error": {"message": "bad key"}})] * 2) as model:
        summary = run_dataset(small, "react", 2, tmp_path / "denied", progress=lambda _line: None,
                              options={"model": "scripted", "base_url": model.base_url})
    assert (summary.ran, summary.ok) == (2, 0)
    assert "HTTP 401" in _status(tmp_path / "denied", "task-0001", 2)["error"]
    with pytest.raises(ValueError, match="unknown react option"):
        run_dataset(small, "react", 1, tmp_path / "bad", options={"model": "m", "base_url": "http://x/v1",
                                                                  "nope": 1})


def test_react_refuses_a_shell_with_network_unless_allowed(dataset: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from sregym import sandbox

    small = _subset(dataset, "task-0001", tmp_path / "one")
    monkeypatch.setattr(sandbox, "_PROBES", {False: "unshare: unshare failed: Operation not permitted",
                                             True: "unshare: unshare failed: Operation not permitted"})
    with pytest.raises(sandbox.SandboxError, match="allow_network=1"):
        run_dataset(small, "react", 1, tmp_path / "refused", options={"model": "m", "base_url": "http://x/v1"})
    assert not (tmp_path / "refused").exists()
    script = [tool_call("shell", {"command": "pwd"}), tool_call("submit_root_causes", {"entities": []})]
    with ScriptedModel(script) as model:
        summary = run_dataset(small, "react", 1, tmp_path / "allowed", progress=lambda _line: None,
                              options={"model": "scripted", "base_url": model.base_url, "allow_network": 1})
    assert summary.ok == 1
    assert _tool_messages(model.requests[-1])[0].strip().endswith("/snapshot")
    assert json.loads((tmp_path / "allowed" / "run.json").read_text())["options"]["allow_network"] is True


# ============================================================ baseline, CLI
def test_baseline_agent_runs_offline(dataset: Path, tmp_path: Path) -> None:
    small = _subset(dataset, "task-0001", tmp_path / "one")
    summary = run_dataset(small, "baseline", 1, tmp_path / "run", progress=lambda _line: None)
    status = _status(tmp_path / "run", "task-0001", 1)
    assert summary.ok == 1, status
    assert status["tool_calls"] > 0
    assert load_output(tmp_path / "run" / "task-0001" / "repeat-1" / "output.json").entities
    assert (tmp_path / "run" / "task-0001" / "repeat-1" / "trajectory.jsonl").read_text().strip()


def test_cli_runs_and_reports(dataset: Path, tmp_path: Path) -> None:
    app = typer.Typer()
    app.command("run")(run_cli)
    app.command("other")(lambda: None)  # more than one command: `run` is addressed by name
    out = tmp_path / "cli-run"
    result = CliRunner().invoke(app, ["run", "--dataset", str(dataset), "--agent", "noop", "--repeats", "2",
                                      "--out", str(out), "-j", "2"])
    assert result.exit_code == 0, result.output
    assert "4 repeats run (4 ok, 0 failed)" in result.output and "sregym snapshot score" in result.output
    assert sorted(p.name for p in (out / "task-0001").iterdir()) == ["repeat-1", "repeat-2"]
    again = CliRunner().invoke(app, ["run", "--dataset", str(dataset), "--agent", "noop", "--out", str(out)])
    assert again.exit_code == 2 and "not empty" in again.output
    unknown = CliRunner().invoke(app, ["run", "--dataset", str(dataset), "--agent", "nope", "--out", str(out)])
    assert unknown.exit_code == 2 and "unknown agent 'nope'; offline agents: noop" in unknown.output
    bad = CliRunner().invoke(app, ["run", "--dataset", str(dataset), "--agent", "command", "--out",
                                   str(tmp_path / "c")])
    assert bad.exit_code == 2 and "needs a command: -o command='./my-agent.sh'" in bad.output
    script = _script(tmp_path, "a.sh", GREP_AGENT.replace('cat "$PROBE_TRUTH"', "false"))
    ok = CliRunner().invoke(app, ["run", "--dataset", str(dataset), "--agent", "command", "--command", str(script),
                                  "--repeats", "1", "--out", str(tmp_path / "c2"), "--time-limit", "60"])
    assert ok.exit_code == 0, ok.output
    assert json.loads((tmp_path / "c2" / "run.json").read_text())["time_limit_s"] == 60.0
    assert score_outputs(dataset, tmp_path / "c2").score == pytest.approx(0.5)


def test_cli_refuses_a_missing_program_before_any_repeat(dataset: Path, tmp_path: Path) -> None:
    app = typer.Typer()
    app.command("run")(run_cli)
    app.command("other")(lambda: None)
    missing = CliRunner().invoke(app, ["run", "--dataset", str(dataset), "--agent", "command", "--out",
                                       str(tmp_path / "out"), "--command", str(tmp_path / "absent.sh")])
    assert missing.exit_code == 3, missing.output
    assert "absent.sh does not exist" in missing.output and "Traceback" not in missing.output
    assert not (tmp_path / "out").exists()
