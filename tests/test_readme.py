"""The README works as written.

Every command line in a README ```bash block must be exercised by a test or a CI step: the map
below names, for each, the test (which must exist) or the CI step that runs it, or — for commands
that need a model server or a proprietary CLI — the test of the error a user gets without it. A
new README command without an entry fails `test_every_readme_command_is_exercised`. The Python
blocks run as written, and `twin up --app hotel-reservation` answers the README's own kubectl and
curl commands.
"""

from __future__ import annotations

import ast
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.processes import read_lines_until, stop_group

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

# (pattern matched against a command line, evidence): "ci: <what .ci/run does>" or "path::test".
EXERCISED: list[tuple[str, str]] = [
    (r"^pip install -e \. && sregym run --suite lite --agent baseline -j 2$",
     "ci: .ci/run installs exactly `pip install -e .` in a fresh venv and runs a lite attempt with baseline"),
    (r"^pip install -e '\.\[test\]' && python -m pytest -n 3$", "ci: the last line of .ci/run, verbatim"),
    (r"^sregym twin up --port 6443 --seed 7 --speed 1$",
     "tests/twin/api/test_twin_up.py::test_twin_up_serves_kubectl_and_stops_cleanly_on_sigterm"),
    (r"^export KUBECONFIG=", "tests/test_readme.py::test_twin_up_with_the_app_answers_the_readme_commands"),
    (r"^kubectl get pods -A$", "tests/test_readme.py::test_twin_up_with_the_app_answers_the_readme_commands"),
    (r"^kubectl --context kind-admin get ns$",
     "tests/test_readme.py::test_twin_up_with_the_app_answers_the_readme_commands"),
    (r"^sregym twin up --app hotel-reservation --speed 5$",
     "tests/test_readme.py::test_twin_up_with_the_app_answers_the_readme_commands"),
    (r"^curl -s 'http://127\.0\.0\.1:(9090|16686)/",
     "tests/test_readme.py::test_twin_up_with_the_app_answers_the_readme_commands"),
    (r"^sregym run --suite lite --agent noop ", "tests/runner/test_runner_e2e.py::test_noop_scores_nothing"),
    (r"^sregym run --problem \S+ --agent gold --out ",
     "tests/runner/test_runner_e2e.py::test_killed_run_resumes_to_the_uninterrupted_result"),
    (r"^sregym run --resume ", "tests/runner/test_runner_e2e.py::test_killed_run_resumes_to_the_uninterrupted_result"),
    (r"^sregym mcp --problem \S+ --transport stdio$", "tests/tools/test_mcp.py::test_mcp_over_stdio"),
    (r"^sregym mcp --problem \S+ --transport http$", "tests/tools/test_mcp.py::test_mcp_over_streamable_http"),
    (r"^sregym list suites$", "tests/cli/test_cli_list.py::test_list_suites_counts_problems"),
    (r"^sregym list agents", "tests/cli/test_cli_list.py::test_list_agents_shows_description_and_needs"),
    (r"^(vllm serve|ollama pull) ",
     "needs a model server: tests/runner/test_broken_setups.py::test_a_model_endpoint_that_never_answers_fails_fast"),
    (r"^sregym run --suite lite --agent react --model \S+ --base-url http://localhost",
     "needs a model server: tests/runner/test_broken_setups.py::test_a_closed_model_port_fails_fast_with_the_error"),
    (r"^export OPENAI_API_KEY=\.\.\.$", "needs a model: tests/agents/test_react.py::test_react_options_and_keys"),
    (r"^sregym run --suite lite --agent react --model gpt",
     "needs a model: tests/agents/test_react.py::test_react_options_and_keys"),
    (r"^sregym-submit ", "tests/agents/test_command.py::test_command_agent_fixes_and_submits_end_to_end"),
    (r"^sregym run --suite lite --agent command ",
     "tests/agents/test_command.py::test_command_agent_fixes_and_submits_end_to_end"),
    (r"^export (ANTHROPIC|OPENAI)_API_KEY=\.\.\.; +sregym run --suite lite --agent (claude-code|codex)",
     "needs a proprietary CLI: tests/agents/test_command.py::test_presets_say_what_is_missing"),
    (r"^sregym snapshot dataset ", "tests/snapshot/test_dataset.py::test_cli_dataset"),
    (r"^sregym snapshot run --dataset \S+ --agent baseline ", "tests/snapshot/test_run.py::test_cli_runs_and_reports"),
    (r"^sregym snapshot run --dataset \S+ --agent command ",
     "tests/snapshot/test_run.py::test_command_agent_greps_the_snapshot_and_is_scored"),
    (r"^sregym snapshot run --dataset \S+ --agent react ",
     "needs a model server: tests/snapshot/test_run.py::test_react_agent_investigates_with_snapshot_tools_and_submits"),
    (r"^sregym snapshot score ", "tests/snapshot/test_score.py::test_cli_prints_the_table_and_writes_json"),
    (r"^sregym list problems", "tests/problems/test_check_protocol.py::test_registry_has_cards_and_lite_suite"),
    (r"^sregym show ", "tests/problems/test_check_protocol.py::test_show_hides_ground_truth_unless_revealed"),
    (r"^sregym check \S+ --seed 0$", "tests/problems/test_check_protocol.py::test_cli_check_runs_one_problem"),
    (r"^sregym check --all --problems-dir ", "tests/test_docs.py::test_problem_example_passes_check"),
    (r"^sregym view ", "tests/viewer/test_view_api.py::test_cli_serves_a_run_directory"),
    (r"^sregym run --suite lite --agent baseline --executor ray ",
     "tests/runner/test_ray_executor.py::test_the_cli_runs_on_ray_and_checks_its_flags"),
]


