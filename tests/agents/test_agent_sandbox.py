"""The agent sandbox itself (`sregym.sandbox`): what a confined program sees and can do, that it
works without root, and that a machine without namespaces gets one clear error."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import sregym
from sregym import sandbox as sandbox_module
from sregym.agents import make_agent
from sregym.errors import SetupError
from sregym.sandbox import Sandbox, SandboxError, require_sandbox, secret_paths


def _run(box: Sandbox, script: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(box.wrap(["/bin/sh", "-c", script]), env=box.environment(), capture_output=True,
                          text=True, timeout=60, **kwargs)  # type: ignore[call-overload]


def test_the_program_sees_only_its_own_world(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "mine.txt").write_text("mine\n")
    (shared / "hidden").mkdir()
    (shared / "hidden" / "answer.txt").write_text("the answer\n")
    (tmp_path / "next-door.txt").write_text("secret\n")
    package = Path(sregym.__file__).parent
    box = Sandbox(read_only=(shared,), hide=(shared / "hidden",), scratch_mb=8)
    script = f"""
echo "pids: $(ls /proc | grep -c '^[0-9]')"
test -e /proc/{os.getpid()} && echo "SEES PARENT"
cat {shared}/mine.txt
cat {tmp_path}/next-door.txt 2>/dev/null || echo "no next door"
ls -A {package} | head -3; echo "package listed"
python3 -c 'import sregym' 2>&1 | tail -1
{sys.executable} -c 'import sregym' 2>&1 | tail -1
grep CapEff /proc/self/status
umount {shared}/hidden 2>&1 || true
ls -A {shared}/hidden; echo "hidden listed"
touch /usr/x 2>&1 || true
echo hi > "$HOME/x" && cat "$HOME/x"
echo "home=$HOME cwd=$(pwd)"
env | grep -c . ; env | grep -i -e PYTEST -e VIRTUAL_ENV || echo "env clean"
"""
    result = _run(box, script)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "SEES PARENT" not in out
    assert int(out.split("pids: ")[1].split()[0]) < 10
    assert "mine" in out and "no next door" in out and "secret" not in out
    assert "package listed" in out and "__init__.py" not in out  # an empty directory at most
    assert out.count("No module named 'sregym'") == 2
    assert "CapEff:\t0000000000000000" in out
    assert "must be superuser" in out or "Operation not permitted" in out
    assert "answer.txt" not in out and "hidden listed" in out
    assert "Read-only file system" in out
    assert "hi\n" in out and "home=/home/agent cwd=/home/agent" in out
    assert "env clean" in out
    assert package in secret_paths()


def test_nothing_survives_the_program(tmp_path: Path) -> None:
    marker = f"sleep {os.getpid() + 3_000_000}"
    result = _run(Sandbox(python=False, scratch_mb=1), f"setsid {marker} & nohup {marker} >/dev/null 2>&1 & exit 0")
    assert result.returncode == 0
    left = subprocess.run(["pgrep", "-f", f"^{marker}$"], capture_output=True, text=True).stdout
    assert left.strip() == ""


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/python3").exists() or shutil.which("setpriv") is None,
                    reason="needs root to become an ordinary user, and a system python3")
def test_it_works_for_an_ordinary_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unprivileged user (nobody) gets the same sandbox through a user namespace."""
    root = Path(tempfile.mkdtemp(prefix="sregym-test-root-"))
    root.chmod(0o755)
    monkeypatch.setattr(sandbox_module, "_ROOT_DIR", root)
    monkeypatch.setattr(sandbox_module, "_setup_python", lambda: os.path.realpath("/usr/bin/python3"))
    box = Sandbox(python=False, scratch_mb=4)
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *box.wrap(
        ["/bin/sh", "-c", "ls /proc | grep -c '^[0-9]'; echo ok > $HOME/f && cat $HOME/f; ls /root 2>&1 || true"])]
    try:
        result = subprocess.run(argv, env=box.environment(), capture_output=True, text=True, timeout=60, cwd="/")
    finally:
        root.rmdir()
    assert result.returncode == 0, result.stderr
    assert "ok" in result.stdout and "No such file" in result.stdout


def test_no_namespaces_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module, "_PROBES", {True: "`unshare ...` failed: Operation not permitted",
                                                    False: "`unshare ...` failed: Operation not permitted"})
    with pytest.raises(SandboxError, match=r"must run in a sandbox.*unprivileged_userns_clone"):
        require_sandbox("the test program")
    with pytest.raises(SetupError, match="Operation not permitted"):
        make_agent("command", command="true")
    assert make_agent("command", command="true", sandbox=False) is not None  # the explicit opt-out


def test_loaded_problems_directories_stay_hidden_under_a_share(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    problems = tmp_path / "my_problems"
    problems.mkdir()
    (problems / "fault.py").write_text("GROUND_TRUTH = 'the answer'\n")
    module = types.ModuleType("sregym_user_problems.my_problems.fault")
    module.__file__ = str(problems / "fault.py")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    (tmp_path / "agent.sh").write_text("#!/bin/sh\n")
    box = Sandbox(python=False, read_only=(tmp_path,), scratch_mb=1)
    result = _run(box, f"ls -A {tmp_path}; echo ---; ls -A {problems}; cat {problems}/fault.py 2>&1")
    assert "agent.sh" in result.stdout and "the answer" not in result.stdout
    assert result.stdout.split("---")[1].split()[:1] == ["cat:"]
