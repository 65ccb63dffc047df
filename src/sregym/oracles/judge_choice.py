"""Which judge answers a run's diagnosis checklist: the deterministic one or an LLM.

`sregym run --judge llm --judge-model M --judge-base-url URL` picks the LLM judge for every attempt
of the run. The choice travels with the run's configuration (stored in `run.json`, so `--resume`
judges the same way) and is turned into a judge inside each worker. Only the *name* of the
environment variable holding the API key is kept, never the key itself.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sregym.oracles.diagnosis import Judge

KINDS = ("deterministic", "llm")
DEFAULT_KEY_ENV = "SREGYM_JUDGE_API_KEY"


@dataclass(frozen=True)
class JudgeChoice:
    """The judge of a run: `kind` and, for the LLM judge, its model, endpoint and key variable."""

    kind: str = "deterministic"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None

    def problems(self) -> list[str]:
        """What is wrong with the choice, one line each; [] when it can be used."""
        if self.kind not in KINDS:
            return [f"--judge must be one of {', '.join(KINDS)}, got {self.kind!r}"]
        if self.kind == "deterministic":
            extra = [f for f, v in (("--judge-model", self.model), ("--judge-base-url", self.base_url)) if v]
            return [f"{', '.join(extra)} only apply with --judge llm"] if extra else []
        missing = [f for f, v in (("--judge-model", self.model), ("--judge-base-url", self.base_url)) if not v]
        return [f"--judge llm needs {' and '.join(missing)}"] if missing else []

    def preflight(self) -> None:
        """Raise `MissingExtra` (a `SetupError`) when the LLM judge's SDK is not installed."""
        if self.kind == "llm":
            from sregym.extras import require

            require("openai", "the LLM judge (--judge llm)")

    def build(self) -> tuple[Judge | None, str, str | None]:
        """(judge, judge name, judge model) for `score_diagnosis`; None means the deterministic judge."""
        if self.kind != "llm":
            return None, "deterministic", None
        from sregym.oracles.llm_judge import LLMJudge

        judge = LLMJudge(str(self.model), base_url=self.base_url, api_key_env=self.api_key_env or DEFAULT_KEY_ENV)
        return judge, "llm", self.model

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> JudgeChoice:
        return cls(**(data or {}))


__all__ = ["DEFAULT_KEY_ENV", "KINDS", "JudgeChoice"]
