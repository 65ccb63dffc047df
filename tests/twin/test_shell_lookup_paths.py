"""Command lookup in an exec: names with a `/` run the file at that path, bare names are
searched in `$PATH` over the container's tree, builtins need no file; `which`, `command -v`,
`type` and `kubectl exec`'s start check agree. Wording checked against dash 0.5.12 and bash 5.2."""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.userland.context import exec_context, executable_exists, run_exec

SCRIPT = "printf '#!/bin/sh\\necho \"s:$0:$1\"\\n' > /t/s.sh; chmod +x /t/s.sh; "


def _pod(image: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "l", "namespace": "default", "uid": "l"},
            "spec": {"nodeName": "kind-worker", "containers": [{"name": "c", "image": image}]}}


@pytest.fixture(scope="module")
def twin() -> Twin:
    return Twin(seed=12)


def _sh(twin: Twin, image: str, script: str) -> tuple[str, str, int]:
    result = run_exec(exec_context(twin, _pod(image), "c"), ["sh", "-c", script])
    return result.stdout, result.stderr, result.exit_code


@pytest.mark.parametrize(("image", "script", "out", "err"), [
    ("nginx:1.27", "/nonexistent/ls /; echo $?", "127\n", "sh: 1: /nonexistent/ls: not found\n"),
    ("nginx:1.27", "/usr/local/bin/cat /etc/hostname; echo $?", "127\n", "sh: 1: /usr/local/bin/cat: not found\n"),
    ("nginx:1.27", "/usr/bin/ls -d /t; /bin/ls -d /t; cd /; ./bin/ls -d /t", "/t\n/t\n/t\n", ""),
    ("nginx:1.27", "PATH=/nowhere; ls; echo $?; echo still; PATH=/usr/bin; ls -d /t",
     "127\nstill\n/t\n", "sh: 1: ls: not found\n"),
    ("nginx:1.27", "touch /t/f; /t/f; echo $?; /t; echo $?", "126\n126\n",
     "sh: 1: /t/f: Permission denied\nsh: 1: /t: Permission denied\n"),
    ("nginx:1.27", SCRIPT + "cd /t; ./s.sh a; PATH=$PATH:/t; s.sh b", "s:./s.sh:a\ns:/t/s.sh:b\n", ""),
    ("nginx:1.27", "bash -c '/nope; echo $?; /t; echo $?'", "127\n126\n",
     "bash: line 1: /nope: No such file or directory\nbash: line 1: /t: Is a directory\n"),
    ("busybox:1.36", "/nonexistent/ls; echo $?; touch /t/f; /t/f; echo $?", "127\n126\n",
     "sh: /nonexistent/ls: not found\nsh: /t/f: Permission denied\n"),
    ("nginx:1.27", "which ls; command -v ls; PATH=/bin; which ls; type ls; PATH=/x; type ls; type echo",
     "/usr/bin/ls\n/usr/bin/ls\n/bin/ls\nls is /bin/ls\nls: not found\necho is a shell builtin\n", ""),
])
def test_lookup_follows_paths_and_path(twin: Twin, image: str, script: str, out: str, err: str) -> None:
    stdout, stderr, _code = _sh(twin, image, "rm -rf /t; mkdir -p /t; " + script)
    assert (stdout, stderr) == (out, err)


def test_kafka_tools_are_off_path(twin: Twin) -> None:
    """apache/kafka's Dockerfile leaves /opt/kafka/bin off PATH: the tools run by path, or by
    name once PATH has it."""
    image = "apache/kafka:3.9.1"
    out, err, _code = _sh(twin, image, "kafka-topics.sh --version; echo $?; which kafka-topics.sh; echo $?")
    assert out == "127\n1\n" and err.endswith("kafka-topics.sh: not found\n")
    out, err, _code = _sh(twin, image, "PATH=$PATH:/opt/kafka/bin; command -v kafka-topics.sh")
    assert out == "/opt/kafka/bin/kafka-topics.sh\n"
    ctx = exec_context(twin, _pod(image), "c")
    assert executable_exists(ctx, "/opt/kafka/bin/kafka-topics.sh")
    assert not executable_exists(ctx, "kafka-topics.sh")


@pytest.mark.parametrize(("name", "exists"), [("ls", True), ("/bin/ls", True), ("/usr/bin/ls", True),
                                              ("/nonexistent/ls", False), ("/usr/local/bin/ls", False)])
def test_kubectl_exec_start_check_uses_the_same_lookup(twin: Twin, name: str, exists: bool) -> None:
    assert executable_exists(exec_context(twin, _pod("nginx:1.27"), "c"), name) is exists


@pytest.mark.parametrize(("image", "script", "out", "err", "code"), [
    ("nginx:1.27", "echo hi | tee /t/a /nodir/x; echo rc=$?; echo two | tee -a /t/a >/dev/null; cat /t/a",
     "hi\nrc=1\nhi\ntwo\n", "tee: /nodir/x: No such file or directory\n", 0),
    ("nginx:1.27", "echo x | tee /t; echo rc=$?; echo y | tee -x", "x\nrc=1\n",
     "tee: /t: Is a directory\ntee: invalid option -- 'x'\nTry 'tee --help' for more information.\n", 1),
    ("busybox:1.36", "echo hi | tee /t/a >/dev/null; echo b | tee -a /t/a; cat /t/a", "b\nhi\nb\n", "", 0),
])
def test_shell_lookup_tee(twin: Twin, image: str, script: str, out: str, err: str, code: int) -> None:
    assert _sh(twin, image, "rm -rf /t; mkdir -p /t; " + script) == (out, err, code)
