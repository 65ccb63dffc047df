"""The agent's and the admin's permissions as the agent reads them, pinned byte for byte.

The agent learns what it may do from `kubectl auth can-i --list` (a SelfSubjectRulesReview), so
the rule list, its order and its grouping reach the agent's prompt-visible output. The rules are
derived from the kind rows (`ResourceKind.agent_rule`/`agent_verbs`); these golden files catch
any change to what that derivation produces. Regenerate only for a deliberate permission change:
`SREGYM_REGEN_RULES=1 pytest tests/twin/api/test_rules_review_pinned.py`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "rules_review"

REVIEW = """{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
 "spec": {"namespace": "default"}}"""

CASES = {
    "agent-default.txt": (("auth", "can-i", "--list", "-n", "default"), "agent"),
    "agent-chaos-mesh.txt": (("auth", "can-i", "--list", "-n", "chaos-mesh"), "agent"),
    "admin-default.txt": (("auth", "can-i", "--list", "-n", "default"), "admin"),
    "agent-review.json": (("create", "-f", "-", "-o", "json"), "agent"),
}


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("SREGYM_REGEN_RULES"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed"


@pytest.mark.parametrize("name", sorted(CASES))
def test_rules_review_output_is_pinned(kube, name: str) -> None:  # type: ignore[no-untyped-def]
    args, user = CASES[name]
    out = kube.ok(*args, user=user, input=REVIEW if "create" in args else None)
    if name.endswith(".json"):
        out = json.dumps(json.loads(out)["status"], indent=1) + "\n"
    _check(name, out)
