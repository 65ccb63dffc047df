"""sregym's problems as Gymnasium environments: registration, spaces, Gymnasium's own
`check_env`, seeds, and warm resets that give exactly the cold observations.

The `check_env` and warm/cold runs happen in a fresh process (tests/support/gym_probe.py): only
a single-threaded process may fork, and forking is what a warm reset is.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

gymnasium = pytest.importorskip("gymnasium")

from sregym.gym.ids import GENERIC_ID, env_id, problem_id_of  # noqa: E402
from sregym.gym.text import CHARSET  # noqa: E402
from sregym.problems import all_problem_ids  # noqa: E402

PROBE = Path(__file__).resolve().parents[1] / "support" / "gym_probe.py"
SELECTOR = "demo-shop/service-selector-mismatch-v1"


def probe(command: str, *problem_ids: str) -> dict:
    proc = subprocess.run([sys.executable, str(PROBE), command, *problem_ids], capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def sampled_ids() -> list[str]:
    """One problem per app but the largest (astronomy-shop, ~30 s per cold twin here), drawn
    with a fixed seed so the sample is the same on every run."""
    by_app: dict[str, list[str]] = {}
    for problem_id in all_problem_ids():
        by_app.setdefault(problem_id.split("/")[0], []).append(problem_id)
    rng = random.Random(23)
    return [rng.choice(ids) for app, ids in sorted(by_app.items()) if app != "astronomy-shop"]


def test_every_problem_is_registered_under_an_id_that_maps_back() -> None:
    ids = all_problem_ids()
    assert len(ids) > 100
    for problem_id in ids:
        gym_id = env_id(problem_id)
        assert gym_id in gymnasium.registry and problem_id_of(gym_id) == problem_id
        assert gymnasium.registry[gym_id].kwargs == {"problem_id": problem_id}
    assert GENERIC_ID in gymnasium.registry
    with pytest.raises(ValueError):
        env_id("demo-shop/family-v1@replicas=2")


def test_make_gives_text_spaces_and_the_generic_id_takes_any_problem() -> None:
    env = gymnasium.make(env_id(SELECTOR), seed=3)
    assert isinstance(env.observation_space, gymnasium.spaces.Text)
    assert isinstance(env.action_space, gymnasium.spaces.Text)
    assert env.unwrapped.twin_seed == 3 and env.unwrapped.problem.id == SELECTOR
    assert set(env.observation_space.character_set) == set(CHARSET)
    env.close()
    generic = gymnasium.make(GENERIC_ID, problem_id=SELECTOR, seed=4)
    assert generic.unwrapped.problem.id == SELECTOR and generic.unwrapped.twin_seed == 4
    generic.close()


def test_gymnasium_check_env_passes_for_sampled_problems(record_property: pytest.FixtureRequest) -> None:
    ids = sampled_ids()
    assert len(ids) == 3
    report = probe("check_env", *ids)
    for problem_id in ids:
        assert report[problem_id]["error"] is None, report[problem_id]["error"]
        assert report[problem_id]["warm"] is True  # the probe process can fork
        assert report[problem_id]["warnings"] == []
    record_property("report", f"check_env passed on {', '.join(ids)}")  # type: ignore[operator]


def test_a_warm_reset_gives_the_observations_and_reward_of_a_cold_one() -> None:
    runs = probe("episodes", SELECTOR)[SELECTOR]
    assert (runs["cold"]["warm"], runs["warm"]["warm"], runs["warm_again"]["warm"]) == (False, True, True)
    assert runs["cold"]["observations"] == runs["warm"]["observations"] == runs["warm_again"]["observations"]
    assert runs["cold"]["rewards"] == runs["warm"]["rewards"] == runs["warm_again"]["rewards"]
    assert runs["cold"]["rewards"][-1] == 1.0 and runs["cold"]["done"] == [True, False]  # solved, terminated
    assert runs["cold"]["observations"][0].startswith("INCIDENT PAGE (2026-01-05T")  # simulated time


def test_same_seed_same_observations_and_another_seed_another_twin() -> None:
    env = gymnasium.make(env_id(SELECTOR), seed=3, warm=False).unwrapped
    look = json.dumps({"tool": "kubectl", "args": {"command": "get svc catalog -o jsonpath={.spec.clusterIP}"}})
    first, _ = env.reset(seed=3)
    ip_a = env.step(look)[0]
    again, _ = env.reset()  # no seed: the same twin seed again
    ip_b = env.step(look)[0]
    _, info = env.reset(seed=4)
    ip_c = env.step(look)[0]
    env.close()
    assert first == again and ip_a == ip_b and info["seed"] == 4
    assert ip_a.count(".") == 3 and ip_c != ip_a  # Service IPs are drawn from the seed


def test_malformed_actions_are_error_observations_and_long_output_is_cut() -> None:
    env = gymnasium.make(env_id(SELECTOR), seed=5, warm=False, max_observation_chars=300).unwrapped
    page, _ = env.reset()
    assert len(page) <= 300 and page in env.observation_space
    obs, reward, terminated, truncated, info = env.step("kubectl get pods")
    assert "not valid JSON" in obs and info["malformed"] and (reward, terminated, truncated) == (0.0, False, False)
    obs, *_rest, info = env.step(json.dumps({"tool": "kubectl", "args": {"command": "get events -A"}}))
    assert len(obs) == 300 and "more characters truncated]" in obs and obs in env.observation_space
    assert info["tool_calls"] == 1  # the malformed action cost no tool call
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"bogus": 1})
    env.close()
