"""Presets of the `command` agent for the coding CLIs people use: `claude-code` and `codex`.

Each builds the non-interactive invocation of its CLI with the instructions file as the prompt
(the incident page plus how to use kubectl, the query APIs and `sregym-submit`), and checks up
front — when the agent is built, so `sregym run` refuses before the first attempt — that the
binary is on PATH and its API key is in the environment, saying exactly what to do otherwise
(a `SetupError`: the machine is not set up, so the run refuses with exit code 3).

Both CLIs run with their permission prompts disabled: nobody is at the keyboard, and they must
be able to run kubectl and reach loopback URLs. They run in the `command` agent's sandbox (see
`sregym.sandbox`), which sees only their installation, the attempt's files and a scratch HOME;
of our environment they get their API key and the variables of their vendor (`ANTHROPIC_*`,
`CLAUDE_*`; `OPENAI_*`, `CODEX_*`), plus proxy and CA settings.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, ClassVar

from sregym.agents.command import DEFAULTS, CommandAgent
from sregym.agents.registry import agent
from sregym.errors import SetupError

PRESET_DEFAULTS: dict[str, Any] = {**{k: v for k, v in DEFAULTS.items() if k != "command"},
                                   "binary": None, "api_key_env": None, "extra_args": []}


class CliPreset(CommandAgent):
    """A `CommandAgent` whose command line is built for one coding CLI."""

    binary: ClassVar[str] = ""
    install_hint: ClassVar[str] = ""
    key_env: ClassVar[str] = ""
    env_prefixes: ClassVar[tuple[str, ...]] = ()
    known_options: ClassVar[dict[str, Any]] = PRESET_DEFAULTS

    def validate(self) -> None:
        binary = self.options["binary"] or self.binary
        self.executable = shutil.which(binary)
        if self.executable is None:
            raise SetupError(f"{binary} not found on PATH: install {self.install_hint} "
                             f"(or pass -o binary=/path/to/{binary})")
        if not os.access(self.executable, os.X_OK):
            raise SetupError(f"{self.executable} is not executable")
        key_env = self.options["api_key_env"] or self.key_env
        if not os.environ.get(key_env):
            raise SetupError(f"{key_env} is not set: export it before running the {self.name} agent "
                             f"(or name another variable with --api-key-env)")
        self.check_sandbox()

    def passed_env(self) -> list[str]:
        key_env = self.options["api_key_env"] or self.key_env
        vendor = [name for name in os.environ if name.startswith(self.env_prefixes)]
        return [*super().passed_env(), key_env, *vendor]

    def argv(self, instructions: str, files: dict[str, Path]) -> list[str]:
        raise NotImplementedError


@agent
class ClaudeCodeAgent(CliPreset):
    """Claude Code in print mode (`claude -p`), with the attempt's MCP server configured."""

    name = "claude-code"
    binary = "claude"
    install_hint = "Claude Code (npm install -g @anthropic-ai/claude-code)"
    key_env = "ANTHROPIC_API_KEY"
    env_prefixes = ("ANTHROPIC_", "CLAUDE_")

    def argv(self, instructions: str, files: dict[str, Path]) -> list[str]:
        argv = [str(self.executable), "-p", instructions, "--output-format", "text",
                "--dangerously-skip-permissions", "--mcp-config", str(files["mcp"])]
        if self.options["model"]:
            argv += ["--model", str(self.options["model"])]
        return argv + [str(a) for a in self.options["extra_args"]]


@agent
class CodexAgent(CliPreset):
    """OpenAI Codex CLI in non-interactive mode (`codex exec`), with network access so kubectl
    and the query APIs are reachable."""

    name = "codex"
    binary = "codex"
    install_hint = "the Codex CLI (npm install -g @openai/codex)"
    key_env = "OPENAI_API_KEY"
    env_prefixes = ("OPENAI_", "CODEX_")

    def argv(self, instructions: str, files: dict[str, Path]) -> list[str]:
        argv = [str(self.executable), "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access"]
        if self.options["model"]:
            argv += ["--model", str(self.options["model"])]
        return argv + [str(a) for a in self.options["extra_args"]] + [instructions]


__all__ = ["ClaudeCodeAgent", "CliPreset", "CodexAgent"]
