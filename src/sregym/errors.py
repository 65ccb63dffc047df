"""Error types shared across sregym.

`ApiError` mirrors a Kubernetes `Status` failure so that the same exception raised deep inside the
twin's store or admission chain can be handed to a Python caller or serialised unchanged onto the wire
by the API server: a user never sees a traceback, only the message a real API server would give.
"""

from __future__ import annotations

from typing import Any


class SregymError(Exception):
    """Base class for every error sregym raises on purpose."""


class SetupError(SregymError):
    """The machine is not set up for what was asked: a missing binary or extra, an agent program
    that is not there, a model endpoint that does not answer. Raised before a run it stops the
    run with one line (exit code 3); raised inside an attempt it makes the attempt an
    *environment* failure (re-run by `--resume`), never the agent's failure."""


class ApiError(SregymError):
    """A Kubernetes API failure: HTTP code, machine reason and human message."""

    code: int = 500
    reason: str = "InternalError"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None,
                 code: int | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code is not None:
            self.code = code
        if reason is not None:
            self.reason = reason

    def to_status(self) -> dict[str, Any]:
        """The `Status` object the real API server returns for this failure."""
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            status["details"] = self.details
        return status


class BadRequest(ApiError):
    code = 400
    reason = "BadRequest"


class Unauthorized(ApiError):
    code = 401
    reason = "Unauthorized"


class Forbidden(ApiError):
    code = 403
    reason = "Forbidden"


class NotFound(ApiError):
    code = 404
    reason = "NotFound"


class MethodNotAllowed(ApiError):
    code = 405
    reason = "MethodNotAllowed"


class AlreadyExists(ApiError):
    code = 409
    reason = "AlreadyExists"


class Conflict(ApiError):
    code = 409
    reason = "Conflict"


class Gone(ApiError):
    code = 410
    reason = "Expired"


class Invalid(ApiError):
    code = 422
    reason = "Invalid"


class InternalError(ApiError):
    code = 500
    reason = "InternalError"


class Timeout(ApiError):
    code = 504
    reason = "Timeout"


def not_found(resource: str, name: str, group: str = "") -> NotFound:
    """`pods "web-0" not found`, with the details block kubectl prints from."""
    qualified = f"{resource}.{group}" if group else resource
    return NotFound(f'{qualified} "{name}" not found',
                    details={"name": name, "group": group, "kind": resource})


def already_exists(resource: str, name: str, group: str = "") -> AlreadyExists:
    qualified = f"{resource}.{group}" if group else resource
    return AlreadyExists(f'{qualified} "{name}" already exists',
                         details={"name": name, "group": group, "kind": resource})


def conflict(resource: str, name: str, group: str = "") -> Conflict:
    qualified = f"{resource}.{group}" if group else resource
    return Conflict(
        f'Operation cannot be fulfilled on {qualified} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
        details={"name": name, "group": group, "kind": resource},
    )


def invalid(kind: str, name: str, causes: list[tuple[str, str, str]], group: str = "") -> Invalid:
    """A 422 with field causes, shaped like the API server's validation errors.

    `causes` holds (reason, field, message) triples, e.g.
    ("FieldValueRequired", "spec.containers[0].image", "Required value").
    """
    qualified = f"{kind}.{group}" if group else kind
    text = ", ".join(f"{field}: {message}" for _reason, field, message in causes)
    if len(causes) > 1:  # an aggregate of several errors prints as a bracketed list
        text = f"[{text}]"
    return Invalid(
        f'{qualified} "{name}" is invalid: {text}',
        details={
            "name": name,
            "group": group,
            "kind": kind,
            "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes],
        },
    )
