"""Interactive kubectl verbs against the twin: attach, `run -i --rm`, `debug`, `cp`.

Each case is what a real 1.32 cluster answers: the stdout/stderr wording kubectl prints, the exit
code it returns (a `run -i --rm` propagates the container's), and the state left behind (content
of copied files, `ephemeralContainerStatuses`, `describe`'s `Ephemeral Containers:`). The served
twin's clock is manual, so commands that wait for a pod to run do so while a background thread
advances it (`cluster.ticking()`).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from sregym.twin.api.kubeconfig import context_name
from support.kube import KUBECTL, KubeHarness

NS = "default"

# Later cases build on earlier ones (the removal case needs the ephemeral container the debug case
# added), so the module runs in order on one worker.
pytestmark = pytest.mark.xdist_group("conformance-interactive")


def kubectl(cluster: KubeHarness, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    with cluster.ticking():
        return cluster.kubectl(*args, input=input if input is not None else "", timeout=120)


@pytest.fixture(scope="module")
def pods(cluster: KubeHarness) -> dict[str, str]:
    """A BusyBox pod and a Debian-based (nginx) pod, running, with files to copy."""
    kubectl(cluster, "run", "bb", "--image=busybox:1.36", "--", "sleep", "36000")
    kubectl(cluster, "run", "web", "--image=nginx:1.27")
    result = kubectl(cluster, "wait", "--for=condition=Ready", "pod/bb", "pod/web", "--timeout=60s")
    assert result.returncode == 0, result.stderr
    kubectl(cluster, "exec", "bb", "--", "sh", "-c",
            "mkdir -p /data/sub; echo alpha > /data/a.txt; echo beta > /data/sub/b.txt")
    return {"busybox": "bb", "debian": "web"}


# ------------------------------------------------------------------------------------ kubectl cp
def test_cp_file_from_pod(cluster: KubeHarness, pods: dict[str, str], tmp_path: Path) -> None:
    result = kubectl(cluster, "cp", f"{NS}/bb:/data/a.txt", str(tmp_path / "a.txt"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "a.txt").read_text() == "alpha\n"
    assert "tar: removing leading '/' from member names" in result.stdout


def test_cp_directory_from_pod(cluster: KubeHarness, pods: dict[str, str], tmp_path: Path) -> None:
    result = kubectl(cluster, "cp", "bb:/data", str(tmp_path / "data"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "data" / "a.txt").read_text() == "alpha\n"
    assert (tmp_path / "data" / "sub" / "b.txt").read_text() == "beta\n"


@pytest.mark.parametrize("pod", ["bb", "web"])
def test_cp_file_into_pod(cluster: KubeHarness, pods: dict[str, str], tmp_path: Path, pod: str) -> None:
    local = tmp_path / "up.txt"
    local.write_text("uploaded line\n")
    result = kubectl(cluster, "cp", str(local), f"{pod}:/tmp/up.txt", "-c", pod)
    assert result.returncode == 0, result.stderr
    assert kubectl(cluster, "exec", pod, "--", "cat", "/tmp/up.txt").stdout == "uploaded line\n"


def test_cp_directory_into_pod(cluster: KubeHarness, pods: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "conf" / "nested").mkdir(parents=True)
    (tmp_path / "conf" / "one.cfg").write_text("one=1\n")
    (tmp_path / "conf" / "nested" / "two.cfg").write_text("two=2\n")
    result = kubectl(cluster, "cp", str(tmp_path / "conf"), "web:/tmp/conf")
    assert result.returncode == 0, result.stderr
    out = kubectl(cluster, "exec", "web", "--", "cat", "/tmp/conf/one.cfg", "/tmp/conf/nested/two.cfg")
    assert out.stdout == "one=1\ntwo=2\n"


def test_cp_missing_source_shows_gnu_tar_errors(cluster: KubeHarness, pods: dict[str, str],
                                                 tmp_path: Path) -> None:
    result = kubectl(cluster, "cp", "web:/nope", str(tmp_path / "x"))
    assert result.stdout.splitlines() == [
        "tar: Removing leading `/' from member names",
        "tar: /nope: Cannot stat: No such file or directory",
        "tar: Exiting with failure status due to previous errors",
    ]
    assert not (tmp_path / "x").exists()


def test_cp_into_missing_directory_fails(cluster: KubeHarness, pods: dict[str, str], tmp_path: Path) -> None:
    local = tmp_path / "f.txt"
    local.write_text("x\n")
    result = kubectl(cluster, "cp", str(local), "web:/nodir/f.txt")
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["tar: /nodir: Cannot open: No such file or directory",
                                          "tar: Error is not recoverable: exiting now",
                                          "command terminated with exit code 2"]


def test_exec_tar_roundtrip(cluster: KubeHarness, pods: dict[str, str]) -> None:
    listing = kubectl(cluster, "exec", "bb", "--", "sh", "-c", "tar cf /tmp/d.tar -C /data . && tar tf /tmp/d.tar")
    assert listing.returncode == 0, listing.stderr
    assert {"./a.txt", "./sub/b.txt"} <= set(listing.stdout.split())


def test_tar_missing_in_distroless_image(cluster: KubeHarness) -> None:
    pod = cluster.ok("get", "pods", "-n", "kube-system", "-l", "k8s-app=kube-dns",
                     "-o", "jsonpath={.items[0].metadata.name}")
    result = kubectl(cluster, "exec", "-n", "kube-system", pod, "--", "tar", "cf", "-", "/etc")
    assert result.returncode != 0
    assert 'exec: "tar": executable file not found in $PATH' in result.stderr


# ------------------------------------------------------------------------------ kubectl run -i
RUN_CASES = [
    # (args after NAME, stdin, exit code, stdout lines, stderr must contain)
    (["--", "sh", "-c", "echo hi; exit 3"], "", 3, ["hi", 'pod "{name}" deleted'],
     "pod default/{name} terminated (Error)"),
    (["--", "sh", "-c", "echo fine"], "", 0, ["fine", 'pod "{name}" deleted'], ""),
    (["--", "sh"], "echo from-stdin\nexit 4\n", 4, ["from-stdin", 'pod "{name}" deleted'],
     "If you don't see a command prompt, try pressing enter."),
    (["--", "sh"], "hostname\n", 0, ["{name}", 'pod "{name}" deleted'],
     "If you don't see a command prompt, try pressing enter."),
]


@pytest.mark.parametrize(("index", "case"), list(enumerate(RUN_CASES)))
def test_run_interactive_rm(cluster: KubeHarness, index: int, case: tuple) -> None:
    args, stdin, code, lines, err = case
    name = f"once-{index}"
    result = kubectl(cluster, "run", name, "--image=busybox", "-i", "--rm", "--restart=Never", *args,
                     input=stdin)
    assert result.returncode == code, result.stderr
    assert result.stdout.splitlines() == [line.format(name=name) for line in lines]
    assert err.format(name=name) in result.stderr
    gone = kubectl(cluster, "get", "pod", name)
    assert gone.stderr.strip() == f'Error from server (NotFound): pods "{name}" not found'


def test_run_it_without_terminal(cluster: KubeHarness) -> None:
    result = kubectl(cluster, "run", "tty-1", "--image=busybox", "-it", "--rm", "--restart=Never",
                     "--", "sh", input="echo typed\nexit 5\n")
    assert result.returncode == 5
    assert result.stdout.splitlines() == ["typed", 'pod "tty-1" deleted']
    assert "Unable to use a TTY - input is not a terminal or the right kind of file" in result.stderr


# ----------------------------------------------------------------------------- kubectl attach
def test_attach_streams_new_output(cluster: KubeHarness) -> None:
    kubectl(cluster, "run", "ticker", "--image=busybox", "--restart=Never", "--",
            "sh", "-c", "echo before; sleep 5; echo after-1; echo after-2")
    with cluster.ticking(0.2):
        deadline = time.monotonic() + 30
        while "Running" not in cluster.ok("get", "pod", "ticker", "-o", "jsonpath={.status.phase}"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    proc = subprocess.Popen([KUBECTL, "--context", context_name("agent"), "attach", "ticker"],
                            env=_env(cluster), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    with cluster.ticking():
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.splitlines() == ["after-1", "after-2"]  # what it wrote before is only in the logs
    assert "before" in cluster.ok("logs", "ticker")
    cluster.ok("delete", "pod", "ticker", "--wait=false")


def test_attach_errors(cluster: KubeHarness, pods: dict[str, str]) -> None:
    missing = kubectl(cluster, "attach", "no-such-pod")
    assert missing.returncode == 1
    assert missing.stderr.strip() == 'Error from server (NotFound): pods "no-such-pod" not found'
    wrong = kubectl(cluster, "attach", "bb", "-c", "nope")
    assert wrong.returncode == 1
    assert "container nope not found in pod bb" in wrong.stderr or \
        "container nope is not valid for pod bb" in wrong.stderr


def _env(cluster: KubeHarness) -> dict[str, str]:
    import os

    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "HOME": str(cluster.cache_dir)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    return env


# ------------------------------------------------------------------------------ kubectl debug
def test_debug_ephemeral_container(cluster: KubeHarness, pods: dict[str, str]) -> None:
    result = kubectl(cluster, "debug", "web", "-i", "--image=busybox", "--target=web",
                     "--container=dbg", "--", "sh", input="echo in-debug\nhostname\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        'Targeting container "web". If you don\'t see processes from this container it may be '
        "because the container runtime doesn't support this feature.",
        "in-debug", "web"]
    state = kubectl(cluster, "get", "pod", "web", "-o",
                    "jsonpath={.spec.ephemeralContainers[0].name} {.spec.ephemeralContainers[0]"
                    ".targetContainerName} {.status.ephemeralContainerStatuses[0].state.terminated.reason}")
    assert state.stdout == "dbg web Completed"
    described = kubectl(cluster, "describe", "pod", "web").stdout
    assert "\nEphemeral Containers:\n  dbg:\n" in described
    assert "Started container dbg" in described


def test_debug_ephemeral_running_and_exec(cluster: KubeHarness, pods: dict[str, str]) -> None:
    result = kubectl(cluster, "debug", "bb", "--image=busybox", "--container=sidekick", "--",
                     "sleep", "3600")
    assert result.returncode == 0, result.stderr
    cluster.advance(5)
    out = kubectl(cluster, "exec", "bb", "-c", "sidekick", "--", "echo", "inside")
    assert out.stdout == "inside\n"
    status = cluster.ok("get", "pod", "bb", "-o",
                        "jsonpath={.status.ephemeralContainerStatuses[0].state.running.startedAt}")
    assert status


def test_ephemeral_containers_subresource_refuses_removal(cluster: KubeHarness,
                                                          pods: dict[str, str]) -> None:
    result = kubectl(cluster, "patch", "pod", "bb", "--subresource=ephemeralcontainers",
                     "--type=json", "-p", '[{"op":"remove","path":"/spec/ephemeralContainers/0"}]')
    assert result.returncode == 1
    assert 'Forbidden: existing ephemeral containers "sidekick" may not be removed' in result.stderr


def test_debug_copy_to(cluster: KubeHarness, pods: dict[str, str]) -> None:
    result = kubectl(cluster, "debug", "web", "--copy-to=web-debug", "--image=busybox",
                     "--container=dbg", "--", "sleep", "3600")
    assert result.returncode == 0, result.stderr
    cluster.advance(20)
    ready = cluster.ok("get", "pod", "web-debug", "-o",
                       "jsonpath={.spec.containers[*].name} {.status.phase}")
    assert ready == "web dbg Running"
    cluster.ok("delete", "pod", "web-debug", "--wait=false")


def test_debug_node(cluster: KubeHarness) -> None:
    node = cluster.ok("get", "nodes", "-o", "jsonpath={.items[1].metadata.name}")
    result = kubectl(cluster, "debug", f"node/{node}", "-i", "--image=busybox", "--", "sh",
                     input="echo on-node\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Creating debugging pod node-debugger-{node}-")
    assert lines[0].endswith(f" with container debugger on node {node}.")
    assert lines[1:] == ["on-node"]
    pod = lines[0].split()[3]
    spec = cluster.ok("get", "pod", pod, "-o",
                      "jsonpath={.spec.hostPID} {.spec.hostNetwork} {.spec.hostIPC} "
                      "{.spec.containers[0].volumeMounts[0].mountPath} {.spec.volumes[0].hostPath.path}")
    assert spec == "true true true /host /"
    cluster.ok("delete", "pod", pod, "--wait=false")
