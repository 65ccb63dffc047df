"""`kubectl cp` both ways with the real kubectl, and what the image's userland decides.

kubectl runs `tar cf - PATH` (from a pod) and `tar xmf - -C DIR` (into one) through exec, so a
copy works exactly where the image ships `tar`: a Debian-based image (GNU tar) round-trips files
and directories; a distroless one (CoreDNS) has no tar and kubectl reports containerd's error.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support.kube import KubeHarness

NS = "default"


def kubectl(cluster: KubeHarness, *args: str) -> subprocess.CompletedProcess[str]:
    with cluster.ticking():
        return cluster.kubectl(*args, input="", timeout=120)


@pytest.fixture(scope="module")
def web(cluster: KubeHarness) -> str:
    kubectl(cluster, "run", "cpweb", "--image=nginx:1.27")
    result = kubectl(cluster, "wait", "--for=condition=Ready", "pod/cpweb", "--timeout=60s")
    assert result.returncode == 0, result.stderr
    return "cpweb"


def test_cp_file_round_trip_in_a_debian_image(cluster: KubeHarness, web: str, tmp_path: Path) -> None:
    local = tmp_path / "up.txt"
    local.write_text("line one\nline two\n")
    assert kubectl(cluster, "cp", str(local), f"{web}:/tmp/up.txt").returncode == 0
    back = kubectl(cluster, "cp", f"{web}:/tmp/up.txt", str(tmp_path / "down.txt"))
    assert back.returncode == 0, back.stderr
    assert back.stdout == "tar: Removing leading `/' from member names\n"
    assert (tmp_path / "down.txt").read_text() == "line one\nline two\n"
    which = kubectl(cluster, "exec", web, "--", "sh", "-c", "which tar; command -v sort; type wget")
    assert which.stdout == "/usr/bin/tar\n/usr/bin/sort\nwget: not found\n"


def test_cp_directory_round_trip(cluster: KubeHarness, web: str, tmp_path: Path) -> None:
    (tmp_path / "conf" / "nested").mkdir(parents=True)
    (tmp_path / "conf" / "a.cfg").write_text("a=1\n")
    (tmp_path / "conf" / "nested" / "b.cfg").write_text("b=2\n")
    assert kubectl(cluster, "cp", str(tmp_path / "conf"), f"{web}:/tmp/conf").returncode == 0
    listing = kubectl(cluster, "exec", web, "--", "find", "/tmp/conf", "-type", "f")
    assert listing.stdout == "/tmp/conf/a.cfg\n/tmp/conf/nested/b.cfg\n"
    back = kubectl(cluster, "cp", f"{web}:/tmp/conf", str(tmp_path / "copy"))
    assert back.returncode == 0, back.stderr
    assert (tmp_path / "copy" / "a.cfg").read_text() == "a=1\n"
    assert (tmp_path / "copy" / "nested" / "b.cfg").read_text() == "b=2\n"


def test_heredoc_through_exec(cluster: KubeHarness, web: str) -> None:
    result = kubectl(cluster, "exec", web, "--", "sh", "-c", "cat > /tmp/h <<EOF\nhost=$HOSTNAME\nEOF\ncat /tmp/h")
    assert result.stdout == f"host={web}\n"


def test_cp_from_a_distroless_pod_has_no_tar(cluster: KubeHarness, tmp_path: Path) -> None:
    pod = cluster.ok("get", "pods", "-n", "kube-system", "-l", "k8s-app=kube-dns",
                     "-o", "jsonpath={.items[0].metadata.name}")
    result = kubectl(cluster, "cp", f"kube-system/{pod}:/etc/resolv.conf", str(tmp_path / "r"))
    assert result.returncode != 0
    assert 'exec: "tar": executable file not found in $PATH' in result.stderr
    assert not (tmp_path / "r").exists()
