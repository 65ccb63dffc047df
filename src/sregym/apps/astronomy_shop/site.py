"""What the shop's pages fetch in a browser (the Next.js frontend of opentelemetry-demo 2.2.0).

Why: the load generator's Playwright user opens `/`, clicks a product and "Add To Cart", and
opens `/cart` and switches the currency (locustfile.py's `WebsiteBrowserUser`). Each page's
scripts then fetch through frontend-proxy, and every `ProductCard` fetches its picture from
`/images/products/<picture>` itself, with `x-envoy-fault-delay-request` set to the
`imageSlowLoad` flag (components/ProductCard). This module says which requests each step sends,
for `twin/dataplane/browser.py`:

- every document load: the page, the flagd web provider's `ResolveAll` through `/flagservice/`
  (`_app.tsx`: `FlagdWebProvider` with `pathPrefix: 'flagservice'`), `CartProvider`'s
  `GET /api/cart` and `CurrencyProvider`'s `GET /api/currency`;
- `/`: `GET /api/products` and one picture per product card (the ten products);
- `/product/<id>`: the product, its reviews and average score, recommendations (four cards,
  four pictures) and an ad for its categories;
- `/cart`: recommendations (four cards) and the shipping quote of the cart's items; "Add To
  Cart" posts the item and pushes `/cart`; a new currency refetches the cart and the
  recommendations (their cards fetch their pictures again).
Next's static chunks are left out (served from the browser cache after the first load).
"""

from __future__ import annotations

import json
from urllib.parse import quote

from sregym.apps.astronomy_shop import catalogue
from sregym.twin.dataplane.browser import Visit

SESSION = "00000000-0000-4000-8000-000000000000"  # the browser's session id (a uuid in localStorage)
FLAGS = ("POST", "/flagservice/flagd.evaluation.v1.Service/ResolveAll")
RECOMMENDED = 4


def _products() -> list[dict[str, object]]:
    return list(catalogue.products())


def _picture(product: dict[str, object]) -> tuple[str, str]:
    return ("GET", f"/images/products/{product['picture']}")


def _recommendations(exclude: str, currency: str) -> tuple[tuple[str, str], ...]:
    others = [p for p in _products() if p["id"] != exclude][:RECOMMENDED]
    return (("GET", f"/api/recommendations?productIds={exclude}&sessionId={SESSION}&currencyCode={currency}"),
            *(_picture(p) for p in others))


def _cart(currency: str) -> tuple[str, str]:
    return ("GET", f"/api/cart?sessionId={SESSION}&currencyCode={currency}")


def _shipping(currency: str) -> tuple[str, str]:
    items = quote(json.dumps([{"productId": "2ZYFJ3GM2N", "quantity": 1}], separators=(",", ":")))
    address = quote(json.dumps({"streetAddress": "1600 Amphitheatre Parkway", "city": "Mountain View",
                                "state": "CA", "country": "United States", "zipCode": "94043"},
                               separators=(",", ":")))
    return ("GET", f"/api/shipping?itemList={items}&currencyCode={currency}&address={address}")


def _page(path: str, currency: str = "USD") -> tuple[tuple[str, str], ...]:
    """The requests a page's components send once it is shown (client-side)."""
    if path == "/":
        return (("GET", f"/api/products?currencyCode={currency}"), *(_picture(p) for p in _products()))
    if path.startswith("/product/"):
        pid = path.rsplit("/", 1)[-1]
        found = catalogue.product(pid) or {}
        keys = ",".join(str(c) for c in found.get("categories") or ())
        return (("GET", f"/api/products/{pid}?currencyCode={currency}"), ("GET", f"/api/product-reviews/{pid}"),
                ("GET", f"/api/product-reviews-avg-score/{pid}"), *_recommendations(pid, currency),
                ("GET", f"/api/data?contextKeys={keys}"))
    if path == "/cart":
        return (*_recommendations("", currency), _shipping(currency))
    return ()


def shop_site(action: str, at: str, arg: str, value: str) -> Visit | None:
    """One Playwright step on the shop (see the module docstring); None: nothing happens."""
    if action == "goto":
        return Visit(arg, (("GET", arg), FLAGS, _cart("USD"), ("GET", "/api/currency"), *_page(arg)))
    if action == "click" and at == "/" and ":has-text(" in arg:
        name = arg.split(":has-text(", 1)[1].strip(')"\'')
        found = next((p for p in _products() if p["name"] == name), None)
        if found is not None:
            path = f"/product/{found['id']}"
            return Visit(path, _page(path))
    if action == "click" and at.startswith("/product/") and "Add To Cart" in arg:
        return Visit("/cart", (("POST", "/api/cart"), _cart("USD"), *_page("/cart")))
    if action == "select" and "currency_code" in arg and value:
        return Visit(at, (_cart(value), *_recommendations("", value)))
    return None


__all__ = ["shop_site"]
