"""A container's standard input: the shell that waits on it, and what `kubectl attach -i` feeds it.

A container spec with `stdin: true` gets an open pipe (or, with `tty: true`, a terminal) for its
main process. A shell started that way with no script (`sh`, `bash -l`: what `kubectl run -it
... -- sh` and `kubectl debug -it` create) does nothing until someone attaches and types: it stays
Running, where the same shell without stdin reads EOF and exits at once. Other programs start as
usual (the twin's commands never block on a read, so a `sh -c '...'` script runs straight away and
sees an empty stdin).

When an attach delivers the input (`deliver`), the session's output becomes the container's log
and the process ends with the session's exit status, so the kubelet records `Completed`/`Error`
and the exit code that `kubectl run -i --rm` returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.node.shell import FOREVER, Output, Process, Program, ShellContext, Sleep

if TYPE_CHECKING:
    from sregym.twin.node.runtime import ContainerInstance

SHELLS = ("sh", "ash", "bash", "dash")
WAITING = "stdin-waiting"  # marker in the instance context's extras


def reads_terminal(argv: list[str]) -> bool:
    """`sh`, `/bin/bash`, `sh -i`, `bash -l`: a shell that reads its commands from stdin."""
    if not argv or argv[0].rsplit("/", 1)[-1] not in SHELLS:
        return False
    return all(arg.startswith("-") and "c" not in arg for arg in argv[1:])


def waits_for_stdin(container: dict[str, Any], argv: list[str]) -> bool:
    return bool(container.get("stdin")) and reads_terminal(argv)


def idle_on_stdin(ctx: ShellContext) -> Program:
    """The shell blocked in read(0) until an attach brings input."""
    ctx.extras[WAITING] = True
    yield Sleep(FOREVER)
    return 0


def is_waiting(instance: ContainerInstance | None) -> bool:
    return instance is not None and instance.running and bool(instance.ctx.extras.get(WAITING))


def _replay(outputs: list[tuple[str, str]], code: int) -> Program:
    for stream, text in outputs:
        if text:
            yield Output(stream, text)
    return code


def deliver(twin: Any, namespace: str, pod: str, container: str,
            outputs: list[tuple[str, str]], code: int) -> bool:
    """End the waiting shell with what its attached session printed and its exit status; the
    kubelet logs the output and records the termination on its next sync."""
    from sregym.twin.node.runtime import runtime_of

    runtime = runtime_of(twin)
    instance = runtime.instance(namespace, pod, container)
    pod_runtime = runtime.pod(namespace, pod)
    if instance is None or pod_runtime is None or not is_waiting(instance):
        return False
    instance.ctx.extras.pop(WAITING, None)
    instance.process.close()
    instance.process = Process(_replay(outputs, code), twin.clock.now)
    pod_runtime.next_wake = twin.clock.now
    return True


__all__ = ["deliver", "idle_on_stdin", "is_waiting", "reads_terminal", "waits_for_stdin"]
