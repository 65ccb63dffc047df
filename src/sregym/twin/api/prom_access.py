"""Who is asking, on the twin's Prometheus, Loki and Jaeger APIs: the kubeconfig's bearer tokens
put in front of services that have no notion of users. What each user may see is
`sregym.twin.telemetry.visibility`."""

from __future__ import annotations

from collections.abc import Mapping

from sregym.twin.telemetry.visibility import AGENT


def user_from_headers(tokens: Mapping[str, str], headers: Mapping[str, str]) -> str:
    """The user behind a request: the token's user, else the agent (least privilege: the real
    services ignore credentials, so an unknown or missing token is simply the agent view)."""
    header = headers.get("authorization") or ""
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer":
        user = tokens.get(token.strip())
        if user is not None:
            return user
    return AGENT


__all__ = ["user_from_headers"]
