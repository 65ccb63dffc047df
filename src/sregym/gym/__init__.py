"""sregym for reinforcement learning: Gymnasium environments, an async tool-calling environment
for LLM agent loops, vectors of environments, and resets forked from a warm twin (docs/rl.md).

Importing this package registers every problem with Gymnasium when the `[gym]` extra is
installed (`gym.registration`); nothing heavy loads until an environment is made.
"""

from __future__ import annotations

from sregym.extras import available
from sregym.lazy import lazy_attributes

_LAZY = {
    "SREGymEnv": "sregym.gym.env",
    "make_env": "sregym.gym.env",
    "ToolCallEnv": "sregym.gym.tool_env",
    "StepResult": "sregym.gym.tool_env",
    "RayVectorEnv": "sregym.gym.vector",
    "make_async_vector": "sregym.gym.vector",
    "env_id": "sregym.gym.ids",
    "problem_id_of": "sregym.gym.ids",
    "register_all": "sregym.gym.registration",
}

__getattr__ = lazy_attributes(__name__, _LAZY)

if available("gymnasium"):
    from sregym.gym.registration import register_all as _register_all

    _register_all()

__all__ = sorted(_LAZY)
