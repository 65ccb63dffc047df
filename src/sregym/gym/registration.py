"""Registering every problem with Gymnasium, so `gymnasium.make("sregym/<app>.<name>-vN")` works.

Importing `sregym.gym` registers them (when the `[gym]` extra is installed); without importing
it first, `gymnasium.make("sregym.gym:sregym/<app>.<name>-vN")` imports it for you (Gymnasium's
`module:id` form). The ids are in `gym.ids`; the entry point builds `gym.env.SREGymEnv` lazily,
so registering imports neither the twin nor the environment class.
"""

from __future__ import annotations

from sregym.extras import require
from sregym.gym.ids import GENERIC_ID, env_id

ENTRY_POINT = "sregym.gym.env:make_env"


def register_all() -> list[str]:
    """Register every problem of the registry (and `sregym/Problem-v0`, which takes any problem
    id as `problem_id=`); returns the Gymnasium ids. Idempotent."""
    gymnasium = require("gymnasium", "the Gymnasium environments (sregym.gym)")
    from sregym.problems import all_problem_ids

    ids = []
    for problem_id in all_problem_ids():
        gym_id = env_id(problem_id)
        ids.append(gym_id)
        if gym_id not in gymnasium.registry:
            gymnasium.register(id=gym_id, entry_point=ENTRY_POINT, kwargs={"problem_id": problem_id})
    if GENERIC_ID not in gymnasium.registry:
        gymnasium.register(id=GENERIC_ID, entry_point=ENTRY_POINT)
    return ids


__all__ = ["ENTRY_POINT", "register_all"]
