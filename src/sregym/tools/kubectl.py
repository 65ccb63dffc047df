"""The `kubectl` tool: the real kubectl binary, one non-interactive command at a time.

Agents get the genuine client (its table printing, its error messages, its flags) against the
twin's API server, with a kubeconfig that holds only the agent credential. Commands are parsed
with shell quoting rules but never run through a shell: pipes, command lists, redirections and
substitutions are refused with a message saying what to do instead, and commands that would wait
for a terminal or hold a port open (edit, attach, port-forward, proxy, exec -it) are refused too,
because nobody is at a keyboard and the call would hang the attempt.

kubectl also reads and writes local files (`--from-file`, `-f PATH`, `-k DIR`, `--cache-dir`,
`-o go-template-file=...`, `cp`, `config set-*`, ...), which would hand the agent the machine
sregym runs on. So every flag that names a local path is refused unless the path lies in the
tool's scratch directory (its HOME, where the gold agent stages manifests), standard input
(`-f -`) stays allowed, credential and server flags are refused, and kubectl itself runs in the
same sandbox as external agents (`sregym.sandbox`): a private /proc, no host files but the system
directories, its kubeconfig and its scratch directory.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import threading
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


# Flags that point kubectl at another cluster or identity: the session's are fixed.
_CREDENTIAL_FLAGS = ("--kubeconfig", "--token", "--as", "--as-group", "--as-uid", "--user", "--context", "--cluster",
                     "--server", "-s", "--username", "--password", "--certificate-authority", "--client-certificate",
                     "--client-key", "--insecure-skip-tls-verify", "--tls-server-name")
# Flags whose value is a local path (any flag named *file*, *-dir or *-output is treated so too).
_PATH_FLAGS = ("-f", "--filename", "-k", "--kustomize", "--from-file", "--from-env-file", "--cache-dir", "--cert",
               "--key", "--patch-file", "--log-file", "--log-dir", "--profile-output", "--env-file")
# -o formats that read a local file.
_OUTPUT_FILE_FORMATS = ("go-template-file", "jsonpath-file", "custom-columns-file", "template-file")
_CONFIG_READS = ("view", "current-context", "get-contexts", "get-clusters", "get-users")


def _flag_name(token: str) -> str:
    return token.split("=", 1)[0]


def _is_path_flag(name: str, verb: str) -> bool:
    if name == "-f" and verb == "logs":
        return False  # `logs -f` is --follow (refused elsewhere), not a file
    return name in _PATH_FLAGS or (name.startswith("--") and name != "--output" and
                                   (name.endswith(("file", "-dir", "directory", "-output")) or "-file-" in name))


def _local_paths(tokens: list[str], verb: str) -> list[tuple[str, str]]:
    """(flag, path) for every local path the flags name."""
    found: list[tuple[str, str]] = []
    flags = _before_dashdash(tokens)
    i = 0
    while i < len(flags):
        token = flags[i]
        name = _flag_name(token)
        value: str | None = None
        if token.startswith("-") and ("=" in token):
            value = token.split("=", 1)[1]
        elif token.startswith("-") and i + 1 < len(flags) and (_is_path_flag(name, verb) or name in ("-o", "--output")):
            value = flags[i + 1]
            i += 1
        elif token.startswith("-k") and len(token) > 2 and not token.startswith("--"):
            name, value = "-k", token[2:]
        elif token.startswith("-f") and len(token) > 2 and not token.startswith("--") and verb != "logs":
            name, value = "-f", token[2:]
        i += 1
        if value is None:
            continue
        if name in ("-o", "--output"):
            fmt, _, rest = value.partition("=")
            if fmt in _OUTPUT_FILE_FORMATS:
                found.append((f"-o {fmt}", rest))
            continue
        if not _is_path_flag(name, verb):
            continue
        if name in ("--from-file", "--from-env-file") and "=" in value and not value.startswith(("/", ".")):
            value = value.split("=", 1)[1]  # key=path
        found.append((name, value))
    return found


def check_local_paths(tokens: list[str], scratch: Path | None) -> None:
    """`CommandRejected` unless every local path the command names is inside `scratch` (standard
    input, `-f -`, is always allowed; with no scratch, no local path is)."""
    verb = _verb(tokens)
    if verb == "cp":
        raise CommandRejected("`kubectl cp` reads and writes local files, which this tool does not allow; to read "
                              "a file in a container use `kubectl exec POD -- cat FILE`.")
    if verb == "config":
        sub = next((t for t in tokens[tokens.index("config") + 1:] if not t.startswith("-")), "")
        if sub not in _CONFIG_READS:
            raise CommandRejected(f"`kubectl config {sub}` changes the kubeconfig, which is fixed for this session; "
                                  f"only {', '.join(_CONFIG_READS)} are allowed.")
    paths = _local_paths(tokens, verb)
    if verb == "kustomize":  # `kubectl kustomize DIR` builds a local directory
        after = tokens[tokens.index("kustomize") + 1:]
        paths += [("kustomize", t) for t in after if not t.startswith("-")]
    for flag, value in paths:
        if flag in ("-f", "--filename") and value == "-":
            continue
        if "://" in value:
            raise CommandRejected(f"{flag} {value}: URLs are not fetched; pass the manifest on standard input "
                                  "(`apply -f -` with the stdin argument).")
        if flag in ("--cache-dir", "--log-file", "--log-dir", "--profile-output"):
            raise CommandRejected(f"{flag} writes local files, which this tool does not allow; remove it.")
        inside = scratch is not None and _within(scratch, value)
        if not inside:
            where = f" (only files in {scratch} may be named)" if scratch is not None else ""
            raise CommandRejected(f"{flag} {value}: this tool does not read local files{where}; pass a manifest "
                                  "on standard input instead (`apply -f -` with the stdin argument), or use "
                                  "`--from-literal=KEY=VALUE` for ConfigMaps and Secrets.")


def _within(scratch: Path, value: str) -> bool:
    root = os.path.realpath(scratch)
    path = os.path.realpath(os.path.join(root, os.path.expanduser(value)) if not value.startswith("/") else value)
    return path == root or path.startswith(root.rstrip("/") + "/")


def parse_command(command: str, scratch: Path | None = None) -> list[str]:
    """kubectl's arguments (without `kubectl`), or `CommandRejected` saying why not. Local paths
    are allowed only inside `scratch` (none without it)."""
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
    if any(_flag_name(t) in _CREDENTIAL_FLAGS for t in _before_dashdash(tokens)):
        raise CommandRejected("credential and server flags (--kubeconfig, --token, --as, --user, "
                              "--context, --server, certificates) are fixed for this session; remove them.")
    check_local_paths(tokens, scratch)
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


_UNCONFINED_WARNED = threading.Event()


@dataclass
class KubectlRunner:
    """Runs kubectl with a fixed kubeconfig and an isolated HOME (its discovery cache lives
    there, so repeated calls stay fast and never touch the user's own ~/.kube), in a sandbox
    that sees only the system directories, the kubeconfig and that HOME. Where no sandbox can be
    made (no user namespaces), kubectl runs unconfined with the path checks alone, and says so
    once on stderr."""

    kubeconfig: Path
    home: Path
    binary: str = ""
    timeout_s: float = 60.0
    max_chars: int = 12_000
    sandboxed: bool = True

    def __post_init__(self) -> None:
        if not self.binary:
            self.binary = shutil.which("kubectl") or "kubectl"
        if self.sandboxed:
            from sregym.sandbox import sandbox_problem

            problem = sandbox_problem()
            if problem is not None:
                self.sandboxed = False
                if not _UNCONFINED_WARNED.is_set():
                    _UNCONFINED_WARNED.set()
                    print(f"[sregym] warning: the kubectl tool runs without its sandbox here ({problem}); "
                          "local-path flags are still refused", file=sys.stderr)

    def _argv_env(self, args: list[str]) -> tuple[list[str], dict[str, str]]:
        env = {"HOME": str(self.home), "KUBECONFIG": str(self.kubeconfig), "KUBECTL_INTERACTIVE_DELETE": "false",
               "NO_COLOR": "1", "LANG": "C.UTF-8"}
        if not self.sandboxed:
            return [self.binary, *args], {**env, "PATH": os.environ.get("PATH", "")}
        from sregym.sandbox import Sandbox

        binary = os.path.realpath(shutil.which(self.binary) or self.binary)
        shared = [Path(self.kubeconfig)]
        if not binary.startswith(("/usr/", "/bin/", "/sbin/", "/opt/")):
            shared.append(Path(binary))
        home = Path(self.home).resolve()
        sandbox = Sandbox(home=home, home_source=home, scratch_mb=64, python=False, read_only=tuple(shared))
        return sandbox.wrap([binary, *args]), sandbox.environment(env)

    def run(self, command: str, stdin: str | None = None) -> tuple[str, bool]:
        """(observation text, is_error). Never raises for a bad command. `stdin` is given to
        kubectl on standard input (a manifest for `apply -f -`)."""
        try:
            args = parse_command(command, scratch=self.home)
        except CommandRejected as exc:
            return str(exc), True
        if shutil.which(self.binary) is None:
            return "kubectl is not installed on this machine.", True
        argv, env = self._argv_env(args)
        try:
            proc = subprocess.run(argv, env=env, cwd=str(self.home), capture_output=True,
                                  text=True, timeout=self.timeout_s, check=False, start_new_session=True,
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


__all__ = ["CommandRejected", "KubectlRunner", "check_local_paths", "parse_command", "require_kubectl"]
