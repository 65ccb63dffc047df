"""Pod Security Admission: the `baseline` and `restricted` Pod Security Standards, enforced from
namespace labels (`pod-security.kubernetes.io/enforce`, optional `enforce-version`).

Labelling a namespace `restricted` (or a chart upgrade adding `privileged: true` in a namespace
that already was) leaves a Deployment with zero pods and a `FailedCreate` event listing every
violated control, in the order and wording of the real admission controller:
`violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (...), ...`.
Only `enforce` is modelled; `warn` and `audit` never block anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sregym.twin.admission.base import AdmissionPlugin, admission_plugin, forbidden
from sregym.twin.machinery.store import Operation

ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION_LABEL = "pod-security.kubernetes.io/enforce-version"
LEVELS = ("privileged", "baseline", "restricted")

_BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID",
                                    "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID",
                                    "SETPCAP", "SETUID", "SYS_CHROOT"})
_SAFE_SYSCTLS = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                           "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
                           "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                           "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                           "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"})
_RESTRICTED_VOLUMES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                       "persistentVolumeClaim", "projected", "secret")
Violation = tuple[str, str]  # (forbidden reason, detail)


def _plural(single: str, plural: str, count: int) -> str:
    return single if count == 1 else plural


def _quoted(items: list[str]) -> str:
    return ", ".join(f'"{i}"' for i in items)


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for field in ("initContainers", "containers", "ephemeralContainers")
            for c in spec.get(field) or []]


def _sc(container: dict[str, Any]) -> dict[str, Any]:
    return container.get("securityContext") or {}


def _names(containers: list[dict[str, Any]]) -> list[str]:
    return [c.get("name", "") for c in containers]


# ------------------------------------------------------------ baseline checks
def _host_namespaces(spec: dict[str, Any]) -> Violation | None:
    used = [f"{field}=true" for field in ("hostNetwork", "hostPID", "hostIPC") if spec.get(field)]
    return ("host namespaces", ", ".join(used)) if used else None


def _privileged(spec: dict[str, Any]) -> Violation | None:
    bad = _names([c for c in _containers(spec) if _sc(c).get("privileged") is True])
    if not bad:
        return None
    return ("privileged", f"{_plural('container', 'containers', len(bad))} {_quoted(bad)} "
                          "must not set securityContext.privileged=true")


def _capabilities_baseline(spec: dict[str, Any]) -> Violation | None:
    bad: list[str] = []
    caps: set[str] = set()
    for c in _containers(spec):
        added = [str(x) for x in ((_sc(c).get("capabilities") or {}).get("add") or [])
                 if str(x) not in _BASELINE_CAPABILITIES]
        if added:
            bad.append(c.get("name", ""))
            caps.update(added)
    if not bad:
        return None
    return ("non-default capabilities",
            f"{_plural('container', 'containers', len(bad))} {_quoted(bad)} must not include "
            f"{_quoted(sorted(caps))} in securityContext.capabilities.add")


def _host_path_volumes(spec: dict[str, Any]) -> Violation | None:
    bad = [v.get("name", "") for v in spec.get("volumes") or [] if "hostPath" in v]
    if not bad:
        return None
    return ("hostPath volumes", f"{_plural('volume', 'volumes', len(bad))} {_quoted(bad)}")


def _host_ports(spec: dict[str, Any]) -> Violation | None:
    bad: list[str] = []
    ports: set[str] = set()
    for c in _containers(spec):
        used = [str(p["hostPort"]) for p in c.get("ports") or [] if p.get("hostPort")]
        if used:
            bad.append(c.get("name", ""))
            ports.update(used)
    if not bad:
        return None
    return ("hostPort", f"{_plural('container', 'containers', len(bad))} {_quoted(bad)} "
                        f"{_plural('uses', 'use', len(bad))} {_plural('hostPort', 'hostPorts', len(ports))} "
                        f"{', '.join(sorted(ports))}")


def _proc_mount(spec: dict[str, Any]) -> Violation | None:
    bad = [c for c in _containers(spec) if _sc(c).get("procMount") not in (None, "Default")]
    if not bad:
        return None
    mounts = sorted({str(_sc(c).get("procMount")) for c in bad})
    return ("procMount", f"{_plural('container', 'containers', len(bad))} {_quoted(_names(bad))} "
                         f"must not set securityContext.procMount to {_quoted(mounts)}")


def _app_armor(spec: dict[str, Any]) -> Violation | None:
    bad: list[str] = []
    pod_profile = ((spec.get("securityContext") or {}).get("appArmorProfile") or {}).get("type")
    if pod_profile == "Unconfined":
        bad.append("pod")
    for c in _containers(spec):
        if (_sc(c).get("appArmorProfile") or {}).get("type") == "Unconfined":
            bad.append(f'container "{c.get("name", "")}"')
    if not bad:
        return None
    return ("forbidden AppArmor profile", f'{", ".join(bad)} must not set appArmorProfile.type to "Unconfined"')


def _se_linux(spec: dict[str, Any]) -> Violation | None:
    allowed_types = ("", "container_t", "container_init_t", "container_kvm_t", "container_engine_t")

    def bad_options(sc: dict[str, Any]) -> bool:
        opts = sc.get("seLinuxOptions") or {}
        return (opts.get("type", "") not in allowed_types or bool(opts.get("user"))
                or bool(opts.get("role")))

    offenders = []
    if bad_options(spec.get("securityContext") or {}):
        offenders.append("pod")
    offenders += [f'container "{c.get("name", "")}"' for c in _containers(spec) if bad_options(_sc(c))]
    if not offenders:
        return None
    return ("seLinuxOptions", f"{', '.join(offenders)} set forbidden securityContext.seLinuxOptions")


def _seccomp_baseline(spec: dict[str, Any]) -> Violation | None:
    offenders = []
    if ((spec.get("securityContext") or {}).get("seccompProfile") or {}).get("type") == "Unconfined":
        offenders.append("pod")
    bad = [c for c in _containers(spec) if (_sc(c).get("seccompProfile") or {}).get("type") == "Unconfined"]
    if bad:
        offenders.append(f"{_plural('container', 'containers', len(bad))} {_quoted(_names(bad))}")
    if not offenders:
        return None
    return ("seccompProfile", f'{" and ".join(offenders)} must not set '
                              'securityContext.seccompProfile.type to "Unconfined"')


def _sysctls(spec: dict[str, Any]) -> Violation | None:
    bad = [str(s.get("name", "")) for s in (spec.get("securityContext") or {}).get("sysctls") or []
           if s.get("name") not in _SAFE_SYSCTLS]
    return ("forbidden sysctls", ", ".join(bad)) if bad else None


# ---------------------------------------------------------- restricted checks
def _allow_privilege_escalation(spec: dict[str, Any]) -> Violation | None:
    bad = _names([c for c in _containers(spec) if _sc(c).get("allowPrivilegeEscalation") is not False])
    if not bad:
        return None
    return ("allowPrivilegeEscalation != false",
            f"{_plural('container', 'containers', len(bad))} {_quoted(bad)} "
            "must set securityContext.allowPrivilegeEscalation=false")


def _capabilities_restricted(spec: dict[str, Any]) -> Violation | None:
    missing_drop: list[str] = []
    adding: list[str] = []
    caps: set[str] = set()
    for c in _containers(spec):
        capabilities = _sc(c).get("capabilities") or {}
        if "ALL" not in [str(x) for x in capabilities.get("drop") or []]:
            missing_drop.append(c.get("name", ""))
        added = [str(x) for x in capabilities.get("add") or [] if str(x) != "NET_BIND_SERVICE"]
        if added:
            adding.append(c.get("name", ""))
            caps.update(added)
    details = []
    if missing_drop:
        details.append(f"{_plural('container', 'containers', len(missing_drop))} {_quoted(missing_drop)} "
                       'must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(f"{_plural('container', 'containers', len(adding))} {_quoted(adding)} "
                       f"must not include {_quoted(sorted(caps))} in securityContext.capabilities.add")
    return ("unrestricted capabilities", "; ".join(details)) if details else None


def _restricted_volumes(spec: dict[str, Any]) -> Violation | None:
    bad: list[str] = []
    types: set[str] = set()
    for volume in spec.get("volumes") or []:
        kinds = [k for k in volume if k != "name"]
        if any(k in _RESTRICTED_VOLUMES for k in kinds):
            continue
        bad.append(volume.get("name", ""))
        types.update(kinds)
    if not bad:
        return None
    return ("restricted volume types",
            f"{_plural('volume', 'volumes', len(bad))} {_quoted(bad)} {_plural('uses', 'use', len(bad))} "
            f"{_plural('restricted volume type', 'restricted volume types', len(types))} "
            f"{_quoted(sorted(types))}")


def _run_as_non_root(spec: dict[str, Any]) -> Violation | None:
    pod_value = (spec.get("securityContext") or {}).get("runAsNonRoot")
    details = []
    if pod_value is False:
        details.append("pod must not set securityContext.runAsNonRoot=false")
    explicit = _names([c for c in _containers(spec) if _sc(c).get("runAsNonRoot") is False])
    if explicit:
        details.append(f"{_plural('container', 'containers', len(explicit))} {_quoted(explicit)} "
                       "must not set securityContext.runAsNonRoot=false")
    if pod_value is not True:
        implicit = _names([c for c in _containers(spec) if _sc(c).get("runAsNonRoot") is None])
        if implicit:
            details.append(f"pod or {_plural('container', 'containers', len(implicit))} "
                           f"{_quoted(implicit)} must set securityContext.runAsNonRoot=true")
    return ("runAsNonRoot != true", "; ".join(details)) if details else None


def _run_as_user(spec: dict[str, Any]) -> Violation | None:
    offenders = []
    if (spec.get("securityContext") or {}).get("runAsUser") == 0:
        offenders.append("pod")
    bad = _names([c for c in _containers(spec) if _sc(c).get("runAsUser") == 0])
    if bad:
        offenders.append(f"{_plural('container', 'containers', len(bad))} {_quoted(bad)}")
    if not offenders:
        return None
    return ("runAsUser=0", f"{' and '.join(offenders)} must not set runAsUser=0")


def _seccomp_restricted(spec: dict[str, Any]) -> Violation | None:
    allowed = ("RuntimeDefault", "Localhost")
    pod_type = ((spec.get("securityContext") or {}).get("seccompProfile") or {}).get("type")
    details = []
    if pod_type is not None and pod_type not in allowed:
        details.append(f'pod must not set securityContext.seccompProfile.type to "{pod_type}"')
    explicit = [c for c in _containers(spec)
                if (_sc(c).get("seccompProfile") or {}).get("type") not in (None, *allowed)]
    if explicit:
        shown = sorted({str((_sc(c).get("seccompProfile") or {}).get("type")) for c in explicit})
        details.append(f"{_plural('container', 'containers', len(explicit))} {_quoted(_names(explicit))} "
                       f"must not set securityContext.seccompProfile.type to {_quoted(shown)}")
    if pod_type is None:
        implicit = _names([c for c in _containers(spec) if (_sc(c).get("seccompProfile") or {}).get("type") is None])
        if implicit:
            details.append(f"pod or {_plural('container', 'containers', len(implicit))} {_quoted(implicit)} "
                           'must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"')
    return ("seccompProfile", "; ".join(details)) if details else None


Check = Callable[[dict[str, Any]], Violation | None]

# Baseline checks then restricted checks, each in check-ID order, which is the order the real
# evaluator reports them in. Restricted versions replace their baseline counterparts.
_BASELINE: tuple[tuple[str, Check], ...] = (
    ("appArmorProfile", _app_armor),
    ("capabilities_baseline", _capabilities_baseline),
    ("hostNamespaces", _host_namespaces),
    ("hostPathVolumes", _host_path_volumes),
    ("hostPorts", _host_ports),
    ("privileged", _privileged),
    ("procMount", _proc_mount),
    ("seLinuxOptions", _se_linux),
    ("seccompProfile_baseline", _seccomp_baseline),
    ("sysctls", _sysctls),
)
_RESTRICTED: tuple[tuple[str, Check], ...] = (
    ("allowPrivilegeEscalation", _allow_privilege_escalation),
    ("capabilities_restricted", _capabilities_restricted),
    ("restrictedVolumes", _restricted_volumes),
    ("runAsNonRoot", _run_as_non_root),
    ("runAsUser", _run_as_user),
    ("seccompProfile_restricted", _seccomp_restricted),
)
_OVERRIDDEN_BY_RESTRICTED = {"capabilities_baseline", "hostPathVolumes", "seccompProfile_baseline"}


def evaluate(level: str, spec: dict[str, Any]) -> list[Violation]:
    """Every control of `level` the pod spec violates, in report order."""
    if level == "privileged":
        return []
    checks = list(_BASELINE)
    if level == "restricted":
        checks = [c for c in checks if c[0] not in _OVERRIDDEN_BY_RESTRICTED] + list(_RESTRICTED)
    return [v for _id, check in checks if (v := check(spec)) is not None]


def namespace_policy(labels: dict[str, str]) -> tuple[str, str] | None:
    """(level, version) enforced by a namespace's labels, or None when nothing is enforced.
    An unparsable level fails closed to `restricted`, like the real controller."""
    level = labels.get(ENFORCE_LABEL)
    if level is None or level == "privileged":
        return None
    if level not in LEVELS:
        level = "restricted"
    version = labels.get(ENFORCE_VERSION_LABEL) or "latest"
    return level, version


@admission_plugin
class PodSecurityAdmission(AdmissionPlugin):
    name = "PodSecurity"
    order = 170

    def validate(self, op: Operation) -> None:
        if op.kind.key != ("", "Pod") or op.obj is None or op.subresource:
            return
        if op.verb not in ("CREATE", "UPDATE"):
            return
        if op.verb == "UPDATE" and op.old is not None and \
                (op.old.get("spec") or {}) == (op.obj.get("spec") or {}):
            return  # metadata-only updates are never re-evaluated
        ns = self.twin.store.peek("Namespace", None, op.namespace)
        if ns is None:
            return
        policy = namespace_policy((ns.get("metadata") or {}).get("labels") or {})
        if policy is None:
            return
        level, version = policy
        violations = evaluate(level, op.obj.get("spec") or {})
        if violations:
            text = ", ".join(f"{reason} ({detail})" for reason, detail in violations)
            raise forbidden(op, f'violates PodSecurity "{level}:{version}": {text}')
