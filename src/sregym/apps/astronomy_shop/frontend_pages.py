"""The Next.js frontend's pages router (opentelemetry-demo 2.2.0, Next 16): its four documents and
the 404 page for every other path.

Why: a probe on a path the shop does not have (`/healthz`, `/api/nope`, a typo in a readiness
probe) must fail the way the real frontend fails, with Next's own `404: This page could not be
found` document, while the pages the demo ships (`src/frontend/pages/`: `/`, `/cart`,
`/cart/checkout/[orderId]`, `/product/[productId]`) answer 200 with their HTML. `_app.tsx` has
`getInitialProps`, so every page is rendered per request and Next marks it uncacheable; the
custom `_document.tsx` writes `window.ENV` from the container's env and the request's baggage
(`synthetic_request=true` from the load generator switches the browser's trace endpoint to the
collector). The client-side rendering is the browser's business (`site.py`), not here.
"""

from __future__ import annotations

import html
from typing import Any

from sregym.twin.dataplane.pages import Page, PageRequest

# route template -> the <title> its page sets in <Head>
DOCUMENTS = {"/": "Otel Demo - Home", "/cart": "Otel Demo - Cart",
             "/cart/checkout/{orderId}": "Otel Demo - Checkout", "/product/{productId}": "Otel Demo - Product"}
HEADERS = {"X-Powered-By": "Next.js", "Cache-Control": "private, no-cache, no-store, max-age=0, must-revalidate",
           "Content-Type": "text/html; charset=utf-8", "Vary": "Accept-Encoding"}
NOT_FOUND_TITLE = "404: This page could not be found"
# the chart's frontend env that _document.tsx reads (values.yaml), with the collector's Service name resolved
ENV_DEFAULTS = {"ENV_PLATFORM": "kubernetes", "WEB_OTEL_SERVICE_NAME": "frontend-web",
                "PUBLIC_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://localhost:8080/otlp-http/v1/traces",
                "OTEL_COLLECTOR_HOST": "otel-collector"}


def document_route(path: str) -> str | None:
    """The page template `path` renders, or None (Next's 404). Next matches one segment per
    `[param]` and ignores one trailing slash."""
    parts = [p for p in path.split("?", 1)[0].rstrip("/").split("/")[1:]]
    if not parts:
        return "/"
    for route in DOCUMENTS:
        pattern = route.split("/")[1:]
        if route != "/" and len(pattern) == len(parts) and all(
                p == s or (p.startswith("{") and s) for p, s in zip(pattern, parts, strict=True)):
            return route
    return None


def is_synthetic(headers: dict[str, str]) -> bool:
    """W3C baggage `synthetic_request=true` (what the demo's Locust users send)."""
    baggage = next((v for k, v in headers.items() if k.lower() == "baggage"), "")
    for member in baggage.split(","):
        key, _, value = member.partition("=")
        if key.strip() == "synthetic_request" and value.split(";", 1)[0].strip() == "true":
            return True
    return False


def _env_script(env: dict[str, str], synthetic: bool) -> str:
    endpoint = f"http://{env['OTEL_COLLECTOR_HOST']}:4318/v1/traces" if synthetic \
        else env["PUBLIC_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    return ("window.ENV = {"
            f"NEXT_PUBLIC_PLATFORM: '{env['ENV_PLATFORM']}', "
            f"NEXT_PUBLIC_OTEL_SERVICE_NAME: '{env['WEB_OTEL_SERVICE_NAME']}', "
            f"NEXT_PUBLIC_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '{endpoint}', "
            f"IS_SYNTHETIC_REQUEST: '{'true' if synthetic else 'false'}'}};")


def _html(title: str, body: str, env: dict[str, str], synthetic: bool, page: str) -> str:
    return ('<!DOCTYPE html><html><head><meta charSet="utf-8"/>'
            '<meta name="viewport" content="width=device-width"/>'
            f"<title>{html.escape(title)}</title>"
            '<link rel="preconnect" href="https://fonts.googleapis.com"/></head>'
            f'<body><div id="__next">{body}</div><script>{_env_script(env, synthetic)}</script>'
            f'<script id="__NEXT_DATA__" type="application/json">{{"props":{{"pageProps":{{}}}},'
            f'"page":"{page}","query":{{}},"buildId":"production"}}</script></body></html>')


def frontend_env(twin: Any) -> dict[str, str]:
    """The frontend Deployment's literal env values over the chart's defaults (what the process sees)."""
    env = dict(ENV_DEFAULTS)
    obj = twin.store.peek("Deployment", "astronomy-shop", "frontend") if twin is not None else None
    for container in ((obj or {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers") or []):
        for item in container.get("env") or []:
            if item.get("name") in env and isinstance(item.get("value"), str) and "$(" not in item["value"]:
                env[item["name"]] = item["value"]
    return env


def document(req: PageRequest, route: str) -> Page:
    """A page's server-rendered HTML (200)."""
    page = route.replace("{", "[").replace("}", "]")
    body = '<main></main>'  # Layout's header/footer and the page's components render from the API in the browser
    text = _html(DOCUMENTS[route], body, frontend_env(req.twin), is_synthetic(req.headers), page)
    return Page(200, text, dict(HEADERS))


def not_found(req: PageRequest) -> Page:
    """Next's default 404 page (2.2.0 has no pages/404.tsx), for any path no page or API route owns."""
    body = ('<div style="font-family:system-ui,sans-serif;height:100vh;text-align:center;display:flex;'
            'flex-direction:column;align-items:center;justify-content:center"><div>'
            '<h1 class="next-error-h1" style="display:inline-block;margin:0 20px 0 0;padding:0 23px 0 0;'
            'font-size:24px;font-weight:500;vertical-align:top;line-height:49px">404</h1>'
            '<div style="display:inline-block"><h2 style="font-size:14px;font-weight:400;line-height:49px;'
            'margin:0">This page could not be found<!-- -->.</h2></div></div></div>')
    text = _html(NOT_FOUND_TITLE, body, frontend_env(req.twin), is_synthetic(req.headers), "/_error")
    return Page(404, text, dict(HEADERS))


__all__ = ["DOCUMENTS", "NOT_FOUND_TITLE", "document", "document_route", "is_synthetic", "not_found"]
