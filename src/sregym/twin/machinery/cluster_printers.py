"""`kubectl get` columns of the cluster-plumbing kinds every 1.32 cluster serves.

ComponentStatuses, APIServices, API Priority and Fairness (FlowSchemas, PriorityLevelConfigurations),
CSINodes, CSIStorageCapacities, CertificateSigningRequests, RuntimeClasses and
ValidatingAdmissionPolicies (and their bindings): the columns, cells and `<none>`/`<unset>`
placeholders of the API server's printers (pkg/printers/internalversion), kept apart from the
workload printers so the kind table can name them the same way.
"""

from __future__ import annotations

from sregym.twin.machinery.printers import (
    NONE,
    Cells,
    Obj,
    Printer,
    _age,
    _age_col,
    _col,
    _meta,
    _name_col,
    _spec,
    _status,
)


def _component_status_row(obj: Obj, now: float, wide: bool) -> Cells:
    status, message, error = "Unknown", "", ""
    for cond in obj.get("conditions") or []:
        if cond.get("type") == "Healthy":
            status = "Healthy" if cond.get("status") == "True" else "Unhealthy"
            message, error = cond.get("message") or "", cond.get("error") or ""
            break
    return [_meta(obj).get("name", ""), status, message, error]


def _apiservice_row(obj: Obj, now: float, wide: bool) -> Cells:
    service = _spec(obj).get("service")
    shown = f"{service.get('namespace', '')}/{service.get('name', '')}" if service else "Local"
    available = "Unknown"
    for cond in _status(obj).get("conditions") or []:
        if cond.get("type") == "Available":
            available = cond.get("status", "Unknown")
            if available != "True":
                available = f"{available} ({cond.get('reason', '')})"
            break
    return [_meta(obj).get("name", ""), shown, available, _age(obj, now)]


def _flowschema_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = _spec(obj)
    method = (spec.get("distinguisherMethod") or {}).get("type") or NONE
    dangling = "?"
    for cond in _status(obj).get("conditions") or []:
        if cond.get("type") == "Dangling":
            dangling = cond.get("status", "?")
            break
    return [_meta(obj).get("name", ""), (spec.get("priorityLevelConfiguration") or {}).get("name", ""),
            int(spec.get("matchingPrecedence") or 0), method, _age(obj, now), dangling]


def _priority_level_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = _spec(obj)
    shares, queues, hand, length = NONE, NONE, NONE, NONE
    limited = spec.get("limited")
    if spec.get("type") == "Limited" and isinstance(limited, dict):
        shares = str(limited.get("nominalConcurrencyShares", 0))
        queuing = (limited.get("limitResponse") or {}).get("queuing")
        if isinstance(queuing, dict):
            queues, hand, length = (str(queuing.get(k, 0)) for k in ("queues", "handSize",
                                                                     "queueLengthLimit"))
    return [_meta(obj).get("name", ""), spec.get("type", ""), shares, queues, hand, length,
            _age(obj, now)]


def _csinode_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [_meta(obj).get("name", ""), len(_spec(obj).get("drivers") or []), _age(obj, now)]


def _csr_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = _spec(obj)
    seconds = spec.get("expirationSeconds")
    duration = NONE
    if isinstance(seconds, int):
        from sregym.twin.clock import format_age

        duration = format_age(seconds)
    conditions = [c.get("type", "") for c in _status(obj).get("conditions") or []
                  if c.get("type") in ("Approved", "Denied", "Failed")]
    if _status(obj).get("certificate"):
        conditions.append("Issued")
    return [_meta(obj).get("name", ""), _age(obj, now), spec.get("signerName", ""),
            spec.get("username", ""), duration, ",".join(conditions) or "Pending"]


def _runtime_class_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [_meta(obj).get("name", ""), obj.get("handler", ""), _age(obj, now)]


