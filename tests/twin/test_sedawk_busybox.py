"""`sed` and `awk` in a BusyBox container: BusyBox's own messages and exit codes (from
editors/sed.c and editors/awk.c of BusyBox 1.36), and its number output (any integral value
prints as an integer, where Debian's mawk switches to %.6g past a C int)."""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.userland.context import exec_context, run_exec
from support.pods import running_pod

CONF = "port=8080\nlevel=debug\n"
PASSWD = "root:x:0:0:root:/root:/bin/sh\napp:x:1001:1001::/home/app:/bin/sh\n"
NUMS = "1\n2\n3\n"

CASES = [
    ("sed-range", ["sed", "-n", "2,3p"], NUMS, ("2\n3\n", "", 0)),
    ("sed-subst", ["sed", "-E", "s/([a-z]+)=(.*)/\\2 \\1/", "app.conf"], "", ("8080 port\ndebug level\n", "", 0)),
    ("sed-unterminated", ["sed", "s/a/b"], NUMS, ("", "sed: unmatched '/'\n", 1)),
    ("sed-unknown-cmd", ["sed", "k"], NUMS, ("", "sed: unsupported command k\n", 1)),
    ("sed-bad-s-option", ["sed", "s/a/b/x"], NUMS, ("", "sed: bad option in substitution expression\n", 1)),
    ("sed-missing-file", ["sed", "p", "nofile"], NUMS, ("", "sed: nofile: No such file or directory\n", 1)),
    ("sed-version", ["sed", "--version"], "", ("This is not GNU sed version 4.0\n", "", 0)),
    ("sed-in-place-no-file", ["sed", "-i", "s/a/b/"], NUMS, ("", "sed: -i requires an argument\n", 1)),
    ("awk-fields", ["awk", "-F:", "$3 >= 1000 {print $1, $6}", "passwd"], "", ("app /home/app\n", "", 0)),
    ("awk-sum", ["awk", "{s += $1} END {print s, s / NR}"], NUMS, ("6 2\n", "", 0)),
    ("awk-wide-integers", ["awk", "BEGIN {print 2^31, 2^53, 0.5}"], "", ("2147483648 9007199254740992 0.5\n", "", 0)),
    ("awk-syntax", ["awk", "{x = 1 +}"], NUMS, ("", "awk: cmd. line:1: Unexpected token\n", 1)),
    ("awk-missing-file", ["awk", "{print}", "nofile"], "", ("", "awk: can't open 'nofile': No such file or directory\n", 1)),
    ("awk-div-zero", ["awk", "BEGIN {print 1/0}"], "", ("", "awk: cmd. line:1: Division by zero\n", 1)),
]


def _pod(name: str) -> dict[str, Any]:
    return running_pod(name, "busybox:1.36", id_char="c")


@pytest.fixture(scope="module")
def twin() -> Twin:
    return Twin(seed=6)


@pytest.mark.parametrize(("case", "argv", "stdin", "expected"), CASES, ids=[case[0] for case in CASES])
def test_busybox_sed_and_awk(twin: Twin, case: str, argv: list[str], stdin: str,
                             expected: tuple[str, str, int]) -> None:
    ctx = exec_context(twin, _pod(case), "web")
    assert ctx.shell_flavour == "ash"
    ctx.cwd = "/work"
    ctx.files["/work/app.conf"] = CONF
    ctx.files["/work/passwd"] = PASSWD
    result = run_exec(ctx, argv, stdin)
    assert (result.stdout, result.stderr, result.exit_code) == expected


def test_in_place_edit_keeps_a_backup_in_the_container(twin: Twin) -> None:
    ctx = exec_context(twin, _pod("inplace"), "web")
    ctx.files["/etc/app.conf"] = CONF
    result = run_exec(ctx, ["sed", "-i.orig", "s/debug/info/", "/etc/app.conf"])
    assert (result.stdout, result.stderr, result.exit_code) == ("", "", 0)
    again = exec_context(twin, _pod("inplace"), "web")
    assert again.files["/etc/app.conf"] == "port=8080\nlevel=info\n"
    assert again.files["/etc/app.conf.orig"] == CONF
