"""The `kubectl` tool: the real kubectl binary, one non-interactive command at a time.

Agents get the genuine client (its table printing, its error messages, its flags) against the
twin's API server, with a kubeconfig that holds only the agent credential. Commands are parsed
with shell quoting rules but never run through a shell: pipes, command lists, redirections and
substitutions are refused with a message saying what to do instead, and commands that would wait
for a terminal or hold a port open (edit, attach, port-forward, proxy, exec -it) are refused too,
because nobody is at a keyboard and the call would hang the attempt.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sregym.tools.output import compact

INTERACTIVE_VERBS = {
    "edit": "`kubectl edit` opens an editor; use `kubectl patch` or `kubectl set` instead.",
    "attach": "`kubectl attach` needs a terminal; use `kubectl logs` instead.",
    "port-forward": "`kubectl port-forward` holds a port open; query services from inside the "
                    "cluster with `kubectl exec POD -- <command>` instead.",
    "proxy": "`kubectl proxy` runs a long-lived server; call the API through kubectl commands instead.",
}
_SHELL_TOKENS = ("|", "||", "&&", ";", "&", ">", ">>", "<", "<<", "2>", "2>&1", "&>")
_SHELL_CHARS = ("$(", "`", "|", ";", "&&", ">", "<")


class CommandRejected(ValueError):
    """A command the tool will not run, with a message the agent can act on."""


def parse_command(command: str) -> list[str]:
    """kubectl's arguments (without `kubectl`), or `CommandRejected` saying why not."""
    text = command.strip()
    if not text:
        raise CommandRejected("empty command: pass kubectl arguments, e.g. `get pods -A`.")
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError as exc:
        raise CommandRejected(f"cannot parse the command ({exc}); check the quoting.") from None
    composite = [t for t in tokens if t in _SHELL_TOKENS or t.startswith(("|", ";", "&", ">", "<"))]
    if composite or "$(" in text or "`" in text:
        raise CommandRejected(
            "shell syntax is not supported: the command runs kubectl directly, without a shell, so "
            "pipes, `;`, `&&`, redirections and `$(...)` cannot be used. Run one kubectl command per "
            "call; use `-o jsonpath=...`, `-o custom-columns=...`, `-l`/`--field-selector` or "
            "`--sort-by` to filter output.")
    if tokens and tokens[0] == "kubectl":
        tokens = tokens[1:]
    if not tokens:
        raise CommandRejected("empty command: pass kubectl arguments, e.g. `get pods -A`.")
    verb = _verb(tokens)
    if verb in INTERACTIVE_VERBS:
        raise CommandRejected(f"interactive commands are not supported: {INTERACTIVE_VERBS[verb]}")
    if verb in ("exec", "run", "debug") and _wants_terminal(tokens):
        raise CommandRejected(
            f"interactive commands are not supported: `kubectl {verb} -i/-t` needs a terminal; run a "
            f"single command instead, e.g. `kubectl exec POD -- cat /etc/hosts`.")
    flags = _before_dashdash(tokens)
    watching = {"get": ("-w", "--watch", "--watch-only"), "events": ("-w", "--watch"),
                "logs": ("-f", "--follow")}.get(verb, ())
    if any(t in watching or (t.split("=", 1)[0] in watching and not t.endswith("=false")) for t in flags):
        raise CommandRejected(
            "watching or following never returns here: drop -w/--watch/-f/--follow and run the "
            "command again later to see changes.")
    if verb == "rollout" and "status" in flags and not any(t.startswith(("-w", "--watch")) for t in flags):
        # Time only moves between tool calls, so waiting for a rollout would never end.
        tokens = [*flags, "--watch=false", *tokens[len(flags):]]
    if any(t.startswith("--kubeconfig") or t in ("--token", "--as", "--as-group", "--user", "--context",
                                                  "--server", "-s") or
           t.startswith(("--token=", "--as=", "--as-group=", "--user=", "--context=", "--server="))
           for t in _before_dashdash(tokens)):
        raise CommandRejected("credential and server flags (--kubeconfig, --token, --as, --user, "
                              "--context, --server) are fixed for this session; remove them.")
    return tokens


# Global flags that take a separate value (`-n demo get pods`): the value is not the verb.
_VALUE_FLAGS = {"-n", "--namespace", "-l", "--selector", "-o", "--output", "-c", "--container",
                "--request-timeout", "--field-selector", "-v", "--v", "--cache-dir"}


def _verb(tokens: list[str]) -> str:
    skip = False
    for t in tokens:
        if skip:
            skip = False
            continue
        if t in _VALUE_FLAGS:
            skip = True
            continue
        if not t.startswith("-"):
            return t
    return ""


def _before_dashdash(tokens: list[str]) -> list[str]:
    return tokens[:tokens.index("--")] if "--" in tokens else tokens


def _wants_terminal(tokens: list[str]) -> bool:
    for t in _before_dashdash(tokens):
        if t in ("-i", "-t", "-it", "-ti", "--stdin", "--tty", "--stdin=true", "--tty=true", "--attach"):
            return True
        if t.startswith("-") and not t.startswith("--") and len(t) > 2 and set(t[1:]) <= {"i", "t"}:
            return True
    return False


def require_kubectl() -> str:
    """The kubectl binary on PATH, or a `SetupError` saying how to install it: every agent tool
    and shell agent acts through it, so without it no attempt can be run."""
    from sregym.errors import SetupError

    path = shutil.which("kubectl")
    if path is None:
        raise SetupError("kubectl is not on PATH: agents act through the real kubectl binary (v1.32 or "
                         "close); install it (Debian: apt-get install kubernetes-client) and run again")
    return path


@dataclass
class KubectlRunner:
    """Runs kubectl with a fixed kubeconfig and an isolated HOME (its discovery cache lives
    there, so repeated calls stay fast and never touch the user's own ~/.kube)."""

    kubeconfig: Path
    home: Path
    binary: str = ""
    timeout_s: float = 60.0
    max_chars: int = 12_000

    def __post_init__(self) -> None:
        if not self.binary:
            self.binary = shutil.which("kubectl") or "kubectl"

    def run(self, command: str, stdin: str | None = None) -> tuple[str, bool]:
        """(observation text, is_error). Never raises for a bad command. `stdin` is given to
        kubectl on standard input (a manifest for `apply -f -`)."""
        try:
            args = parse_command(command)
        except CommandRejected as exc:
            return str(exc), True
        env = {"HOME": str(self.home), "KUBECONFIG": str(self.kubeconfig), "PATH": os.environ.get("PATH", ""),
               "KUBECTL_INTERACTIVE_DELETE": "false", "NO_COLOR": "1", "LANG": "C.UTF-8"}
        try:
            proc = subprocess.run([self.binary, *args], env=env, cwd=str(self.home), capture_output=True,
                                  text=True, timeout=self.timeout_s, check=False,
                                  **({"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}))
        except FileNotFoundError:
            return "kubectl is not installed on this machine.", True
        except subprocess.TimeoutExpired:
            return f"kubectl did not finish within {self.timeout_s:.0f}s and was stopped.", True
        out = proc.stdout
        if proc.stderr:
            out = f"{out}\n{proc.stderr}" if out else proc.stderr
        if not out.strip():
            out = "(no output)" if proc.returncode == 0 else f"(no output, exit code {proc.returncode})"
        return compact(out.rstrip("\n"), self.max_chars), proc.returncode != 0


__all__ = ["CommandRejected", "KubectlRunner", "parse_command", "require_kubectl"]
