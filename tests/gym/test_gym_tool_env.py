"""The async tool-calling environment: OpenAI/MCP tool schemas, tool messages, the final
reward, optional shaped rewards, and several episodes in one event loop."""

from __future__ import annotations

import asyncio
import json

import pytest

from sregym.env import Capability, Conductor
from sregym.gym.tool_env import Shaping, ToolCallEnv

SELECTOR = "demo-shop/service-selector-mismatch-v1"


def reference(seed: int) -> tuple[dict, list[str]]:
    """The gold diagnosis and fix for SELECTOR (what a perfect policy would send)."""
    with Conductor(SELECTOR, seed=seed, fixed_time=True) as c:
        c.start()
        gold = c.grants({Capability.GOLD}).gold
        answer = (gold.diagnosis(), gold.commands())
        c.result()
    return answer


def openai_call(i: int, name: str, args: dict) -> dict:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


async def solve(env: ToolCallEnv, seed: int, diagnosis: dict, commands: list[str]) -> list:
    opening = await env.reset(seed=seed)
    steps = [opening]
    calls = [("kubectl", {"command": "get svc"}), ("submit_diagnosis", diagnosis)]
    calls += [("kubectl", {"command": c}) for c in commands] + [("submit_mitigation_done", {})]
    for i, (name, args) in enumerate(calls):
        steps.append(await env.step(openai_call(i, name, args)))
    await env.close()
    return steps


def test_reset_gives_chat_messages_and_tool_schemas() -> None:
    async def go() -> None:
        env = ToolCallEnv(SELECTOR, seed=2)
        opening = await env.reset()
        assert [m["role"] for m in opening.messages] == ["system", "user"]
        assert opening.messages[1]["content"].startswith("INCIDENT PAGE")
        names = [t["function"]["name"] for t in opening.tools]
        assert "kubectl" in names and "submit_diagnosis" in names
        assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in opening.tools)
        assert [t["name"] for t in env.mcp_tools()] == names and "inputSchema" in env.mcp_tools()[0]
        step = await env.step({"name": "kubectl", "arguments": {"command": "get svc"}, "id": "c1"})
        assert step.message == {"role": "tool", "content": step.observation, "tool_call_id": "c1"}
        assert "catalog" in step.observation and step.reward == 0.0 and not step.done
        bad = await env.step("not json")
        assert bad.info["is_error"] and "not valid JSON" in bad.observation and bad.reward == 0.0
        await env.close()

    asyncio.run(go())


def test_the_reward_comes_at_the_end_and_shaping_is_opt_in() -> None:
    diagnosis, commands = reference(8)

    async def go() -> tuple[list, list]:
        plain = await solve(ToolCallEnv(SELECTOR), 8, diagnosis, commands)
        shaped = await solve(ToolCallEnv(SELECTOR, shaped=True, shaping=Shaping(phase_submitted=0.1)), 8,
                             diagnosis, commands)
        return plain, shaped

    plain, shaped = asyncio.run(go())
    assert [s.reward for s in plain[1:]] == [0.0] * (len(plain) - 2) + [1.0]
    assert plain[-1].done and plain[-1].terminated and plain[-1].info["score"] == 1.0
    # Shaped: +0.1 when the diagnosis is submitted and when mitigation is declared done; the score is unchanged.
    assert shaped[2].reward == 0.1 and shaped[-1].reward == 1.1 and shaped[-1].info["score"] == 1.0
    assert [s.observation for s in plain[1:]] == [s.observation for s in shaped[1:]]


def test_episodes_run_concurrently_in_one_loop_with_the_same_results_as_one_by_one() -> None:
    diagnosis, commands = reference(9)

    async def together() -> list:
        return list(await asyncio.gather(*(solve(ToolCallEnv(SELECTOR), 9, diagnosis, commands) for _ in range(3))))

    async def alone() -> list:
        return await solve(ToolCallEnv(SELECTOR), 9, diagnosis, commands)

    runs = asyncio.run(together())
    single = asyncio.run(alone())
    for run in runs:
        assert [s.observation for s in run[1:]] == [s.observation for s in single[1:]]
        assert run[-1].reward == single[-1].reward == 1.0


@pytest.mark.parametrize("seed", [3])
def test_step_before_reset_is_an_error(seed: int) -> None:
    with pytest.raises(RuntimeError, match="reset"):
        asyncio.run(ToolCallEnv(SELECTOR, seed=seed).step({"tool": "get_alerts"}))
