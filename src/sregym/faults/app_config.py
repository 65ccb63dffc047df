"""Faults in the application, its configuration and its databases.

Everything here is what a person with an admin kubeconfig could do: run the database's own shell
inside its pod (`kubectl exec ... mongo --eval`), edit a key inside a `config.json` ConfigMap,
delete an object, flip a value in a ConfigMap, append an env entry to a pod template, rotate a
password in the database and its Secret. Pods are deleted where a real change would only take
effect after a restart (the programs read their settings at start), never to script a symptom.

The faulty builds `set_image` can point a workload at live in `faults/builds.py`.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import TYPE_CHECKING, Any

from sregym.faults.base import Fault, FaultParams, fault
from sregym.faults.objects import required, restore_field, template_spec_path

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

# ------------------------------------------------------------------------------ helpers
def running_pod(cluster: Cluster, namespace: str, deployment: str) -> str:
    """A running pod of a Deployment (first by name), as `kubectl exec deploy/<name>` picks."""
    obj = required(cluster, "Deployment", namespace, deployment)
    labels = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    pods = sorted(cluster.list("Pod", namespace, label_selector=selector), key=lambda p: p["metadata"]["name"])
    for pod in pods:
        if (pod.get("status") or {}).get("phase") == "Running" and not pod["metadata"].get("deletionTimestamp"):
            return str(pod["metadata"]["name"])
    raise LookupError(f"cannot inject: Deployment {deployment} has no running pod")


def mongo_eval(cluster: Cluster, namespace: str, deployment: str, script: str, *, user: str, password: str,
               auth_db: str = "admin") -> str:
    """Run `mongo --eval` inside the database pod as an administrative user; raise on failure."""
    pod = running_pod(cluster, namespace, deployment)
    result = cluster.exec(namespace, pod, ["mongo", "admin", "--quiet", "-u", user, "-p", password,
                                           "--authenticationDatabase", auth_db, "--eval", script])
    if result.exit_code != 0:
        raise RuntimeError(f"mongo --eval in {pod} failed ({result.exit_code}): {result.stderr or result.stdout}")
    return result.stdout


def restart_pods(cluster: Cluster, namespace: str, label_selector: str | None) -> list[str]:
    """Delete the pods (their controller recreates them) so a start-time setting is re-read."""
    if not label_selector:
        return []
    names = sorted(p["metadata"]["name"] for p in cluster.list("Pod", namespace, label_selector=label_selector))
    for name in names:
        cluster.delete("Pod", namespace, name)
    return names


def _js(value: Any) -> str:
    return json.dumps(value)


# ------------------------------------------------------------------- MongoDB: roles
class MongoRoleParams(FaultParams):
    namespace: str
    deployment: str  # the MongoDB Deployment ("mongodb-geo")
    user: str = "admin"  # the application's user
    user_db: str = "admin"
    role: str = "readWrite"
    db: str  # the database the role is on ("geo-db")
    admin_user: str = "root"  # who runs the command
    admin_password: str = "root"


@fault
class MongoRevokeRole(Fault):
    """Revoke a role from the application's MongoDB user with the database shell: the service
    still authenticates but every query fails `not authorized on <db> to execute command`."""

    name = "mongo_revoke_role"
    Params = MongoRoleParams

    def _script(self, verb: str) -> str:
        p = self.params
        assert isinstance(p, MongoRoleParams)
        return (f"db.getSiblingDB({_js(p.user_db)}).{verb}({_js(p.user)}, "
                f"[{{role: {_js(p.role)}, db: {_js(p.db)}}}])")

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, MongoRoleParams)
        mongo_eval(cluster, p.namespace, p.deployment, self._script("revokeRolesFromUser"),
                   user=p.admin_user, password=p.admin_password)
        return {}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, MongoRoleParams)
        mongo_eval(cluster, p.namespace, p.deployment, self._script("grantRolesToUser"),
                   user=p.admin_user, password=p.admin_password)


# ------------------------------------------------------------------- MongoDB: users
class MongoUserParams(FaultParams):
    namespace: str
    deployment: str
    user: str = "admin"
    user_db: str = "admin"
    password: str = "admin"  # to recreate the user exactly on recover
    roles: tuple[tuple[str, str], ...]  # (role, db) pairs the user had
    admin_user: str = "root"
    admin_password: str = "root"


@fault
class MongoDropUser(Fault):
    """Drop the application's MongoDB user: the service's logins fail with `UserNotFound` /
    `AuthenticationFailed` and every request that needs the database errors."""

    name = "mongo_drop_user"
    Params = MongoUserParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, MongoUserParams)
        mongo_eval(cluster, p.namespace, p.deployment, f"db.getSiblingDB({_js(p.user_db)}).dropUser({_js(p.user)})",
                   user=p.admin_user, password=p.admin_password)
        return {}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, MongoUserParams)
        roles = ", ".join(f"{{role: {_js(r)}, db: {_js(d)}}}" for r, d in p.roles)
        mongo_eval(cluster, p.namespace, p.deployment,
                   f"db.getSiblingDB({_js(p.user_db)}).createUser({{user: {_js(p.user)}, pwd: {_js(p.password)}, "
                   f"roles: [{roles}]}})", user=p.admin_user, password=p.admin_password)


# ------------------------------------------------------- MongoDB: password rotation
class RotatePasswordParams(FaultParams):
    namespace: str
    deployment: str  # the MongoDB Deployment
    secret: str  # the Secret the service maps its credentials from
    password_key: str = "password"
    user: str = "admin"
    user_db: str = "admin"
    old_password: str = "admin"
    new_password: str
    admin_user: str = "root"
    admin_password: str = "root"


@fault
class MongoRotatePassword(Fault):
    """Rotate the application user's password in MongoDB and in its Secret, and leave the
    running pods alone: they keep the old password in their environment (env from a Secret is
    read at container start) until they are restarted."""

    name = "mongo_rotate_password"
    Params = RotatePasswordParams

    def _set(self, cluster: Cluster, password: str) -> None:
        p = self.params
        assert isinstance(p, RotatePasswordParams)
        mongo_eval(cluster, p.namespace, p.deployment,
                   f"db.getSiblingDB({_js(p.user_db)}).changeUserPassword({_js(p.user)}, {_js(password)})",
                   user=p.admin_user, password=p.admin_password)

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, RotatePasswordParams)
        secret = required(cluster, "Secret", p.namespace, p.secret)
        self._set(cluster, p.new_password)
        encoded = base64.b64encode(p.new_password.encode()).decode()
        patch: dict[str, Any] = {"data": {p.password_key: encoded}}
        if p.password_key in (secret.get("stringData") or {}):
            # A stored stringData would override data: write the new value there too.
            patch["stringData"] = {p.password_key: p.new_password}
        cluster.patch("Secret", p.namespace, p.secret, patch, patch_type="merge")
        return {"data": secret.get("data"), "stringData": secret.get("stringData")}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, RotatePasswordParams)
        self._set(cluster, p.old_password)
        current = cluster.get("Secret", p.namespace, p.secret)
        if current is None:
            return
        restored = copy.deepcopy(current)
        for key in ("data", "stringData"):
            if state.get(key) is None:
                restored.pop(key, None)
            else:
                restored[key] = copy.deepcopy(state[key])
        cluster.replace(restored)


# -------------------------------------------------------------- config.json key dropped
class ConfigJsonKeyParams(FaultParams):
    namespace: str
    configmap: str
    data_key: str = "config.json"
    json_key: str
    restart_selector: str | None = None  # pods to restart so the change is read


@fault
class DropConfigJsonKey(Fault):
    """Remove one key from the JSON document inside a ConfigMap (a config refactor that dropped
    a setting a consumer still needs), then restart the consumer so it reads the file again."""

    name = "drop_config_json_key"
    Params = ConfigJsonKeyParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ConfigJsonKeyParams)
        obj = required(cluster, "ConfigMap", p.namespace, p.configmap)
        text = (obj.get("data") or {}).get(p.data_key)
        if text is None:
            raise LookupError(f"cannot inject: ConfigMap {p.configmap} has no key {p.data_key!r}")
        doc = json.loads(text)
        if p.json_key not in doc:
            raise LookupError(f"cannot inject: {p.data_key} in {p.configmap} has no key {p.json_key!r}")
        del doc[p.json_key]
        cluster.patch("ConfigMap", p.namespace, p.configmap,
                      {"data": {p.data_key: json.dumps(doc, indent=2) + "\n"}}, patch_type="merge")
        restart_pods(cluster, p.namespace, p.restart_selector)
        return {"data": obj.get("data")}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, ConfigJsonKeyParams)
        restore_field(cluster, "ConfigMap", p.namespace, p.configmap, "data", state["data"])
        restart_pods(cluster, p.namespace, p.restart_selector)


# --------------------------------------------------------------------- object deleted
class DeleteObjectParams(FaultParams):
    kind: str
    namespace: str | None = None
    name: str
    restart_selector: str | None = None  # pods to restart so the loss bites (e.g. a volume source)
    restart_namespace: str | None = None


_SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields",
                  "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")


@fault
class DeleteObject(Fault):
    """Delete an object others still reference (a ConfigMap mounted as a volume, a Secret):
    running pods keep what they mounted; pods started afterwards cannot start."""

    name = "delete_object"
    Params = DeleteObjectParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, DeleteObjectParams)
        obj = required(cluster, p.kind, p.namespace, p.name)
        saved = copy.deepcopy(obj)
        saved.pop("status", None)
        meta = saved.get("metadata") or {}
        for key in _SERVER_FIELDS:
            meta.pop(key, None)
        cluster.delete(p.kind, p.namespace, p.name)
        restart_pods(cluster, p.restart_namespace or p.namespace or "default", p.restart_selector)
        return {"object": saved}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, DeleteObjectParams)
        if cluster.get(p.kind, p.namespace, p.name) is None:
            cluster.create(state["object"])


# ------------------------------------------------------------------ ConfigMap value set
class ConfigMapValueParams(FaultParams):
    namespace: str
    configmap: str
    key: str
    value: str
    restart_selector: str | None = None


@fault
class SetConfigMapValue(Fault):
    """Change one value in a ConfigMap (flip a feature flag) and restart its consumers so the
    new value is read, as a flag rollout would."""

    name = "set_configmap_value"
    Params = ConfigMapValueParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ConfigMapValueParams)
        obj = required(cluster, "ConfigMap", p.namespace, p.configmap)
        cluster.patch("ConfigMap", p.namespace, p.configmap, {"data": {p.key: p.value}}, patch_type="merge")
        restart_pods(cluster, p.namespace, p.restart_selector)
        return {"data": obj.get("data")}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, ConfigMapValueParams)
        restore_field(cluster, "ConfigMap", p.namespace, p.configmap, "data", state["data"])
        restart_pods(cluster, p.namespace, p.restart_selector)


# ------------------------------------------------------------------ env var shadowed
class ShadowEnvParams(FaultParams):
    kind: str = "Deployment"
    namespace: str
    name: str
    container: str | None = None  # default: the first container
    env: str  # the variable to define a second time
    value: str  # the later (winning) value


@fault
class ShadowEnvVar(Fault):
    """Append a second definition of an env var to a container (a bad merge of two config
    sources): the API server accepts duplicates and the later entry wins in the container."""

    name = "shadow_env_var"
    Params = ShadowEnvParams

    def inject(self, cluster: Cluster) -> dict[str, Any]:
        p = self.params
        assert isinstance(p, ShadowEnvParams)
        obj = required(cluster, p.kind, p.namespace, p.name)
        containers = obj["spec"]["template"]["spec"]["containers"]
        index = next((i for i, c in enumerate(containers) if c["name"] == p.container), 0) if p.container else 0
        base = f"{template_spec_path(p.kind)}/containers/{index}/env"
        ops: list[dict[str, Any]] = []
        if not containers[index].get("env"):
            ops.append({"op": "add", "path": base, "value": []})
        ops.append({"op": "add", "path": f"{base}/-", "value": {"name": p.env, "value": p.value}})
        cluster.patch(p.kind, p.namespace, p.name, ops, patch_type="json")
        return {"spec": obj["spec"]}

    def recover(self, cluster: Cluster, state: dict[str, Any]) -> None:
        p = self.params
        assert isinstance(p, ShadowEnvParams)
        restore_field(cluster, p.kind, p.namespace, p.name, "spec", state["spec"])
