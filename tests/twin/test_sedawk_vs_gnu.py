"""`sed` and `awk` in a Debian-family container against the real GNU sed 4.9 and mawk 1.3.4.

Each case runs in-process through `run_exec` and must match, byte for byte, the stdout, stderr,
exit code and resulting files that the host's `/usr/bin/sed` and `/usr/bin/mawk` (Debian 12's
default `awk`) produced. Those answers are kept in `sedawk_golden.json` so that the suite runs
where the tools are absent; `test_golden_is_what_the_host_tools_print` re-checks them wherever
the same tool versions are installed, and `python tests/twin/test_sedawk_vs_gnu.py` rewrites the
file from the host's tools after a case is added.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.userland.context import exec_context, run_exec

GOLDEN = Path(__file__).with_name("sedawk_golden.json")
WORKDIR = "/work"

LOG = (
    "2026-01-05T09:00:01Z INFO  cart  GET /api/cart 200 12ms\n"
    "2026-01-05T09:00:02Z ERROR cart  GET /api/cart 500 130ms upstream connect error\n"
    "2026-01-05T09:00:03Z WARN  geo   GET /api/geo 200 900ms slow query\n"
    "2026-01-05T09:00:04Z INFO  cart  POST /api/cart 201 15ms\n"
    "2026-01-05T09:00:05Z ERROR geo   GET /api/geo 503 1ms no healthy upstream\n"
    "2026-01-05T09:00:06Z INFO  user  GET /api/user 200 8ms\n"
    "2026-01-05T09:00:07Z DEBUG user  cache hit key=u:42\n"
    "2026-01-05T09:00:08Z ERROR cart  GET /api/cart 500 140ms upstream connect error\n"
    "2026-01-05T09:00:09Z INFO  geo   GET /api/geo 200 20ms\n"
    "2026-01-05T09:00:10Z INFO  cart  GET /api/cart 200 11ms\n"
    "2026-01-05T09:00:11Z WARN  user  GET /api/user 429 2ms rate limited\n"
    "2026-01-05T09:00:12Z INFO  user  GET /api/user 200 9ms\n"
)
CONF = "# app config\nport=8080\nlevel=debug\n\nmode=fast\n# end\nhost = db.local\n"
NUMS = "".join(f"{i}\n" for i in range(1, 13))
PASSWD = (
    "root:x:0:0:root:/root:/bin/bash\n"
    "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    "app:x:1001:1001:App User,,,:/home/app:/bin/sh\n"
    "deploy:x:1002:1002::/home/deploy:/bin/bash\n"
)
SED_CASES = [
    ("print-range", ["sed", "-n", "5,10p"], NUMS),
    ("subst-global", ["sed", "s/cart/basket/g", "app.log"], None),
    ("subst-first", ["sed", "s/0/X/"], NUMS),
    ("subst-nth", ["sed", "s/:/;/2", "app.log"], None),
    ("delete-comments", ["sed", "/^#/d;/^$/d", "app.conf"], None),
    ("print-match", ["sed", "-n", "/ERROR/p", "app.log"], None),
    ("not-match", ["sed", "/INFO/!d", "app.log"], None),
    ("ere-groups", ["sed", "-E", r"s/^([^ ]+) ([A-Z]+) +([a-z]+).*/\3 \2/", "app.log"], None),
    ("bre-groups", ["sed", r"s/^\([a-z]*\)=\(.*\)$/\2=\1/", "app.conf"], None),
    ("interval", ["sed", "-n", r"/[0-9]\{3\}ms/p", "app.log"], None),
    ("classes", ["sed", "s/[[:digit:]]\\+/N/g", "app.conf"], None),
    ("regex-range", ["sed", "-n", "/09:00:03/,/09:00:05/p", "app.log"], None),
    ("plus-range", ["sed", "-n", "/WARN/,+1p", "app.log"], None),
    ("step", ["sed", "-n", "0~3p"], NUMS),
    ("first-step", ["sed", "-n", "2~5p"], NUMS),
    ("last-line", ["sed", "-n", "$p", "app.log"], None),
    ("count-lines", ["sed", "-n", "$="], NUMS),
    ("quit", ["sed", "3q"], NUMS),
    ("quit-exit", ["sed", "2q5"], NUMS),
    ("Quit", ["sed", "2Q"], NUMS),
    ("multi-e", ["sed", "-e", "s/=/: /", "-e", "/^#/d", "app.conf"], None),
    ("append", ["sed", "/^port/a timeout=30", "app.conf"], None),
    ("insert", ["sed", "1i\\# generated", "app.conf"], None),
    ("change", ["sed", "/^mode/c\\mode=slow", "app.conf"], None),
    ("translit", ["sed", "y/abc/ABC/", "app.conf"], None),
    ("join-lines", ["sed", ":a;N;$!ba;s/\\n/,/g"], NUMS),
    ("tac", ["sed", "-n", "1!G;h;$p"], NUMS),
    ("hold-swap", ["sed", "-n", "h;n;G;p"], NUMS),
    ("pairs-PD", ["sed", "$!N;P;D"], "a\na\nb\nc\nc\n"),
    ("block", ["sed", "-n", "/ERROR/{s/ERROR/E/;p}", "app.log"], None),
    ("zero-addr", ["sed", "0,/cart/s//CART/", "app.log"], None),
    ("amp", ["sed", "s/[0-9]*ms/<&>/", "app.log"], None),
    ("icase", ["sed", "-n", "s/error/fail/Ip", "app.log"], None),
    ("branch-t", ["sed", ":x;s/a/b/;tx"], "aaa\nxa\n"),
    ("equals", ["sed", "=", "app.conf"], None),
    ("l-cmd", ["sed", "-n", "l"], "a\tb\\c\n"),
    ("no-trailing-newline", ["sed", "p"], "a\nb"),
    ("case-conv", ["sed", "-E", r"s/(\w+)=(.*)/\U\1\E=\u\2/", "app.conf"], None),
    ("empty-match-g", ["sed", "s/x*/-/g"], "abxd\n"),
    ("passwd-users", ["sed", "-n", "s/:.*//p", "passwd"], None),
    ("two-files", ["sed", "-n", "$=", "app.conf", "passwd"], None),
    ("missing-file", ["sed", "p", "nofile", "app.conf"], None),
    ("in-place", ["sed", "-i", "s/debug/info/", "app.conf"], None),
    ("in-place-bak", ["sed", "-i.bak", "/^#/d", "app.conf"], None),
    ("bracket-delim", ["sed", "s/[/]/|/g"], "a/b/c\n"),
    ("null-data", ["sed", "-z", "s/\\n/,/g"], "a\nb\n"),
    ("err-unterminated-s", ["sed", "s/a/b"], "a\n"),
    ("err-unknown-opt-s", ["sed", "s/a/b/x"], "a\n"),
    ("err-unknown-cmd", ["sed", "k"], "a\n"),
    ("err-missing-cmd", ["sed", "5"], "a\n"),
    ("err-address-regex", ["sed", "/abc"], "a\n"),
    ("err-unmatched-brace", ["sed", "-n", "{p"], "a\n"),
    ("err-unexpected-brace", ["sed", "p}"], "a\n"),
    ("err-extra-chars", ["sed", "p;p x"], "a\n"),
    ("err-bad-ref", ["sed", "s/a/\\1/"], "a\n"),
    ("err-y-lengths", ["sed", "y/ab/c/"], "a\n"),
    ("err-label", ["sed", "b foo"], "a\n"),
    ("err-zero", ["sed", "0p"], "a\n"),
    ("err-second-e", ["sed", "-e", "p", "-e", "s/a/b"], "a\n"),
    ("err-option", ["sed", "-k", "p"], "a\n"),
    ("err-no-script", ["sed"], "a\n"),
]


PS = (
    "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n"
    "root           1  0.0  0.1  16932  9876 ?        Ss   09:00   0:01 /sbin/init\n"
    "app           42 85.3 12.4 987654 512000 ?       Sl   09:01  12:34 java -jar app.jar\n"
    "app           57  2.1  1.2 123456 49152 ?        S    09:01   0:05 nginx: worker process\n"
    "postgres     88  7.5  3.3 234567 135168 ?        Ss   09:02   1:02 postgres: writer\n"
    "root          99  0.0  0.0   7064  3200 pts/0    R+   09:30   0:00 ps aux\n"
)
DF = (
    "Filesystem     1K-blocks     Used Available Use% Mounted on\n"
    "overlay         61255492 58211044   3028064  96% /\n"
    "tmpfs              65536        0     65536   0% /dev\n"
    "/dev/vda1       61255492 58211044   3028064  96% /etc/hosts\n"
    "shm                65536     1024     64512   2% /dev/shm\n"
)
AWK_CASES = [
    ("first-field", ["awk", "{print $1}", "app.log"], None),
    ("nf-last", ["awk", "{print $NF}", "app.log"], None),
    ("nf-minus", ["awk", "{print $(NF-1), NF}", "app.log"], None),
    ("F-colon-num", ["awk", "-F:", "$3>1000", "passwd"], None),
    ("F-colon-print", ["awk", "-F:", "{print $1, $7}", "passwd"], None),
    ("F-sep-arg", ["awk", "-F", ":", "$3 >= 1000 {print $1}", "passwd"], None),
    ("sum", ["awk", "{s+=$1} END {print s}"], NUMS),
    ("avg", ["awk", "{s+=$1} END {print s/NR}"], NUMS),
    ("count-by-key", ["awk", "{c[$2]++} END {for (k in c) n++; print n, c[\"ERROR\"], c[\"INFO\"]}", "app.log"], None),
    ("regex-pattern", ["awk", "/ERROR/ {print $3, $6}", "app.log"], None),
    ("field-regex", ["awk", "$2 ~ /^(WARN|ERROR)$/", "app.log"], None),
    ("not-match", ["awk", "$3 !~ /cart/ {n++} END {print n}", "app.log"], None),
    ("nr-range", ["awk", "NR==3, NR==5"], NUMS),
    ("nr-mod", ["awk", "NR%4==0"], NUMS),
    ("regex-range", ["awk", "/09:00:03/,/09:00:05/ {print NR\": \"$2}", "app.log"], None),
    ("ps-cpu", ["awk", "NR>1 && $3 > 5.0 {print $2, $3, $11}", "ps.txt"], None),
    ("ps-rss-sum", ["awk", "NR>1 {rss+=$6} END {printf \"%.1f MiB\\n\", rss/1024}", "ps.txt"], None),
    ("df-use", ["awk", "NR>1 {sub(/%/, \"\", $5); if ($5+0 > 90) print $6, $5\"%\"}", "df.txt"], None),
    ("printf-table", ["awk", "{printf \"%-8s %5d %s\\n\", $1, $3, $6}", "passwd"], None),
    ("printf-formats", ["awk", "BEGIN {printf \"%d %i %s %f %.2f %5s|%-5s| %x %c %e %%\\n\", 42.9, -7, \"str\", 3.14159, 2.71828, \"ab\", \"cd\", 255, 65, 12345.678}"], None),
    ("ofs-rebuild", ["awk", "-F:", "-v", "OFS=,", "{$2=\"\"; print}", "passwd"], None),
    ("dollar1-eq", ["awk", "{$1=$1; print}"], "  a   b\tc  \n"),
    ("nf-assign", ["awk", "{NF=2; print; print NF}"], "a b c d\n"),
    ("field-extend", ["awk", "{$5=\"e\"; print; print NF}"], "a b\n"),
    ("v-var", ["awk", "-v", "limit=100", "$7+0 > limit {print $6, $7}", "app.log"], None),
    ("string-funcs", ["awk", "{print length($0), substr($1, 12, 8), index($0, \"GET\"), toupper($3)}", "app.log"], None),
    ("split", ["awk", "{n=split($1, t, /[-T:Z]/); print n, t[4], t[5]}", "app.log"], None),
    ("gsub-count", ["awk", "{n+=gsub(/a/, \"A\")} END {print n}", "app.conf"], None),
    ("sub-amp", ["awk", "{sub(/[0-9]+ms/, \"[&]\"); print $NF}", "app.log"], None),
    ("match", ["awk", "match($0, /[0-9]+ms/) {print RSTART, RLENGTH, substr($0, RSTART, RLENGTH)}", "app.log"], None),
    ("math", ["awk", "BEGIN {print int(3.9), int(-3.9), sqrt(16), exp(0), log(1), sin(0), cos(0), atan2(0, -1), 2^10, 7%3}"], None),
    ("number-output", ["awk", "BEGIN {print 1/3, 100000*100000, 0.1+0.2, 1e6, 123456789, 2147483648, 1e-5; OFMT=\"%.2f\"; print 1/3; x = 1/3 \"\"; print x}"], None),
    ("uninit", ["awk", "BEGIN {print x+0, \"[\" x \"]\", length(x), (x == 0), (x == \"\")}"], None),
    ("compare-strnum", ["awk", "{print ($1 < $2), ($1 < \"9\"), ($3 == 10)}"], "10 9 10.0\n"),
    ("while-do", ["awk", "BEGIN {i=0; while (i<3) {printf \"%d \", i; i++}; do {j++} while (j<5); print j}"], None),
    ("for-loop-fields", ["awk", "{for (i=NF; i>0; i--) printf \"%s%s\", $i, (i>1 ? OFS : ORS)}"], "a b c\n1 2 3\n"),
    ("in-delete", ["awk", "BEGIN {a[\"x\"]=1; a[\"y\"]=2; delete a[\"x\"]; print (\"x\" in a), (\"y\" in a), length(a)}"], None),
    ("next", ["awk", "/^#/ {next} NF {print NR\": \"$0}", "app.conf"], None),
    ("exit-code", ["awk", "NR==2 {exit 3} {print}"], NUMS),
    ("end-after-exit", ["awk", "{print} NR==1 {exit} END {print \"end\", NR}"], NUMS),
    ("function", ["awk", "function max(a, b) {return a > b ? a : b} {m = max(m, $1+0)} END {print m}"], NUMS),
    ("getline-var", ["awk", "BEGIN {while ((getline line < \"passwd\") > 0) n++; print n}"], None),
    ("fnr-filename", ["awk", "FNR==1 {print FILENAME, NR}", "app.conf", "passwd"], None),
    ("tab-fs", ["awk", "-F", "\\t", "{print $2}"], "a\tb c\td\n"),
    ("regex-fs", ["awk", "-F", "[=:]", "{print $2}", "app.conf"], None),
    ("rs-paragraph", ["awk", "BEGIN {RS=\"\"} {print NR\": \"$1, NF}"], "a b\nc\n\n\nd e f\n"),
    ("printf-no-newline", ["awk", "{printf \"%s,\", $1} END {print \"\"}"], NUMS),
    ("concat-num", ["awk", "{print $1 $2, $1 - -$2, $1\" \"$2}"], "1 2\n"),
    ("substr-edges", ["awk", "BEGIN {print substr(\"hello\", 0, 2) \"|\" substr(\"hello\", -1) \"|\" substr(\"hello\", 2) \"|\" substr(\"hello\", 2.7) \"|\" substr(\"hello\", 2, 1.5)}"], None),
    ("srand-rand", ["awk", "BEGIN {srand(1); print rand(), rand(); print srand(2)}"], None),
    ("uniq-lines", ["awk", "!seen[$0]++"], "a\nb\na\nc\nb\n"),
    ("redirect-file", ["awk", "{print $1 > \"out.txt\"} END {close(\"out.txt\"); while ((getline l < \"out.txt\") > 0) print \"got\", l}"], "x y\nz w\n"),
    ("div-zero", ["awk", "BEGIN {print 1/0, -1/0, 5%0, log(-1)}"], None),
    ("array-param", ["awk", "function fill(a, n) {for (n = 1; n <= 3; n++) a[n] = n * n} BEGIN {fill(sq); print sq[2], sq[3], length(sq)}"], None),
    ("printf-int-clamp", ["awk", "BEGIN {printf \"%d %d %c|\\n\", 2^53, -2^40, \"\"}"], None),
    ("system-echo", ["awk", "BEGIN {print \"before\"; r = system(\"echo inside; exit 3\"); print \"after\", r}"], None),
    ("err-syntax", ["awk", "{x = 1 +}"], "a\n"),
    ("err-missing-brace", ["awk", "{print $1"], "a\n"),
    ("err-missing-paren", ["awk", "{print (}"], "a\n"),
    ("err-runaway-string", ["awk", "{print \"abc}"], "a\n"),
    ("err-runaway-regex", ["awk", "/abc"], "a\n"),
    ("err-missing-file", ["awk", "{print}", "nofile"], None),
    ("err-option", ["awk", "-k", "1"], None),
    ("err-printf-args", ["awk", "BEGIN{printf \"%s %s\\n\", \"a\"}"], None),
]


FILES = {"app.log": LOG, "app.conf": CONF, "passwd": PASSWD, "ps.txt": PS, "df.txt": DF}
WATCHED = [*FILES, "app.conf.bak", "out.txt"]
CASES = {f"sed-{name}": (argv, stdin) for name, argv, stdin in SED_CASES}
CASES.update({f"awk-{name}": (argv, stdin) for name, argv, stdin in AWK_CASES})


@pytest.fixture(scope="module")
def twin() -> Twin:
    return Twin(seed=5)


def run_in_twin(twin: Twin, case: str, argv: list[str], stdin: str | None,
                image: str = "debian:12") -> list[Any]:
    from support.pods import running_pod  # imported here: the golden rewrite runs without tests/ on the path

    ctx = exec_context(twin, running_pod(case.lower().replace("_", "-"), image), "web")
    ctx.cwd = WORKDIR
    for name, content in FILES.items():
        ctx.files[f"{WORKDIR}/{name}"] = content
    result = run_exec(ctx, list(argv), stdin or "")
    return [result.stdout, result.stderr, result.exit_code,
            changed({name: ctx.files.get(f"{WORKDIR}/{name}") for name in WATCHED})]


def changed(files: dict[str, str | None]) -> dict[str, str | None]:
    """The watched files a run created or changed."""
    return {name: content for name, content in files.items() if content != FILES.get(name)}


def run_on_host(argv: list[str], stdin: str | None) -> list[Any]:
    with tempfile.TemporaryDirectory() as tmp:
        for name, content in FILES.items():
            Path(tmp, name).write_text(content)
        done = subprocess.run(argv, input=stdin or "", capture_output=True,
                              text=True, cwd=tmp, env={**os.environ, "LC_ALL": "C.UTF-8"}, check=False)
        files = {name: Path(tmp, name).read_text() if Path(tmp, name).exists() else None
                 for name in WATCHED}
    return [done.stdout, done.stderr, done.returncode, changed(files)]


def _golden() -> dict[str, list[Any]]:
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("case", sorted(CASES))
def test_container_tool_matches_debian(twin: Twin, case: str) -> None:
    argv, stdin = CASES[case]
    assert run_in_twin(twin, case, argv, stdin) == _golden()[case]


@pytest.mark.parametrize("argv", [["sed", ":a;s/^/x/;ta"], ["awk", "BEGIN {s = \"x\"; while (1) s = s s}"]],
                         ids=["sed-endless-loop", "awk-doubling-string"])
def test_runaway_scripts_end_like_a_killed_process(twin: Twin, argv: list[str]) -> None:
    """A script that never ends (or grows without bound) must not hold the server: it is
    stopped at its work or memory budget and reported as killed, with nothing half-printed."""
    assert run_in_twin(twin, argv[0] + "-runaway", argv, "a\n")[:3] == ["", "", 137]


def _host_versions_match() -> bool:
    if not (shutil.which("sed") and shutil.which("awk")):
        return False
    sed = subprocess.run(["sed", "--version"], capture_output=True, text=True, check=False).stdout
    mawk = subprocess.run(["awk", "-W", "version"], capture_output=True, text=True, check=False).stdout
    return sed.startswith("sed (GNU sed) 4.9") and mawk.startswith("mawk 1.3.4 20200120")


@pytest.mark.skipif(not _host_versions_match(), reason="needs GNU sed 4.9 and mawk 1.3.4 20200120")
def test_golden_is_what_the_host_tools_print() -> None:
    golden = _golden()
    assert sorted(golden) == sorted(CASES)
    wrong = [case for case, (argv, stdin) in CASES.items() if run_on_host(argv, stdin) != golden[case]]
    assert not wrong


if __name__ == "__main__":
    if not _host_versions_match():
        sys.exit("the host needs GNU sed 4.9 and mawk 1.3.4 20200120")
    GOLDEN.write_text(json.dumps({case: run_on_host(argv, stdin) for case, (argv, stdin) in sorted(CASES.items())},
                                 indent=1, sort_keys=True) + "\n")
