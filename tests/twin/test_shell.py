"""The container shell: parsing, expansion, control flow, timing and the command registry."""

from __future__ import annotations

import math

from sregym.twin.node.shell import (
    FOREVER,
    Invocation,
    Listen,
    Output,
    Process,
    ShellContext,
    Sleep,
    Usage,
    command,
    format_date,
    program_for,
    run_once,
)


def ctx(**kw) -> ShellContext:
    base = {"env": {"HOME": "/root", "NAME": "web", "HOSTNAME": "web-0"},
            "files": {"/etc/cfg/app.conf": "level=debug\nport=8080\n"}, "hostname": "web-0"}
    base.update(kw)
    return ShellContext(**base)


def run(script: str, **kw):
    return run_once(ctx(**kw), script)


def test_sequences_and_logic():
    assert run("echo a; echo b").stdout == "a\nb\n"
    assert run("false && echo no || echo yes").stdout == "yes\n"
    assert run("true || echo never").stdout == ""
    assert run("! false && echo negated").stdout == "negated\n"


def test_quoting_and_expansion():
    res = run("echo 'single $NAME' \"double $NAME\" ${MISSING:-fallback} a\\ b")
    assert res.stdout == "single $NAME double web fallback a b\n"
    assert run('X="a  b"; echo $X; echo "$X"').stdout == "a b\na  b\n"
    assert run("echo ${#NAME} $(echo sub)-x `echo tick`").stdout == "3 sub-x tick\n"
    assert run("i=2; echo $((i * 3 + 1))").stdout == "7\n"


def test_exit_codes_and_status_variable():
    res = run("false; echo $?; exit 4")
    assert res.stdout == "1\n" and res.exit_code == 4
    assert run("set -e; false; echo unreachable").exit_code == 1
    assert run("sh -c 'exit 7'; echo $?").stdout == "7\n"


def test_unknown_command_uses_shell_wording():
    res = run("nosuch arg")
    assert res.exit_code == 127
    assert res.stderr == "sh: nosuch: not found\n"
    dash = run_once(ctx(shell_flavour="dash"), "nosuch")
    assert dash.stderr == "sh: 1: nosuch: not found\n"


def test_exec_argv_missing_binary_reports_containerd_error():
    res = run_once(ctx(), ["nosuch"])
    assert res.exit_code == 127
    assert 'exec: "nosuch": executable file not found in $PATH' in res.stderr


def test_control_flow():
    assert run("for i in 1 2 3; do echo n$i; done").stdout == "n1\nn2\nn3\n"
    assert run("i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i").stdout == "3\n"
    assert run("if [ -f /etc/cfg/app.conf ]; then echo yes; else echo no; fi").stdout == "yes\n"
    assert run("case $NAME in w*) echo matched;; *) echo other;; esac").stdout == "matched\n"
    assert run("for i in 1 2 3; do [ $i = 2 ] && break; echo $i; done").stdout == "1\n"


def test_redirections_and_pipes():
    res = run("echo out; echo err >&2; echo hidden > /dev/null; echo both 2>&1")
    assert res.stdout == "out\nboth\n" and res.stderr == "err\n"
    assert run("cat /etc/cfg/app.conf | tail -n 1").stdout == "port=8080\n"
    shared = ctx()
    run_once(shared, "echo written > /tmp/x; echo more >> /tmp/x")
    assert shared.files["/tmp/x"] == "written\nmore\n"


def test_builtin_commands():
    assert run("printf '%s=%d\\n' a 1 b 2").stdout == "a=1\nb=2\n"
    assert run("hostname").stdout == "web-0\n"
    assert "NAME=web" in run("env").stdout.splitlines()
    assert run("printenv NAME").stdout == "web\n"
    assert run("printenv NOPE").exit_code == 1
    missing = run("cat /nope")
    assert missing.exit_code == 1 and "No such file or directory" in missing.stderr
    assert run("test -z '' && [ 3 -gt 2 ] && echo ok").stdout == "ok\n"


def test_syntax_error_exits_2():
    res = run('echo "unterminated')
    assert res.exit_code == 2
    assert "unterminated quoted string" in res.stderr


def test_date_uses_simulated_time():
    res = run_once(ctx(start_time=1767603600.0), "date; sleep 90; date +%H:%M:%S")
    assert res.stdout == "Mon Jan  5 09:00:00 UTC 2026\n09:01:30\n"
    assert format_date(0) == "Thu Jan  1 00:00:00 UTC 1970"


def test_process_is_lazy_and_timed():
    proc = Process(program_for(["sh", "-c", "while true; do echo tick; sleep 5; done"], ctx()), 100.0)
    effects = proc.advance(112)
    assert [(e.at, e.effect) for e in effects] == [(100.0, Output("stdout", "tick\n")),
                                                   (105.0, Output("stdout", "tick\n")),
                                                   (110.0, Output("stdout", "tick\n"))]
    assert proc.next_wake == 115.0 and not proc.finished


def test_forever_and_exit_timing():
    idle = Process(program_for(["sh", "-c", "echo up; sleep infinity"], ctx()), 0.0)
    idle.advance(10_000)
    assert idle.next_wake == math.inf and not idle.finished
    keep = Process(program_for(["tail", "-f", "/dev/null"], ctx()), 0.0)
    keep.advance(50)
    assert not keep.finished
    short = Process(program_for(["sh", "-c", "sleep 3; exit 2"], ctx()), 10.0)
    short.advance(20)
    assert short.finished and short.exit_code == 2 and short.exit_at == 13.0


def test_busy_loops_still_advance():
    proc = Process(program_for(["sh", "-c", "while true; do :; done"], ctx()), 0.0)
    proc.advance(1.0)
    assert not proc.finished and proc.next_wake > 1.0


def test_registered_command_and_effects():
    @command("sregym-test-server")
    def server(call: Invocation):
        call.write(f"listening on {call.args[0]}\n")
        yield Usage(memory_bytes=1024)
        yield Sleep(2)
        yield Listen(int(call.args[0]))
        yield Sleep(FOREVER)
        return 0

    proc = Process(program_for(["sh", "-c", "exec sregym-test-server 9000"], ctx()), 0.0)
    effects = [e.effect for e in proc.advance(5)]
    assert Output("stdout", "listening on 9000\n") in effects
    assert Usage(memory_bytes=1024) in effects
    assert Listen(9000) in effects
    blocked = run("sregym-test-server 1 >/dev/null; echo after")
    assert not blocked.finished and blocked.stdout == ""
