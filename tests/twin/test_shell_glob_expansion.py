"""Pathname expansion in an exec's shell, against what dash 0.5.12 / bash 5.2 print for the same
tree on a real host (`mkdir -p d/sub; touch d/a.log d/b.log d/.h d/c1 d/B "d/x y"`)."""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.node.shell.globbing import glob_match
from sregym.twin.node.shell.pathexpand import expand_path, has_magic
from sregym.twin.userland.context import exec_context, run_exec

SETUP = 'mkdir -p /w/d/sub && cd /w && touch d/a.log d/b.log d/.h d/c1 d/B "d/x y"; '


def _pod(image: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "g", "namespace": "default", "uid": "g"},
            "spec": {"nodeName": "kind-worker", "containers": [{"name": "c", "image": image}]}}


@pytest.fixture(scope="module")
def twin() -> Twin:
    return Twin(seed=11)


def _sh(twin: Twin, image: str, script: str) -> tuple[str, str, int]:
    result = run_exec(exec_context(twin, _pod(image), "c"), ["sh", "-c", script])
    return result.stdout, result.stderr, result.exit_code


@pytest.mark.parametrize(("script", "out"), [
    ("echo d/*", "d/B d/a.log d/b.log d/c1 d/sub d/x y\n"),  # C order, hidden files skipped
    ("echo d/.*", "d/. d/.. d/.h\n"),  # dash lists . and ..
    ("echo d/?1 d/[ab]* d/[!a]*.log d/[[:upper:]]*", "d/c1 d/a.log d/b.log d/b.log d/B\n"),
    ('echo "d/*" d/\\* \'d/?1\'', "d/* d/* d/?1\n"),  # quoted patterns stay literal
    ("echo /nonexistent/* d/*.txt", "/nonexistent/* d/*.txt\n"),  # no match: the word as written
    ("echo d/*/ */sub", "d/sub/ d/sub\n"),  # trailing slash: directories only
    ('x="d/*.log"; echo $x; echo "$x"', "d/a.log d/b.log\nd/*.log\n"),  # unquoted expansion globs
    ("for f in d/*.log; do echo \"[$f]\"; done; set -- d/x*; echo $#", "[d/a.log]\n[d/b.log]\n1\n"),
    ("set -f; echo d/*; set +f; echo d/c*", "d/*\nd/c1\n"),
    ("cd d; echo *.log ../d/c?", "a.log b.log ../d/c1\n"),
    ('rm -rf d/*; echo d/* d/.*', "d/* d/. d/.. d/.h\n"),  # rm saw every match; .h stays
    ("ln -s /w/d /w/l; echo l/*.log", "l/a.log l/b.log\n"),  # through a symlinked directory
    ("echo /etc/*release /var/run/secrets/kubernetes.io/serviceaccount/t*",
     "/etc/os-release /var/run/secrets/kubernetes.io/serviceaccount/token\n"),  # image and volumes
    ('case "a*" in "a"*) echo glob;; esac; case ab in "a*") echo lit;; a?) echo q;; esac', "glob\nq\n"),
])
def test_globbing_matches_dash(twin: Twin, script: str, out: str) -> None:
    stdout, stderr, code = _sh(twin, "nginx:1.27", "rm -rf /w /w/l; " + SETUP + script)
    assert (stdout, stderr, code) == (out, "", 0)


def test_bash_skips_dot_entries_and_matches_session_writes(twin: Twin) -> None:
    stdout, _err, _code = _sh(twin, "nginx:1.27", "rm -rf /w; " + SETUP + "bash -c 'cd /w; echo d/.*'")
    assert stdout == "d/.h\n"
    # A later exec into the same container sees the files the first one wrote.
    stdout, _err, _code = _sh(twin, "nginx:1.27", "ls /w/d/*.log")
    assert stdout == "/w/d/a.log\n/w/d/b.log\n"


@pytest.mark.parametrize(("pattern", "magic"), [("a*", True), ("a\\*", False), ("[x", False), ("a[bc]", True),
                                                 ("?", True), ("plain", False)])
def test_has_magic(pattern: str, magic: bool) -> None:
    assert has_magic(pattern) is magic


@pytest.mark.parametrize(("pattern", "name", "match"), [
    ("[!a]*", "a1", False), ("[^a]*", "b", True), ("[]x]", "]", True), ("[a-c]", "d", False),
    ("[[:digit:]]?", "7z", True), ("\\[a]", "[a]", True), ("*.log", ".log", True),
])
def test_glob_match_classes(pattern: str, name: str, match: bool) -> None:
    assert glob_match(pattern, name) is match


def test_expand_path_without_a_tree_uses_the_lister() -> None:
    tree = {"/": ["a", "b.txt", ".c"], "/a": ["x.txt"]}
    kinds = {"/a": "dir", "/b.txt": "file", "/.c": "file", "/a/x.txt": "file"}
    assert expand_path("/*", "/", tree.get, kinds.get, dot_entries=False) == ["/a", "/b.txt"]
    assert expand_path("*/*.txt", "/", tree.get, kinds.get, dot_entries=False) == ["a/x.txt"]
    assert expand_path("/*/", "/", tree.get, kinds.get, dot_entries=False) == ["/a/"]
