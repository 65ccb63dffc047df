"""The sandbox of offline agents: the snapshot copy is really read-only (even for root), the shell
has no network, a time limit kills a runaway command, outputs are cut with a notice, hidden
directories look empty, and the file tools refuse every path that leaves the copy."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from sregym.snapshot.file_tools import PathRefused, SnapshotToolSession, resolve_inside
from sregym.snapshot.sandbox import ConfinedShell, Workspace, copy_read_only, namespace_problem


@pytest.fixture()
def source(tmp_path: Path) -> Path:
    src = tmp_path / "dataset" / "tasks" / "task-0001"
    (src / "metrics").mkdir(parents=True)
    (src / "README.md").write_text("# snapshot\n")
    (src / "k8s_events.tsv").write_text("timestamp\treason\n2026-01-01T00:00:00Z\tBackOff\n")
    (src / "metrics" / "pod_ns_web-1.tsv").write_text("timestamp\tmetric_name\tvalue\n")
    truth = tmp_path / "dataset" / "ground_truth"
    truth.mkdir()
    (truth / "task-0001.json").write_text('{"root_causes": "the secret answer"}\n')
    os.symlink(truth / "task-0001.json", src / "link-to-truth.json")  # never copied
    return src


def test_copy_is_read_only_even_for_root_and_removed_afterwards(source: Path) -> None:
    with Workspace(source) as ws:
        copy = ws.snapshot
        assert (copy / "README.md").read_text() == "# snapshot\n"
        assert (copy / "metrics" / "pod_ns_web-1.tsv").is_file()
        assert not (copy / "link-to-truth.json").exists()  # symlinks are left out, not followed
        assert (copy / "README.md").stat().st_mode & 0o777 == 0o444
        assert copy.stat().st_mode & 0o777 == 0o555 and (copy / "metrics").stat().st_mode & 0o777 == 0o555
        shell = ConfinedShell(copy, scratch=ws.scratch)
        for command in ("echo x >> README.md", "touch new-file", "rm README.md", "mkdir d", "chmod 666 README.md"):
            result = shell.run(command)
            assert result.exit_code not in (0, None), command
            # No capability survives in the sandbox, so permissions refuse first; the owner's
            # chmod gets past them and proves the mount itself is read-only.
            assert ("Read-only file system" in result.output or "Permission denied" in result.output), \
                (command, result.output)
            if command.startswith("chmod"):
                assert "Read-only file system" in result.output, result.output
        assert (copy / "README.md").read_text() == "# snapshot\n"
        assert sorted(p.name for p in copy.iterdir()) == ["README.md", "k8s_events.tsv", "metrics"]
        # the scratch dir (HOME, TMPDIR) is writable
        assert shell.run('echo hi > "$HOME/notes" && cat "$HOME/notes"').output == "hi\n"
        root = ws.root
    assert root is not None and not root.exists()


def test_shell_has_no_network_but_the_host_does(source: Path) -> None:
    assert namespace_problem(network=False) is None, "unshare -rn must work on the test machine"
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    accepted: list[bool] = []

    def accept() -> None:
        try:
            conn, _ = server.accept()
            accepted.append(True)
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    try:
        outside = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=10)
        assert outside.returncode == 0 and "connected" in outside.stdout
        thread.join(timeout=5)
        assert accepted == [True]
        with Workspace(source) as ws:
            inside = ConfinedShell(ws.snapshot, scratch=ws.scratch).run(probe)
        assert inside.exit_code not in (0, None) and "connected" not in inside.output
        assert "unreachable" in inside.output.lower() or "refused" in inside.output.lower(), inside.output
    finally:
        server.close()


def test_shell_environment_is_scrubbed_and_dirs_are_hidden(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    dataset = source.parent.parent
    with Workspace(source) as ws:
        shell = ConfinedShell(ws.snapshot, scratch=ws.scratch, hide=[dataset])
        env = shell.run("env").output
        assert "sk-secret-value" not in env and "PROXY" not in env.upper()
        assert f"SREGYM_SNAPSHOT={ws.snapshot}" in env
        listing = shell.run(f"ls -A {dataset}; cat {dataset}/ground_truth/task-0001.json")
        assert "secret answer" not in listing.output and "ground_truth" not in listing.output.split("cat:")[0]
        assert "No such file" in listing.output
        # the agent's processes cannot see ours
        assert "pytest" not in shell.run("ps -eo args").output
        assert shell.run("pwd").output.strip() == str(ws.snapshot)


def test_time_limit_kills_the_process_group(source: Path) -> None:
    with Workspace(source) as ws:
        shell = ConfinedShell(ws.snapshot, scratch=ws.scratch, time_limit_s=1.0)
        result = shell.run("sleep 77 & sleep 77; echo never")
        assert result.timed_out and result.exit_code is None
        assert "never" not in result.output and "time limit" in result.output
        after = ConfinedShell(ws.snapshot, scratch=ws.scratch).run("echo still-works")
        assert after.output == "still-works\n"
    leftovers = subprocess.run(["pgrep", "-f", "^sleep 77$"], capture_output=True, text=True)
    assert leftovers.stdout.strip() == ""


def test_output_is_truncated_with_a_notice(source: Path) -> None:
    with Workspace(source) as ws:
        result = ConfinedShell(ws.snapshot, scratch=ws.scratch, max_output_chars=400).run("seq 1 100000")
    assert result.truncated
    assert result.output.startswith("1\n2\n3\n") and result.output.rstrip().endswith("100000")
    assert "output truncated" in result.output and "bytes omitted" in result.output
    assert len(result.output) < 1_000


def test_path_escapes_are_refused(source: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not for the agent\n")
    root = tmp_path / "root"
    copy_read_only(source, root)
    os.chmod(root, 0o755)
    os.symlink(outside, root / "escape-link")
    os.symlink("metrics", root / "inner-link")  # a link that stays inside is fine
    assert resolve_inside(root, "k8s_events.tsv") == (root / "k8s_events.tsv").resolve()
    assert resolve_inside(root, str(root / "README.md")) == (root / "README.md").resolve()
    assert resolve_inside(root, "inner-link") == (root / "metrics").resolve()
    for bad in ("../outside.txt", "metrics/../../outside.txt", str(outside), "/etc/passwd", "escape-link"):
        with pytest.raises(PathRefused):
            resolve_inside(root, bad)
    session = SnapshotToolSession(root, tmp_path / "out.json", shell=None)
    for tool, args in (("read_file", {"path": "../outside.txt"}), ("read_file", {"path": "escape-link"}),
                       ("read_file", {"path": "/etc/passwd"}), ("list_files", {"path": ".."}),
                       ("grep", {"pattern": "agent", "path": "../*.txt"}),
                       ("grep", {"pattern": "agent", "path": str(tmp_path) + "/*"})):
        result = session.call(tool, args)
        assert result.is_error and result.text.startswith("refused:"), (tool, args, result.text)
        assert "not for the agent" not in result.text
    # a glob never follows a link out of the copy
    found = session.call("grep", {"pattern": "not for the agent"})
    assert found.text.startswith("no match"), found.text
    os.chmod(root, 0o555)


def test_file_tools_list_read_grep(source: Path, tmp_path: Path) -> None:
    root = copy_read_only(source, tmp_path / "copy")
    lines = [f"row {i}\tvalue {i}" for i in range(1, 301)]
    big = tmp_path / "copy2"
    big.mkdir()
    (big / "data.tsv").write_text("\n".join(lines) + "\n")
    session = SnapshotToolSession(big, tmp_path / "out.json", shell=None)
    page = session.call("read_file", {"path": "data.tsv", "offset": 101, "limit": 3})
    assert page.text.splitlines() == ["data.tsv: lines 101-103 of 300; continue with offset=104",
                                      "row 101\tvalue 101", "row 102\tvalue 102", "row 103\tvalue 103"]
    grep = session.call("grep", {"pattern": r"^row 2\d\d\t", "path": "*.tsv", "max_matches": 2})
    assert grep.text.splitlines()[0].startswith("100 matching line(s) in 1 file(s); showing the first 2")
    assert grep.text.splitlines()[1] == "data.tsv:200: row 200\tvalue 200"
    bad = session.call("grep", {"pattern": "(unclosed"})
    assert bad.is_error and "grep failed" in bad.text
    tools = SnapshotToolSession(root, tmp_path / "out.json", shell=None)
    listing = tools.call("list_files", {})
    assert "metrics/  (1 entries)" in listing.text and "README.md  11 bytes" in listing.text
    deep = tools.call("list_files", {"recursive": True, "pattern": "pod_*"})
    assert deep.text.splitlines()[1:] == ["metrics/pod_ns_web-1.tsv  28 bytes"]
    unknown = tools.call("read_file", {"path": "README.md", "lines": 3})
    assert unknown.is_error and "unknown argument(s) lines" in unknown.text
    assert [s.name for s in tools.specs()] == ["list_files", "read_file", "grep", "submit_root_causes"]
