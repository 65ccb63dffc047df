"""ingress-nginx's choice of backend: host (exact, wildcard, catch-all), path by pathType
(Exact, Prefix element-wise, ImplementationSpecific as a string prefix), longest match first,
default backends, the class filter and the TLS Secret per host."""

from __future__ import annotations

from typing import Any

from sregym.twin.dataplane.ingress_routes import of_class, path_matches, route, tls_secret_for


def _ing(name: str, rules: list[dict[str, Any]], *, cls: str | None = "nginx", default: str | None = None,
         tls: list[dict[str, Any]] | None = None, ns: str = "app") -> dict[str, Any]:
    spec: dict[str, Any] = {"rules": rules}
    if cls:
        spec["ingressClassName"] = cls
    if default:
        spec["defaultBackend"] = {"service": {"name": default, "port": {"number": 80}}}
    if tls:
        spec["tls"] = tls
    return {"kind": "Ingress", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def _rule(host: str | None, *paths: tuple[str, str, str]) -> dict[str, Any]:
    rule: dict[str, Any] = {"http": {"paths": [
        {"path": p, "pathType": t, "backend": {"service": {"name": s, "port": {"number": 80}}}} for p, t, s in paths]}}
    if host:
        rule["host"] = host
    return rule


def _svc(ingresses: list[dict[str, Any]], host: str, path: str) -> str | None:
    backend = route(ingresses, host, path)
    return backend.service if backend else None


def test_prefix_matches_whole_path_elements() -> None:
    assert path_matches("Prefix", "/api", "/api") and path_matches("Prefix", "/api", "/api/v1")
    assert path_matches("Prefix", "/api/", "/api") and not path_matches("Prefix", "/api", "/apiv1")
    assert path_matches("Prefix", "/", "/anything")


def test_exact_and_implementation_specific() -> None:
    assert path_matches("Exact", "/api", "/api") and not path_matches("Exact", "/api", "/api/")
    assert path_matches("ImplementationSpecific", "/api", "/apiv1")  # nginx's plain prefix


def test_longest_path_wins_and_exact_beats_prefix_of_the_same_length() -> None:
    ings = [_ing("a", [_rule("h", ("/", "Prefix", "root"), ("/api", "Prefix", "api"), ("/api", "Exact", "exact"),
                             ("/api/v2", "Prefix", "v2"))])]
    assert _svc(ings, "h", "/api") == "exact"
    assert _svc(ings, "h", "/api/v1") == "api"
    assert _svc(ings, "h", "/api/v2/x?y=1") == "v2"
    assert _svc(ings, "h", "/other") == "root"


def test_hosts_exact_then_wildcard_then_catch_all() -> None:
    ings = [_ing("a", [_rule("shop.example.com", ("/", "Prefix", "shop")),
                       _rule("*.example.com", ("/", "Prefix", "wild")),
                       _rule(None, ("/", "Prefix", "any"))])]
    assert _svc(ings, "shop.example.com", "/") == "shop"
    assert _svc(ings, "api.example.com", "/") == "wild"
    assert _svc(ings, "a.b.example.com", "/") == "any"
    assert _svc(ings, "10.96.0.20", "/") == "any"


def test_no_rule_is_404_unless_a_default_backend_exists() -> None:
    ings = [_ing("a", [_rule("h", ("/api", "Prefix", "api"))])]
    assert route(ings, "h", "/nothing") is None
    assert route(ings, "other", "/api") is None  # no server for that host
    with_default = [_ing("a", [_rule("h", ("/api", "Prefix", "api"))], default="fallback")]
    assert _svc(with_default, "h", "/nothing") == "fallback"
    only_default = [_ing("b", [], default="fallback")]
    assert _svc(only_default, "any", "/x") == "fallback"


def test_the_backend_names_its_ingress_and_port() -> None:
    backend = route([_ing("site", [_rule("h", ("/", "Prefix", "frontend"))])], "h", "/x")
    assert backend is not None and (backend.namespace, backend.ingress, backend.port) == ("app", "site", 80)


def test_class_filter() -> None:
    nginx_default = [{"metadata": {"name": "nginx", "annotations": {
        "ingressclass.kubernetes.io/is-default-class": "true"}}}]
    assert of_class(_ing("a", [], cls="nginx"), [])
    assert not of_class(_ing("a", [], cls="traefik"), [])
    assert not of_class(_ing("a", [], cls=None), [])
    assert of_class(_ing("a", [], cls=None), nginx_default)
    legacy = _ing("a", [], cls=None)
    legacy["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "nginx"}
    assert of_class(legacy, [])


def test_tls_secret_per_host() -> None:
    ings = [_ing("a", [], tls=[{"hosts": ["h.example.com"], "secretName": "h-tls"},
                               {"hosts": ["*.example.org"], "secretName": "wild-tls"}])]
    assert tls_secret_for(ings, "h.example.com") == ("app", "h-tls")
    assert tls_secret_for(ings, "x.example.org") == ("app", "wild-tls")
    assert tls_secret_for(ings, "other") is None
