"""Times a client reads inside opaque strings: a service account token's JWT claims and the
year-less klog headers of the control plane's logs are on the machine's clock, like on a real
cluster (`sregym/twin/api/wall_time.py`)."""

from __future__ import annotations

import base64
import json
import re
import time
from datetime import UTC, datetime

import pytest

from support.kube import KubeHarness

_KLOG = re.compile(r"^[IWEF](\d{4} \d{2}:\d{2}:\d{2})\.\d{6}", re.MULTILINE)


def _claims(token: str) -> dict[str, int]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


@pytest.mark.parametrize("args, lifetime", [((), 3600), (("--duration=20m",), 1200)])
def test_token_claims_on_the_machine_clock(cluster: KubeHarness, args: tuple[str, ...], lifetime: int) -> None:
    before = time.time()
    claims = _claims(cluster.ok("create", "token", "default", "-n", "default", *args).strip())
    assert int(before) - 2 <= claims["iat"] <= time.time() + 1
    assert claims["nbf"] == claims["iat"]
    assert claims["exp"] - claims["iat"] == lifetime


def test_token_exp_matches_expiration_timestamp(cluster: KubeHarness) -> None:
    doc = json.loads(cluster.ok("create", "token", "default", "-n", "default", "-o", "json"))
    shown = datetime.fromisoformat(doc["status"]["expirationTimestamp"].replace("Z", "+00:00")).timestamp()
    assert abs(_claims(doc["status"]["token"])["exp"] - shown) <= 1


def test_control_plane_klog_headers_on_the_machine_clock(cluster: KubeHarness) -> None:
    names = cluster.ok("get", "pods", "-n", "kube-system", "-o", "name", user="admin").split()
    stamps: list[float] = []
    now = datetime.now(UTC)
    for name in names:
        text = cluster.kubectl("logs", "-n", "kube-system", name, user="admin").stdout
        for match in _KLOG.finditer(text):
            moment = datetime.strptime(f"{now.year}{match.group(1)}", "%Y%m%d %H:%M:%S").replace(tzinfo=UTC)
            stamps.append(moment.timestamp())
    assert stamps, names
    # Written since the cluster started (minutes ago), never in the future.
    assert all(time.time() - 6 * 3600 <= s <= time.time() + 1 for s in stamps), stamps[:5]
