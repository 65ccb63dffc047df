"""jq in a container: outputs, messages and exit codes recorded from the host's jq 1.6 (mongo's
Ubuntu userland), and the 1.7 wording on an Alpine image (consul). In-process, no cluster."""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.userland.context import exec_context, run_exec

DOC = ('{"a":{"b":[1,2,{"c":"x"}]},"s":"x","n":null,"items":[{"name":"a","v":1,"ok":true},'
       '{"name":"b","v":2.5,"ok":false}],"big":100000000000000000000,"f":0.1}\n')


def _pod(image: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "m", "namespace": "default"},
            "spec": {"nodeName": "kind-worker", "containers": [{"name": "c", "image": image}]},
            "status": {"phase": "Running"}}


@pytest.fixture(scope="module")
def twin() -> Twin:
    return Twin(seed=1)


def jq(twin: Twin, args: list[str], stdin: str = DOC, image: str = "mongo:4.4.6") -> tuple[str, str, int]:
    result = run_exec(exec_context(twin, _pod(image), "c"), ["jq", *args], stdin)
    return result.stdout, result.stderr, result.exit_code


# (args, stdin or None for DOC, stdout, stderr, exit code): jq 1.6 byte for byte.
CASES: list[tuple[list[str], str | None, str, str, int]] = [
    (["-c", ".a.b"], None, "[1,2,{\"c\":\"x\"}]\n", "", 0),
    ([".a.b[2]"], None, "{\n  \"c\": \"x\"\n}\n", "", 0),
    (["-r", ".items[] | select(.name == \"b\") | .v"], None, "2.5\n", "", 0),
    (["-c", "keys, length"], None, '["a","big","f","items","n","s"]\n6\n', "", 0),
    ([".x // \"d\""], None, '"d"\n', "", 0),
    (["-c", ".items | map(.v)"], None, "[1,2.5]\n", "", 0),
    (["-c", ".big, .f"], None, "1e+20\n0.1\n", "", 0),
    (["-r", "\"\\(.s)-\\(.a.b[0])\""], None, "x-1\n", "", 0),
    (["-r", ".items[] | [.name, .v] | @csv"], None, '"a",1\n"b",2.5\n', "", 0),
    (["-c", "del(.a, .items) | keys"], None, '["big","f","n","s"]\n', "", 0),
    (["-c", ".items[0] | .v |= . + 1 | .v"], None, "2\n", "", 0),
    (["-e", ".n"], None, "null\n", "", 1),
    (["-e", "empty"], None, "", "", 4),
    ([".s.a"], None, "", 'jq: error (at <stdin>:1): Cannot index string with string "a"\n', 5),
    ([".[0]"], None, "", "jq: error (at <stdin>:1): Cannot index object with number\n", 5),
    ([".n[]"], None, "", "jq: error (at <stdin>:1): Cannot iterate over null (null)\n", 5),
    ([".s + 1"], None, "", 'jq: error (at <stdin>:1): string ("x") and number (1) cannot be added\n', 5),
    ([".a["], None, "", "jq: error: syntax error, unexpected $end (Unix shell quoting issues?) at <top-level>, "
                        "line 1:\n.a[  \njq: 1 compile error\n", 3),
    ([".a]"], None, "", "jq: error: syntax error, unexpected INVALID_CHARACTER, expecting $end (Unix shell "
                        "quoting issues?) at <top-level>, line 1:\n.a]  \njq: 1 compile error\n", 3),
    (["map(.a"], None, "", "jq: error: syntax error, unexpected $end, expecting ';' or ')' (Unix shell quoting "
                           "issues?) at <top-level>, line 1:\nmap(.a    \njq: 1 compile error\n", 3),
    ([".a | foo(1)"], None, "", "jq: error: foo/1 is not defined at <top-level>, line 1:\n.a | foo(1)     \n"
                                "jq: 1 compile error\n", 3),
    (["."], '{"a":1\n', "", "parse error: Unfinished JSON term at EOF at line 2, column 0\n", 4),
    (["-c", ".a.b"], '{"a":1}\n{"a":"q"}\n', "",
     'jq: error (at <stdin>:1): Cannot index number with string "b"\n'
     'jq: error (at <stdin>:2): Cannot index string with string "b"\n', 5),
    (["--bogus", "."], None, "", "jq: Unknown option --bogus\nUse jq --help for help with command-line options,\n"
                                 "or see the jq manpage, or online docs  at https://stedolan.github.io/jq\n", 2),
    ([".", "nosuch.json"], None, "", "jq: error: Could not open file nosuch.json: No such file or directory\n", 2),
]


@pytest.mark.parametrize(("args", "stdin", "out", "err", "code"), CASES)
def test_jq_like_jq_1_6(twin: Twin, args: list[str], stdin: str | None, out: str, err: str, code: int) -> None:
    assert jq(twin, args, DOC if stdin is None else stdin) == (out, err, code)


def test_jq_1_7_wording_on_alpine(twin: Twin) -> None:
    image = "hashicorp/consul:1.15"
    assert jq(twin, [".s.a"], image=image)[1] == 'jq: error (at <stdin>:1): Cannot index string with "a"\n'
    _, err, code = jq(twin, ["."], '{"a":1\n', image=image)
    assert (err, code) == ("jq: parse error: Unfinished JSON term at EOF at line 2, column 0\n", 2)
    assert jq(twin, [".a["], image=image)[1].startswith("jq: error: syntax error, unexpected end of file ")
    assert jq(twin, ["-r", ".s"], image=image)[0] == "x\n"


def test_jq_is_only_where_the_image_ships_it(twin: Twin) -> None:
    _, err, code = jq(twin, ["."], image="nginx:1.27")
    assert code == 127 and "executable file not found" in err
