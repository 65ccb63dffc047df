"""One `AttemptConfig`: the command line's defaults are its defaults, and `run.json` stores a
run's configuration exactly as it always has."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from sregym.cli.mcp import mcp_command
from sregym.cli.run import run_command
from sregym.env import AttemptConfig, Conductor, Limits
from sregym.env.config import ATTEMPT_TIMEOUT_S
from sregym.runner.worker import WorkerConfig


def _flag_defaults(command: Callable[..., Any]) -> dict[str, Any]:
    """The default of each typer option of `command`, by parameter name."""
    return {name: param.default.default for name, param in inspect.signature(command).parameters.items()}


@pytest.mark.parametrize("command", [run_command, mcp_command])
def test_cli_defaults_are_the_attempt_config_defaults(command: Callable[..., Any]) -> None:
    flags = _flag_defaults(command)
    defaults = AttemptConfig()
    assert flags["noise"] == defaults.noise == "none"
    assert flags["seconds_per_call"] == defaults.seconds_per_call == 15.0
    assert tuple(flags["phases"].split(",")) == defaults.phases == ("diagnosis", "mitigation")
    assert flags["max_steps"] is None and defaults.limits == Limits()
    if "clock" in flags:
        assert flags["clock"] == defaults.clock == "stepped"
    if "attempt_timeout" in flags:
        assert flags["attempt_timeout"] == ATTEMPT_TIMEOUT_S == 7200.0


def test_run_json_keeps_its_worker_fields() -> None:
    config = WorkerConfig(agent="gold", attempt=AttemptConfig(noise="low", limits=Limits(max_steps=4),
                                                              phases=("diagnosis",)),
                          problems_dirs=("/p",), attempt_timeout_s=60.0)
    stored = config.model_dump(mode="json")
    assert stored == {"agent": "gold", "agent_options": {}, "noise": "low", "clock": "stepped",
                      "seconds_per_call": 15.0, "limits": {"max_steps": 4}, "phases": ["diagnosis"],
                      "problems_dirs": ["/p"], "agents_dirs": [], "attempt_timeout_s": 60.0}
    assert WorkerConfig.model_validate(stored) == config  # --resume reads it back
    assert WorkerConfig.model_validate_json(config.model_dump_json()) == config  # and so do workers
    assert WorkerConfig(agent="noop").model_dump(mode="json")["limits"] == {}


def test_conductor_takes_a_config_or_single_fields_of_it() -> None:
    config = AttemptConfig(noise="low", seconds_per_call=20.0, phases=("mitigation", "diagnosis"))
    conductor = Conductor("demo-shop/bad-image-tag-v1", config, seconds_per_call=30.0)
    assert (conductor.noise, conductor.seconds_per_call, conductor.phases) == ("low", 30.0, ("diagnosis", "mitigation"))
    assert conductor.limits == Limits() and conductor.baseline_s == 300.0
    with pytest.raises(ValueError, match="phases must be a non-empty subset"):
        AttemptConfig(phases=())
    with pytest.raises(ValueError, match="clock must be 'stepped' or 'realtime'"):
        Conductor("demo-shop/bad-image-tag-v1", clock="fast")
