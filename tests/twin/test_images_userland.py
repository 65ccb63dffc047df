"""Userland per image family, the shell's here-documents and lookups, find, tar/gzip, kill.

In-process (`exec_context` + `run_exec`) against hand-written pods, so no kubelet runs except
for the kill cases, which need the container's process.
"""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.node.image_families import executables, family_of
from sregym.twin.node.images import lookup
from sregym.twin.userland.context import exec_context, run_exec

CONTAINERD = ('OCI runtime exec failed: exec failed: unable to start container process: exec: "{}": '
              'executable file not found in $PATH: unknown\n')


def _pod(image: str, name: str = "p") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"nodeName": "kind-worker", "containers": [{"name": "c", "image": image}]}}


@pytest.fixture(scope="module")
def twin() -> Twin:
    return Twin(seed=5)


def run(twin: Twin, image: str, script: str | list[str], name: str = "p") -> tuple[str, str, int]:
    argv = ["sh", "-c", script] if isinstance(script, str) else script
    result = run_exec(exec_context(twin, _pod(image, name), "c"), argv)
    return result.stdout, result.stderr, result.exit_code


# ------------------------------------------------------------------------------ image families
@pytest.mark.parametrize(("image", "family"), [
    ("nginx:1.27", "debian"), ("nginx:1.27-alpine", "alpine"), ("busybox:1.36", "busybox"),
    ("alpine:3.21", "alpine"), ("mongo:4.4.6", "ubuntu"), ("redis:7.2.4", "debian"),
    ("hashicorp/consul:1.20", "alpine"), ("prom/prometheus:v3.1.0", "busybox"),
    ("registry.k8s.io/coredns/coredns:v1.11.3", "distroless"),
    ("jaegertracing/all-in-one:1.57", "distroless"), ("yinfangchen/hotelreservation:latest", "debian"),
])
def test_family_of_each_image(twin: Twin, image: str, family: str) -> None:
    spec, _ref = lookup(image, twin)
    assert family_of(image, spec) == family


@pytest.mark.parametrize(("image", "present", "absent"), [
    ("nginx:1.27", {"sort": "/usr/bin/sort", "sed": "/usr/bin/sed", "awk": "/usr/bin/awk",
                    "find": "/usr/bin/find", "tar": "/usr/bin/tar", "curl": "/usr/bin/curl",
                    "nginx": "/usr/sbin/nginx", "chroot": "/usr/sbin/chroot"},
     {"wget", "ping", "ip", "ss", "netstat", "dig", "jq", "killall", "mongo"}),
    ("busybox:1.36", {"sort": "/bin/sort", "sed": "/bin/sed", "wget": "/bin/wget", "nc": "/bin/nc",
                      "killall": "/bin/killall", "xargs": "/bin/xargs"}, {"curl", "bash", "ss", "jq"}),
    ("alpine:3.21", {"sort": "/usr/bin/sort", "ip": "/sbin/ip", "ls": "/bin/ls", "apk": "/sbin/apk"},
     {"curl", "bash"}),
    ("mongo:4.4.6", {"mongo": "/usr/bin/mongo", "jq": "/usr/bin/jq", "mongod": "/usr/bin/mongod"},
     {"mongosh", "curl"}),
    ("mongo:7.0", {"mongosh": "/usr/bin/mongosh"}, {"mongo"}),
    ("redis:7.2.4", {"redis-cli": "/usr/local/bin/redis-cli"}, {"ping", "curl"}),
    ("registry.k8s.io/coredns/coredns:v1.11.3", {"coredns": "/usr/local/bin/coredns"},
     {"sh", "sort", "ls", "cat"}),
])
def test_executables_by_family(twin: Twin, image: str, present: dict[str, str], absent: set[str]) -> None:
    spec, _ref = lookup(image, twin)
    found = executables(image, spec)
    assert {name: found.get(name) for name in present} == present
    assert not absent & set(found)


