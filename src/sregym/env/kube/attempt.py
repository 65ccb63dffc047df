"""One attempt's life on a cluster reached by kubeconfig: prerequisites, install, the agent's
credential, cleanup.

The conductor calls these in order: `check_prerequisites` (clear errors before anything is
created), `install` (the app from the same manifests the twin uses, by server-side apply, then
waits for readiness and reports progress), `grant` (ServiceAccount + RBAC + token → a
`KubeAgentAccess`), and `cleanup` (always: the faults' recovery, then everything the ledger
recorded). Faults, noise and oracles use `cluster` like any `Cluster`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sregym.env.kube.ledger import cleanup
from sregym.env.kube.target import ClusterNotReady, KubeTarget
from sregym.errors import ApiError
from sregym.problems.model import Problem

log = logging.getLogger("sregym.kube")
POLL_S = 5.0
FIELD_MANAGER = "kubectl"
CHAOS_GROUP = "chaos-mesh.org"
OBSERVABILITY_PROBES = {"prometheus": "/api/v1/query?query=time()", "loki": "/loki/api/v1/labels",
                        "jaeger": "/api/services"}
# What the admin credential must be allowed (verb, group, resource, namespace or None).
REQUIRED_ACCESS = (("create", "", "namespaces", None), ("create", "rbac.authorization.k8s.io", "clusterroles", None),
                   ("create", "rbac.authorization.k8s.io", "clusterrolebindings", None),
                   ("create", "rbac.authorization.k8s.io", "rolebindings", "kube-system"),
                   ("create", "", "serviceaccounts", "kube-system"))


def _to_stderr(line: str) -> None:
    """Install progress goes to stderr: attempts run in worker processes that share it."""
    import sys

    print(f"[kube] {line}", file=sys.stderr, flush=True)


class KubeAttempt:
    """The cluster side of one attempt (`key` names its ledger file)."""

    def __init__(self, target: KubeTarget, problem: Problem, key: str,
                 progress: Callable[[str], None] | None = None) -> None:
        self.target = target
        self.problem = problem
        self.ledger = target.ledger_path(key)
        self.progress = progress or _to_stderr
        try:  # the client asks the API server for its version and kinds at once
            self.cluster: Any = target.admin_cluster(self.ledger)
        except Exception as exc:
            raise ClusterNotReady(f"cannot reach the Kubernetes API of {target.kubeconfig}: "
                                  f"{type(exc).__name__}: {exc}") from None

    # ------------------------------------------------------------ prerequisites
    def check_prerequisites(self, *, noise: str) -> None:
        """Raise `ClusterNotReady` saying exactly what is missing."""
        from sregym.apps import get_app
        from sregym.problems.portability import needs_chaos_mesh, twin_only_reason

        reason = twin_only_reason(self.problem)
        if reason:
            raise ClusterNotReady(f"skipped: {self.problem.id} needs the twin ({reason})")
        try:
            self.cluster.list("Namespace")
        except Exception as exc:
            raise ClusterNotReady(f"cannot reach the Kubernetes API of {self.target.kubeconfig}: {exc}") from None
        for verb, group, resource, namespace in REQUIRED_ACCESS:
            if not self._may(verb, group, resource, namespace):
                where = f" in namespace {namespace}" if namespace else ""
                raise ClusterNotReady(f"the kubeconfig's credential may not {verb} {resource}"
                                      f"{'.' + group if group else ''}{where}; use a cluster-admin context")
        app = get_app(self.problem.app)
        self.wait_gone([app.namespace], only_terminating=True)  # the previous attempt's, going away
        if self.cluster.get("Namespace", None, app.namespace) is not None:
            raise ClusterNotReady(f"namespace {app.namespace} already exists; remove it first (an attempt "
                                  "installs the app fresh and deletes the namespace afterwards)")
        self._check_urls()
        if (needs_chaos_mesh(self.problem) or noise != "none") and not self._has_chaos_mesh():
            raise ClusterNotReady(f"Chaos Mesh's CRDs ({CHAOS_GROUP}) are not installed; "
                                  f"{'this problem' if needs_chaos_mesh(self.problem) else 'noise'} needs them "
                                  "(see docs/real-cluster.md)")

    def _may(self, verb: str, group: str, resource: str, namespace: str | None) -> bool:
        attrs: dict[str, Any] = {"verb": verb, "group": group, "resource": resource}
        if namespace:
            attrs["namespace"] = namespace
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                  "spec": {"resourceAttributes": attrs}}
        try:
            answer = self.cluster.create(review)
        except ApiError:
            return True  # the server cannot answer the question: the writes themselves will tell
        return bool((answer.get("status") or {}).get("allowed"))

    def _check_urls(self) -> None:
        import httpx

        for name, url in self.target.urls.items():
            try:
                response = httpx.get(url + OBSERVABILITY_PROBES[name], timeout=10)
            except httpx.HTTPError as exc:
                raise ClusterNotReady(f"--{name}-url {url} does not answer: {exc}") from None
            if response.status_code >= 400:
                raise ClusterNotReady(f"--{name}-url {url} answers {response.status_code} to "
                                      f"{OBSERVABILITY_PROBES[name]}; is it the {name} HTTP API?")

    def _has_chaos_mesh(self) -> bool:
        try:
            return bool(self.cluster.dynamic.resources.search(group=CHAOS_GROUP))
        except Exception:
            return False

    # ------------------------------------------------------------------ install
    def install(self, run: Any) -> None:
        """Server-side apply the app's manifests, then wait until every workload is ready."""
        from sregym.oracles.checks import workload_status

        app = run.app
        objects = app.objects()
        self.progress(f"installing {app.name}: {len(objects)} objects into namespace {app.namespace}")
        for obj in objects:
            # `kubectl apply --server-side`'s own manager name: the agent reads managedFields, and
            # a manager named after the benchmark would tell it where it is.
            self.cluster.server_side_apply(obj, field_manager=FIELD_MANAGER)
        waited, last = 0.0, ""
        while waited < self.target.ready_timeout_s:
            self.cluster.advance(POLL_S)
            waited += POLL_S
            items = [o for kind in ("Deployment", "StatefulSet") for o in self.cluster.list(kind, app.namespace)]
            pending = sorted(o["metadata"]["name"] for o in items if not workload_status(o)[0])
            line = f"{app.name}: {len(items) - len(pending)}/{len(items)} workloads ready"
            if pending:
                line += f" (waiting for {', '.join(pending[:6])}{' ...' if len(pending) > 6 else ''})"
            if line != last:
                self.progress(line)
                last = line
            if items and not pending:
                return
        raise ClusterNotReady(f"{app.name} did not become ready within {self.target.ready_timeout_s:.0f}s "
                              f"of cluster time: {last}")

    # -------------------------------------------------------------- credential
    def grant(self) -> Any:
        """The agent's ServiceAccount, RBAC and token, as a `KubeAgentAccess`."""
        from sregym.env.kube.access import KubeAgentAccess
        from sregym.env.kube.credential import grant_agent, request_token, write_agent_kubeconfig
        from sregym.twin.topology import HIDDEN_NAMESPACES

        grant_agent(self.cluster, HIDDEN_NAMESPACES)
        token = request_token(self.cluster)

        def writer(path: Any, tok: str, namespace: str) -> Any:
            written = write_agent_kubeconfig(self.cluster, tok, path, namespace)
            self.cluster.kubeconfigs["agent"] = str(written)  # `as_user("agent")`: the gold solution
            return written

        return KubeAgentAccess(kubeconfig_writer=writer, token=token, urls=self.target.urls,
                               namespace=self.problem.namespace)

    def wait_gone(self, namespaces: list[str], *, only_terminating: bool = False) -> None:
        """Wait (cluster time, up to `ready_timeout_s`) until `namespaces` are deleted, so the next
        attempt can install into a fresh one. `only_terminating`: skip the ones not being deleted."""
        waited = 0.0
        while True:
            left = []
            for name in namespaces:
                obj = self.cluster.get("Namespace", None, name)
                if obj is not None and (not only_terminating or obj["metadata"].get("deletionTimestamp")
                                        or obj["metadata"].get("deletion_timestamp")):
                    left.append(name)
            if not left:
                return
            if waited >= self.target.ready_timeout_s:
                raise ClusterNotReady(f"namespace(s) {', '.join(left)} still terminating after "
                                      f"{waited:.0f}s of cluster time")
            if waited == 0.0:
                self.progress(f"waiting for namespace(s) {', '.join(left)} to be deleted")
            self.cluster.advance(POLL_S)
            waited += POLL_S

    # ----------------------------------------------------------------- cleanup
    def cleanup(self, run: Any = None) -> list[str]:
        """Recover the faults (restores what they changed), then delete everything created."""
        failed: list[str] = []
        if run is not None:
            try:
                run.recover()
            except Exception as exc:
                failed.append(f"recover: {exc}")
        created = list(self.cluster.created)
        failed += cleanup(self.cluster, created)
        try:
            self.wait_gone([name for kind, _, name in created if kind == "Namespace"])
        except ClusterNotReady as exc:
            failed.append(str(exc))
        if not failed and self.ledger is not None:
            self.ledger.unlink(missing_ok=True)
        for line in failed:
            log.warning("cleanup: %s", line)
        return failed


__all__ = ["KubeAttempt"]
