"""The agent's answer to an offline snapshot task: `output.json`, its schema and its validation.

An offline agent works on files and has no submit tool, so its answer is a file. The format is the
ITBench-AA one — the root-cause Kubernetes entities, plus optional free text:

    {"entities": [{"kind": "ResourceQuota", "namespace": "hotel-reservation", "name": "q"}, ...],
     "explanation": "optional free text"}

`entities` is required (it may be empty, which scores 0); each entity needs a non-empty `kind` and
`name`, and a `namespace` unless the kind is cluster-scoped (omit it or write null; an empty string
and the snapshot's own `_` count as null). Unknown keys are rejected at every level, so a typo (`entites`, `Kind`) fails
loudly instead of silently scoring 0.

Entities are matched exactly as the live diagnosis oracle matches them, because `to_ref()` builds
the same `EntityRef` a live `submit_diagnosis` builds: the kind is lenient (`deploy`, `deployments`,
`deployment`, `Deployment` and `deployment.apps` all mean Deployment — `types.canonical_kind`),
names and namespaces are exact, and an entity without a namespace matches a root cause in any
namespace. `load_output` turns pydantic's errors into one line per problem: the file, the JSON path
(`entities[2].kind`) and what to write instead, because the reader is an agent author (or an agent)
who has to fix the file, not a Python developer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError, field_validator

from sregym.errors import SregymError
from sregym.snapshot.layout import CLUSTER_SCOPED
from sregym.types import DiagnosisSubmission, EntityRef

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]

EXAMPLE: dict[str, Any] = {
    "entities": [{"kind": "Deployment", "namespace": "hotel-reservation", "name": "geo"}],
    "explanation": "geo's image tag does not exist (ImagePullBackOff), so search has no geo backend.",
}

# What to write, per field: the second half of every error message.
_HINTS: dict[str, str] = {
    "": 'one JSON object like {"entities": [{"kind": "Deployment", "namespace": "my-namespace", '
        '"name": "my-app"}], "explanation": "optional text"}',
    "entities": 'a JSON array of root-cause entities, e.g. [{"kind": "Deployment", "namespace": '
                '"my-namespace", "name": "my-app"}] (an empty array is allowed)',
    "entity": 'an object like {"kind": "Deployment", "namespace": "my-namespace", "name": "my-app"}',
    "kind": 'the Kubernetes kind as a non-empty string, e.g. "Deployment", "ConfigMap", "Node"',
    "name": 'the object\'s name as a non-empty string, e.g. "my-app"',
    "namespace": "the namespace as a string, or null (or leave the key out) for a cluster-scoped kind",
    "explanation": "free text as a string, or leave the key out",
}
_ALLOWED = {"": "entities, explanation", "entity": "kind, namespace, name"}


class OutputError(SregymError, ValueError):
    """An `output.json` that cannot be read or does not follow the schema.

    `str(err)` is the whole human message; `problems` holds one line per problem
    (`"entities[2].kind: missing; add ..."`) for callers that show them separately.
    """

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        if len(problems) == 1:
            message = f"invalid agent output {source}: {problems[0]}"
        else:
            message = f"invalid agent output {source}:\n" + "\n".join(f"  {p}" for p in problems)
        super().__init__(message)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OutputEntity(_Strict):
    """One root-cause entity as the agent wrote it (the kind is canonicalised by `to_ref`)."""

    kind: NonEmpty
    namespace: str | None = None
    name: NonEmpty

    @field_validator("namespace")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        # `kubectl` prints cluster-scoped objects with an empty namespace, and the snapshot itself
        # writes `_` (topology ids, metric file names; no namespace can be called that): both mean none.
        text = value.strip() if value is not None else ""
        return None if text in ("", CLUSTER_SCOPED) else text

    def to_ref(self) -> EntityRef:
        return EntityRef(kind=self.kind, namespace=self.namespace, name=self.name)

    @classmethod
    def from_ref(cls, ref: EntityRef) -> OutputEntity:
        return cls(kind=ref.kind, namespace=ref.namespace, name=ref.name)


class AgentOutput(_Strict):
    """The whole answer: root-cause entities and an optional explanation."""

    entities: tuple[OutputEntity, ...]
    explanation: str | None = None

    def refs(self) -> tuple[EntityRef, ...]:
        return tuple(e.to_ref() for e in self.entities)

    @property
    def has_explanation(self) -> bool:
        return bool(self.explanation and self.explanation.strip())

    def to_submission(self) -> DiagnosisSubmission:
        """The live oracle's input for this answer.

        The offline format has one free-text field where a live submission has `mechanism` and
        `explanation`; the deterministic checklist reads the fault type from `mechanism` only (C1,
        C3) and details/impact from both, so the explanation goes into both fields. `affected` stays
        empty: the offline format names root causes only.
        """
        text = (self.explanation or "").strip()
        return DiagnosisSubmission(root_causes=self.refs(), mechanism=text, explanation=text)

    @classmethod
    def from_submission(cls, submission: DiagnosisSubmission) -> AgentOutput:
        """An offline answer from a live-style diagnosis: mechanism and explanation joined."""
        parts = [p.strip() for p in (submission.mechanism, submission.explanation) if p.strip()]
        return cls(entities=tuple(OutputEntity.from_ref(r) for r in submission.root_causes),
                   explanation="\n".join(parts) or None)


def _json_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the top level"


def _field(loc: tuple[int | str, ...]) -> str:
    """Which hint applies: the last named key, or `entity` for an item of `entities`."""
    if not loc:
        return ""
    last = loc[-1]
    return "entity" if isinstance(last, int) else str(last)


def _problem(error: Any) -> str:
    loc = tuple(error["loc"])
    kind = error["type"]
    path = _json_path(loc)
    if kind == "extra_forbidden":
        level = "entity" if any(isinstance(p, int) for p in loc) else ""
        return f"{path}: unknown key; remove it (allowed keys here: {_ALLOWED[level]})"
    hint = _HINTS.get(_field(loc), "")
    if kind == "missing":
        return f"{path}: missing; add {hint}"
    if kind == "string_too_short":
        return f"{path}: empty; write {hint}"
    if kind == "string_type":
        return f"{path}: not a string; write {hint}"
    if kind in ("tuple_type", "list_type"):
        return f"{path}: not a JSON array; write {hint}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"{path}: not a JSON object; write {hint}"
    return f"{path}: {error['msg']}" + (f"; write {hint}" if hint else "")


def validate_output(data: Any, *, source: str = "output") -> AgentOutput:
    """Validate already-parsed JSON (e.g. a tool call's arguments); raises `OutputError`."""
    try:
        return AgentOutput.model_validate(data)
    except ValidationError as err:
        raise OutputError(source, [_problem(e) for e in err.errors()]) from None


def load_output(path: Path) -> AgentOutput:
    """Read and validate an `output.json`; raises `OutputError` saying what to fix."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise OutputError(str(path), ["no such file; the agent must write its answer there"]) from None
    except UnicodeDecodeError:
        raise OutputError(str(path), ["not UTF-8 text; write the answer as UTF-8 JSON"]) from None
    except OSError as err:
        raise OutputError(str(path), [f"cannot be read ({err.strerror or err})"]) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise OutputError(str(path), [f"not valid JSON ({err.msg}: line {err.lineno} column {err.colno}); "
                                      f"write {_HINTS['']}"]) from None
    return validate_output(data, source=str(path))


def dumps_output(output: AgentOutput) -> str:
    """The canonical file text: sorted keys, 2-space indent, trailing newline, nulls left out."""
    return json.dumps(output.model_dump(mode="json", exclude_none=True), sort_keys=True, indent=2,
                      ensure_ascii=False) + "\n"


def write_output(path: Path, output: AgentOutput) -> Path:
    """Write `output` as `output.json` text (parents created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps_output(output), encoding="utf-8")
    return path


def json_schema() -> dict[str, Any]:
    """The JSON Schema of `output.json`, self-contained (no `$ref`), for prompts, tool parameters
    and docs. `tests/snapshot/test_output.py` checks it accepts and rejects what `load_output` does
    (except whitespace-only strings, which a JSON Schema cannot express without a pattern)."""
    entity = {
        "type": "object",
        "description": "One root-cause Kubernetes object.",
        "properties": {
            "kind": {"type": "string", "minLength": 1,
                     "description": "Kubernetes kind, e.g. Deployment, Service, ConfigMap, ResourceQuota, Node "
                                    "(case, plurals and kubectl short names such as deploy/svc/cm are accepted)."},
            "namespace": {"type": ["string", "null"],
                          "description": "Namespace of the object; null or omitted for cluster-scoped kinds "
                                         "(Node, PersistentVolume, ...; \"\" and \"_\" mean null too). When "
                                         "omitted it matches any namespace."},
            "name": {"type": "string", "minLength": 1, "description": "Exact object name."},
        },
        "required": ["kind", "name"],
        "additionalProperties": False,
    }
    return {
        "title": "sregym offline agent output",
        "description": "The minimal set of independent root-cause Kubernetes entities of the incident, and an "
                       "optional explanation. Scored by precision at full recall: missing any root cause "
                       "scores 0, every extra entity lowers the score.",
        "type": "object",
        "properties": {
            "entities": {"type": "array", "items": entity,
                         "description": "Root-cause entities (not the components that only show symptoms)."},
            "explanation": {"type": ["string", "null"],
                            "description": "Optional: the fault mechanism, the concrete change (value, key, "
                                           "label, image) and the user-visible impact. Enables the checklist."},
        },
        "required": ["entities"],
        "additionalProperties": False,
    }


__all__ = ["EXAMPLE", "AgentOutput", "OutputEntity", "OutputError", "dumps_output", "json_schema", "load_output",
           "validate_output", "write_output"]
