"""Credentials are unguessable: every token comes from `secrets`, so two starts with the same seed
have different tokens and a token derived from the seed (the old scheme) is refused; tokens never
enter the twin, so the same seed still gives the same run."""

from __future__ import annotations

import base64
import hashlib
import signal
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from sregym.cli.twin import public_bind_warning
from sregym.env import Conductor
from sregym.twin.api.kubeconfig import USERS, context_name, make_tokens, token_for

PROBLEM = "demo-shop/service-selector-mismatch-v1"


def seed_derived_token(seed: int, user: str, salt: str = "") -> str:
    """The token the twin used to hand out: sha256 of a fixed string and the seed."""
    digest = hashlib.sha256(f"sregym-token:{salt}:{seed}:{user}".encode()).hexdigest()
    return f"sregym-{user}.{digest[:40]}"


def test_tokens_are_fresh_random_and_per_user() -> None:
    first, second = make_tokens(), make_tokens()
    assert sorted(first.values()) == sorted(USERS)
    assert set(first).isdisjoint(second)
    for token, user in first.items():
        # Nothing but the random part: a token an agent reads names neither it nor the benchmark.
        assert len(token) >= 40 and "sregym" not in token and user not in token
        assert token != seed_derived_token(0, user)
    assert list(make_tokens("agent").values()) == ["agent"]


def _status(server: str, ca: Path, token: str) -> int:
    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca)), timeout=10.0) as client:
        return client.get(f"{server}/api/v1/namespaces", headers={"Authorization": f"Bearer {token}"}).status_code


# ------------------------------------------------------------------------- the conductor
def _attempt_tokens(tmp_path: Path, index: int) -> tuple[str, str, list[str], str, list[int]]:
    """One attempt: (agent token, twin fingerprint after the same calls, kubeconfig users,
    twin dump, statuses of the agent token and the seed-derived tokens)."""
    with Conductor(PROBLEM, seed=5) as conductor:
        conductor.start()
        kubeconfig = yaml.safe_load(conductor.kubeconfig.read_text())
        cluster = kubeconfig["clusters"][0]["cluster"]
        ca = tmp_path / f"ca-{index}.pem"
        ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
        statuses = [_status(cluster["server"], ca, conductor.agent_token)]
        statuses += [_status(cluster["server"], ca, seed_derived_token(5, user)) for user in USERS]
        conductor.session.call("kubectl", {"command": "get pods"})
        conductor.session.call("kubectl", {"command": "label svc catalog touched=yes"})
        twin = conductor._run.cluster  # type: ignore[union-attr]
        fingerprint = conductor._on_loop(twin.fingerprint)
        dump = conductor._on_loop(twin.twin.dump)
        return conductor.agent_token, fingerprint, [u["name"] for u in kubeconfig["users"]], dump, statuses


def test_conductor_tokens_are_fresh_per_attempt_and_never_in_the_twin(tmp_path: Path) -> None:
    token_a, fingerprint_a, users_a, dump_a, statuses_a = _attempt_tokens(tmp_path, 0)
    token_b, fingerprint_b, users_b, dump_b, statuses_b = _attempt_tokens(tmp_path, 1)
    assert token_a != token_b
    assert users_a == users_b == ["kind-kind"]
    # The agent's own token works; the seed-derived tokens (admin or agent) are refused; no admin
    # token is served at all.
    assert statuses_a[0] == statuses_b[0] == 200
    assert statuses_a[1:] == statuses_b[1:] == [401, 401]
    # Same seed, same calls: identical runs, whatever the tokens were.
    assert fingerprint_a == fingerprint_b
    for token, dump in ((token_a, dump_a), (token_b, dump_b)):
        assert token not in dump


# -------------------------------------------------------------------------- twin up
def _twin_up(kubeconfig: Path) -> subprocess.Popen[str]:
    command = [str(Path(sys.executable).parent / "sregym"), "twin", "up", "--seed", "0", "--port", "0",
               "--speed", "0", "--prometheus-port", "-1", "--loki-port", "-1", "--jaeger-port", "-1",
               "--kubeconfig", str(kubeconfig)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _serving(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("export KUBECONFIG="):
            return
    raise AssertionError(f"twin up ended without serving: {process.stderr.read() if process.stderr else ''}")


def _stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    return err


def test_two_twin_up_starts_with_the_same_seed_have_different_tokens(tmp_path: Path) -> None:
    seen: list[dict[str, str]] = []
    for index in range(2):
        path = tmp_path / f"kubeconfig-{index}.yaml"
        process = _twin_up(path)
        try:
            _serving(process)
            config = yaml.safe_load(path.read_text())
            users = {context_name(u): u for u in USERS}
            tokens = {u["user"]["token"]: users[u["name"]] for u in config["users"]}
            cluster = config["clusters"][0]["cluster"]
            ca = tmp_path / f"ca-{index}.pem"
            ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
            assert _status(cluster["server"], ca, token_for(tokens, "admin")) == 200
            assert _status(cluster["server"], ca, seed_derived_token(0, "admin")) == 401
            assert _status(cluster["server"], ca, seed_derived_token(0, "agent")) == 401
            seen.append(tokens)
        finally:
            err = _stop(process)
        assert "warning" not in err  # loopback: no public-bind warning
    assert set(seen[0]).isdisjoint(seen[1])


@pytest.mark.parametrize(("host", "warns"), [("127.0.0.1", False), ("::1", False), ("localhost", False),
                                             ("0.0.0.0", True), ("::", True), ("10.1.2.3", True),
                                             ("twin.example.org", True)])
def test_a_public_bind_warns(host: str, warns: bool) -> None:
    warning = public_bind_warning(host)
    assert (warning is not None) == warns
    if warning:
        assert host in warning and "127.0.0.1" in warning
