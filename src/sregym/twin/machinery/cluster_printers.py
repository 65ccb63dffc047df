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
    age_col,
    age_of,
    col_def,
    meta_of,
    name_col,
    spec_of,
    status_of,
)


def _component_status_row(obj: Obj, now: float, wide: bool) -> Cells:
    status, message, error = "Unknown", "", ""
    for cond in obj.get("conditions") or []:
        if cond.get("type") == "Healthy":
            status = "Healthy" if cond.get("status") == "True" else "Unhealthy"
            message, error = cond.get("message") or "", cond.get("error") or ""
            break
    return [meta_of(obj).get("name", ""), status, message, error]


def _apiservice_row(obj: Obj, now: float, wide: bool) -> Cells:
    service = spec_of(obj).get("service")
    shown = f"{service.get('namespace', '')}/{service.get('name', '')}" if service else "Local"
    available = "Unknown"
    for cond in status_of(obj).get("conditions") or []:
        if cond.get("type") == "Available":
            available = cond.get("status", "Unknown")
            if available != "True":
                available = f"{available} ({cond.get('reason', '')})"
            break
    return [meta_of(obj).get("name", ""), shown, available, age_of(obj, now)]


def _flowschema_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = spec_of(obj)
    method = (spec.get("distinguisherMethod") or {}).get("type") or NONE
    dangling = "?"
    for cond in status_of(obj).get("conditions") or []:
        if cond.get("type") == "Dangling":
            dangling = cond.get("status", "?")
            break
    return [meta_of(obj).get("name", ""), (spec.get("priorityLevelConfiguration") or {}).get("name", ""),
            int(spec.get("matchingPrecedence") or 0), method, age_of(obj, now), dangling]


def _priority_level_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = spec_of(obj)
    shares, queues, hand, length = NONE, NONE, NONE, NONE
    limited = spec.get("limited")
    if spec.get("type") == "Limited" and isinstance(limited, dict):
        shares = str(limited.get("nominalConcurrencyShares", 0))
        queuing = (limited.get("limitResponse") or {}).get("queuing")
        if isinstance(queuing, dict):
            queues, hand, length = (str(queuing.get(k, 0)) for k in ("queues", "handSize",
                                                                     "queueLengthLimit"))
    return [meta_of(obj).get("name", ""), spec.get("type", ""), shares, queues, hand, length,
            age_of(obj, now)]


def _csinode_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [meta_of(obj).get("name", ""), len(spec_of(obj).get("drivers") or []), age_of(obj, now)]


def _csr_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = spec_of(obj)
    seconds = spec.get("expirationSeconds")
    duration = NONE
    if isinstance(seconds, int):
        from sregym.twin.clock import format_age

        duration = format_age(seconds)
    conditions = [c.get("type", "") for c in status_of(obj).get("conditions") or []
                  if c.get("type") in ("Approved", "Denied", "Failed")]
    if status_of(obj).get("certificate"):
        conditions.append("Issued")
    return [meta_of(obj).get("name", ""), age_of(obj, now), spec.get("signerName", ""),
            spec.get("username", ""), duration, ",".join(conditions) or "Pending"]


def _runtime_class_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [meta_of(obj).get("name", ""), obj.get("handler", ""), age_of(obj, now)]


def _vap_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = spec_of(obj)
    param = spec.get("paramKind")
    param_kind = f"{param.get('apiVersion', '')}/{param.get('kind', '')}" if param else NONE
    return [meta_of(obj).get("name", ""), len(spec.get("validations") or []), param_kind,
            age_of(obj, now)]


def _vap_binding_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = spec_of(obj)
    ref = spec.get("paramRef")
    param = NONE
    if isinstance(ref, dict):
        param = f"{ref.get('namespace')}/{ref.get('name')}" if ref.get("namespace") else \
            str(ref.get("name") or "*")
    return [meta_of(obj).get("name", ""), spec.get("policyName", ""), param, age_of(obj, now)]


def _capacity_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [meta_of(obj).get("name", ""), obj.get("storageClassName", ""),
            obj.get("capacity") or NONE, age_of(obj, now)]


COMPONENT_STATUS = Printer([
    name_col(), col_def("Status", description="Status of the component conditions"),
    col_def("Message", description="Message of the component conditions"),
    col_def("Error", description="Error of the component conditions"),
], _component_status_row)

API_SERVICE = Printer([
    name_col(), col_def("Service", description="The reference to the service that hosts this API endpoint."),
    col_def("Available", description="Whether this service is available."), age_col(),
], _apiservice_row)

FLOW_SCHEMA = Printer([
    name_col(),
    col_def("PriorityLevel", description="The PriorityLevelConfiguration this FlowSchema refers to."),
    col_def("MatchingPrecedence", "string", "The matching precedence of this FlowSchema."),
    col_def("DistinguisherMethod", description="How flows are distinguished."), age_col(),
    col_def("MissingPL", description="Whether the referenced PriorityLevelConfiguration is missing."),
], _flowschema_row)

PRIORITY_LEVEL_CONFIGURATION = Printer([
    name_col(), col_def("Type", description="Whether requests are exempt or limited."),
    col_def("NominalConcurrencyShares", description="How many seats this level nominally gets."),
    col_def("Queues", description="Number of queues."),
    col_def("HandSize", description="Number of queues a flow may be shuffled into."),
    col_def("QueueLengthLimit", description="Maximum number of requests waiting in one queue."),
    age_col(),
], _priority_level_row)

CSI_NODE = Printer([
    name_col(), col_def("Drivers", "integer", "Number of CSI drivers registered on the node."),
    age_col(),
], _csinode_row)

CERTIFICATE_SIGNING_REQUEST = Printer([
    name_col(), age_col(), col_def("SignerName", description="The signer the request is for."),
    col_def("Requestor", description="Who requested the certificate."),
    col_def("RequestedDuration", description="The requested validity of the certificate."),
    col_def("Condition", description="Approved, Denied, Failed or Pending, and whether issued."),
], _csr_row)

RUNTIME_CLASS = Printer([
    name_col(), col_def("Handler", description="The CRI handler of the runtime class."), age_col(),
], _runtime_class_row)

VALIDATING_ADMISSION_POLICY = Printer([
    name_col(), col_def("Validations", "integer", "Number of validations."),
    col_def("ParamKind", description="The kind of the policy's parameters."), age_col(),
], _vap_row)

VALIDATING_ADMISSION_POLICY_BINDING = Printer([
    name_col(), col_def("PolicyName", description="The policy this binding refers to."),
    col_def("ParamRef", description="The parameter resource of the binding."), age_col(),
], _vap_binding_row)

CSI_STORAGE_CAPACITY = Printer([
    name_col(), col_def("StorageClassName", description="The storage class of the capacity."),
    col_def("Capacity", description="The capacity reported."), age_col(),
], _capacity_row)

__all__ = ["API_SERVICE", "CERTIFICATE_SIGNING_REQUEST", "COMPONENT_STATUS", "CSI_NODE",
           "CSI_STORAGE_CAPACITY", "FLOW_SCHEMA", "PRIORITY_LEVEL_CONFIGURATION", "RUNTIME_CLASS",
           "VALIDATING_ADMISSION_POLICY", "VALIDATING_ADMISSION_POLICY_BINDING"]
