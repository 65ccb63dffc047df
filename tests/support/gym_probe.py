"""Drive sregym's Gymnasium environments in a process of their own, for tests/gym.

A fresh single-threaded process can fork, so its resets are the warm ones RL users get; a pytest
worker (with xdist's receiver thread) cannot, and would only exercise the cold path. Run as
`python tests/support/gym_probe.py <command> <problem-id>...`; prints one JSON object.

Commands:
- `check_env`: Gymnasium's own `check_env` on each problem's environment (made with
  `gymnasium.make`), whether it passed (or the traceback), whether resets were warm, and the
  warnings Gymnasium logged;
- `episodes`: a scripted episode (a kubectl call, an alert query, the gold answer, the gold
  fix, done) run warm and cold on each problem, with every observation and the reward, so the
  test can compare them.
"""

from __future__ import annotations

import json
import sys
import traceback
import warnings
from typing import Any


def check_env_report(problem_ids: list[str]) -> dict[str, Any]:
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    import sregym.gym

    out = {}
    for problem_id in problem_ids:
        env = gymnasium.make(sregym.gym.env_id(problem_id), seed=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                check_env(env.unwrapped)
                error = None
            except Exception:
                error = traceback.format_exc()
        _, info = env.unwrapped.reset(seed=123)
        out[problem_id] = {"error": error, "warm": info["warm"], "warnings": [str(w.message) for w in caught]}
        env.close()
    return out


def scripted_episode(env: Any, seed: int) -> dict[str, Any]:
    """One episode with a fixed script: two looks around, the reference diagnosis and fix."""
    from sregym.env import Capability

    page, info = env.reset(seed=seed)
    observations = [page]
    rewards = []
    for action in ({"tool": "kubectl", "args": {"command": "get pods -o wide"}}, {"tool": "get_alerts", "args": {}}):
        obs, reward, *_ = env.step(json.dumps(action))
        observations.append(obs)
        rewards.append(reward)
    # The reference answer, from a conductor of the same problem and seed (the agent never sees it).
    from sregym.env import Conductor

    with Conductor(env.problem, seed=seed, fixed_time=True) as reference:
        reference.start()
        gold = reference.grants({Capability.GOLD}).gold
        diagnosis, commands = gold.diagnosis(), gold.commands()
        reference.result()
    actions = [{"tool": "submit_diagnosis", "args": diagnosis}]
    actions += [{"tool": "kubectl", "args": {"command": c}} for c in commands]
    actions += [{"tool": "submit_mitigation_done", "args": {}}]
    done = (False, False)
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(json.dumps(action))
        observations.append(obs)
        rewards.append(reward)
        done = (terminated, truncated)
    return {"warm": info["warm"], "observations": observations, "rewards": rewards, "done": list(done)}


def episodes_report(problem_ids: list[str]) -> dict[str, Any]:
    from sregym.gym.env import SREGymEnv

    out = {}
    for problem_id in problem_ids:
        runs = {}
        for name, warm in (("cold", False), ("warm", True), ("warm_again", True)):
            env = SREGymEnv(problem_id, seed=0, warm=warm)
            runs[name] = scripted_episode(env, seed=11)
            env.close()
        out[problem_id] = runs
    return out


if __name__ == "__main__":
    command, ids = sys.argv[1], sys.argv[2:]
    report = {"check_env": check_env_report, "episodes": episodes_report}[command](ids)
    print(json.dumps(report))
