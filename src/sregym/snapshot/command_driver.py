"""A `command` agent offline: any program (Claude Code, Codex, a script) on the read-only copy.

The program runs with the copy as its working directory and learns the rest from its
environment: `SREGYM_SNAPSHOT` (the copy), `SREGYM_OUTPUT` (where to write `output.json`, outside
the copy) and `SREGYM_INSTRUCTIONS` (the task text, the README pointer, the output schema and an
example). Nothing of a live attempt leaks in (no kubeconfig, no API URLs or tokens), nor of our
environment (variables pass by name only, as for a live `command` agent). It runs in the agent
sandbox (`sregym.sandbox`: the read-only copy, its instructions and output directory, its own
files and a scratch HOME; the dataset, the run outputs and the sregym package are not there; its
own PID namespace) and keeps the network, which a hosted model's CLI needs. Without namespaces
it refuses to run (a `SandboxError` before the first repeat) unless `-o sandbox=false`. The time
limit kills its whole process group, and with it the namespace.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from sregym.agents.command import PASSED_ALWAYS, CommandAgent, names, shared_program_paths, truthy
from sregym.agents.registry import get_agent
from sregym.sandbox import SAFE_PATH, Sandbox
from sregym.snapshot.driver import AgentResult, Driver, Trajectory
from sregym.snapshot.sandbox import Workspace, run_process
from sregym.snapshot.task_text import instructions_text
from sregym.tools.output import compact

# Variables of a live attempt that must not leak into an offline one.
_LIVE_ENV = ("KUBECONFIG", "PROMETHEUS_URL", "LOKI_URL", "JAEGER_URL", "SREGYM_AGENT_TOKEN", "SREGYM_SUBMIT_URL",
             "SREGYM_SUBMIT_TOKEN", "SREGYM_MCP_CONFIG", "SREGYM_NAMESPACE", "SREGYM_SNAPSHOT", "SREGYM_OUTPUT",
             "SREGYM_INSTRUCTIONS")


class CommandDriver(Driver):
    """A `CommandAgent` (or preset): its own option checks and command line, our workspace."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        cls = get_agent(self.agent)
        options = dict(self.options)
        if self.time_limit_s is not None:
            options["time_limit_s"] = float(self.time_limit_s)
        for live_only in ("workdir", "mcp"):
            if options.get(live_only) not in (None, True, False):
                raise ValueError(f"option {live_only} has no meaning on a snapshot")
        self.program: CommandAgent = cls(**options)  # type: ignore[assignment]  # checks program and sandbox
        self.time_limit_s = float(self.program.options["time_limit_s"])
        self.confined = truthy(self.program.options["sandbox"])
        if not self.confined:
            print(f"[sregym] warning: the {self.agent} program runs UNCONFINED (-o sandbox=false): it can read "
                  "the dataset's ground truth; its scores mean nothing", file=sys.stderr)

    def run(self, ws: Workspace, answer: Path, trajectory: Trajectory) -> AgentResult:
        instructions = instructions_text(ws.snapshot, answer, self.time_limit_s or 0)
        files = {"instructions": ws.work / "instructions.md", "mcp": ws.work / "mcp.json",
                 "bin": ws.work / "bin"}
        files["instructions"].write_text(instructions, encoding="utf-8")
        files["mcp"].write_text('{"mcpServers": {}}\n', encoding="utf-8")
        command = self.program.argv(instructions, files)
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        shown = command if isinstance(command, str) else " ".join(argv)
        if not argv:
            raise ValueError("empty command")
        passed = (*PASSED_ALWAYS, *self.program.passed_env())
        env = {k: os.environ[k] for k in passed if k in os.environ and k not in _LIVE_ENV}
        path = [*self.program.program_dirs(), str(Path(sys.executable).parent), SAFE_PATH]
        env.update({"SREGYM_SNAPSHOT": str(ws.snapshot), "SREGYM_OUTPUT": str(answer),
                    "SREGYM_INSTRUCTIONS": str(files["instructions"]), "PATH": os.pathsep.join(dict.fromkeys(path))})
        env.update({str(k): str(v) for k, v in dict(self.program.options["env"] or {}).items()})
        if self.confined:
            shared = [*shared_program_paths(argv, self.program.executable),
                      *(Path(p).expanduser().resolve() for p in names(self.program.options["share"]))]
            sandbox = Sandbox(scratch_mb=int(self.program.options["scratch_mb"]), workdir=ws.snapshot.resolve(),
                              read_only=(ws.snapshot.resolve(), *dict.fromkeys(shared)),
                              writable=(ws.work.resolve(),), hide=tuple(self.hide))
            argv = sandbox.wrap(argv)
            # The program is uid 0 inside its user namespace; Claude Code then refuses to skip its
            # permission prompts unless told it is sandboxed — which, here, it really is.
            env = sandbox.environment(env)
        else:
            env = {**os.environ, **env}
        limit = int(self.program.options["output_chars"])
        result = run_process(argv, cwd=ws.snapshot, env=env, time_limit_s=float(self.time_limit_s or 0),
                             max_bytes=limit)
        if result.timed_out:
            status = f"killed: time limit of {self.time_limit_s:g}s reached"
        else:
            status = f"exited with code {result.exit_code}"
        trajectory.write({"index": 1, "tool": "command", "args": {"command": compact(shown, 2_000)},
                          "exit_code": result.exit_code, "status": status, "is_error": status != "exited with code 0",
                          "wall_s": round(result.wall_s, 3),
                          "observation": f"--- stdout ---\n{compact(result.stdout, limit)}\n"
                                         f"--- stderr ---\n{compact(result.stderr, limit)}"})
        if result.timed_out or result.exit_code != 0:
            return AgentResult(f"the program {status}", 0)
        return AgentResult(None, 0)


__all__ = ["CommandDriver"]
