"""The twin's text filters against the host's real GNU tools, byte for byte.

Each case runs the same argv on the same input files and stdin twice: with the host's binary
(Debian 12: coreutils 9.1, grep 3.8, findutils 4.9, in the C locale a container has) and with the
twin's command exec'd into a Debian-family container. stdout, stderr and the exit code must be
identical. Only commands without side effects run on the host, in a scratch directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin.userland.context import ExecContext, run_exec

FILES = {
    "log.txt": ("2026-01-05 ERROR db timeout after 5s\n"
                "2026-01-05 INFO request ok\n"
                "2026-01-05 WARN slow query 1200ms\n"
                "2026-01-05 INFO request ok\n"
                "2026-01-05 ERROR db timeout after 5s\n"
                "2026-01-05 error Connection refused\n"
                "2026-01-05 INFO cache hit\n"
                "2026-01-05 INFO cache hit\n"
                "2026-01-05 INFO cache hit\n"
                "2026-01-05 DEBUG tick\n"
                "2026-01-05 INFO request ok\n"
                "2026-01-05 WARN retry 3/5 (backoff) [geo]\n"),
    "nums.txt": "10\n9\n-3\n2.5\n100\n\n abc\n007\n1e3\n-0\n2.50\n",
    "sizes.txt": "1.5G\n200K\n3M\n512\n1K\n-2M\n10G\n900k\n",
    "passwd": ("root:x:0:0:root:/root:/bin/bash\n"
               "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
               "www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n"
               "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
               "app:x:1000:1000:App User,,,:/home/app:/bin/sh\n"
               "nodelim line\n"),
    "pods.txt": ("web-1   Running   3   10.0.0.7\n"
                 "db-0    Pending   0   <none>\n"
                 "web-0   Running   12  10.0.0.5\n"
                 "cache-2 CrashLoopBackOff 7 10.0.0.9\n"
                 "api-10  Running   1   10.0.0.11\n"
                 "api-9   Running   1   10.0.0.12\n"),
    "versions.txt": "1.10.0\n1.2.0\n1.2.0-rc1\n1.9\nv2.0\n1.2\n1.02.1\n",
    "words.txt": "apple\nBanana\napple\ncherry\nApple\nbanana\n\ncherry\ncherry\n",
    "noeol.txt": "first\nsecond\nthird",
    "tabs.txt": "a\tb\tc\n\tindented\nx y\tz\n",
    "conf/app.yaml": "port: 8080\nlog_level: debug\n",
    "conf/db/db.yaml": "host: cart-db\nport: 27017\n",
    "months.txt": "Mar 3\nJAN 9\nfeb 1\nxyz 0\n Dec 2\n",
    "mixed.txt": "b-2\na_1\n#c\nA 3\n\x01z\n",
}

# (argv, stdin) — stdin None means no stdin (an empty pipe).
CASES: list[tuple[list[str], str | None]] = [
    # sort
    (["sort", "words.txt"], None),
    (["sort", "-f", "words.txt"], None),
    (["sort", "-u", "words.txt"], None),
    (["sort", "-fu", "words.txt"], None),
    (["sort", "-r", "words.txt"], None),
    (["sort", "-n", "nums.txt"], None),
    (["sort", "-nr", "nums.txt"], None),
    (["sort", "-g", "nums.txt"], None),
    (["sort", "-h", "sizes.txt"], None),
    (["sort", "-hr", "sizes.txt"], None),
    (["sort", "-V", "versions.txt"], None),
    (["sort", "-t:", "-k3,3n", "passwd"], None),
    (["sort", "-t", ":", "-k3n", "-r", "passwd"], None),
    (["sort", "-k2,2", "-k3,3nr", "pods.txt"], None),
    (["sort", "-k2", "pods.txt"], None),
    (["sort", "-b", "-k2,2", "pods.txt"], None),
    (["sort", "-s", "-k2,2", "pods.txt"], None),
    (["sort", "-k1.5,1.6", "pods.txt"], None),
    (["sort", "-k3,3", "-n", "pods.txt"], None),
    (["sort", "-u", "-k2,2", "pods.txt"], None),
    (["sort", "-c", "words.txt"], None),
    (["sort", "-k", "0", "words.txt"], None),
    (["sort", "-t", "ab", "words.txt"], None),
    (["sort", "-Q", "words.txt"], None),
    (["sort", "--bogus"], None),
    (["sort", "missing.txt"], None),
    (["sort", "--rev", "words.txt"], None),
    (["sort", "-k"], None),
    (["sort"], "b\na\nc\n"),
    (["sort", "noeol.txt"], None),
    # uniq
    (["uniq", "words.txt"], None),
    (["uniq", "-c", "words.txt"], None),
    (["uniq", "-d", "words.txt"], None),
    (["uniq", "-u", "words.txt"], None),
    (["uniq", "-ci"], "a\nA\nb\nB\nb\n"),
    (["uniq", "-f", "2", "-c", "log.txt"], None),
    (["uniq", "-s", "11", "-w", "5", "log.txt"], None),
    (["uniq", "-D", "words.txt"], None),
    (["uniq", "-x"], None),
    (["uniq", "missing.txt"], None),
    (["uniq", "a", "b", "c"], None),
    # wc
    (["wc", "log.txt"], None),
    (["wc", "-l", "log.txt"], None),
    (["wc", "-l", "log.txt", "words.txt"], None),
    (["wc", "-w", "-c", "log.txt", "nums.txt"], None),
    (["wc"], "one two\nthree\n"),
    (["wc", "-l"], "one two\nthree\n"),
    (["wc", "-m", "noeol.txt"], None),
    (["wc", "-L", "tabs.txt"], None),
    (["wc", "log.txt", "missing.txt"], None),
    (["wc", "missing.txt", "log.txt"], None),
    (["wc", "-z"], None),
    # head / tail
    (["head", "-n", "3", "log.txt"], None),
    (["head", "-3", "log.txt"], None),
    (["head", "-n", "-10", "log.txt"], None),
    (["head", "-c", "20", "log.txt"], None),
    (["head", "-c", "-5", "noeol.txt"], None),
    (["head", "-n", "2", "noeol.txt", "words.txt"], None),
    (["head", "-q", "-n1", "noeol.txt", "words.txt"], None),
    (["head", "-v", "-n1", "noeol.txt"], None),
    (["head", "-n", "x", "log.txt"], None),
    (["head", "missing.txt"], None),
    (["head", "-n1", "missing.txt", "noeol.txt"], None),
    (["tail", "-n", "2", "log.txt"], None),
    (["tail", "-3", "log.txt"], None),
    (["tail", "-n", "+10", "log.txt"], None),
    (["tail", "-c", "8", "noeol.txt"], None),
    (["tail", "-c", "+3", "noeol.txt"], None),
    (["tail", "-n1", "noeol.txt", "words.txt"], None),
    (["tail", "-n", "abc"], None),
    (["tail", "missing.txt"], None),
    (["tail", "-n", "2"], "a\nb\nc\n"),
    # cut
    (["cut", "-d:", "-f1", "passwd"], None),
    (["cut", "-d:", "-f1,3-4", "passwd"], None),
    (["cut", "-d", ":", "-f", "6-", "passwd"], None),
    (["cut", "-d:", "-f", "-2", "-s", "passwd"], None),
    (["cut", "-d:", "--complement", "-f2", "passwd"], None),
    (["cut", "-d:", "-f1,7", "--output-delimiter= | ", "passwd"], None),
    (["cut", "-c1-5", "log.txt"], None),
    (["cut", "-b", "12-,1-4", "log.txt"], None),
    (["cut", "-c", "3", "--output-delimiter=#", "tabs.txt"], None),
    (["cut", "-f2", "tabs.txt"], None),
    (["cut", "-c1-3,5-6", "--output-delimiter=|", "noeol.txt"], None),
    (["cut", "log.txt"], None),
    (["cut", "-f0", "log.txt"], None),
    (["cut", "-d", "ab", "-f1", "log.txt"], None),
    (["cut", "-c", "3-1", "log.txt"], None),
    (["cut", "-f1", "missing.txt"], None),
    # tr
    (["tr", "a-z", "A-Z"], "Hello, World 123\n"),
    (["tr", "[:lower:]", "[:upper:]"], "Hello, World 123\n"),
    (["tr", "-d", "0-9"], "a1b22c333\n"),
    (["tr", "-s", " "], "a    b  c\n"),
    (["tr", "-cd", "[:alnum:]\\n"], "a-b_c!d\ne f\n"),
    (["tr", "-s", "a-z", "A-Z"], "aabbccdd xxyy\n"),
    (["tr", "abc", "x"], "aabbcc\n"),
    (["tr", "-t", "abc", "xy"], "aabbcc\n"),
    (["tr", ":", "\\n"], "a:b:c\n"),
    (["tr", "-c", "a-z\\n", "_"], "ab-Cd e\n"),
    (["tr", "-ds", "0-9", "a"], "aa11aa22\n"),
    (["tr", "[:space:]", "."], "a b\tc\n"),
    (["tr"], None),
    (["tr", "a"], None),
    (["tr", "-d", "a", "b"], None),
    (["tr", "z-a", "x"], None),
    # grep
    (["grep", "ERROR", "log.txt"], None),
    (["grep", "-i", "error", "log.txt"], None),
    (["grep", "-v", "INFO", "log.txt"], None),
    (["grep", "-c", "INFO", "log.txt"], None),
    (["grep", "-n", "WARN", "log.txt"], None),
    (["grep", "-o", "[0-9]*ms", "log.txt"], None),
    (["grep", "-w", "ok", "log.txt"], None),
    (["grep", "-x", "2026-01-05 DEBUG tick", "log.txt"], None),
    (["grep", "-E", "WARN|DEBUG", "log.txt"], None),
    (["grep", "WARN\\|DEBUG", "log.txt"], None),
    (["grep", "-F", "(backoff) [geo]", "log.txt"], None),
    (["grep", "(backoff)", "log.txt"], None),
    (["grep", "-E", "\\(backoff\\)", "log.txt"], None),
    (["grep", "\\(ca\\)\\(che\\) hit", "log.txt"], None),
    (["grep", "-e", "DEBUG", "-e", "refused", "log.txt"], None),
    (["grep", "-c", "o\\{2\\}", "log.txt"], None),
    (["grep", "-E", "-o", "[0-9]{2,}", "log.txt"], None),
    (["grep", "-o", "-E", "ca|cac|cach", "log.txt"], None),
    (["grep", "re+try", "log.txt"], None),
    (["grep", "retr\\?y", "log.txt"], None),
    (["grep", "[[:upper:]]\\{5\\}", "log.txt"], None),
    (["grep", "-A1", "WARN", "log.txt"], None),
    (["grep", "-B", "2", "DEBUG", "log.txt"], None),
    (["grep", "-C1", "-n", "error", "log.txt"], None),
    (["grep", "-n", "-A1", "ERROR", "log.txt"], None),
    (["grep", "-m", "2", "INFO", "log.txt"], None),
    (["grep", "-m1", "-A2", "INFO", "log.txt"], None),
    (["grep", "-l", "root", "passwd", "log.txt"], None),
    (["grep", "-L", "root", "passwd", "log.txt"], None),
    (["grep", "-H", "root", "passwd"], None),
    (["grep", "-h", "a", "passwd", "noeol.txt"], None),
    (["grep", "-c", "o", "passwd", "noeol.txt"], None),
    (["grep", "-q", "ERROR", "log.txt"], None),
    (["grep", "-q", "nothing", "log.txt"], None),
    (["grep", "x", "missing.txt"], None),
    (["grep", "-s", "x", "missing.txt"], None),
    (["grep", "-q", "root", "passwd", "missing.txt"], None),
    (["grep", "root", "passwd", "missing.txt"], None),
    (["grep", "\\(a", "log.txt"], None),
    (["grep", "[a", "log.txt"], None),
    (["grep", "[[:foo:]]", "log.txt"], None),
    (["grep", "-E", "a{1", "log.txt"], None),
    (["grep", "-E", "*ERROR", "log.txt"], None),
    (["grep", "-A", "x", "a", "log.txt"], None),
    (["grep", "-Q", "a"], None),
    (["grep"], None),
    (["grep", "-n", "b"], "abc\nxyz\nbcd\n"),
    (["grep", "-c", ""], "a\n\nb\n"),
    (["grep", "-w", "-o", "[a-z]*"], "foo bar_baz qux\n"),
    (["grep", "-i", "-o", "APP"], "app App aPP\n"),
    (["grep", "^[^:]*:x:[0-9]\\{1,2\\}:", "passwd"], None),
    (["grep", "sh$", "passwd"], None),
    (["grep", "-v", "-c", "^$", "words.txt"], None),
    # xargs
    (["xargs"], "a b\nc  d\n"),
    (["xargs", "-n", "2", "echo"], "a b c d e\n"),
    (["xargs", "-n1"], "'x y' \"z w\" v\\ u\n"),
    (["xargs", "-I", "{}", "echo", "item={}."], "one\ntwo three\n"),
    (["xargs", "-0", "echo"], "a b\0c\0"),
    (["xargs", "-t", "echo", "hi"], "a\nb\n"),
    (["xargs", "-r", "echo", "ran"], ""),
    (["xargs", "echo", "ran"], ""),
    (["xargs", "nosuchcmd"], "a\n"),
    (["xargs", "-n", "0"], "a\n"),
    (["xargs", "-Q"], "a\n"),
    (["xargs", "wc", "-l"], "noeol.txt words.txt\n"),
    (["xargs", "-L", "1", "echo"], "a b\nc\n\nd e f\n"),
    (["xargs", "-E", "STOP", "echo"], "a b STOP c\n"),
    (["xargs", "-d", ",", "-n", "2", "echo"], "a,b,c"),
    (["xargs", "echo"], "a 'b\n"),
    (["xargs", "-n", "x"], "a\n"),
    (["xargs", "sh", "-c", "exit 3"], "a\n"),
    # more sort
    (["sort", "-M", "months.txt"], None),
    (["sort", "-d", "mixed.txt"], None),
    (["sort", "-i", "-f", "mixed.txt"], None),
    (["sort", "-t:", "-k7,7", "-k1,1r", "passwd"], None),
    (["sort", "-t", ":", "-k", "5.2,5.3", "passwd"], None),
    (["sort", "-k2b,2", "-k1,1", "pods.txt"], None),
    (["sort", "-k", "3n,3", "-k", "1,1", "pods.txt"], None),
    (["sort", "-n", "-u", "nums.txt"], None),
    (["sort", "-z"], "b\0a\0c"),
    (["sort", "-c", "-u"], "a\na\n"),
    (["sort", "-C"], "b\na\n"),
    (["sort", "-k1.0", "words.txt"], None),
    (["sort", "-k", "1x", "words.txt"], None),
    (["sort", "-c", "words.txt", "nums.txt"], None),
    # more uniq / wc / head / tail / cut / tr / grep
    (["uniq", "-c", "-u", "words.txt"], None),
    (["uniq", "-s", "x"], None),
    (["uniq", "words.txt", "-"], None),
    (["wc", "-c", "-"], "abc\n"),
    (["wc", "-lwmcL", "passwd"], None),
    (["head", "-n", "+2", "noeol.txt"], None),
    (["head", "-c", "1K", "noeol.txt"], None),
    (["head", "--lines=2", "log.txt"], None),
    (["head", "-n"], None),
    (["tail", "-c", "-3", "noeol.txt"], None),
    (["tail", "-v", "noeol.txt"], None),
    (["tail", "-q", "-n1", "noeol.txt", "passwd"], None),
    (["tail", "-n", "0", "passwd"], None),
    (["cut", "-d:", "-f", "1 3"], "a:b:c\n"),
    (["cut", "-f", "1a,2"], None),
    (["cut", "-f", "-"], None),
    (["cut", "-c1", "-f1"], None),
    (["cut", "-s", "-c1"], None),
    (["cut", "-d", ":", "-c1"], None),
    (["cut", "-z", "-d", ",", "-f2"], "a,b\0c,d\0"),
    (["tr", "-c", "[:alpha:]", "[x*]"], "ab12cd\n"),
    (["tr", "a-c", "[x*2]y"], "abcd\n"),
    (["tr", "a", "[:upper:]"], "abc\n"),
    (["tr", "'\\101-\\103'", "x"], "ABCD\n"),
    (["tr", "-s", "\\n"], "a\n\n\nb\n"),
    (["grep", "-rh", "port", "conf/db"], None),
    (["grep", "port", "conf"], None),
    (["grep", "-s", "port", "conf"], None),
    (["grep", "-c", "-v", "x", "conf/app.yaml"], None),
    (["grep", "-o", "-b", "ok", "log.txt"], None),
    (["grep", "-in", "^[^ ]* [[:lower:]]"], "A b\nc D\ne f\n"),
    (["grep", "-E", "(ab)+c|^x$"], "ababc\nx\nabd\n"),
    (["grep", r"\<cache\>"], "cache hit\nmemcached\n"),
    (["grep", "-f", "words.txt", "passwd"], None),
    (["grep", "-e", "root", "-f", "missing.txt", "passwd"], None),
    (["grep", "-x", "-F", "apple", "words.txt"], None),
    (["grep", "-w", "-c", "request"], "request ok\nrequests\n"),
    (["grep", "--count", "--ignore-case", "INFO", "log.txt"], None),
    (["grep", "--colour=never", "DEBUG", "log.txt"], None),
    (["grep", "--max-count=1", "--with-filename", "ERROR", "log.txt"], None),
    (["grep", "-C", "1", "--no-group-separator", "DEBUG", "log.txt"], None),
    (["grep", r"a\{1,2\}b", "log.txt"], None),
    (["grep", "-n", "-e", r"\(e\)\1", "-e", r"\(o\)\1", "log.txt"], None),
    (["grep", "-E", "^(ERROR|WARN)$|time.?out"], "timeout\ntime out\nWARN\n"),
    (["sh", "-c", "grep -r port . | sort"], None),
    (["sh", "-c", "sort -t: -k3,3n passwd | head -n 3 | cut -d: -f1 | tr a-z A-Z"], None),
    (["sh", "-c", "grep -o '[A-Z]\\{4,5\\}' log.txt | sort | uniq -c | sort -rn"], None),
    (["sh", "-c", "cut -d' ' -f2 log.txt | sort | uniq -c | sort -k1,1nr -k2"], None),
    (["sh", "-c", "ls conf | xargs -I{} echo conf/{}"], None),
]


def exec_ctx(flavour: str = "dash", image: str = "debian:12") -> ExecContext:
    """A container's exec context with the input files in its working directory /data (no
    cluster around it: the filters only read files and stdin)."""
    return ExecContext(files={f"/data/{name}": content for name, content in FILES.items()},
                       cwd="/data", shell_flavour=flavour,
                       extras={"exec": True, "image": image})


def twin_run(argv: list[str], stdin: str | None) -> tuple[str, str, int]:
    result = run_exec(exec_ctx(), list(argv), stdin or "")
    return result.stdout, result.stderr, result.exit_code


def host_run(tmp: Path, argv: list[str], stdin: str | None) -> tuple[str, str, int]:
    proc = subprocess.run(argv, executable=f"/usr/bin/{argv[0]}", cwd=tmp, check=False,
                          input=(stdin or "").encode(), capture_output=True, timeout=20,
                          env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    return proc.stdout.decode(), proc.stderr.decode(), proc.returncode


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("filters")
    for name, content in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    return root


_HOST_TOOLS = all(os.access(f"/usr/bin/{tool}", os.X_OK) for tool in
                  ("sort", "uniq", "wc", "head", "tail", "cut", "tr", "grep", "xargs"))


@pytest.mark.skipif(not _HOST_TOOLS or shutil.which("sort") is None, reason="no GNU tools on host")
@pytest.mark.parametrize(("argv", "stdin"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_filter_matches_gnu(scratch: Path, argv: list[str], stdin: str | None) -> None:
    assert twin_run(argv, stdin) == host_run(scratch, argv, stdin)
