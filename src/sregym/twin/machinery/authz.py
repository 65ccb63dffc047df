"""Who may do what through the twin's Kubernetes API.

Two credentials exist. `admin` (fault injectors, oracles, humans debugging the twin) may do
anything. `agent` is the SRE agent under evaluation, and its permissions are those of an on-call
engineer given a namespaced-admin-like role cluster-wide, expressed as RBAC PolicyRules so that
`kubectl auth can-i` and SelfSubjectRulesReview can answer from the same table. Each kind's row
(twin/machinery/kinds.py, `agent_grants`) declares what the agent may change on it; the rules are
built from the rows:

- it reads (get/list/watch) everything, except what betrays the benchmark: the namespaces
  `chaos-mesh` and `sregym-system` (the Namespace objects themselves and everything in them).
  Those are denied before the rules are consulted, so the server filters them out of lists,
  watches and events, and answers direct access exactly as it would for a namespace that does
  not exist (api/kube/invisible.py);
- it changes workloads (pods, deployments, replicasets, statefulsets, daemonsets, jobs,
  cronjobs, HPAs, PDBs), their `scale` subresource, pod eviction/exec/port-forward, config
  (configmaps, secrets, serviceaccounts and their tokens), networking (services, endpoints,
  endpointslices, ingresses, networkpolicies), namespaced policy (resourcequotas, limitranges, roles,
  rolebindings), storage claims and volumes, webhook configurations (an on-call engineer removes a
  webhook that blocks every create) and priority classes; it may create namespaces and label
  them (Pod Security Admission fixes) but not delete them;
- on nodes it may `get/list/watch/patch/update` (cordon, uncordon, taints, labels) but neither
  create nor delete them, nor write `nodes/status` (the kubelet owns that);
- Chaos Mesh (`chaos-mesh.org`) is a platform add-on every cluster shows alike: its kinds are
  discoverable and the agent reads and changes experiments and Schedules in every namespace it
  sees (a team's chaos experiment left running is an incident an on-call engineer ends by pausing
  or deleting it). The benchmark's own experiments live in the hidden `chaos-mesh` namespace, so
  with no user chaos every problem shows the same empty lists;
- it changes custom resources of any CRD-defined group (application operators' objects);
- every authenticated user, ServiceAccounts included, may ask what it may do
  (selfsubjectaccessreviews, selfsubjectrulesreviews, selfsubjectreviews), as the real API
  server's default `system:basic-user` binding allows;
- it never writes any `*/status` subresource (controllers own status), CustomResourceDefinitions,
  ClusterRoles/ClusterRoleBindings (no privilege escalation), Events, Leases, or
  ControllerRevisions.
"""

from __future__ import annotations

from dataclasses import dataclass

from sregym.twin.machinery.kinds import ALL_VERBS, BUILTIN_KINDS, READ, ResourceKind
from sregym.twin.topology import HIDDEN_NAMESPACES

ADMIN = "admin"
AGENT = "agent"
# API groups hidden whole from the agent: none since Chaos Mesh became a visible add-on; kept so
# discovery, RBAC and the API server keep one place to say it.
HIDDEN_GROUPS: tuple[str, ...] = ()
_BASIC_USER_REASON = ('RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole '
                      '"system:basic-user" to Group "system:authenticated"')


@dataclass(frozen=True)
class PolicyRule:
    """An RBAC PolicyRule: `resources` may carry `resource/subresource` entries."""

    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]

    def allows(self, verb: str, group: str, resource: str, subresource: str) -> bool:
        if "*" not in self.api_groups and group not in self.api_groups:
            return False
        if "*" not in self.verbs and verb not in self.verbs:
            return False
        target = f"{resource}/{subresource}" if subresource else resource
        return "*" in self.resources or target in self.resources

    def to_json(self) -> dict[str, list[str]]:
        return {"verbs": list(self.verbs), "apiGroups": list(self.api_groups),
                "resources": list(self.resources)}