def _vap_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = _spec(obj)
    param = spec.get("paramKind")
    param_kind = f"{param.get('apiVersion', '')}/{param.get('kind', '')}" if param else NONE
    return [_meta(obj).get("name", ""), len(spec.get("validations") or []), param_kind,
            _age(obj, now)]


def _vap_binding_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = _spec(obj)
    ref = spec.get("paramRef")
    param = NONE
    if isinstance(ref, dict):
        param = f"{ref.get('namespace')}/{ref.get('name')}" if ref.get("namespace") else \
            str(ref.get("name") or "*")
    return [_meta(obj).get("name", ""), spec.get("policyName", ""), param, _age(obj, now)]


def _capacity_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [_meta(obj).get("name", ""), obj.get("storageClassName", ""),
            obj.get("capacity") or NONE, _age(obj, now)]


COMPONENT_STATUS = Printer([
    _name_col(), _col("Status", description="Status of the component conditions"),
    _col("Message", description="Message of the component conditions"),
    _col("Error", description="Error of the component conditions"),
], _component_status_row)

API_SERVICE = Printer([
    _name_col(), _col("Service", description="The reference to the service that hosts this API endpoint."),
    _col("Available", description="Whether this service is available."), _age_col(),
], _apiservice_row)

FLOW_SCHEMA = Printer([
    _name_col(),
    _col("PriorityLevel", description="The PriorityLevelConfiguration this FlowSchema refers to."),
    _col("MatchingPrecedence", "string", "The matching precedence of this FlowSchema."),
    _col("DistinguisherMethod", description="How flows are distinguished."), _age_col(),
    _col("MissingPL", description="Whether the referenced PriorityLevelConfiguration is missing."),
], _flowschema_row)

PRIORITY_LEVEL_CONFIGURATION = Printer([
    _name_col(), _col("Type", description="Whether requests are exempt or limited."),
    _col("NominalConcurrencyShares", description="How many seats this level nominally gets."),
    _col("Queues", description="Number of queues."),
    _col("HandSize", description="Number of queues a flow may be shuffled into."),
    _col("QueueLengthLimit", description="Maximum number of requests waiting in one queue."),
    _age_col(),
], _priority_level_row)

CSI_NODE = Printer([
    _name_col(), _col("Drivers", "integer", "Number of CSI drivers registered on the node."),
    _age_col(),
], _csinode_row)

CERTIFICATE_SIGNING_REQUEST = Printer([
    _name_col(), _age_col(), _col("SignerName", description="The signer the request is for."),
    _col("Requestor", description="Who requested the certificate."),
    _col("RequestedDuration", description="The requested validity of the certificate."),
    _col("Condition", description="Approved, Denied, Failed or Pending, and whether issued."),
], _csr_row)

RUNTIME_CLASS = Printer([
    _name_col(), _col("Handler", description="The CRI handler of the runtime class."), _age_col(),
], _runtime_class_row)

VALIDATING_ADMISSION_POLICY = Printer([
    _name_col(), _col("Validations", "integer", "Number of validations."),
    _col("ParamKind", description="The kind of the policy's parameters."), _age_col(),
], _vap_row)

VALIDATING_ADMISSION_POLICY_BINDING = Printer([
    _name_col(), _col("PolicyName", description="The policy this binding refers to."),
    _col("ParamRef", description="The parameter resource of the binding."), _age_col(),
], _vap_binding_row)

CSI_STORAGE_CAPACITY = Printer([
    _name_col(), _col("StorageClassName", description="The storage class of the capacity."),
    _col("Capacity", description="The capacity reported."), _age_col(),
], _capacity_row)

__all__ = ["API_SERVICE", "CERTIFICATE_SIGNING_REQUEST", "COMPONENT_STATUS", "CSI_NODE",
           "CSI_STORAGE_CAPACITY", "FLOW_SCHEMA", "PRIORITY_LEVEL_CONFIGURATION", "RUNTIME_CLASS",
           "VALIDATING_ADMISSION_POLICY", "VALIDATING_ADMISSION_POLICY_BINDING"]
