"""The `pods/eviction` subresource: a pod deletion that honours PodDisruptionBudgets.

`kubectl drain` cordons the node, then POSTs a `policy/v1 Eviction` for every pod on it and retries
every 5 s while the answer is 429. The decision is the real registry's (`EvictionREST.Create`):

1. a pod that is Pending, finished, or already terminating is deleted without consulting budgets;
2. the budgets of the pod's namespace whose (non-empty) selector matches it are found; more than
   one is a configuration error (500), none means plain deletion;
3. with one budget: an unready pod is deleted without spending the budget when the budget is
   currently met (or its `unhealthyPodEvictionPolicy` is AlwaysAllow); otherwise the budget must
   be up to date (`observedGeneration`, else 429 "still being processed", retry after 10 s) and
   have `disruptionsAllowed > 0` (else 429 "Cannot evict pod as it would violate the pod's
   disruption budget."). An approved eviction decrements `disruptionsAllowed` and records the pod
   in `status.disruptedPods`, which the disruption controller reconciles;
4. the pod gets the `DisruptionTarget` condition (reason EvictionByEvictionAPI) and is deleted
   with the eviction's DeleteOptions (graceful termination by the kubelet follows).

Success is the `Status` the real server returns for a created eviction (201).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from sregym.errors import ApiError, BadRequest, Conflict, Forbidden, MethodNotAllowed, not_found
from sregym.twin.api.kube.encoding import decode_body, encode_json, error_response
from sregym.twin.api.kube.handlers import RequestContext, subresource
from sregym.twin.api.kube.limits import read_request_body
from sregym.twin.controllers.disruption import set_disruption_allowed_condition
from sregym.twin.machinery.objects import clone
from sregym.twin.machinery.selectors import selector_from_spec
from sregym.twin.workloads.shared import is_ready

APISERVER_USER = "system:apiserver"
MAX_DISRUPTED_POD_SIZE = 2000
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_PDBS = ("This pod has more than one PodDisruptionBudget, which the eviction subresource "
                 "does not support.")
_EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")


class TooManyRequests(ApiError):
    code = 429
    reason = "TooManyRequests"


def _too_many(message: str, cause: str, retry_after: int = 0) -> TooManyRequests:
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return TooManyRequests(message, details=details)


def _status(code: int, *, failure: str | None = None) -> Response:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                            "status": "Failure" if failure else "Success"}
    if failure:
        body["message"] = failure
    body["code"] = code
    return Response(encode_json(body), status_code=code, media_type="application/json")


def _error(err: ApiError) -> Response:
    retry = (err.details or {}).get("retryAfterSeconds")
    return error_response(err, headers={"Retry-After": str(retry)} if retry else None)


def _read_eviction(body: Any, namespace: str, name: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("the body of an eviction must be a policy/v1 Eviction object")
    api_version = body.get("apiVersion", "policy/v1")
    kind = body.get("kind", "Eviction")
    if api_version not in _EVICTION_VERSIONS:
        raise BadRequest(f"the API version in the data ({api_version}) does not match the expected "
                         "API version (policy/v1)")
    if kind != "Eviction":
        raise BadRequest(f"the kind in the data ({kind}) does not match the expected kind (Eviction)")
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    body_ns = meta.get("namespace")
    if body_ns and body_ns != namespace:
        raise BadRequest("the namespace of the provided object does not match the namespace sent on "
                         "the request")
    if meta.get("name") != name:
        raise BadRequest("name in URL does not match name in Eviction object")
    options = body.get("deleteOptions")
    if options is not None and not isinstance(options, dict):
        raise BadRequest("json: cannot unmarshal into Go struct field Eviction.deleteOptions of type "
                         "v1.DeleteOptions")
    return dict(options or {})


def _dry_run(options: dict[str, Any], query_values: list[str]) -> bool:
    """`propagateDryRun`: the request's dryRun and the DeleteOptions' must agree."""
    body_values = [str(v) for v in options.get("dryRun") or []]
    for value in (*query_values, *body_values):
        if value != "All":
            raise BadRequest(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    if query_values and body_values and query_values != body_values:
        raise BadRequest(f"Non-matching dry-run options in request and content: "
                         f"[{' '.join(query_values)}] and [{' '.join(body_values)}]")
    return bool(query_values or body_values)


def _can_ignore_budget(pod: dict[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


def _budgets_for(ctx: RequestContext, pod: dict[str, Any]) -> list[dict[str, Any]]:
    """Budgets of the pod's namespace that select it; a nil or empty selector selects nothing."""
    labels = pod["metadata"].get("labels") or {}
    out = []
    for pdb in ctx.twin.store.scan("PodDisruptionBudget", pod["metadata"].get("namespace")):
        selector = selector_from_spec((pdb.get("spec") or {}).get("selector"))
        if selector.empty or not selector.matches(labels):
            continue
        out.append(pdb)
    return out