def readme_commands() -> list[str]:
    """Every command line of the README's bash blocks (continuations joined, comments dropped)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def _test_exists(ref: str) -> bool:
    path, _, name = ref.partition("::")
    tree = ast.parse((ROOT / path).read_text())
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.walk(tree))


def test_every_readme_command_is_exercised() -> None:
    commands = readme_commands()
    assert len(commands) >= 20
    missing = [c for c in commands if not any(re.search(p, c) for p, _ in EXERCISED)]
    assert not missing, "README commands no test or CI step exercises (add one, and an entry above):\n" + \
        "\n".join(missing)
    for _, evidence in EXERCISED:
        if evidence.startswith("ci:"):
            continue
        ref = evidence.split(": ", 1)[-1]
        assert _test_exists(ref), f"{ref} does not exist"
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install -e '.[test]' && python -m pytest -n 3" in ci.splitlines()[-1]
    assert 'pip install -q -e . ' in ci and "--agent baseline" in ci


@pytest.mark.parametrize("index", [0, 1])
def test_python_blocks_run_as_written(index: int, tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) == 2
    proc = subprocess.run([sys.executable, "-c", blocks[index]], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    if index == 0:
        assert proc.stdout.count(" Running ") == 2 and 'Successfully pulled image "nginx:1.25"' in proc.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_twin_up_with_the_app_answers_the_readme_commands(tmp_path: Path) -> None:
    """`sregym twin up --app hotel-reservation --speed 5` (on free ports), then the README's own
    `kubectl get pods -A`, `kubectl --context kind-admin get ns` and the two curl queries."""
    port, prom, loki, jaeger = (_free_port() for _ in range(4))
    kubeconfig = tmp_path / "sregym.yaml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sregym.cli.main", "twin", "up", "--app", "hotel-reservation", "--speed", "5",
         "--port", str(port), "--kubeconfig", str(kubeconfig), "--prometheus-port", str(prom),
         "--loki-port", str(loki), "--jaeger-port", str(jaeger)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
        start_new_session=True)
    try:
        printed = read_lines_until(proc, "export KUBECONFIG=")
        assert printed and printed[-1].strip() == f"export KUBECONFIG={kubeconfig}", printed
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}

        def sh(*argv: str) -> str:
            done = subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            return done.stdout

        pods = ""
        for _ in range(90):  # the app is deployed as simulated time flows (5x wall time here)
            pods = sh("kubectl", "get", "pods", "-A")
            if re.search(r"frontend-\S+\s+1/1\s+Running", pods):
                break
            time.sleep(1)
        assert re.search(r"frontend-\S+\s+1/1\s+Running", pods), pods
        namespaces = sh("kubectl", "--context", "kind-admin", "get", "ns")
        assert "hotel-reservation" in namespaces and "kube-system" in namespaces
        query = "query=sum by (service_name) (rate(traces_span_metrics_calls_total[1m]))"
        rates = ""
        for _ in range(60):  # spans flow once the load generator has run for a simulated minute
            rates = sh("curl", "-s", f"http://127.0.0.1:{prom}/api/v1/query", "--data-urlencode", query)
            if '"service_name":"frontend"' in rates:
                break
            time.sleep(1)
        assert '"status":"success"' in rates and '"service_name":"frontend"' in rates, rates
        services = sh("curl", "-s", f"http://127.0.0.1:{jaeger}/api/services")
        assert '"frontend"' in services
    finally:
        stop_group(proc)


def test_readme_layer_table_matches_the_registry() -> None:
    """The README's catalogue-by-layer table states the registry's counts (and its total)."""
    from collections import Counter

    from sregym.problems import all_problem_ids, get_problem

    text = (ROOT / "README.md").read_text()
    rows = dict(re.findall(r"^\| ([a-z0-9-]+) \| [^|]+ \| (\d+) \|$", text, re.M))
    counts = Counter(layer for pid in all_problem_ids() for layer in get_problem(pid).tags.layers)
    assert rows == {layer: str(n) for layer, n in counts.items()}
    assert f"{len(all_problem_ids())} problems in all" in text
    from sregym.problems.family import FAMILIES

    FAMILIES.discover()
    variants = sum(len(FAMILIES.get(name).variant_ids()) for name in FAMILIES.names())
    scenarios = len(all_problem_ids())
    assert (f"which are {scenarios} scenarios and {scenarios + variants} problem ids: {len(FAMILIES.names())} of them\n"
            f"are families whose variants") in text and f"add {variants} ids." in text
