"""The text filters on BusyBox images, with outputs written from BusyBox 1.36's behaviour, and
the registrations and exec-only behaviours the GNU comparison cannot show.
"""

from __future__ import annotations

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin.node.shell import COMMANDS
from sregym.twin.userland import counting, grep, headtail, sorting
from sregym.twin.userland.context import ExecContext, run_exec

BANNER = "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n"
FILES = {"/data/f": "a b\nc\n", "/data/n": "10\n9\n100\n9\n"}

# (argv, stdin, stdout, stderr, exit code); a stderr ending in "..." is compared as a prefix.
CASES = [
    (["sort", "-rn", "n"], "", "100\n10\n9\n9\n", "", 0),
    (["sort", "-nu", "n"], "", "9\n10\n100\n", "", 0),
    (["sort", "missing"], "", "", "sort: can't open 'missing': No such file or directory\n", 1),
    (["sort", "-Q"], "", "", f"sort: invalid option -- 'Q'\n{BANNER}\nUsage: sort ...", 1),
    (["uniq", "-c"], "a\na\nb\n", "      2 a\n      1 b\n", "", 0),
    (["uniq", "missing"], "", "", "uniq: can't open 'missing': No such file or directory\n", 1),
    (["wc", "-l"], "a\nb\n", "2\n", "", 0),
    (["wc", "-l", "f"], "", "2 f\n", "", 0),
    (["wc", "f"], "", "        2         3         6 f\n", "", 0),
    (["wc"], "a b\nc\n", "        2         3         6\n", "", 0),
    (["wc", "-l", "f", "n"], "", "        2 f\n        4 n\n        6 total\n", "", 0),
    (["wc", "missing"], "", "", "wc: missing: No such file or directory\n", 1),
    (["head", "-n", "1", "f"], "", "a b\n", "", 0),
    (["head", "missing"], "", "", "head: missing: No such file or directory\n", 1),
    (["head", "-n", "x", "f"], "", "", "head: invalid number 'x'\n", 1),
    (["tail", "-n", "1", "f"], "", "c\n", "", 0),
    (["tail", "missing"], "", "", "tail: can't open 'missing': No such file or directory\n", 1),
    (["grep", "c", "f"], "", "c\n", "", 0),
    (["grep", "x", "missing"], "", "", "grep: missing: No such file or directory\n", 2),
    (["grep"], "", "", f"{BANNER}\nUsage: grep ...", 2),
    (["cut", "-d", " ", "-f2", "f"], "", "b\nc\n", "", 0),
    (["cut", "f"], "", "", "cut: expected a list of bytes, characters, or fields\n", 1),
    (["tr", "a-z", "A-Z"], "abc\n", "ABC\n", "", 0),
    (["tr"], "", "", f"{BANNER}\nUsage: tr ...", 1),
    (["xargs", "-n1", "echo"], "a b\n", "a\nb\n", "", 0),
    (["xargs", "nosuch"], "a\n", "", "xargs: nosuch: No such file or directory\n", 127),
]


def _ctx(flavour: str = "ash", image: str = "busybox:1.36") -> ExecContext:
    return ExecContext(files=dict(FILES), cwd="/data", shell_flavour=flavour,
                       extras={"exec": True, "image": image})


@pytest.mark.parametrize(("argv", "stdin", "stdout", "stderr", "code"), CASES,
                         ids=[" ".join(c[0]) for c in CASES])
def test_busybox_filter(argv: list[str], stdin: str, stdout: str, stderr: str, code: int) -> None:
    result = run_exec(_ctx(), argv, stdin)
    assert (result.stdout, result.exit_code) == (stdout, code)
    if stderr.endswith("..."):
        assert result.stderr.startswith(stderr[:-len("...")])
    else:
        assert result.stderr == stderr


def test_the_filters_are_registered_from_their_own_modules() -> None:
    """A merge that brings back an older `grep`/`head`/`wc`/`tail` would override these."""
    assert COMMANDS["grep"] is grep.grep and COMMANDS["egrep"] is grep.grep
    assert COMMANDS["head"] is headtail.head and COMMANDS["tail"] is headtail.tail
    assert COMMANDS["wc"] is counting.wc and COMMANDS["sort"] is sorting.sort


def test_tail_follow_ends_in_an_exec_but_keeps_a_container_alive() -> None:
    result = run_exec(_ctx("dash", "debian:12"), ["tail", "-f", "f"])
    assert (result.stdout, result.exit_code, result.finished) == ("a b\nc\n", 0, True)
    blocked = run_exec(_ctx("dash", "debian:12"), ["tail", "-f", "/dev/null"])
    assert blocked.exit_code == 137  # still running when the exec gives up, as a real one would
    ctx = _ctx("dash", "debian:12")
    ctx.extras["exec"] = False  # a container's own command: `tail -f log` never ends
    from sregym.twin.node.shell import Process, exec_program

    proc = Process(exec_program(ctx, ["tail", "-f", "/data/f"], ""), 0.0)
    proc.advance(60.0)
    assert not proc.finished


def test_xargs_runs_only_what_the_image_ships() -> None:
    """`sh -c 'cd /'` works in a shell, but `cd` is no binary xargs could exec."""
    result = run_exec(_ctx("dash", "debian:12"), ["xargs", "cd"], "/\n")
    assert (result.stderr, result.exit_code) == ("xargs: cd: No such file or directory\n", 127)
    result = run_exec(_ctx("dash", "debian:12"), ["xargs", "-t", "-n1", "printf", "%s."], "a b\n")
    assert (result.stdout, result.stderr) == ("a.b.", "printf %s. a\nprintf %s. b\n")
