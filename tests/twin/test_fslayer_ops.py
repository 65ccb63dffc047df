"""The container filesystem behaves like an overlayfs container across execs: symlinks resolve on
read and write, `rm`/`rmdir`/`mkdir`/`touch` change a real tree with GNU coreutils 9.1 (C locale)
or BusyBox 1.36 messages, and the writable layer keeps files, directories, links, modes, mtimes
and deletions of the image's own files (whiteouts) for the next exec. In-process (`exec_context`
+ `run_exec`); GNU messages were checked against the host's coreutils 9.1 with LC_ALL=C.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.userland.context import exec_context, run_exec
from sregym.twin.userland.layer import Layer, layer_bytes

DEB, BB = "nginx:1.27", "busybox:1.36"
_names = itertools.count()


@pytest.fixture(scope="module")
def twin() -> Twin:
    return Twin(seed=7)


def _pod(image: str) -> dict[str, Any]:
    name = f"fs{next(_names)}"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"nodeName": "kind-worker", "containers": [{"name": "c", "image": image}]}}


def run(twin: Twin, pod: dict[str, Any], script: str) -> tuple[str, str, int]:
    result = run_exec(exec_context(twin, pod, "c"), ["sh", "-c", script])
    return result.stdout, result.stderr, result.exit_code


# ------------------------------------------------------------------------------ one exec
ONE_EXEC = [
    # symlinks resolve on read and on write (through the link to its target)
    (DEB, "echo x > /tmp/a; ln -s /tmp/a /tmp/l; cat /tmp/l; echo y >> /tmp/l; cat /tmp/a", "x\nx\ny\n", "", 0),
    (BB, "echo x > /tmp/a; ln -s /tmp/a /tmp/l; cat /tmp/l; echo y >> /tmp/l; cat /tmp/a", "x\nx\ny\n", "", 0),
    # a dangling link: writing creates the target; removing the target leaves the link dangling
    (DEB, "ln -s /tmp/t /tmp/d; echo v > /tmp/d; cat /tmp/t; rm /tmp/t; cat /tmp/d; ls /tmp", "v\nd\n",
     "cat: /tmp/d: No such file or directory\n", 0),
    # a path through a link to a directory is a directory; test -L and -x see links and modes
    (DEB, "mkdir -p /tmp/d/s; ln -s /tmp/d /tmp/dl; cd /tmp/dl/s && pwd; test -L /tmp/dl && echo L; "
          "test -L /tmp/d || echo notL; touch /tmp/x; test -x /tmp/x || echo noexec; chmod +x /tmp/x; "
          "test -x /tmp/x && echo exec", "/tmp/dl/s\nL\nnotL\nnoexec\nexec\n", "", 0),
    # a redirection that cannot open its file fails before the command runs, in each shell's words
    (DEB, "echo x > /nope/f; echo rc=$?; echo y > /tmp; touch /tmp/f; echo z > /tmp/f/x", "rc=2\n",
     "sh: 1: cannot create /nope/f: Directory nonexistent\nsh: 1: cannot create /tmp: Is a directory\n"
     "sh: 1: cannot create /tmp/f/x: Directory nonexistent\n", 2),
    (BB, "echo x > /nope/f; echo rc=$?; echo y > /tmp", "rc=2\n",
     "sh: can't create /nope/f: nonexistent directory\nsh: can't create /tmp: Is a directory\n", 2),
    # mv renames a link itself
    (DEB, "echo x > /tmp/a; ln -s /tmp/a /tmp/l; mv /tmp/l /tmp/m; readlink /tmp/m; cat /tmp/m; ls /tmp",
     "/tmp/a\nx\na\nm\n", "", 0),
    # removing a link keeps its target
    (DEB, "echo k > /tmp/a; ln -s /tmp/a /tmp/l; rm /tmp/l; cat /tmp/a; ls /tmp", "k\na\n", "", 0),
    (DEB, "mkdir /tmp/d; rm /tmp/d", "", "rm: cannot remove '/tmp/d': Is a directory\n", 1),
    (BB, "mkdir /tmp/d; rm /tmp/d", "", "rm: '/tmp/d' is a directory\n", 1),
    (DEB, "mkdir -p /tmp/d/e; touch /tmp/d/f; rm -d /tmp/d", "", "rm: cannot remove '/tmp/d': Directory not empty\n", 1),
    (DEB, "mkdir -p /tmp/d/e; touch /tmp/d/f; rm -rv /tmp/d; ls -a /tmp",
     "removed directory '/tmp/d/e'\nremoved '/tmp/d/f'\nremoved directory '/tmp/d'\n.\n..\n", "", 0),
    (BB, "mkdir -p /tmp/d/e; rm -r /tmp/d; test -d /tmp/d || echo gone", "gone\n", "", 0),
    (DEB, "rm -f /tmp/nope; rm -rf /tmp/nope; rm /tmp/nope", "",
     "rm: cannot remove '/tmp/nope': No such file or directory\n", 1),
    (BB, "rm /tmp/nope", "", "rm: can't remove '/tmp/nope': No such file or directory\n", 1),
    (DEB, "rm", "", "rm: missing operand\nTry 'rm --help' for more information.\n", 1),
    (DEB, "rm -f", "", "", 0),
    (DEB, "rm -z /tmp", "", "rm: invalid option -- 'z'\nTry 'rm --help' for more information.\n", 1),
    (DEB, "rm -rf /", "", "rm: it is dangerous to operate recursively on '/'\n"
                          "rm: use --no-preserve-root to override this failsafe\n", 1),
    (DEB, "mkdir /tmp/m; mkdir /tmp/m", "", "mkdir: cannot create directory '/tmp/m': File exists\n", 1),
    (BB, "mkdir /tmp/m; mkdir /tmp/m", "", "mkdir: can't create directory '/tmp/m': File exists\n", 1),
    (DEB, "mkdir /tmp/a/b", "", "mkdir: cannot create directory '/tmp/a/b': No such file or directory\n", 1),
    (DEB, "touch /tmp/f; mkdir -p /tmp/f/x", "", "mkdir: cannot create directory '/tmp/f': Not a directory\n", 1),
    (DEB, "mkdir -pv /tmp/p/q; mkdir -p /tmp/p/q; ls -ld /tmp/p/q | cut -c1-10",
     "mkdir: created directory '/tmp/p'\nmkdir: created directory '/tmp/p/q'\ndrwxr-xr-x\n", "", 0),
    (DEB, "mkdir", "", "mkdir: missing operand\nTry 'mkdir --help' for more information.\n", 1),
    (DEB, "mkdir -p /tmp/r/s; touch /tmp/r/s/f; rmdir /tmp/r/s; rmdir /tmp/nope; rmdir /tmp/r/s/f", "",
     "rmdir: failed to remove '/tmp/r/s': Directory not empty\n"
     "rmdir: failed to remove '/tmp/nope': No such file or directory\n"
     "rmdir: failed to remove '/tmp/r/s/f': Not a directory\n", 1),
    (BB, "mkdir -p /tmp/r/s; touch /tmp/r/s/f; rmdir /tmp/r/s", "", "rmdir: '/tmp/r/s': Directory not empty\n", 1),
    (DEB, "mkdir -p /tmp/r/s; rmdir -p /tmp/r/s 2>/dev/null; ls -d /tmp/r", "",
     "ls: cannot access '/tmp/r': No such file or directory\n", 2),
    (DEB, "touch /tmp/no/f", "", "touch: cannot touch '/tmp/no/f': No such file or directory\n", 1),
    (BB, "touch /tmp/no/f", "", "touch: /tmp/no/f: No such file or directory\n", 1),
    (DEB, "touch -c /tmp/c; ls /tmp", "", "", 0),
    (DEB, "touch -t 202001011230.45 /tmp/t; touch -d '2021-03-04 05:06:07' /tmp/d; touch -d @1000 /tmp/e; "
          "touch -r /tmp/t /tmp/e; stat -c %Y /tmp/t /tmp/d /tmp/e; touch -d garbage /tmp/t; touch -r /nope /tmp/t",
     "1577881845\n1614834367\n1577881845\n", "touch: invalid date format 'garbage'\n"
     "touch: failed to get attributes of '/nope': No such file or directory\n", 1),
    (DEB, "ln -s /etc/passwd /tmp/no/l", "",
     "ln: failed to create symbolic link '/tmp/no/l': No such file or directory\n", 1),
    (DEB, "echo x > /tmp/a; ln -s /tmp/a /tmp/l; ln -s /tmp/a /tmp/l", "",
     "ln: failed to create symbolic link '/tmp/l': File exists\n", 1),
]


@pytest.mark.parametrize(("image", "script", "out", "err", "code"), ONE_EXEC)
def test_tree_commands_in_one_exec(twin: Twin, image: str, script: str, out: str, err: str, code: int) -> None:
    assert run(twin, _pod(image), script) == (out, err, code)


# ---------------------------------------------------------------------------- across execs
ACROSS = [
    # a link stays a link, and writing through it changes its target
    (DEB, [("echo x > /tmp/a; ln -s /tmp/a /tmp/l", ""),
           ("ls -l /tmp/l | cut -c1-10; ls -l /tmp/l | sed 's/.*l -> /-> /'; echo z > /tmp/l", "lrwxrwxrwx\n-> /tmp/a\n"),
           ("cat /tmp/a; readlink /tmp/l", "z\n/tmp/a\n")]),
    (BB, [("echo x > /tmp/a; ln -sf /tmp/a /tmp/l", ""), ("readlink /tmp/l; cat /tmp/l", "/tmp/a\nx\n")]),
    # a file written earlier and removed now is gone from `ls` at once and later
    (DEB, [("echo x > /tmp/a; echo y > /tmp/b", ""), ("rm -f /tmp/a; ls /tmp", "b\n"), ("ls /tmp", "b\n")]),
    # deleting the image's own files and directories persists (whiteouts)
    (DEB, [("rm /etc/debian_version; rm -r /var/cache", ""),
           ("cat /etc/debian_version 2>&1; ls /var | grep -c cache", "cat: /etc/debian_version: No such file or directory\n0\n")]),
    (BB, [("rm /etc/group", ""), ("cat /etc/group 2>&1", "cat: can't open '/etc/group': No such file or directory\n")]),
    # a deleted image directory made again is empty
    (DEB, [("rm -r /var/lib; mkdir /var/lib", ""), ("ls -A /var/lib; test -d /var/lib && echo dir", "dir\n")]),
    # empty directories, their modes and chmod of files persist
    (DEB, [("mkdir /tmp/e; mkdir -m 700 /tmp/m; touch /tmp/x; chmod 755 /tmp/x", ""),
           ("ls -ld /tmp/e /tmp/m /tmp/x | cut -c1-10", "drwxr-xr-x\ndrwx------\n-rwxr-xr-x\n")]),
    (BB, [("mkdir -p /srv/a/b", ""), ("rmdir /srv/a/b; ls /srv/a", ""), ("ls -d /srv/a", "/srv/a\n")]),
    # cp -r and mv of a directory keep empty directories, links and modes
    (DEB, [("mkdir -p /tmp/s/e; echo x > /tmp/s/f; chmod 700 /tmp/s/f; ln -s f /tmp/s/l; cp -r /tmp/s /tmp/c; "
            "mv /tmp/s /tmp/m", ""),
           ("ls -l /tmp/c /tmp/m | cut -c1-10,41-; cat /tmp/c/l; test -d /tmp/s || echo moved",
            "/tmp/c:\ntotal 8\ndrwxr-xr-x e\n-rwx------ f\nlrwxrwxrwx l -> f\n\n"
            "/tmp/m:\ntotal 8\ndrwxr-xr-x e\n-rwx------ f\nlrwxrwxrwx l -> f\nx\nmoved\n")]),
    # an image file edited keeps its mode
    (DEB, [("chmod 600 /etc/hostname; echo h >> /etc/hostname", ""), ("ls -l /etc/hostname | cut -c1-10", "-rw-------\n")]),
]


@pytest.mark.parametrize(("image", "steps"), ACROSS)
def test_tree_persists_across_execs(twin: Twin, image: str, steps: list[tuple[str, str]]) -> None:
    pod = _pod(image)
    for script, expected in steps:
        out, err, _code = run(twin, pod, script)
        assert (out, err) == (expected, ""), script


def test_touch_moves_an_existing_files_mtime_and_it_stays(twin: Twin) -> None:
    pod = _pod(DEB)
    run(twin, pod, "echo hi > /tmp/f")
    first = run(twin, pod, "stat -c %Y /tmp/f")[0]
    twin.advance(120)
    run(twin, pod, "touch /tmp/f")
    later = run(twin, pod, "stat -c %Y /tmp/f; cat /tmp/f")[0]
    assert later == f"{int(first) + 120}\nhi\n"


def test_the_layer_is_a_diff_and_counts_file_bytes(twin: Twin) -> None:
    pod = _pod(DEB)
    key = ("default", pod["metadata"]["name"], "c", pod["metadata"]["uid"])
    run(twin, pod, "printf 12345 > /tmp/five; mkdir /tmp/d; ln -s /tmp/five /tmp/l; rm /etc/debian_version")
    layer = twin.services.layers[key]
    assert isinstance(layer, Layer)
    assert dict(layer) == {"/tmp/five": "12345"} and layer_bytes(layer) == 5
    assert {p: n.kind for p, n in layer.nodes.items()} == {"/tmp/five": "file", "/tmp/d": "dir", "/tmp/l": "link"}
    assert layer.whiteouts == {"/etc/debian_version"}
    run(twin, pod, "rm -r /tmp/five /tmp/d /tmp/l")
    assert layer_bytes(twin.services.layers[key]) == 0
    assert set(twin.services.layers[key].nodes) == set()


def _mounted_pod(twin: Twin, image: str) -> dict[str, Any]:
    if twin.store.peek("ConfigMap", "default", "fs-cfg") is None:
        twin.store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fs-cfg", "namespace": "default"},
                           "data": {"app.conf": "a=1\n"}})
    pod = _pod(image)
    pod["spec"]["volumes"] = [{"name": "cfg", "configMap": {"name": "fs-cfg"}}, {"name": "scratch", "emptyDir": {}}]
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "cfg", "mountPath": "/etc/cfg"},
                                                    {"name": "scratch", "mountPath": "/data"}]
    return pod


@pytest.mark.parametrize(("image", "err"), [
    (DEB, "sh: 1: cannot create /etc/cfg/app.conf: Read-only file system\n"
          "rm: cannot remove '/etc/cfg/app.conf': Read-only file system\n"
          "touch: cannot touch '/etc/cfg/x': Read-only file system\n"
          "mkdir: cannot create directory '/etc/cfg/d': Read-only file system\n"
          "ln: failed to create symbolic link '/etc/cfg/l': Read-only file system\n"
          "rm: cannot remove '/etc/hosts': Device or resource busy\n"
          "rm: cannot remove '/data': Device or resource busy\n"
          "rmdir: failed to remove '/data': Device or resource busy\n"),
    ("alpine:3.21", "sh: can't create /etc/cfg/app.conf: Read-only file system\n"
                    "rm: can't remove '/etc/cfg/app.conf': Read-only file system\n"
                    "touch: /etc/cfg/x: Read-only file system\n"
                    "mkdir: can't create directory '/etc/cfg/d': Read-only file system\n"
                    "ln: /etc/cfg/l: Read-only file system\n"
                    "rm: can't remove '/etc/hosts': Resource busy\n"
                    "rm: can't remove '/data': Resource busy\n"
                    "rmdir: '/data': Resource busy\n"),
])
def test_config_volumes_are_read_only_and_mount_points_busy(twin: Twin, image: str, err: str) -> None:
    pod = _mounted_pod(twin, image)
    script = ("echo b=2 >> /etc/cfg/app.conf; rm /etc/cfg/app.conf; touch /etc/cfg/x; mkdir /etc/cfg/d; ln -s /a /etc/cfg/l; rm /etc/hosts; "
              "touch /data/f; rm -r /data; ls /data; rmdir /data; cat /etc/cfg/app.conf")
    assert run(twin, pod, script) == ("a=1\n", err, 0)


def test_what_tools_wrote_into_a_config_volume_does_not_outlive_the_exec(twin: Twin) -> None:
    pod = _mounted_pod(twin, DEB)
    run(twin, pod, "sed -i s/a/z/ /etc/cfg/app.conf")  # sed -i does not yet refuse a read-only file
    assert run(twin, pod, "cat /etc/cfg/app.conf")[0] == "a=1\n"
