"""The Gymnasium-style session: reset/step, reward only when scored, terminated vs truncated."""

from __future__ import annotations

import re

import pytest

import sregym
from sregym.env import Capability, Limits, Session

SELECTOR = "demo-shop/service-selector-mismatch-v1"


def test_reset_returns_the_page_and_the_tools() -> None:
    with sregym.make(SELECTOR, seed=4) as env:
        assert isinstance(env, Session)
        observation, info = env.reset()
        assert observation.startswith("INCIDENT PAGE") and "demo-shop" in observation
        assert info["seed"] == 4 and info["phase"] == "diagnosis"
        assert "kubectl" in [t["name"] for t in info["tools"]]
        obs, reward, terminated, truncated, info = env.step({"tool": "kubectl", "args": {"command": "get svc"}})
        assert "catalog" in obs and reward == 0.0 and not terminated and not truncated
        assert info["tool_calls"] == 1 and not info["is_error"]


def test_solving_terminates_with_the_score() -> None:
    with sregym.make(SELECTOR, seed=5) as env:
        env.reset()
        gold = env.conductor.grants({Capability.GOLD}).gold  # what the self-test agent is handed
        assert gold is not None
        obs, reward, terminated, truncated, info = env.step({"tool": "submit_diagnosis",
                                                             "args": gold.diagnosis()})
        assert (reward, terminated, truncated) == (0.0, False, False) and info["phase"] == "mitigation"
        for command in gold.commands():
            assert env.step({"tool": "kubectl", "args": {"command": command}})[1] == 0.0
        obs, reward, terminated, truncated, info = env.step({"tool": "submit_mitigation_done", "args": {}})
        assert terminated and not truncated and reward == 1.0
        assert info["result"]["passed"] is True and info["phase"] == "done"
        # After the end: nothing more happens.
        obs, reward, terminated, truncated, _ = env.step({"tool": "get_alerts", "args": {}})
        assert "episode is over" in obs and reward == 0.0 and terminated and not truncated


def test_step_limit_truncates() -> None:
    with sregym.make(SELECTOR, seed=6, limits=Limits(max_steps=3)) as env:
        env.reset()
        outcomes = [env.step({"tool": "get_alerts", "args": {}})[2:4] for _ in range(3)]
        assert outcomes == [(False, False), (False, False), (False, True)]
        _, reward, terminated, truncated, _info = env.step({"tool": "get_alerts", "args": {}})
        assert truncated and not terminated and reward == 0.0


def test_wrong_diagnosis_scores_zero_and_malformed_actions_are_observations() -> None:
    with sregym.make(SELECTOR, seed=7, phases=("diagnosis",)) as env:
        env.reset()
        obs, reward, terminated, truncated, info = env.step({"tool": "kubectl"})
        assert info["is_error"] and "missing required argument 'command'" in obs
        obs, _, _, _, info = env.step({"name": "kubectl"})
        assert info["is_error"] and "an action is a dict" in obs
        obs, reward, terminated, truncated, info = env.step(
            {"tool": "submit_diagnosis", "args": {"root_cause_entities": ["demo-shop/Deployment/frontend"],
                                                  "mechanism": "frontend crashes"}})
        assert terminated and not truncated and reward == 0.0
        assert info["result"]["diagnosis"]["root_cause_score"] == 0.0


def _undated(text: str) -> str:
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", text)


def test_reset_with_a_new_seed_starts_fresh_and_is_deterministic() -> None:
    env = sregym.make(SELECTOR, seed=1)
    first, _ = env.reset()
    a = env.step({"tool": "kubectl", "args": {"command": "get pods -o name"}})[0]
    again, info = env.reset(seed=1)
    b = env.step({"tool": "kubectl", "args": {"command": "get pods -o name"}})[0]
    # The page's time reads on the machine's clock (the wall anchor), like kubectl's; the rest of
    # the brief is a function of the seed.
    assert _undated(first) == _undated(again) and a == b and info["episode"] == 2
    _other, info = env.reset(seed=2)
    assert info["seed"] == 2 and env.step({"tool": "get_app_context", "args": {}})[4]["tool_calls"] == 1
    env.close()
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"tool": "get_alerts", "args": {}})


def test_import_sregym_stays_cheap() -> None:
    import subprocess
    import sys

    code = ("import sys, sregym; assert callable(sregym.make); "
            "print(sorted(m for m in sys.modules if m.startswith(('sregym.', 'pydantic', 'httpx'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
