"""The kubectl tool refuses interactive and shell-composite commands with an actionable message,
and passes ordinary commands to the real binary unchanged."""

from __future__ import annotations

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
                    "--context sregym-admin get pods"):
        with pytest.raises(CommandRejected, match="fixed for this session"):
            parse_command(command)


def test_ordinary_commands_pass_through() -> None:
    assert parse_command("kubectl get pods -n demo-shop -o wide") == ["get", "pods", "-n", "demo-shop", "-o", "wide"]
    assert parse_command("exec catalog-0 -- sh -c 'echo a | wc -c'") == [
        "exec", "catalog-0", "--", "sh", "-c", "echo a | wc -c"]
    assert parse_command("get pods -o jsonpath='{.items[*].metadata.name}'")[-1] == "jsonpath={.items[*].metadata.name}"
    assert parse_command("apply -f gold.yaml") == ["apply", "-f", "gold.yaml"]
    # A rollout status would wait for time that only passes between calls: never wait.
    assert "--watch=false" in parse_command("rollout status deploy/catalog -n demo-shop")


def test_runner_turns_rejections_into_error_observations(tmp_path) -> None:
    runner = KubectlRunner(kubeconfig=tmp_path / "kubeconfig", home=tmp_path)
    text, is_error = runner.run("get pods | head")
    assert is_error and "pipes" in text
    text, is_error = runner.run("")
    assert is_error and "empty command" in text