@pytest.mark.parametrize(("image", "script", "expected"), [
    ("nginx:1.27", "which ls sed nginx; echo $?", "/usr/bin/ls\n/usr/bin/sed\n/usr/sbin/nginx\n0\n"),
    ("nginx:1.27", "which wget ls; echo $?", "/usr/bin/ls\n1\n"),
    ("nginx:1.27", "which -a ls", "/usr/bin/ls\n/bin/ls\n"),
    ("nginx:1.27", "command -v sort; command -v cd; command -v jq; echo $?", "/usr/bin/sort\ncd\n127\n"),
    ("nginx:1.27", "type sort cd export if jq; echo $?",
     "sort is /usr/bin/sort\ncd is a shell builtin\nexport is a special shell builtin\n"
     "if is a shell keyword\njq: not found\n127\n"),
    ("busybox:1.36", "which sort wget nc", "/bin/sort\n/bin/wget\n/bin/nc\n"),
    ("alpine:3.21", "type ip; command -v sort", "ip is /sbin/ip\n/usr/bin/sort\n"),
])
def test_which_command_and_type_agree_with_the_image(twin: Twin, image: str, script: str, expected: str) -> None:
    out, _err, _code = run(twin, image, script)
    assert out == expected


def test_missing_tools_are_not_found_with_each_shells_text(twin: Twin) -> None:
    assert run(twin, "nginx:1.27", "jq .") == ("", "sh: 1: jq: not found\n", 127)
    assert run(twin, "busybox:1.36", "true; curl -s x") == ("", "sh: curl: not found\n", 127)
    assert run(twin, "nginx:1.27", ["wget", "-q", "x"]) == ("", CONTAINERD.format("wget"), 127)
    for tool in ("sort", "sed", "ls", "sh"):  # distroless: no shell, no tools
        assert run(twin, "registry.k8s.io/coredns/coredns:v1.11.3", [tool]) == ("", CONTAINERD.format(tool), 127)
    out, _err, code = run(twin, "nginx:1.27", "ls /usr/bin/sort /usr/sbin/nginx")
    assert code == 0 and out == "/usr/bin/sort\n/usr/sbin/nginx\n"


# ------------------------------------------------------------------------------------- shell
@pytest.mark.parametrize(("image", "script", "out", "err", "code"), [
    ("nginx:1.27", 'X=1; cat <<EOF\nx=$X \\$X `echo b` $(echo $(echo n))\nEOF\necho done',
     "x=1 $X b n\ndone\n", "", 0),
    ("nginx:1.27", "cat <<'EOF'\n$HOME `x`\nEOF", "$HOME `x`\n", "", 0),
    ("nginx:1.27", "cat <<-EOF\n\t\tindented\n\tEOF\necho ok", "indented\nok\n", "", 0),
    ("nginx:1.27", "cat <<A; cat <<B\na\nA\nb\nB", "a\nb\n", "", 0),
    ("nginx:1.27", "while read k v; do echo \"$v=$k\"; done <<EOF\na 1\nb 2 3\nEOF", "1=a\n2 3=b\n", "", 0),
    ("nginx:1.27", "printf 'x\\ny\\n' | while read l; do echo \"<$l>\"; done", "<x>\n<y>\n", "", 0),
    ("nginx:1.27", "cat <<< hi", "", "sh: 1: Syntax error: redirection unexpected\n", 2),
    ("nginx:1.27", "bash -c 'cat <<< \"a b\"'", "a b\n", "", 0),
    ("busybox:1.36", "cat <<< hi", "", "sh: syntax error: unexpected redirection\n", 2),
    ("nginx:1.27", "true\ntrue; nope 2>/dev/null || nope 2>&1 >/dev/null || echo failed",
     "sh: 2: nope: not found\nfailed\n", "", 0),
])
def test_heredocs_herestrings_and_line_numbers(twin: Twin, image: str, script: str, out: str, err: str,
                                               code: int) -> None:
    assert run(twin, image, script) == (out, err, code)


# -------------------------------------------------------------------------------------- find
_TREE = "mkdir -p /tmp/t/a/b; echo hi > /tmp/t/a/f1; : > /tmp/t/a/b/F2; cd /tmp/t; "