def agent_rules(kinds: tuple[ResourceKind, ...]) -> tuple[PolicyRule, ...]:
    """The agent's ClusterRole, built from the rows' `agent_grants`: read everything (hidden things
    are denied before the rules are consulted), then one rule per grant `rule` number, its
    resources ordered by `at`. A kind served at two versions (HPA v1/v2) grants once."""
    by_rule: dict[int, list[tuple[int, str, str, tuple[str, ...]]]] = {}
    for k in kinds:
        for g in k.agent_grants or ():
            target = f"{k.plural}/{g.subresource}" if g.subresource else k.plural
            entry = (g.at, k.group, target, g.verbs)
            if entry not in by_rule.setdefault(g.rule, []):
                by_rule[g.rule].append(entry)
    rules = [PolicyRule(("*",), ("*",), READ)]
    for number in sorted(by_rule):
        entries = sorted(by_rule[number])
        groups = {group for _, group, _, _ in entries}
        verbs = {v for _, _, _, v in entries}
        if len(groups) != 1 or len(verbs) != 1 or len({at for at, *_ in entries}) != len(entries):
            raise ValueError(f"agent rule {number}: grants must share group and verbs and have "
                             f"distinct positions: {entries}")
        rules.append(PolicyRule((groups.pop(),), tuple(t for _, _, t, _ in entries), verbs.pop()))
    return tuple(rules)


AGENT_RULES: tuple[PolicyRule, ...] = agent_rules(BUILTIN_KINDS)
# What the default `system:basic-user` ClusterRole grants group `system:authenticated`.
BASIC_USER_RULES: tuple[PolicyRule, ...] = (
    PolicyRule(("authorization.k8s.io",), ("selfsubjectaccessreviews", "selfsubjectrulesreviews"), ("create",)),
    PolicyRule(("authentication.k8s.io",), ("selfsubjectreviews",), ("create",)),
)

# Groups the twin defines itself; any other group comes from a CRD created at run time. The
# hidden groups count as such CRD groups: RBAC must say of them what it says of any unknown group.
BUILTIN_GROUPS = frozenset(k.group for k in BUILTIN_KINDS) - frozenset(HIDDEN_GROUPS)

ADMIN_RULES: tuple[PolicyRule, ...] = (PolicyRule(("*",), ("*",), ("*",)),)

_BINDING = {
    ADMIN: ('ClusterRoleBinding "kubeadm:cluster-admins"', 'ClusterRole "cluster-admin"'),
    AGENT: ('ClusterRoleBinding "oncall"', 'ClusterRole "oncall"'),
}


def rules_for(user: str) -> tuple[PolicyRule, ...]:
    """The RBAC rules bound to `user` (empty for anyone unknown)."""
    if user == ADMIN:
        return ADMIN_RULES
    if user == AGENT:
        return AGENT_RULES
    return ()


def is_hidden(user: str, group: str = "", namespace: str | None = None,
              resource: str = "", name: str | None = None) -> bool:
    """Whether this user must not even learn that the thing exists."""
    if user == ADMIN:
        return False
    if group in HIDDEN_GROUPS:
        return True
    if namespace and namespace in HIDDEN_NAMESPACES:
        return True
    return group == "" and resource == "namespaces" and bool(name) and name in HIDDEN_NAMESPACES


def hidden_namespaces(user: str) -> tuple[str, ...]:
    """Namespaces whose objects the server filters out of this user's lists and watches."""
    return () if user == ADMIN else HIDDEN_NAMESPACES


def hidden_groups(user: str) -> tuple[str, ...]:
    """API groups left out of this user's discovery documents."""
    return () if user == ADMIN else HIDDEN_GROUPS


