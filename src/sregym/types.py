"""Shared models that cross a boundary: ground truth, the agent's diagnosis, scores, check results.

They live here (not in `oracles` or `problems`) because the problem specs, the oracles, the agent
tool catalogue and the results store all exchange them; keeping one definition means a submission
an agent produces is exactly what the oracle scores and what the results file stores. Every model
rejects unknown fields, so a typo in a problem file or a tool call fails loudly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sregym.twin.machinery.kinds import BUILTIN_KINDS


def _kind_aliases() -> dict[str, str]:
    """Kubernetes kinds as agents tend to write them (`deploy`, `deployments`, `deployment`), mapped
    to the canonical Kind name: read off the twin's kind table, so a kind it serves is named here too."""
    aliases: dict[str, str] = {}
    for k in BUILTIN_KINDS:
        if not k.virtual:
            for name in (k.kind.lower(), k.plural, *k.short_names):
                aliases.setdefault(name, k.kind)
    return aliases


_KIND_ALIASES = _kind_aliases()


def canonical_kind(kind: str) -> str:
    """`deploy`, `deployments`, `Deployment` and `deployment.apps` all name `Deployment`."""
    text = kind.strip()
    base = text.split(".", 1)[0]
    return _KIND_ALIASES.get(base.lower(), base[:1].upper() + base[1:])


class Model(BaseModel):
    """Base for boundary models: unknown fields are an error, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class EntityRef(Model):
    """One Kubernetes object, by kind, namespace (None for cluster-scoped) and name."""

    kind: str
    namespace: str | None = None
    name: str

    @field_validator("kind")
    @classmethod
    def _canonical(cls, value: str) -> str:
        return canonical_kind(value)

    @classmethod
    def parse(cls, text: str) -> EntityRef:
        """`namespace/Kind/name`, `Kind/name` or `kind:namespace/name` (the forms agents use)."""
        raw = text.strip()
        if ":" in raw and "/" in raw.split(":", 1)[1]:
            kind, rest = raw.split(":", 1)
            ns, name = rest.split("/", 1)
            return cls(kind=kind, namespace=ns or None, name=name)
        parts = raw.split("/")
        if len(parts) == 3:
            return cls(kind=parts[1], namespace=parts[0] or None, name=parts[2])
        if len(parts) == 2:
            return cls(kind=parts[0], name=parts[1])
        raise ValueError(f"cannot read an entity from {text!r}: use namespace/Kind/name")

    def __str__(self) -> str:
        return f"{self.namespace}/{self.kind}/{self.name}" if self.namespace else f"{self.kind}/{self.name}"


class EntityPattern(Model):
    """Objects that count as the same entity as a root cause: a kind, a namespace and a name (or a
    full-match regex over the name, for generated names like a Deployment's pods)."""

    kind: str
    namespace: str | None = None
    name: str | None = None
    name_regex: str | None = None

    @field_validator("kind")
    @classmethod
    def _canonical(cls, value: str) -> str:
        return canonical_kind(value)

    def matches(self, ref: EntityRef) -> bool:
        if ref.kind != self.kind:
            return False
        if self.namespace is not None and ref.namespace not in (None, self.namespace):
            return False
        if self.name is not None and ref.name == self.name:
            return True
        return self.name_regex is not None and re.fullmatch(self.name_regex, ref.name) is not None


class RootCause(Model):
    """One root-cause entity with the objects that stand for it (e.g. a Deployment's ReplicaSets
    and Pods): naming any of them finds this root cause."""

    entity: EntityRef
    aliases: tuple[EntityPattern, ...] = ()

    def matches(self, ref: EntityRef) -> bool:
        e = self.entity
        if ref.kind == e.kind and ref.name == e.name and ref.namespace in (None, e.namespace):
            return True
        return any(a.matches(ref) for a in self.aliases)


def workload_aliases(kind: str, namespace: str, name: str) -> tuple[EntityPattern, ...]:
    """The ReplicaSets and Pods a Deployment (or the Pods a StatefulSet/DaemonSet) owns."""
    esc = re.escape(name)
    kind = canonical_kind(kind)
    if kind == "Deployment":
        return (EntityPattern(kind="ReplicaSet", namespace=namespace, name_regex=rf"{esc}-[a-z0-9]{{6,10}}"),
                EntityPattern(kind="Pod", namespace=namespace, name_regex=rf"{esc}-[a-z0-9]{{6,10}}-[a-z0-9]{{5}}"))
    if kind == "StatefulSet":
        return (EntityPattern(kind="Pod", namespace=namespace, name_regex=rf"{esc}-\d+"),)
    if kind == "DaemonSet":
        return (EntityPattern(kind="Pod", namespace=namespace, name_regex=rf"{esc}-[a-z0-9]{{5}}"),)
    return ()


class GroundTruth(Model):
    """What really happened: the oracles' answer key (never shown to the agent).

    `mechanism` is a canonical fault mechanism (see `sregym.oracles.mechanisms`); `detail` the
    concrete change (the value that was mutated) and `detail_keywords` the words a submission that
    names it would contain; `affected` the symptomatic entities (including cascades);
    `impact_keywords` words describing the user-visible impact.
    """

    root_causes: tuple[RootCause, ...]
    mechanism: str
    detail: str
    detail_keywords: tuple[str, ...] = ()
    affected: tuple[RootCause, ...] = ()
    impact_keywords: tuple[str, ...] = ()
    description: str = ""

    @property
    def involved(self) -> tuple[RootCause, ...]:
        return (*self.root_causes, *self.affected)


class DiagnosisSubmission(Model):
    """The agent's structured diagnosis."""

    root_causes: tuple[EntityRef, ...] = ()
    mechanism: str = ""
    affected: tuple[EntityRef, ...] = ()
    explanation: str = ""

    @classmethod
    def from_texts(cls, root_causes: Iterable[str], mechanism: str, affected: Iterable[str] = (),
                   explanation: str = "") -> DiagnosisSubmission:
        """The submission `submit_diagnosis` records for its arguments (entities as agents write
        them, see `EntityRef.parse`); raises ValueError for an entity it cannot read."""
        return cls(root_causes=tuple(EntityRef.parse(t) for t in root_causes), mechanism=mechanism,
                   affected=tuple(EntityRef.parse(t) for t in affected), explanation=explanation)


Dimension = Literal["localization", "characterization", "scope"]


class ChecklistAnswer(Model):
    """One yes/no answer of a judge, with what it rests on."""

    id: str
    dimension: Dimension
    question: str
    answer: bool
    evidence: str = ""
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)


class DiagnosisScore(Model):
    """Root-cause precision at full recall, and the 3×3 checklist."""

    root_cause_score: float
    recall: float
    precision: float
    checklist: tuple[ChecklistAnswer, ...]
    checklist_score: float
    dimension_scores: dict[str, float]
    passed: bool
    judge: str = "deterministic"
    judge_model: str | None = None


CheckRole = Literal["must_fix", "must_keep", "durability"]


class CheckResult(Model):
    """The outcome of one mitigation check."""

    name: str
    role: CheckRole
    passed: bool
    detail: str = ""


class MitigationScore(Model):
    """All checks of a verification window; passes only if every check passes."""

    passed: bool
    checks: tuple[CheckResult, ...]
    window_s: float

    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]


__all__ = [
    "CheckResult", "CheckRole", "ChecklistAnswer", "DiagnosisScore", "DiagnosisSubmission", "Dimension",
    "EntityPattern", "EntityRef", "GroundTruth", "MitigationScore", "Model", "RootCause",
    "canonical_kind", "workload_aliases",
]