@pytest.mark.parametrize(("image", "script", "out", "err", "code"), [
    ("nginx:1.27", "find .", ".\n./a\n./a/b\n./a/b/F2\n./a/f1\n", "", 0),
    ("nginx:1.27", "find a -type f -exec echo X {} \\;", "X a/b/F2\nX a/f1\n", "", 0),
    ("nginx:1.27", "find . -type f -exec echo {} +", "./a/b/F2 ./a/f1\n", "", 0),
    ("nginx:1.27", "find . -iname 'f*' -print0", "./a/b/F2\0./a/f1\0", "", 0),
    ("nginx:1.27", "find . -maxdepth 1", ".\n./a\n", "", 0),
    ("nginx:1.27", "find . -mindepth 2 -type d", "./a/b\n", "", 0),
    ("nginx:1.27", "find . \\( -name f1 -o -name F2 \\) ! -empty", "./a/f1\n", "", 0),
    ("nginx:1.27", "find . -path '*b*' -size -1k", "./a/b/F2\n", "", 0),
    ("nginx:1.27", "find . -name f1 -delete; find . -type f", "./a/b/F2\n", "", 0),
    ("nginx:1.27", "find /nope", "", "find: '/nope': No such file or directory\n", 1),
    ("nginx:1.27", "find . -foo", "", "find: unknown predicate `-foo'\n", 1),
    ("nginx:1.27", "find . -name", "", "find: missing argument to `-name'\n", 1),
    ("nginx:1.27", "find . -type q", "", "find: Unknown argument to -type: q\n", 1),
    ("nginx:1.27", "find . -size 1x", "", "find: invalid -size type `x'\n", 1),
    ("nginx:1.27", "find /bin -name ls; find /usr -name sort", "/usr/bin/sort\n", "", 0),
    ("busybox:1.36", "find /nope", "", "find: /nope: No such file or directory\n", 1),
])
def test_find(twin: Twin, image: str, script: str, out: str, err: str, code: int) -> None:
    assert run(twin, image, _TREE + script, name="find-" + image) == (out, err, code)


# ------------------------------------------------------------------------------ tar and gzip
@pytest.mark.parametrize(("image", "script", "out", "err", "code"), [
    ("nginx:1.27", "tar --version | head -1", "tar (GNU tar) 1.34\n", "", 0),
    ("nginx:1.27", "tar --foo", "", "tar: unrecognized option '--foo'\n"
     "Try 'tar --help' or 'tar --usage' for more information.\n", 64),
    ("nginx:1.27", "cd /tmp; echo hi > a; tar czf a.tgz a; rm a; tar xzf a.tgz; cat a; tar tzf a.tgz",
     "hi\na\n", "", 0),
    ("nginx:1.27", "echo hello | gzip -c | zcat", "hello\n", "", 0),
    ("nginx:1.27", "echo x > /tmp/g; gzip /tmp/g; ls /tmp/g /tmp/g.gz; gunzip /tmp/g.gz; cat /tmp/g", "/tmp/g.gz\nx\n",
     "ls: cannot access '/tmp/g': No such file or directory\n", 0),
    ("nginx:1.27", "echo no > /tmp/n.gz; gunzip -c /tmp/n.gz", "", "\ngunzip: /tmp/n.gz: not in gzip format\n", 1),
    ("busybox:1.36", "echo no > /tmp/n.gz; gunzip -c /tmp/n.gz", "", "gunzip: invalid magic\n", 1),
])
def test_tar_and_gzip(twin: Twin, image: str, script: str, out: str, err: str, code: int) -> None:
    assert run(twin, image, script, name="tar-" + image) == (out, err, code)


def test_gzip_is_deterministic(twin: Twin) -> None:
    first = run(twin, "nginx:1.27", "echo same | gzip -c", name="gz1")
    assert first == run(twin, "nginx:1.27", "echo same | gzip -c", name="gz2") and first[0]


# -------------------------------------------------------------------------------------- kill
KILL_PODS = """
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: "nginx:1.27"}]
---
apiVersion: v1
kind: Pod
metadata: {name: bb, namespace: default}
spec:
  containers: [{name: c, image: "busybox:1.36", command: [sleep, "3600"]}]
"""


