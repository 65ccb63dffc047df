"""RL throughput: reset latency (cold vs warm fork) and episodes per hour per core.

    python benchmarks/rl_throughput.py [--problem demo-shop/service-selector-mismatch-v1]
                                       [--seed 0] [--episodes 10] [--cold-episodes 3]

A scripted policy plays every episode: one look around (`get_alerts`, `kubectl get pods`), then
the problem's reference answer (the gold diagnosis, the gold fix as kubectl commands, done), so
each episode is a full attempt that is scored (reward 1 when it passes). The same episodes run
through `sregym.gym.env.SREGymEnv` cold (`warm=False`: every reset deploys a fresh twin) and warm
(every reset forks the prepared twin).

Reported: reset latency (median and max) and throughput as episodes per hour of wall time in one
process and per CPU-core hour (CPU seconds of this process and of its reaped children: the
episode's forked child, kubectl), so other load on a shared machine does not count. The warm
figures are the steady state: the first warm episode, which prepares the twin once, is left
out and its reset time reported as `first_reset_s`. Run it on an otherwise idle machine for
comparable wall-clock figures.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from typing import Any


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def policy(problem_id: str, seed: int) -> list[str]:
    """The scripted episode's actions (JSON tool calls)."""
    from sregym.env import Capability, Conductor

    with Conductor(problem_id, seed=seed, fixed_time=True) as reference:
        reference.start()
        gold = reference.grants({Capability.GOLD}).gold
        diagnosis, commands = gold.diagnosis(), gold.commands()
        reference.result()
    calls: list[dict[str, Any]] = [{"tool": "get_alerts", "args": {}},
                                   {"tool": "kubectl", "args": {"command": "get pods"}},
                                   {"tool": "submit_diagnosis", "args": diagnosis}]
    calls += [{"tool": "kubectl", "args": {"command": c}} for c in commands]
    calls.append({"tool": "submit_mitigation_done", "args": {}})
    return [json.dumps(c) for c in calls]


def play(problem_id: str, seed: int, episodes: int, actions: list[str], *, warm: bool) -> dict[str, Any]:
    from sregym.gym.env import SREGymEnv
    from sregym.gym.episode import PREPARED, reap_children

    PREPARED.clear()
    env = SREGymEnv(problem_id, seed=seed, warm=warm)
    resets, walls, cpus, rewards, warm_flags = [], [], [], [], []
    for _ in range(episodes):
        cpu0, wall0 = cpu_seconds(), time.perf_counter()
        _, info = env.reset()
        resets.append(time.perf_counter() - wall0)
        warm_flags.append(info["warm"])
        reward = 0.0
        for action in actions:
            _, reward, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
        rewards.append(reward)
        reap_children(wait=True)  # the episode's child (warm): its CPU time is counted once reaped
        walls.append(time.perf_counter() - wall0)
        cpus.append(cpu_seconds() - cpu0)
    env.close()
    reap_children(wait=True)
    # Steady state: a warm run's first episode prepares the twin (reported as first_reset_s).
    skip = 1 if warm and episodes > 1 else 0
    wall, cpu = sum(walls[skip:]), sum(cpus[skip:])
    n = episodes - skip
    return {"episodes": episodes, "warm": all(warm_flags), "mean_reward": round(statistics.fmean(rewards), 3),
            "first_reset_s": round(resets[0], 3), "reset_median_s": round(statistics.median(resets[skip:]), 3),
            "reset_max_s": round(max(resets[skip:]), 3), "episode_wall_median_s": round(statistics.median(walls[skip:]), 3),
            "episode_cpu_median_s": round(statistics.median(cpus[skip:]), 3),
            "episodes_per_hour": round(n * 3600 / wall), "episodes_per_core_hour": round(n * 3600 / cpu)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="demo-shop/service-selector-mismatch-v1")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--cold-episodes", type=int, default=3)
    args = parser.parse_args()
    actions = policy(args.problem, args.seed)
    cold = play(args.problem, args.seed, args.cold_episodes, actions, warm=False)
    warm = play(args.problem, args.seed, args.episodes, actions, warm=True)
    report = {"problem": args.problem, "seed": args.seed, "actions_per_episode": len(actions), "cold": cold,
              "warm": warm}
    print(json.dumps(report, indent=2))
    print(f"reset: cold {cold['reset_median_s']} s, warm {warm['reset_median_s']} s "
          f"(first warm reset, preparing the twin: {warm['first_reset_s']} s)")
    print(f"episodes per core-hour: cold {cold['episodes_per_core_hour']}, warm {warm['episodes_per_core_hour']}; "
          f"per wall hour in one process: cold {cold['episodes_per_hour']}, warm {warm['episodes_per_hour']}")


if __name__ == "__main__":
    main()
