"""Runtime feature flags: a setting read from a ConfigMap that switches a service onto a code path
its dependencies do not support.

The evidence an on-call engineer has: every pod is healthy, one service answers errors, and its
log says a callee does not implement what it is asked for (gRPC `Unimplemented`, `unknown
method`, `not implemented`). The service's own code did not change; a setting it reads did. So
the test reads the flag-like settings the failing service takes from ConfigMaps (versions such as
`v2`, booleans such as `true`/`enabled`) and keeps the one the error points at: its value or its
name appears in the failing call. The fix sets it back one step (`v2` -> `v1`, `true` -> `false`)
and restarts the service, since environment values are read at start.
"""

from __future__ import annotations

import json
import re

from sregym.agents.baseline import remedies as fix
from sregym.agents.baseline.changes import recent_changes
from sregym.agents.baseline.context import IMPACT, Ctx, Finding, callers, containers

_UNSUPPORTED = re.compile(r"(?i)code = Unimplemented|unknown method|not implemented|unknown service|"
                          r"unsupported (?:method|version|operation)")
_VERSION = re.compile(r"^(v?)(\d+)$", re.IGNORECASE)
_SWITCH = {"true": "false", "on": "off", "enabled": "disabled", "enable": "disable", "yes": "no"}
# Words that say "this is a flag" but name no code path.
_GENERIC = {"enable", "enabled", "disable", "use", "feature", "flag", "version", "backend", "mode", "new",
            "experimental", "config", "setting"}


def previous_value(value: str) -> str | None:
    """The value a flag most likely had before it was switched on or bumped, or None."""
    lowered = value.strip().lower()
    if lowered in _SWITCH:
        return _SWITCH[lowered] if value.islower() else _SWITCH[lowered].capitalize()
    match = _VERSION.match(value.strip())
    if match and int(match.group(2)) > 1:
        return f"{match.group(1)}{int(match.group(2)) - 1}"
    return None


def _words(text: str) -> set[str]:
    """Lower-case words of identifiers, splitting snake_case, dotted and CamelCase names."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return {w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if len(w) >= 3}


def _points_at(key: str, value: str, error: str) -> bool:
    """Does the failing call name this flag: its version value (`v2` in `NearbyV2`) or one of the
    non-generic words of its key (`SEARCH_...` and `search.Search`)?"""
    if _VERSION.match(value.strip()) and re.search(rf"{re.escape(value.strip())}\b", error, re.IGNORECASE):
        return True
    return bool((_words(key) - _GENERIC) & _words(error))


def feature_flag(ctx: Ctx) -> Finding | None:
    errors: dict[str, str] = {}
    for workload, message in ctx.facts.error_logs:
        if _UNSUPPORTED.search(message):
            errors.setdefault(workload, message)
    for workload in sorted(errors):
        error = errors[workload]
        for configmap, key, value in _flag_settings(ctx, workload):
            old = previous_value(value)
            if old is None or not _points_at(key, value, error):
                continue
            body = json.dumps({"data": {key: old}})
            cmds = [(f"patch configmap {configmap} -n {ctx.ns} --type merge -p '{body}'", None),
                    fix.restart(ctx.ns, workload, "flag")]
            return Finding([ctx.obj("ConfigMap", configmap)],
                           "feature flag enables a latent bug (unimplemented code path)",
                           f"{workload} reads the runtime flag {key}={value} from ConfigMap {configmap}; on that "
                           f"code path it calls something its callee does not implement ({error.strip()[-160:]}), "
                           f"so its requests fail with HTTP 500 while every pod is healthy. Setting the flag back "
                           f"to {old} and restarting {workload} restores the old path. {IMPACT}", cmds,
                           affected=[ctx.dep(workload), *callers(ctx, [workload])])
    return None


def _flag_settings(ctx: Ctx, workload: str) -> list[tuple[str, str, str]]:
    """(ConfigMap, key, value) of every environment setting the workload takes from a ConfigMap."""
    refs: list[tuple[str, str | None]] = []
    for c in containers(ctx.deployment(workload)):
        for e in c.get("env") or []:
            ref = (e.get("valueFrom") or {}).get("configMapKeyRef") or {}
            if ref.get("name") and ref.get("key"):
                refs.append((ref["name"], ref["key"]))
        for source in c.get("envFrom") or []:
            name = (source.get("configMapRef") or {}).get("name")
            if name:
                refs.append((name, None))
    out = []
    for name, key in refs:
        data = ctx.json(f"get configmap {name} -n {ctx.ns}").get("data") or {}
        for k, v in sorted(data.items()):
            if (key is None or k == key) and isinstance(v, str) and "\n" not in v:
                out.append((name, k, v))
    return out


# ------------------------------------------------------------------ flag definition files
def _flag_file(text: str) -> dict | None:
    """A flag definition file (OpenFeature/flagd style: `flags` -> {variants, defaultVariant})."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    flags = doc.get("flags") if isinstance(doc, dict) else None
    if not isinstance(flags, dict) or not all(isinstance(f, dict) and "variants" in f for f in flags.values()):
        return None
    return doc