def test_kill_reaches_pid_1_under_the_init_rule() -> None:
    twin = Twin(seed=6)
    twin.apply(KILL_PODS)
    twin.advance(15)

    def kill(pod: str, *argv: str) -> tuple[str, str, int]:
        result = run_exec(exec_context(twin, twin.get("Pod", "default", pod), "c"), list(argv))
        return result.stdout, result.stderr, result.exit_code

    assert kill("web", "kill", "99") == ("", "kill: (99): No such process\n", 1)
    assert kill("web", "sh", "-c", "kill 99") == ("", "sh: 1: kill: No such process\n\n", 1)
    assert kill("bb", "sh", "-c", "kill 99") == ("", "sh: can't kill pid 99: No such process\n", 1)
    assert kill("web", "sh", "-c", "kill -l 15; kill -l TERM") == ("TERM\n15\n", "", 0)
    assert kill("web", "kill", "-l")[0].startswith("HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1")
    assert kill("bb", "kill", "-l")[0].startswith(" 1) HUP\n 2) INT\n")
    assert kill("web", "killall", "nginx")[2] == 127  # psmisc is not in the image
    # sleep as PID 1 has no handler: neither TERM nor KILL from inside the container ends it.
    assert kill("bb", "kill", "-9", "1") == ("", "", 0)
    assert kill("bb", "pkill", "sleep") == ("", "", 0)
    # nginx handles TERM and exits 0: the kubelet sees the exit and restarts it.
    assert kill("web", "kill", "1") == ("", "", 0)
    twin.advance(3)
    web = twin.get("Pod", "default", "web")["status"]["containerStatuses"][0]
    assert web["restartCount"] == 1 and web["lastState"]["terminated"]["exitCode"] == 0
    assert twin.get("Pod", "default", "bb")["status"]["containerStatuses"][0]["restartCount"] == 0


# ----------------------------------------------------------------------------- small file tools
@pytest.mark.parametrize(("image", "script", "out", "err", "code"), [
    ("nginx:1.27", "cp /nope /tmp/x", "", "cp: cannot stat '/nope': No such file or directory\n", 1),
    ("busybox:1.36", "cp /nope /tmp/x", "", "cp: can't stat '/nope': No such file or directory\n", 1),
    ("nginx:1.27", "echo 1 > /tmp/c; cp /tmp/c /tmp/d; mv /tmp/d /tmp/e; cat /tmp/e; test -e /tmp/d || echo gone",
     "1\ngone\n", "", 0),
    ("nginx:1.27", "mkdir -p /tmp/dd/s; echo q > /tmp/dd/s/f; cp -r /tmp/dd /tmp/ee; cat /tmp/ee/s/f", "q\n", "", 0),
    ("nginx:1.27", "basename /a/b.txt .txt; dirname /a/b; dirname a; basename", "b\n/a\n.\n",
     "basename: missing operand\nTry 'basename --help' for more information.\n", 1),
    ("nginx:1.27", "readlink /bin; readlink -f /bin/ls; realpath /nope", "usr/bin\n/usr/bin/ls\n/nope\n", "", 0),
    ("nginx:1.27", "echo x > /tmp/a; chmod u+x,go-r /tmp/a; ls -l /tmp/a",
     "-rwx------ 1 root root 2 Jan  5 09:00 /tmp/a\n", "", 0),
    ("nginx:1.27", "echo x > /tmp/a; ln -s /tmp/a /tmp/l; cat /tmp/l; ln -s /tmp/a /tmp/l", "x\n",
     "ln: failed to create symbolic link '/tmp/l': File exists\n", 1),
    ("nginx:1.27", "timeout 1 sleep 5; echo rc=$?; timeout 5 echo hi", "rc=124\nhi\n", "", 0),
    ("nginx:1.27", "timeout", "", "timeout: missing operand\nTry 'timeout --help' for more information.\n", 125),
])
def test_file_tools(twin: Twin, image: str, script: str, out: str, err: str, code: int) -> None:
    assert run(twin, image, script, name="ops-" + image) == (out, err, code)
