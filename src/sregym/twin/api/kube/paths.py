"""Parse Kubernetes REST paths into (group, version, namespace, resource, name, subresource).

The API server's URL space is regular enough to parse by hand, which is both faster and simpler
than a route per shape: `/api/v1/namespaces/{ns}/pods/{name}/log`,
`/apis/apps/v1/deployments`, `/api/v1/watch/namespaces/{ns}/pods` (the legacy watch prefix),
and the one irregular case, the Namespace resource itself (`/api/v1/namespaces/{name}[/status]`).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

_NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(frozen=True)
class ResourcePath:
    group: str
    version: str
    plural: str = ""
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None
    legacy_watch: bool = False

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def parse(path: str) -> ResourcePath | None:
    """The resource addressed by `path`, or None when it is not under `/api` or `/apis`.

    A path that stops at the group version (`/apis/apps/v1`) yields an empty `plural`.
    """
    parts = [unquote(p) for p in path.strip("/").split("/")]
    if not parts or parts[0] not in ("api", "apis"):
        return None
    if parts[0] == "api":
        if len(parts) < 2:
            return None
        group, version, rest = "", parts[1], parts[2:]
    else:
        if len(parts) < 3:
            return None
        group, version, rest = parts[1], parts[2], parts[3:]
    legacy_watch = False
    if rest and rest[0] == "watch":
        legacy_watch = True
        rest = rest[1:]
    if not rest:
        return ResourcePath(group, version, legacy_watch=legacy_watch)
    if rest[0] == "namespaces" and group == "":
        if len(rest) <= 2 or (len(rest) == 3 and rest[2] in _NAMESPACE_SUBRESOURCES):
            return ResourcePath(group, version, "namespaces", None, rest[1] if len(rest) > 1 else None,
                                rest[2] if len(rest) > 2 else None, legacy_watch)
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    else:
        namespace = None
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else None
    sub = "/".join(rest[2:]) if len(rest) > 2 else None
    return ResourcePath(group, version, plural, namespace, name, sub, legacy_watch)


__all__ = ["ResourcePath", "parse"]
