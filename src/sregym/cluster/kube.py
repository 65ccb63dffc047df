"""`KubeCluster`: the `Cluster` protocol over the Kubernetes API with the official client.

It works against any API server: a real cluster (kind, EKS ...) from a kubeconfig, or the twin's
own API server, which is how the tests prove that fault injectors and checks run unchanged over
the wire. Observability queries go over HTTP to the URLs given (Prometheus HTTP API).

Reachability probes run from a small probe pod in the `sregym-system` namespace (hidden from the
agent credential), exec'ing `nc -z`, as a human operator would test a Service from inside.

Time: a real cluster's clock runs on its own, so `advance()` sleeps; a caller that controls the
clock (the twin served in manual mode) passes `advance_fn`/`now_fn`. A cluster whose clock runs
`speed` times faster than the wall (a twin served with `sregym twin up --speed N`) sleeps
until the cluster's clock (Prometheus' `time()`, which is also `now()`) has moved `seconds`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sregym.cluster.base import ADMIN, EntryStats, ExecResult, ProbeResult
from sregym.errors import ApiError

PROBE_NAMESPACE = "sregym-system"
PROBE_POD = "netprobe"
PROBE_IMAGE = "busybox:1.36"


class KubeCluster:
    """A cluster reached through a kubeconfig context (one credential per context)."""

    def __init__(self, kubeconfig: str, *, context: str | None = None, user: str = ADMIN,
                 prometheus_url: str | None = None, advance_fn: Callable[[float], None] | None = None,
                 now_fn: Callable[[], float] | None = None, contexts: dict[str, str] | None = None,
                 kubeconfigs: dict[str, str] | None = None, speed: float = 1.0) -> None:
        """`contexts`/`kubeconfigs` name, per user, the context (in `kubeconfig`) or the whole
        kubeconfig file `as_user` switches to; `speed` is the cluster clock's rate (see above)."""
        from sregym.extras import require

        require("kubernetes", "a real cluster (KubeCluster)")
        from kubernetes import client, config
        from kubernetes.dynamic import DynamicClient

        self.kubeconfig = kubeconfig
        self.user = user
        self.contexts = dict(contexts or {})
        self.context = context or self.contexts.get(user)
        self.kubeconfigs = dict(kubeconfigs or {})
        self.prometheus_url = prometheus_url
        self.speed = float(speed)
        if self.speed <= 0:
            raise ValueError("speed must be positive")
        self._advance_fn = advance_fn
        self._now_fn = now_fn
        self.api_client = config.new_client_from_config(config_file=kubeconfig, context=self.context)
        self.core = client.CoreV1Api(self.api_client)
        self.dynamic = DynamicClient(self.api_client)
        self._resources: dict[str, Any] = {}

    def as_user(self, user: str) -> KubeCluster:
        if user in self.kubeconfigs:
            other = KubeCluster(self.kubeconfigs[user], user=user, prometheus_url=self.prometheus_url,
                                advance_fn=self._advance_fn, now_fn=self._now_fn, speed=self.speed)
        elif user in self.contexts:
            other = KubeCluster(self.kubeconfig, user=user, prometheus_url=self.prometheus_url,
                                advance_fn=self._advance_fn, now_fn=self._now_fn, contexts=self.contexts,
                                speed=self.speed)
        else:
            raise KeyError(f"no kubeconfig context for user {user!r}")
        return other

    # ---------------------------------------------------------------- helpers
    def _resource(self, kind: str, api_version: str | None = None) -> Any:
        key = f"{api_version or ''}|{kind}"
        res = self._resources.get(key)
        if res is None:
            from sregym.types import canonical_kind

            canonical = canonical_kind(kind)
            if api_version:
                res = self.dynamic.resources.get(api_version=api_version, kind=canonical)
            else:
                found = self.dynamic.resources.search(kind=canonical) or \
                    self.dynamic.resources.search(name=kind.lower())
                found = [r for r in found if "/" not in r.name]
                if not found:
                    raise ApiError(f'the server doesn\'t have a resource type "{kind}"', code=404,
                                   reason="NotFound")
                # Prefer the preferred version of the core/apps groups.
                found.sort(key=lambda r: (r.group not in ("", "apps", "batch"), not r.preferred, r.group))
                res = found[0]
            self._resources[key] = res
        return res

    @staticmethod
    def _error(exc: Exception) -> ApiError:
        import json

        status = getattr(exc, "status", 500) or 500
        body = getattr(exc, "body", None)
        message, reason = str(exc), "InternalError"
        if body:
            try:
                data = json.loads(body)
                message, reason = data.get("message", message), data.get("reason", reason)
            except (ValueError, TypeError):
                pass
        return ApiError(message, code=int(status), reason=reason)

    def _call(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        from kubernetes.client.exceptions import ApiException
        from kubernetes.dynamic.exceptions import DynamicApiError

        try:
            return fn(*args, **kw)
        except (ApiException, DynamicApiError) as exc:
            raise self._error(exc) from None

    # ---------------------------------------------------------------- objects
    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        res = self._resource(kind)
        try:
            obj = self._call(res.get, name=name, namespace=namespace if res.namespaced else None)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        return obj.to_dict()

    def list(self, kind: str, namespace: str | None = None, *,
             label_selector: str | None = None) -> list[dict[str, Any]]:
        res = self._resource(kind)
        kw: dict[str, Any] = {"namespace": namespace if res.namespaced else None}
        if label_selector:
            kw["label_selector"] = label_selector
        out = self._call(res.get, **kw).to_dict()
        items = list(out.get("items") or [])
        for item in items:  # a real API server leaves them out of list items
            item.setdefault("kind", res.kind)
            item.setdefault("apiVersion", res.group_version)
        return items

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        res = self._resource(obj["kind"], obj.get("apiVersion"))
        ns = (obj.get("metadata") or {}).get("namespace") or ("default" if res.namespaced else None)
        return self._call(res.create, body=obj, namespace=ns).to_dict()

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        res = self._resource(obj["kind"], obj.get("apiVersion"))
        meta = obj.get("metadata") or {}
        ns = (meta.get("namespace") or "default") if res.namespaced else None
        current = self.get(obj["kind"], ns, meta["name"])
        if current is None:
            return self.create(obj)
        body = dict(obj)
        body["metadata"] = {**meta, "resourceVersion": current["metadata"]["resourceVersion"]}
        return self._call(res.replace, body=body, namespace=ns).to_dict()

    def server_side_apply(self, obj: dict[str, Any], *, field_manager: str = "sregym") -> dict[str, Any]:
        """`kubectl apply --server-side --force-conflicts`: the server merges `obj` into what
        exists and records `field_manager` as the owner of its fields (how the app is installed)."""
        res = self._resource(obj["kind"], obj.get("apiVersion"))
        meta = obj.get("metadata") or {}
        ns = (meta.get("namespace") or "default") if res.namespaced else None
        return self._call(self.dynamic.server_side_apply, res, body=obj, name=meta["name"], namespace=ns,
                          field_manager=field_manager, force_conflicts=True).to_dict()

    def replace(self, obj: dict[str, Any]) -> dict[str, Any]:
        res = self._resource(obj["kind"], obj.get("apiVersion"))
        ns = (obj.get("metadata") or {}).get("namespace") if res.namespaced else None
        return self._call(res.replace, body=obj, namespace=ns).to_dict()

    def patch(self, kind: str, namespace: str | None, name: str, patch: Any, *,
              patch_type: str = "strategic") -> dict[str, Any]:
        res = self._resource(kind)
        content = {"strategic": "application/strategic-merge-patch+json",
                   "merge": "application/merge-patch+json",
                   "json": "application/json-patch+json"}[patch_type]
        return self._call(res.patch, body=patch, name=name, namespace=namespace if res.namespaced else None,
                          content_type=content).to_dict()

    def delete(self, kind: str, namespace: str | None, name: str, *,
               grace_period: int | None = None) -> None:
        res = self._resource(kind)
        kw: dict[str, Any] = {"name": name, "namespace": namespace if res.namespaced else None}
        if grace_period is not None:
            kw["body"] = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": grace_period}
        self._call(res.delete, **kw)

    # ------------------------------------------------------------- containers
    def exec(self, namespace: str, pod: str, command: list[str], *,
             container: str | None = None) -> ExecResult:
        from kubernetes.stream import stream

        kw: dict[str, Any] = {"command": list(command), "stderr": True, "stdin": False, "stdout": True,
                              "tty": False, "_preload_content": False}
        if container:
            kw["container"] = container
        resp = self._call(stream, self.core.connect_get_namespaced_pod_exec, pod, namespace, **kw)
        out, err = [], []
        while resp.is_open():
            resp.update(timeout=5)
            if resp.peek_stdout():
                out.append(resp.read_stdout())
            if resp.peek_stderr():
                err.append(resp.read_stderr())
        resp.close()
        code = resp.returncode
        return ExecResult("".join(out), "".join(err), int(code if code is not None else 0))

    def logs(self, namespace: str, pod: str, container: str | None = None, *,
             tail: int | None = None) -> str:
        kw: dict[str, Any] = {}
        if container:
            kw["container"] = container
        if tail is not None:
            kw["tail_lines"] = tail
        return str(self._call(self.core.read_namespaced_pod_log, pod, namespace, **kw))

    # ------------------------------------------------------------------ time
    def advance(self, seconds: float) -> None:
        if self._advance_fn is not None:
            self._advance_fn(seconds)
        elif self.speed == 1.0:
            time.sleep(seconds)  # the cluster's clock runs on its own
        else:
            # A sped-up clock may fall behind its nominal rate on a busy machine: wait until the
            # cluster's own clock has moved `seconds`, not for the wall time it should take.
            until = self.now() + seconds
            while (left := until - self.now()) > 0:
                time.sleep(min(max(left / self.speed, 0.01), 1.0))

    def now(self) -> float:
        if self._now_fn is not None:
            return self._now_fn()
        if self.speed == 1.0:
            return time.time()
        return self._server_time()

    def _server_time(self) -> float:
        """Prometheus' `time()`: the cluster's present (the wall clock when nothing answers)."""
        result = self.promql("time()") if self.prometheus_url else []
        if len(result) == 2 and not isinstance(result[1], dict):  # a scalar: [time, "value"]
            return float(result[1])
        return time.time()

    # ------------------------------------------------------------ observation
    def _ensure_probe(self) -> None:
        if self.get("Namespace", None, PROBE_NAMESPACE) is None:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": PROBE_NAMESPACE}})
        if self.get("Pod", PROBE_NAMESPACE, PROBE_POD) is None:
            self.create({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": PROBE_POD, "namespace": PROBE_NAMESPACE},
                         "spec": {"terminationGracePeriodSeconds": 0,
                                  "containers": [{"name": "probe", "image": PROBE_IMAGE,
                                                  "command": ["sleep", "86400"]}]}})
        for _ in range(60):
            pod = self.get("Pod", PROBE_NAMESPACE, PROBE_POD) or {}
            statuses = (pod.get("status") or {}).get("container_statuses") or \
                (pod.get("status") or {}).get("containerStatuses") or []
            if statuses and (statuses[0].get("state") or {}).get("running"):
                return
            self.advance(1)
        raise ApiError("the reachability probe pod did not start", code=500)

    def connect(self, namespace: str, host: str, port: int) -> ProbeResult:
        self._ensure_probe()
        fqdn = host if "." in host else f"{host}.{namespace}.svc.cluster.local"
        result = self.exec(PROBE_NAMESPACE, PROBE_POD, ["nc", "-z", "-w", "3", fqdn, str(port)])
        if result.ok:
            return ProbeResult(ok=True)
        text = (result.stderr or result.stdout).strip()
        lowered = text.lower()
        error = "refused" if "refused" in lowered else "nxdomain" if "bad address" in lowered else "timeout"
        return ProbeResult(ok=False, error=error, message=text)

    def entry_stats(self, window_s: float) -> EntryStats | None:
        return None  # needs the app's span metrics in Prometheus; None = not measurable here

    def promql(self, query: str) -> list[dict[str, Any]]:
        if not self.prometheus_url:
            return []
        import httpx

        response = httpx.get(f"{self.prometheus_url.rstrip('/')}/api/v1/query", params={"query": query},
                             timeout=30)
        data = response.json().get("data") or {}
        result = data.get("result")
        return list(result) if isinstance(result, list) else []