def _check_and_decrement(ctx: RequestContext, pdb: dict[str, Any], pod_name: str, dry_run: bool) -> None:
    status = pdb.get("status") or {}
    name = pdb["metadata"]["name"]
    if int(status.get("observedGeneration") or 0) < int(pdb["metadata"].get("generation") or 1):
        raise _too_many(VIOLATION, f"The disruption budget {name} is still being processed by the "
                                   "server.", retry_after=10)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise Forbidden(f'poddisruptionbudget.policy "{name}" is forbidden: pdb disruptions allowed '
                        "is negative", details={"name": name, "group": "policy",
                                                "kind": "poddisruptionbudget"})
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
        raise Forbidden(f'poddisruptionbudget.policy "{name}" is forbidden: DisruptedPods map too big - '
                        "too many evictions not confirmed by PDB controller",
                        details={"name": name, "group": "policy", "kind": "poddisruptionbudget"})
    if allowed == 0:
        raise _too_many(VIOLATION, f"The disruption budget {name} needs "
                                   f"{int(status.get('desiredHealthy') or 0)} healthy pods and has "
                                   f"{int(status.get('currentHealthy') or 0)} currently")
    if dry_run:
        return
    now = ctx.twin.clock.iso()

    def spend(obj: dict[str, Any]) -> None:
        new_status = obj.setdefault("status", {})
        new_status["disruptionsAllowed"] = int(new_status.get("disruptionsAllowed") or 0) - 1
        if new_status["disruptionsAllowed"] == 0:
            set_disruption_allowed_condition(new_status, now)
        pods = dict(new_status.get("disruptedPods") or {})
        pods[pod_name] = now
        new_status["disruptedPods"] = pods

    ctx.twin.store.mutate("PodDisruptionBudget", pdb["metadata"].get("namespace"), name, spend,
                          status=True, user=APISERVER_USER)


def _check_preconditions(pod: dict[str, Any], preconditions: dict[str, Any]) -> None:
    meta = pod["metadata"]
    uid = preconditions.get("uid")
    if uid and uid != meta.get("uid"):
        raise Conflict(f'Operation cannot be fulfilled on Pod "{meta["name"]}": the UID in the '
                       f"precondition ({uid}) does not match the UID in record ({meta.get('uid')}). "
                       "The object might have been deleted and then recreated",
                       details={"name": meta["name"], "kind": "Pod"})
    rv = preconditions.get("resourceVersion")
    if rv and rv != meta.get("resourceVersion"):
        raise Conflict(f'Operation cannot be fulfilled on Pod "{meta["name"]}": the ResourceVersion in '
                       f"the precondition ({rv}) does not match the ResourceVersion in record "
                       f"({meta.get('resourceVersion')}). The object might have been modified",
                       details={"name": meta["name"], "kind": "Pod"})


def _add_condition_and_delete(ctx: RequestContext, pod: dict[str, Any], options: dict[str, Any],
                              dry_run: bool) -> None:
    store = ctx.twin.store
    meta = pod["metadata"]
    namespace, name = meta.get("namespace"), meta["name"]
    preconditions = options.get("preconditions") if isinstance(options.get("preconditions"), dict) \
        else {}
    if not dry_run:
        _check_preconditions(pod, preconditions)
        now = ctx.twin.clock.iso()

        def mark(obj: dict[str, Any]) -> None:
            conditions = obj.setdefault("status", {}).setdefault("conditions", [])
            wanted = {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                      "lastTransitionTime": now, "reason": "EvictionByEvictionAPI",
                      "message": "Eviction API: evicting"}
            for i, cond in enumerate(conditions):
                if cond.get("type") == "DisruptionTarget":
                    if cond.get("status") == "True":
                        wanted["lastTransitionTime"] = cond.get("lastTransitionTime", now)
                    conditions[i] = wanted
                    return
            conditions.append(wanted)

        store.mutate("Pod", namespace, name, mark, status=True, user=APISERVER_USER)
        preconditions = {k: v for k, v in preconditions.items() if k == "uid"}
    grace = options.get("gracePeriodSeconds")
    if grace is not None and not isinstance(grace, int):
        raise BadRequest("gracePeriodSeconds must be an integer")
    store.delete("Pod", namespace, name, grace_period=max(0, grace) if grace is not None else None,
                 propagation=options.get("propagationPolicy"), dry_run=dry_run, user=ctx.user,
                 preconditions=preconditions or None)


def evict(ctx: RequestContext, namespace: str, name: str, body: Any,
          query_dry_run: list[str]) -> Response:
    """Decide one eviction (synchronously, between ticks) and answer as the API server does."""
    options = _read_eviction(body, namespace, name)
    dry_run = _dry_run(options, query_dry_run)
    stored = ctx.twin.store.peek("Pod", namespace, name)
    if stored is None:
        raise not_found("pods", name)
    pod = clone(stored)
    if not _can_ignore_budget(pod):
        budgets = _budgets_for(ctx, pod)
        if len(budgets) > 1:
            return _status(500, failure=MULTIPLE_PDBS)
        if budgets:
            pdb = budgets[0]
            status = pdb.get("status") or {}
            policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy")
            unready_ok = not is_ready(pod) and (
                policy == "AlwaysAllow"
                or (int(status.get("currentHealthy") or 0) >= int(status.get("desiredHealthy") or 0)
                    and int(status.get("desiredHealthy") or 0) > 0))
            if not unready_ok:
                _check_and_decrement(ctx, pdb, name, dry_run)
    _add_condition_and_delete(ctx, pod, options, dry_run)
    return _status(201)


@subresource("pods", "eviction")
async def pod_eviction(request: Request, ctx: RequestContext, namespace: str | None,
                       name: str) -> Response:
    try:
        if request.method != "POST":
            raise MethodNotAllowed("the server does not allow this method on the requested resource",
                                   details={"group": "policy", "kind": "Eviction"})
        raw = await read_request_body(request)
        body = decode_body(raw, request.headers.get("content-type"))
        return evict(ctx, namespace or "default", name, body,
                     list(request.query_params.getlist("dryRun")))
    except ApiError as err:
        return _error(err)


__all__ = ["MULTIPLE_PDBS", "VIOLATION", "evict", "pod_eviction"]