def _switched_on(flags: dict) -> list[str]:
    """Flags served with a variant other than `off` although an `off` variant exists."""
    return sorted(name for name, f in flags.items()
                  if "off" in (f.get("variants") or {}) and f.get("defaultVariant") not in (None, "off"))


def _mounters(ctx: Ctx, configmap: str) -> list[str]:
    """Deployments whose pods mount the ConfigMap as a volume (they read it at start)."""
    text = ctx.get(f"get deployments -n {ctx.ns} -o jsonpath="
                   """'{range .items[*]}{.metadata.name}{"\\t"}{.spec.template.spec.volumes[*].configMap.name}{"\\n"}{end}'""")
    return sorted(n for line in text.splitlines() for n, _, maps in [line.partition("\t")]
                  if configmap in maps.split())


def flag_file(ctx: Ctx) -> Finding | None:
    """A recently edited ConfigMap holds a feature-flag file in which flags are switched on.

    The generic method: "what changed?" names the ConfigMap (its newest write is well after its
    creation); its content is a flag definition file; a flag served with a variant other than
    `off` opens a code path (errors, latency, load, memory) in the services that evaluate it.
    The revert: every switched-on flag back to `off`, then restart the workloads that mount the
    file, since they copy it at start. Services whose names the flag names are the affected ones.
    """
    for change in recent_changes(ctx, "ConfigMap"):
        data = ctx.json(f"get configmap {change.name} -n {ctx.ns}").get("data") or {}
        for key, text in sorted(data.items()):
            doc = _flag_file(text) if isinstance(text, str) else None
            on = _switched_on(doc["flags"]) if doc else []
            if not doc or not on:
                continue
            for name in on:
                doc["flags"][name]["defaultVariant"] = "off"
            body = json.dumps({"data": {key: json.dumps(doc, indent=2) + "\n"}})
            readers = _mounters(ctx, change.name)
            cmds = [(f"patch configmap {change.name} -n {ctx.ns} --type merge -p '{body}'", None),
                    *[fix.restart(ctx.ns, r, "flag") for r in readers]]
            touched = sorted({d for d in ctx.facts.deployments for flag in on
                              if flag.lower().startswith(d.replace("-", ""))} - set(readers))
            settings = ", ".join(f"{n}={v}" for n, v in ((n, json.loads(text)["flags"][n].get("defaultVariant"))
                                                         for n in on))
            return Finding([ctx.obj("ConfigMap", change.name)],
                           "feature flag switched on (defaultVariant) opens a failure code path",
                           f"ConfigMap {change.name} was edited at {change.at} (after deployment); its flag file "
                           f"{key} now serves {settings} (defaultVariant moved from off). The feature flag drives "
                           f"{', '.join(touched) or 'the services that evaluate it'} onto its failure code path. "
                           f"Fix: defaultVariant back to off and restart {', '.join(readers) or 'the flag server'}. "
                           f"{IMPACT}", cmds,
                           affected=[ctx.dep(d) for d in touched] + callers(ctx, touched))
    return None


__all__ = ["feature_flag", "flag_file", "previous_value"]
