"""The image catalogue: which image:tag exists, and what a container started from it does.

A real registry answers "manifest unknown" for a missing tag and "pull access denied" for a
missing repository; the twin does the same from this catalogue. For images that exist, the entry
says what the process does given its container spec (ports it listens on, health endpoints, config
it needs and how it fails without it, log lines, exit codes, memory), which is how probes, crashes
and OOM kills emerge from causes rather than being scripted.

SKELETON: the kubelet work fills in behaviours (`ProcessPlan`, `plan()`) and the catalogue
entries. Other subsystems add images with `register_image()` and use `ImageSpec.extras` for
behaviour that is theirs (e.g. an admission webhook server's decision function).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_REGISTRY = "docker.io"


@dataclass(frozen=True)
class ImageRef:
    """A parsed image reference: `registry/repository:tag` (digest refs keep `digest`)."""

    registry: str
    repository: str
    tag: str
    digest: str = ""

    @classmethod
    def parse(cls, ref: str) -> ImageRef:
        text = ref.strip()
        digest = ""
        if "@" in text:
            text, digest = text.split("@", 1)
        name, tag = text, ""
        last = text.rsplit("/", 1)[-1]
        if ":" in last:
            name, tag = text.rsplit(":", 1)
        first, _, rest = name.partition("/")
        if rest and ("." in first or ":" in first or first == "localhost"):
            registry, repository = first, rest
        else:
            registry, repository = DEFAULT_REGISTRY, name
        if registry == DEFAULT_REGISTRY and "/" not in repository:
            repository = f"library/{repository}"
        return cls(registry, repository, tag or ("" if digest else "latest"), digest)

    @property
    def canonical(self) -> str:
        base = f"{self.registry}/{self.repository}"
        return f"{base}@{self.digest}" if self.digest else f"{base}:{self.tag}"


@dataclass
class ImageSpec:
    """One repository in the catalogue and the tags that exist for it."""

    repository: str  # canonical, e.g. "docker.io/library/nginx" or "registry.k8s.io/coredns/coredns"
    tags: tuple[str, ...]
    size_mb: float = 50.0
    description: str = ""
    # Declarative behaviour of a long-running server image (the kubelet work may add richer,
    # callable behaviour on top): TCP ports it listens on once started, HTTP paths that answer 200
    # on those ports (empty = every path answers 200), seconds from start until it listens, steady
    # working-set memory, and log lines printed at start.
    ports: tuple[int, ...] = ()
    http_paths: tuple[str, ...] = ()
    startup_seconds: float = 1.0
    memory_mb: float = 20.0
    startup_logs: tuple[str, ...] = ()
    private: bool = False  # pulling any tag fails with "pull access denied"
    extras: dict[str, Any] = field(default_factory=dict)


_CATALOGUE: dict[str, ImageSpec] = {}


def register_image(spec: ImageSpec) -> ImageSpec:
    """Add (or extend with more tags) a repository of the catalogue."""
    existing = _CATALOGUE.get(spec.repository)
    if existing is not None and existing is not spec:
        merged_tags = tuple(dict.fromkeys((*existing.tags, *spec.tags)))
        existing.tags = merged_tags
        existing.extras.update(spec.extras)
        return existing
    _CATALOGUE[spec.repository] = spec
    return spec


def lookup(ref: str) -> tuple[ImageSpec | None, ImageRef]:
    """Find the catalogue entry for an image reference (None if the repository is unknown)."""
    parsed = ImageRef.parse(ref)
    return _CATALOGUE.get(f"{parsed.registry}/{parsed.repository}"), parsed


def catalogue() -> dict[str, ImageSpec]:
    return dict(_CATALOGUE)
