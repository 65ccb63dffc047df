"""The shell's process memory: OOM kills at the headroom, nothing leaked, capped exec output.

The twin keeps every value a container's shell makes in the server's own memory, so these are
the limits that keep an agent's `kubectl exec` from taking the server down (see
`tests/twin/api/test_exec_memory_bombs.py` for the same through real kubectl).
"""

from __future__ import annotations

import pytest

import sregym.twin.userland  # noqa: F401  (registers head, wc)
from sregym.twin.node.shell import (
    MAX_EXEC_OUTPUT_BYTES,
    PROCESS_MEMORY_CAP,
    MemoryMeter,
    Process,
    ShellContext,
    program_for,
    run_once,
)
from support.pods import BOX_POD, LIMITED_POD

MiB = 1 << 20


def run(script: str, limit: int | None = None, files: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    ctx = ShellContext(env={"HOME": "/root"}, files=dict(files or {}),
                       memory=MemoryMeter(limit) if limit is not None else None)
    return run_once(ctx, ["sh", "-c", script]), ctx


@pytest.mark.parametrize("script", [
    "x=a; while true; do x=$x$x; done",
    'x=a; while :; do x="$(echo "$x$x")"; done',
    "x=a; while :; do x=$x$x; echo \"$x\" | cat > /dev/null; done",
    "printf '%*s' 999999999",
    "printf '%0999999999d' 1",
    "x=$(cat /dev/zero)",
    # Splitting or parsing a large value makes many small strings: counted per piece.
    'x="ab "; while [ ${#x} -lt 300000 ]; do x=$x$x; done; for w in $x; do :; done',
    'x="ab\n"; while [ ${#x} -lt 300000 ]; do x=$x$x; done; echo "$x" | grep q',
    'x="ab\n"; while [ ${#x} -lt 300000 ]; do x=$x$x; done; echo "$x" | wc -w',
    'x=";"; while [ ${#x} -lt 300000 ]; do x=$x$x; done; eval "$x"',
    'x="1+"; while [ ${#x} -lt 300000 ]; do x=$x$x; done; echo $((${x}1))',
    "cat /dev/zero | cat > /dev/null",
    "head -c 9999999999 /dev/zero",
    "i=0; x=0123456789012345678901234567890123456789; while :; do eval \"v$i=\\$x\\$x\\$x\"; i=$((i+1)); done",
])
def test_growing_processes_are_oom_killed(script: str) -> None:
    result, ctx = run(script, limit=MiB)
    assert result.exit_code == 137 and result.oom_killed
    assert ctx.memory is not None and ctx.memory.peak <= MiB


def test_the_default_limit_is_the_server_cap() -> None:
    result, ctx = run("x=a; while true; do x=$x$x; done")
    assert result.exit_code == 137 and result.oom_killed
    assert ctx.memory is not None and ctx.memory.limit == PROCESS_MEMORY_CAP


def test_what_fits_runs_and_nothing_leaks() -> None:
    """Values dropped (overwritten, a subshell's, a substitution's, a pipe's) are given back: a
    loop that makes 10 KB a thousand times runs in 1 MiB."""
    page = "x" * 10_000 + "\n"
    script = ("i=0; while [ $i -lt 1000 ]; do y=$(cat /data); z=$(cat /data | cat); "
              "( w=$y$y ); sh -c 'v=$(cat /data)'; i=$((i+1)); done; echo ${#y} ${#z}")
    result, ctx = run(script, limit=MiB, files={"/data": page})
    assert (result.exit_code, result.stdout) == (0, "10000 10000\n")
    assert ctx.memory is not None and ctx.memory.used < 64 * 1024


def test_container_process_oom_ends_with_137() -> None:
    ctx = ShellContext(memory=MemoryMeter(MiB))
    proc = Process(program_for(["sh", "-c", "echo up; x=a; while :; do x=$x$x; sleep 1; done"], ctx), 0.0)
    effects = proc.advance(1000.0)
    assert [e.effect.text for e in effects if hasattr(e.effect, "text")] == ["up\n"]
    assert proc.finished and proc.exit_code == 137 and proc.oom_killed


def test_arithmetic_is_64_bit() -> None:
    result, _ = run("echo $((1<<64)) $((1<<9999999999)) $((9223372036854775807+1)) "
                    "$((4611686018427387904*4)) $((-9223372036854775807-1)) $((6*7))")
    assert result.stdout == "1 -9223372036854775808 -9223372036854775808 0 -9223372036854775808 42\n"


def test_printf_star_width_and_precision() -> None:
    result, _ = run("printf '%s|%*s|%-*s|%.*f|%*d\\n' a 4 b 3 c 2 3.14159 -3 7")
    assert result.stdout == "a|   b|c  |3.14|7  \n"  # what bash and GNU printf print


@pytest.mark.parametrize("script", ["a=$(printf '%*s' 1000000); while :; do echo \"$a\"; done",
                                    "cat /dev/zero"])
def test_exec_output_is_capped(script: str) -> None:
    result, _ = run(script)
    assert result.exit_code == 137 and not result.finished and not result.oom_killed
    assert len(result.stdout) == MAX_EXEC_OUTPUT_BYTES


def test_dev_zero_reads_what_is_asked() -> None:
    result, _ = run("head -c 5 /dev/zero | wc -c; head -c 3 /dev/zero")
    assert result.stdout == "5\n\0\0\0"


def test_writable_layer_fills_up() -> None:
    ctx = ShellContext(files={}, memory=MemoryMeter())
    ctx.memory.disk_limit = 1000  # type: ignore[union-attr]
    result = run_once(ctx, ["sh", "-c", "echo 0123456789 > /f; i=0; "
                                         "while [ $i -lt 200 ]; do echo 0123456789 >> /f; i=$((i+1)); done; "
                                         "echo no-room-for-this >> /f; echo $?; echo ok > /f; cat /f"])
    assert result.stdout == "1\nok\n"
    assert "sh: write error: No space left on device" in result.stderr
    assert len(ctx.files["/f"]) == 3


def test_exec_headroom_is_the_container_limit_and_the_kernel_logs_the_kill() -> None:
    """An exec shares the container's cgroup: its room is the limit minus the container's working
    set, and a kill at that limit leaves the kernel's line in the node's log (the container keeps
    running); a kill at the server's own cap leaves none."""
    from sregym.twin import Twin
    from sregym.twin.userland.context import exec_context, run_exec

    twin = Twin(seed=3)
    twin.apply(LIMITED_POD)
    twin.advance(30)
    pod = twin.store.peek("Pod", "default", "small")
    _cpu, used = twin.services.runtime.container_usage("default", "small", "main")
    ctx = exec_context(twin, pod, "main")
    assert ctx.memory is not None and ctx.memory.limit == (8 << 20) - used
    result = run_exec(ctx, ["sh", "-c", "x=a; while :; do x=$x$x; done"])
    assert result.exit_code == 137 and result.oom_killed
    kernel = [line.text for line in twin.services.logs.node_lines("kind-worker", "kernel")]
    assert any(text.startswith("Memory cgroup out of memory: Killed process 7 (sh)") for text in kernel)
    status = twin.store.peek("Pod", "default", "small")["status"]["containerStatuses"][0]
    assert "running" in status["state"] and status["restartCount"] == 0


def test_writable_layer_is_bounded_across_execs(monkeypatch: pytest.MonkeyPatch) -> None:
    """What earlier execs wrote counts against the layer, and `rm` gives the room back (and the
    file stays gone for the next exec)."""
    import sregym.twin.node.shell.limits as shell
    from sregym.twin import Twin
    from sregym.twin.userland.context import exec_context, run_exec

    monkeypatch.setattr(shell, "WRITABLE_LAYER_CAP", 100)
    twin = Twin(seed=3)
    twin.apply(BOX_POD)
    twin.advance(30)

    def run_in_box(script: str):  # type: ignore[no-untyped-def]
        return run_exec(exec_context(twin, twin.store.peek("Pod", "default", "box"), "main"),
                        ["sh", "-c", script])

    line = "x" * 79
    assert run_in_box(f"echo {line} > /tmp/a").exit_code == 0
    full = run_in_box(f"echo {line} > /tmp/b")
    assert full.exit_code == 1 and "No space left on device" in full.stderr
    assert run_in_box("rm /tmp/a; cat /tmp/a").exit_code == 1
    assert run_in_box(f"echo {line} > /tmp/b; cat /tmp/b").stdout == line + "\n"


def test_interactive_session_ends_when_its_shell_is_oom_killed() -> None:
    """`kubectl exec -it POD -- sh`: the shell holding the value is the process the OOM killer
    picks, so the session ends with 137 instead of growing the server."""
    from sregym.twin.userland.context import ExecContext
    from sregym.twin.userland.session import TtySession

    session = TtySession(ExecContext(env={"HOME": "/root"}, memory=MemoryMeter(MiB)), ["sh"])
    session.start()
    assert "hi" in session.feed("echo hi\r")
    session.feed("x=a; while :; do x=$x$x; done\r")
    assert session.exit_code == 137


def test_copying_a_large_value_over_and_over_ends_at_the_copy_budget() -> None:
    """Appending one byte to an 8 MiB value copies 8 MiB: within memory, but not free for the
    server; the process ends at its copy budget like one that runs out of steps."""
    result, _ = run('x=a; while [ ${#x} -lt 8000000 ]; do x=$x$x; done; while :; do x="${x}a"; done')
    assert result.exit_code == 137 and not result.finished and not result.oom_killed


def test_a_container_whose_command_is_a_bomb_is_killed_and_restarted() -> None:
    """The same limit holds for a container's own command (`kubectl run ... -- sh -c BOMB`):
    the process ends with 137 and the kubelet restarts it, the twin keeps going."""
    from sregym.twin import Twin

    twin = Twin(seed=3)
    twin.apply(BOX_POD.replace('"sleep 36000"', '"echo start; x=a; while :; do x=$x$x; done"'))
    twin.advance(30)
    status = twin.store.peek("Pod", "default", "box")["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["exitCode"] == 137 and status["restartCount"] >= 1


def test_a_terminal_line_holds_at_most_4095_characters() -> None:
    """The line discipline's buffer: a flood of keystrokes without Enter does not grow it."""
    from sregym.twin.userland.context import ExecContext
    from sregym.twin.userland.session import TtySession

    session = TtySession(ExecContext(env={"HOME": "/root"}), ["sh"])
    session.start()
    session.feed("echo " + "x" * 100_000)
    assert len(session.line) == 4095
    assert session.feed("\r").count("x") == 4095 - len("echo ")


def test_case_patterns_match_without_backtracking_blowup() -> None:
    """`case` patterns in time linear in pattern × text: the regex translation they replaced took
    minutes (server stuck) for this one."""
    subject = "a" * 400
    result, _ = run(f"case {subject} in *a*a*a*a*a*a*a*b) echo yes;; *a*a*a*a) echo four;; esac; "
                    "for f in x.log x.logs 5x x5 '[a' ab; do case $f in *.log) echo log;; "
                    "[0-9]*) echo digit;; '[a') echo bracket;; a?) echo a-any;; *) echo other;; esac; done")
    assert result.stdout == "four\nlog\nother\ndigit\nother\nbracket\na-any\n"
