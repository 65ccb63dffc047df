"""The one error type the engine raises, shaped like the Prometheus HTTP API's error body.

The API layer maps `kind` straight onto `errorType` ("bad_data" → 400, "execution" → 422,
"timeout" → 503) and `message` onto `error`, so messages are worded as Prometheus words them.
"""

from __future__ import annotations


class PromQLError(Exception):
    """A query that cannot be parsed (bad_data) or evaluated (execution, timeout)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    def __str__(self) -> str:
        return self.message
