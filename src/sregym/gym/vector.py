"""Vectors of sregym environments: N episodes stepped together, on this machine or a Ray cluster.

- `make_async_vector(problem_ids)`: Gymnasium's own `AsyncVectorEnv`, one worker process per
  environment. Workers are started with `spawn`, so each is a fresh single-threaded process and
  its resets are warm forks (`gym.episode`) whatever threads the trainer runs.
- `RayVectorEnv(problem_ids, num_actors=k)`: the environments spread over `k` Ray actors (the
  `[ray]` extra; any Ray cluster, `ray.init()` first). Each actor drives its share through an
  `AsyncVectorEnv` of its own, because a Ray actor runs several threads and so cannot fork; its
  spawned workers can, so resets on Ray are warm too. `reset`/`step` follow Gymnasium's vector
  API: lists in, (observations, rewards, terminations, truncations, infos) out, with infos a
  list of dicts (one per environment) and an environment reset by the caller when it is done.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from sregym.extras import require


def _env_fns(problem_ids: Sequence[str], seed: int, kwargs: dict[str, Any]) -> list[Any]:
    from sregym.gym.env import make_env

    return [functools.partial(make_env, problem_id, seed=seed + i, **kwargs) for i, problem_id in enumerate(problem_ids)]


def make_async_vector(problem_ids: Sequence[str], seed: int = 0, **kwargs: Any) -> Any:
    """A Gymnasium `AsyncVectorEnv` over one environment per problem id (repeat an id for
    several copies); environment `i` gets twin seed `seed + i`. `kwargs` go to each `SREGymEnv`."""
    gymnasium = require("gymnasium", "vectors of sregym environments")
    return gymnasium.vector.AsyncVectorEnv(_env_fns(problem_ids, seed, kwargs), shared_memory=False,
                                           context="spawn", autoreset_mode=gymnasium.vector.AutoresetMode.DISABLED)


class _Shard:
    """The Ray actor's body: an `AsyncVectorEnv` over a slice of the environments."""

    def __init__(self, problem_ids: list[str], seed: int, kwargs: dict[str, Any]) -> None:
        self.vector = make_async_vector(problem_ids, seed, **kwargs)
        self.size = len(problem_ids)

    def reset(self, seeds: list[int | None] | None, mask: list[bool] | None) -> tuple[list[str], list[dict[str, Any]]]:
        np = require("numpy", "the Ray vector of sregym environments")
        options = {"reset_mask": np.array(mask)} if mask is not None else None
        obs, infos = self.vector.reset(seed=seeds, options=options)
        return list(obs), _unbatch(infos, self.size)

    def step(self, actions: list[str]) -> tuple[list[str], list[float], list[bool], list[bool], list[dict[str, Any]]]:
        obs, rewards, terminated, truncated, infos = self.vector.step(tuple(actions))
        return (list(obs), [float(r) for r in rewards], [bool(t) for t in terminated], [bool(t) for t in truncated],
                _unbatch(infos, self.size))

    def close(self) -> None:
        self.vector.close()


def _unbatch(infos: dict[str, Any], size: int) -> list[dict[str, Any]]:
    """Gymnasium's batched info dict (`key` values + `_key` masks) as one dict per environment."""
    out: list[dict[str, Any]] = [{} for _ in range(size)]
    for key, values in infos.items():
        if key.startswith("_"):
            continue
        present = infos.get(f"_{key}", [True] * size)
        for i in range(size):
            if present[i]:
                value = values[i]
                out[i][key] = value.item() if hasattr(value, "item") and getattr(value, "ndim", 1) == 0 else value
    return out


class RayVectorEnv:
    """`len(problem_ids)` environments over `num_actors` Ray actors (see the module docstring)."""

    def __init__(self, problem_ids: Sequence[str], *, num_actors: int = 2, seed: int = 0,
                 actor_options: dict[str, Any] | None = None, **kwargs: Any) -> None:
        ray = require("ray", "the Ray vector of sregym environments")
        ids = list(problem_ids)
        if not ids:
            raise ValueError("no environments")
        num_actors = max(1, min(num_actors, len(ids)))
        bounds = [round(i * len(ids) / num_actors) for i in range(num_actors + 1)]
        actor = ray.remote(**{"num_cpus": 1, **(actor_options or {})})(_Shard)
        self._ray = ray
        self.num_envs = len(ids)
        self._slices = [(bounds[i], bounds[i + 1]) for i in range(num_actors)]
        self._actors = [actor.remote(ids[a:b], seed + a, kwargs) for a, b in self._slices]

    def reset(self, *, seed: int | list[int | None] | None = None,
              mask: Sequence[bool] | None = None) -> tuple[list[str], list[dict[str, Any]]]:
        """Reset every environment (or those where `mask` is true). `seed`: one int (environment
        `i` gets `seed + i`) or one seed per environment."""
        seeds = [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else seed
        calls = [actor.reset.remote(seeds[a:b] if seeds is not None else None,
                                    list(mask[a:b]) if mask is not None else None)
                 for actor, (a, b) in zip(self._actors, self._slices, strict=True)]
        observations: list[str] = []
        infos: list[dict[str, Any]] = []
        for obs, info in self._ray.get(calls):
            observations += obs
            infos += info
        return observations, infos

    def step(self, actions: Sequence[str]) -> tuple[list[str], list[float], list[bool], list[bool], list[dict[str, Any]]]:
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} actions for {self.num_envs} environments")
        calls = [actor.step.remote(list(actions[a:b])) for actor, (a, b) in zip(self._actors, self._slices, strict=True)]
        out: tuple[list[Any], ...] = ([], [], [], [], [])
        for part in self._ray.get(calls):
            for column, values in zip(out, part, strict=True):
                column += values
        return out  # type: ignore[return-value]

    def close(self) -> None:
        if self._actors:
            self._ray.get([actor.close.remote() for actor in self._actors])
            for actor in self._actors:
                self._ray.kill(actor)
            self._actors = []


__all__ = ["RayVectorEnv", "make_async_vector"]
