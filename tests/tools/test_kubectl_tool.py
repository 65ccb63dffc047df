"""The kubectl tool refuses interactive and shell-composite commands with an actionable message,
passes ordinary commands to the real binary unchanged, never reads or writes a local path outside
its scratch directory, and runs kubectl in the agent sandbox."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sregym.tools.kubectl import CommandRejected, KubectlRunner, parse_command


@pytest.mark.parametrize("command", [
    "get pods | grep catalog",
    "get pods; delete pod x",
    "get pods && echo ok",
    "get pods > /tmp/out",
    "get pods -n $(cat /etc/ns)",
    "get pods -n `whoami`",
    "logs x 2>&1",
])
def test_shell_composites_are_rejected(command: str) -> None:
    with pytest.raises(CommandRejected, match="without a shell"):
        parse_command(command)


@pytest.mark.parametrize("command,hint", [
    ("edit deployment catalog", "kubectl patch"),
    ("exec -it catalog-0 -- sh", "single command"),
    ("exec catalog-0 -ti -- sh", "single command"),
    ("exec --stdin --tty catalog-0 -- sh", "single command"),
    ("attach catalog-0", "kubectl logs"),
    ("port-forward svc/catalog 8080:8080", "holds a port"),
    ("proxy", "long-lived"),
    ("-n demo-shop edit deployment catalog", "kubectl patch"),
    ("get pods -w", "never returns"),
    ("logs -f catalog-0", "never returns"),
])
def test_interactive_commands_are_rejected(command: str, hint: str) -> None:
    with pytest.raises(CommandRejected, match=r"(?i)interactive|never returns") as info:
        parse_command(command)
    assert hint in str(info.value)


def test_credentials_cannot_be_overridden() -> None:
    for command in ("get pods --kubeconfig /root/.kube/config", "get pods --as admin", "get pods --token=x",
                    "--context kind-admin get pods"):
        with pytest.raises(CommandRejected, match="fixed for this session"):
            parse_command(command)


def test_ordinary_commands_pass_through() -> None:
    assert parse_command("kubectl get pods -n demo-shop -o wide") == ["get", "pods", "-n", "demo-shop", "-o", "wide"]
    assert parse_command("exec catalog-0 -- sh -c 'echo a | wc -c'") == [
        "exec", "catalog-0", "--", "sh", "-c", "echo a | wc -c"]
    assert parse_command("get pods -o jsonpath='{.items[*].metadata.name}'")[-1] == "jsonpath={.items[*].metadata.name}"
    assert parse_command("apply -f gold.yaml", scratch=Path("/tmp")) == ["apply", "-f", "gold.yaml"]
    assert parse_command("apply -f -") == ["apply", "-f", "-"]  # standard input is always fine
    assert parse_command("logs catalog-0 -c app --tail 5")[-1] == "5"
    # A rollout status would wait for time that only passes between calls: never wait.
    assert "--watch=false" in parse_command("rollout status deploy/catalog -n demo-shop")


def test_runner_turns_rejections_into_error_observations(tmp_path) -> None:
    runner = KubectlRunner(kubeconfig=tmp_path / "kubeconfig", home=tmp_path)
    text, is_error = runner.run("get pods | head")
    assert is_error and "pipes" in text
    text, is_error = runner.run("")
    assert is_error and "empty command" in text


# Every flag that makes kubectl read or write a local path, pointed at a host file.
HOST_FILE_COMMANDS = [
    "create configmap x --from-file=/etc/passwd --dry-run=client -o yaml",
    "create configmap x --from-file /etc/passwd --dry-run=client -o yaml",
    "create configmap x --from-file=pw=/etc/passwd --dry-run=client -o yaml",
    "create configmap x --from-env-file=/etc/os-release --dry-run=client -o yaml",
    "create secret generic x --from-file=/etc/passwd --dry-run=client -o yaml",
    "create secret tls x --cert=/etc/passwd --key=/etc/passwd --dry-run=client -o yaml",
    "apply -f /etc/passwd --dry-run=client",
    "apply --filename=/etc/passwd --dry-run=client",
    "create -f ../outside.yaml --dry-run=client -o yaml",
    "apply -f/etc/passwd",
    "apply -k /etc",
    "apply --kustomize=/etc",
    "kustomize /etc",
    "patch deploy x --patch-file=/etc/passwd",
    "get pods -o go-template-file=/etc/passwd",
    "get pods --output=jsonpath-file=/etc/passwd",
    "get pods -o custom-columns-file=/etc/passwd",
    "get pods --cache-dir=/tmp/anywhere",
    "get pods --cache-dir /tmp/anywhere",
    "get pods --log-file=/tmp/kubectl.log",
    "cluster-info dump --output-directory=/tmp/dump",
    "cp /etc/passwd catalog-0:/tmp/passwd",
    "config set-credentials admin --token=x",
    "get pods --kubeconfig=/root/.kube/config",
    "get pods --token x",
    "get pods --server=https://127.0.0.1:6443",
    "get pods -s https://127.0.0.1:6443",
    "get pods --as=admin",
    "apply -f https://example.com/manifest.yaml",
]


@pytest.mark.parametrize("command", HOST_FILE_COMMANDS)
def test_local_path_and_credential_flags_are_refused(command: str, tmp_path: Path) -> None:
    with pytest.raises(CommandRejected) as info:
        parse_command(command, scratch=tmp_path / "home")
    assert "root:" not in str(info.value)
    runner = KubectlRunner(kubeconfig=tmp_path / "kubeconfig", home=tmp_path / "home")
    (tmp_path / "home").mkdir(exist_ok=True)
    text, is_error = runner.run(command)
    assert is_error and text == str(info.value)


def test_refusals_say_why_and_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(CommandRejected, match=r"does not read local files.*standard input"):
        parse_command("create configmap x --from-file=/etc/passwd --dry-run=client -o yaml", scratch=tmp_path)
    with pytest.raises(CommandRejected, match="writes local files"):
        parse_command("get pods --cache-dir=/tmp/x", scratch=tmp_path)
    with pytest.raises(CommandRejected, match="fixed for this session"):
        parse_command("get pods --server=https://x", scratch=tmp_path)
    with pytest.raises(CommandRejected, match="kubectl exec POD -- cat FILE"):
        parse_command("cp pod:/etc/hosts hosts", scratch=tmp_path)


def test_paths_inside_the_scratch_dir_are_allowed_but_not_links_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "gold-0.yaml").write_text("kind: ConfigMap\n")
    os.symlink("/etc/passwd", home / "link.yaml")
    assert parse_command(f"apply -f {home}/gold-0.yaml", scratch=home)[-1] == f"{home}/gold-0.yaml"
    assert parse_command("create configmap x --from-file=data=gold-0.yaml", scratch=home)
    for escape in ("link.yaml", "../home/../x.yaml", str(tmp_path / "x.yaml")):
        with pytest.raises(CommandRejected):
            parse_command(f"apply -f {escape}", scratch=home)


def test_kubectl_reads_nothing_of_the_host(tmp_path: Path) -> None:
    """The real kubectl, refused before it runs for a host path, and confined when it runs."""
    home = tmp_path / "home"
    home.mkdir()
    secret = tmp_path / "answer.txt"  # next to the scratch dir, like an attempt's other files
    secret.write_text("the-ground-truth\n")
    (home / "mine.txt").write_text("scratch-data\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    runner = KubectlRunner(kubeconfig=kubeconfig, home=home)
    assert runner.sandboxed, "user namespaces must work on the test machine"
    text, is_error = runner.run("create configmap x --from-file=/etc/passwd --dry-run=client -o yaml")
    assert is_error and "root:" not in text and "does not read local files" in text
    text, is_error = runner.run(f"create configmap x --from-file={secret} --dry-run=client -o yaml")
    assert is_error and "the-ground-truth" not in text
    text, is_error = runner.run("create configmap x --from-file=mine.txt --dry-run=client -o yaml")
    assert not is_error and "scratch-data" in text, text
    # What kubectl itself can see: a stand-in binary run exactly like kubectl.
    probe = KubectlRunner(kubeconfig=kubeconfig, home=home, binary="/bin/ls")
    listing, _ = probe.run(f"-a {tmp_path} {home} /proc /tmp /root")
    assert "answer.txt" not in listing and "mine.txt" in listing and "kubeconfig" in listing
    assert "cannot access '/root'" in listing
    pids = [line for line in listing.split("/proc:")[1].split("\n\n")[0].split() if line.isdigit()]
    assert pids and max(int(p) for p in pids) < 50, listing  # a private PID namespace
    assert str(os.getpid()) not in pids or os.getpid() < 50
