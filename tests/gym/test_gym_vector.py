"""Vectors of environments: Gymnasium's AsyncVectorEnv (spawned workers, warm resets) and the
Ray actor vector (run only where Ray is installed, on a local Ray with 2 CPUs)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("gymnasium")

from sregym.gym.vector import make_async_vector

SELECTOR = "demo-shop/service-selector-mismatch-v1"
LOOK = json.dumps({"tool": "kubectl", "args": {"command": "get svc catalog -o jsonpath={.spec.clusterIP}"}})


def direct(seed: int) -> tuple[str, str]:
    from sregym.gym.env import SREGymEnv

    env = SREGymEnv(SELECTOR, seed=seed, warm=False)
    page, _ = env.reset()
    ip = env.step(LOOK)[0]
    env.close()
    return page, ip


def test_async_vector_env_steps_each_environment_like_a_single_one() -> None:
    vector = make_async_vector([SELECTOR, SELECTOR], seed=20)
    try:
        pages, infos = vector.reset()
        assert list(infos["warm"]) == [True, True]  # spawned workers are single-threaded: they fork
        obs, rewards, terminated, truncated, _ = vector.step((LOOK, "oops"))
        assert list(rewards) == [0.0, 0.0] and not any(terminated) and not any(truncated)
        assert "not valid JSON" in obs[1]
        again, _ = vector.reset(seed=[20, 21])
    finally:
        vector.close()
    assert (pages[0], obs[0]) == direct(20)
    assert pages[1] == again[1] == direct(21)[0] and again[0] == pages[0]


def test_ray_vector_env_matches_the_single_environments() -> None:
    ray = pytest.importorskip("ray")
    from sregym.gym.vector import RayVectorEnv

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        vector = RayVectorEnv([SELECTOR, SELECTOR], num_actors=2, seed=30)
        pages, infos = vector.reset()
        obs, rewards, terminated, truncated, _ = vector.step([LOOK, LOOK])
        assert truncated == [False, False]
        vector.close()
    finally:
        ray.shutdown()
    assert [i["warm"] for i in infos] == [True, True] and rewards == [0.0, 0.0] and terminated == [False, False]
    assert (pages[0], obs[0]) == direct(30) and (pages[1], obs[1]) == direct(31)