def authorize(user: str, verb: str, group: str, resource: str, namespace: str | None = None,
              name: str | None = None, subresource: str | None = None) -> tuple[bool, str]:
    """Decide one request like the RBAC authorizer: (allowed, reason).

    `verb` is a Kubernetes API verb (get, list, watch, create, update, patch, delete,
    deletecollection, or "*"); `resource` is the plural ("*" for any). The reason is the text
    the real API server puts in `SubjectAccessReviewStatus.reason`. What is hidden from `user` is
    denied with no reason at all: the in-process callers (cluster/twin.py, snapshots, metrics)
    rely on that denial, and the API server turns it into the answer for something absent
    (api/kube/invisible.py), so no text ever names why.
    """
    if user in _BINDING and is_hidden(user, group, namespace, resource, name):
        return False, ""
    return rbac_authorize(user, verb, group, resource, namespace, name, subresource)


def rbac_authorize(user: str, verb: str, group: str, resource: str, namespace: str | None = None,
                   name: str | None = None, subresource: str | None = None) -> tuple[bool, str]:
    """What the RBAC rules alone say, as if nothing were hidden: the answer a cluster without the
    hidden namespaces would give, which is what the agent must get about them (a namespace that
    does not exist is no different to RBAC from one that does)."""
    sub = subresource or ""
    if user not in _BINDING:
        return _stored_rbac(user, verb, group, resource, namespace, sub)
    if user != ADMIN and "*" in (group, resource):
        # A wildcard would include the hidden resources.
        return False, ""
    for rule in rules_for(user):
        if verb == "*" and "*" not in rule.verbs:
            continue
        if rule.allows(verb, group, resource, sub):
            break
    else:
        custom = user == AGENT and group not in BUILTIN_GROUPS and sub in ("", "scale")
        if not (custom and verb in (*ALL_VERBS, "*")):
            return False, ""
    binding, role = _BINDING[user]
    return True, f"RBAC: allowed by {binding} of {role} to User {user!r}".replace("'", '"')


def _stored_rbac(user: str, verb: str, group: str, resource: str, namespace: str | None,
                 sub: str) -> tuple[bool, str]:
    """A ServiceAccount (or any other user): what the cluster's RBAC objects bind to it
    (`rbac_objects.py`); nothing when no store is bound."""
    from sregym.twin.machinery.rbac_objects import bound_rules  # below authz: it imports nothing of it

    if "*" in (group, resource):
        return False, ""
    authenticated = user not in ("anonymous", "system:anonymous")
    if authenticated and any(rule.allows(verb, group, resource, sub) for rule in BASIC_USER_RULES):
        return True, _BASIC_USER_REASON
    for groups, resources, verbs in bound_rules(user, namespace):
        rule = PolicyRule(groups, resources, verbs)
        if verb == "*" and "*" not in rule.verbs:
            continue
        if rule.allows(verb, group, resource, sub):
            return True, f'RBAC: allowed for "{user}"'
    return False, ""


def forbidden_message(user: str, verb: str, group: str, resource: str,
                      namespace: str | None = None, name: str | None = None,
                      subresource: str | None = None) -> str:
    """The API server's 403 text, e.g. `pods is forbidden: User "agent" cannot list resource
    "pods" in API group "" in the namespace "chaos-mesh"`."""
    target = f"{resource}/{subresource}" if subresource else resource
    subject = f'{target} "{name}"' if name else target
    if group:
        subject = f'{target}.{group} "{name}"' if name else f"{target}.{group}"
    where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
    return (f'{subject} is forbidden: User "{user}" cannot {verb} resource "{target}" in API group '
            f'"{group}"{where}')


__all__ = [
    "ADMIN",
    "AGENT",
    "BASIC_USER_RULES",
    "HIDDEN_GROUPS",
    "HIDDEN_NAMESPACES",
    "PolicyRule",
    "authorize",
    "forbidden_message",
    "hidden_groups",
    "hidden_namespaces",
    "is_hidden",
    "rbac_authorize",
    "rules_for",
]
