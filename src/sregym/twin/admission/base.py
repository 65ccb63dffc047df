"""The admission plugin contract and its registry."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from sregym.errors import Forbidden
from sregym.registry import Registry

if TYPE_CHECKING:
    from sregym.twin.machinery.store import Operation
    from sregym.twin.twin import Twin

ADMISSION_PLUGINS: Registry[type[AdmissionPlugin]] = Registry("admission plugin",
                                                               ("sregym.twin.admission",))


class AdmissionPlugin:
    """A step of the write path. Override `mutate` (may change `op.obj` in place) and/or
    `validate` (raise an `ApiError` to reject). Both see every CREATE/UPDATE/DELETE of every kind,
    including status updates (`op.subresource == "status"`), and must ignore what is not theirs."""

    name: ClassVar[str] = "plugin"
    order: ClassVar[int] = 100

    def __init__(self, twin: Twin) -> None:
        self.twin = twin

    def mutate(self, op: Operation) -> None:
        return None

    def validate(self, op: Operation) -> None:
        return None


def forbidden(op: Operation, reason: str) -> Forbidden:
    """The 403 an admission plugin returns: `pods "web-0" is forbidden: <reason>`."""
    details: dict[str, str] = {"name": op.name, "kind": op.kind.plural}
    if op.kind.group:
        details["group"] = op.kind.group
    return Forbidden(f'{op.kind.resource} "{op.name}" is forbidden: {reason}', details=details)


def admission_plugin(cls: type[AdmissionPlugin]) -> type[AdmissionPlugin]:
    ADMISSION_PLUGINS.register(cls.name, cls, order=cls.order)
    return cls
