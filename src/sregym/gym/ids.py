"""Gymnasium environment ids for problem ids, and back.

Gymnasium ids have the shape `[namespace/]name[-vN]` with one slash at most, while a problem id
is `app/name-vN`. The environment of problem `demo-shop/service-selector-mismatch-v1` is
`sregym/demo-shop.service-selector-mismatch-v1`: the app and the name joined by a dot, so the
problem's version is the environment's version too. Variants (`id@name=value`) are not
registered one by one; `sregym/Problem-v0` takes any problem id, variants included, as
`problem_id=`.
"""

from __future__ import annotations

NAMESPACE = "sregym"
GENERIC_ID = f"{NAMESPACE}/Problem-v0"


def env_id(problem_id: str) -> str:
    """The Gymnasium id registered for `problem_id`."""
    app, sep, name = problem_id.partition("/")
    if not sep or "/" in name or "@" in problem_id:
        raise ValueError(f"{problem_id!r} is not a plain app/name-vN problem id (use {GENERIC_ID} with problem_id=)")
    return f"{NAMESPACE}/{app}.{name}"


def problem_id_of(gym_id: str) -> str:
    """The problem id behind a registered Gymnasium id (the inverse of `env_id`)."""
    namespace, sep, rest = gym_id.partition("/")
    app, dot, name = rest.partition(".")
    if namespace != NAMESPACE or not sep or not dot:
        raise ValueError(f"{gym_id!r} is not an sregym environment id ({NAMESPACE}/<app>.<name>-vN)")
    return f"{app}/{name}"


__all__ = ["GENERIC_ID", "NAMESPACE", "env_id", "problem_id_of"]
