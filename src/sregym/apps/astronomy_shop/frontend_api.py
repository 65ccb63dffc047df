"""The Next.js frontend's API routes (`src/frontend/pages/api/` of opentelemetry-demo 2.2.0) and
what frontend-proxy (Envoy) adds in front of them.

Each handler switches on the method first, so a wrong method answers 405 even while a backend is
down; `cart`, `currency` and `shipping` only set the status without sending (`res.status(405)`),
so such a request hangs until the client (or Envoy's 15 s route timeout) gives up. Any error a
gateway throws (a failed backend, an unknown product id: product-catalog's NotFound, a JSON.parse
of a missing query parameter, a card the payment service refuses) ends as Next's own
`500 Internal Server Error`. Bodies are `res.json` of the ts-proto objects: compact JSON, keys in
proto field order, int64 as numbers. Carts live in Valkey for 60 minutes, keyed by user id.
`/api/product-ask-ai-assistant` answers what the llm mock would (ai_assistant.py). The pages and the
404 page for unknown paths: frontend_pages.py.
"""

from __future__ import annotations

import json
import re
import time
import uuid
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from sregym.apps.astronomy_shop import ai_assistant, catalogue, frontend_pages
from sregym.twin.dataplane.envoy import UPSTREAM_TIMEOUT_BODY
from sregym.twin.dataplane.pages import Page, PageRequest

JSON = {"Content-Type": "application/json; charset=utf-8"}
CART_TTL_S = 3600.0
ROUTE_TIMEOUT_MS = 15_000.0
# src/frontend/public, served by Next as static files
PUBLIC_FILES = {"/favicon.ico": "image/x-icon", **{f"/icons/{n}.svg": "image/svg+xml"
                                                   for n in ("Cart", "CartIcon", "Check", "Chevron")}}
ADDRESS_FIELDS = ("streetAddress", "city", "state", "country", "zipCode")  # Envoy's default route timeout (the frontend route sets none)
_PRODUCT = re.compile(r"^/api/products/([^/]+)/?$")
_BY_PRODUCT = re.compile(r"^/api/(product-reviews|product-reviews-avg-score|product-ask-ai-assistant)/[^/]+/?$")


class HandlerError(Exception):
    """A rejected promise inside a handler: Next answers 500."""


class _Carts:
    """Valkey's cart hashes of one twin: user id -> (items, expiry)."""

    def __init__(self) -> None:
        self.carts: dict[str, tuple[list[dict[str, Any]], float]] = {}

    def get(self, user: str, now: float) -> list[dict[str, Any]]:
        items, expires = self.carts.get(user, ([], 0.0))
        return items if expires > now else []


_CARTS: weakref.WeakKeyDictionary[Any, _Carts] = weakref.WeakKeyDictionary()


def _carts(twin: Any) -> _Carts:
    carts = _CARTS.get(twin)
    if carts is None:
        carts = _CARTS[twin] = _Carts()
    return carts


def _json(obj: Any, status: int = 200) -> Page:
    return Page(status, json.dumps(obj, separators=(",", ":"), ensure_ascii=False), dict(JSON))


def internal_error() -> Page:
    return Page(500, "Internal Server Error", {})


def _query(req: PageRequest) -> dict[str, list[str]]:
    return parse_qs(req.query, keep_blank_values=True)


def _one(query: dict[str, list[str]], name: str, default: str = "") -> str:
    """Next's `req.query[name]` used as a string (a repeated parameter is an array: joined by
    commas, as JavaScript turns an array into a string)."""
    values = query.get(name)
    return ",".join(values) if values else default


def _body(req: PageRequest) -> Any:
    """Next's bodyParser: JSON for application/json (bad JSON: 400), an object for a form, else
    the raw string."""
    ctype = next((v for k, v in req.headers.items() if k.lower() == "content-type"), "")
    text = req.body or ""
    if "application/json" in ctype:
        if not text:
            return {}
        try:
            return json.loads(text)
        except ValueError:
            raise _BadJson from None
    if "application/x-www-form-urlencoded" in ctype:
        return {k: v[0] if len(v) == 1 else v for k, v in parse_qs(text, keep_blank_values=True).items()}
    return text


class _BadJson(Exception):
    pass


def _product(product_id: str, currency: str) -> dict[str, Any]:
    found = catalogue.product(product_id)
    if found is None:  # product-catalog: NotFound "Product Not Found: <id>"
        raise HandlerError(f"Product Not Found: {product_id}")
    return {**found, "priceUsd": catalogue.price(found["priceUsd"], currency)}


# ---------------------------------------------------------------------------- handlers
def _products(req: PageRequest) -> Page:
    currency = _one(_query(req), "currencyCode")
    return _json([{**p, "priceUsd": catalogue.price(p["priceUsd"], currency)} for p in catalogue.products()])


def _one_product(req: PageRequest) -> Page:
    match = _PRODUCT.match(req.path)
    return _json(_product(match.group(1) if match else "", _one(_query(req), "currencyCode")))


def _reviews(req: PageRequest) -> Page:
    return _json(catalogue.product_reviews(_path_id(req.path)))


def _average_score(req: PageRequest) -> Page:
    score = catalogue.average_score(_path_id(req.path))
    if score is None:  # f"{None:.1f}": TypeError in product-reviews, a gRPC error here
        raise HandlerError("unsupported format string passed to NoneType.__format__")
    return _json(score)


def _path_id(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _recommendations(req: PageRequest) -> Page:
    query = _query(req)
    # ts-proto iterates the string's characters, recommendation joins them and splits on commas.
    asked = "".join(query.get("productIds", [])).split(",")
    pool = sorted({p["id"] for p in catalogue.products()} - set(asked))
    picked = req.rng.sample(pool, min(5, len(pool)))
    return _json([_product(pid, _one(query, "currencyCode")) for pid in picked[:4]])


def _ads(req: PageRequest) -> Page:
    query = _query(req)
    keys = query.get("contextKeys")
    categories = (keys[0].split(",") if len(keys) == 1 else keys) if keys else []
    ads = [catalogue.ad(name) for key in categories for name in catalogue.AD_CATEGORIES.get(key, ())]
    if not ads:  # no keys, or none with ads: two random ads
        every = catalogue.all_ads()
        ads = [every[req.rng.randrange(len(every))] for _ in range(catalogue.MAX_RANDOM_ADS)]
    return _json(ads)


def _currency(req: PageRequest) -> Page:
    return _json(list(catalogue.SUPPORTED))


def _cart_get(req: PageRequest) -> Page:
    query = _query(req)
    user = _one(query, "sessionId")
    items = _carts(req.twin).get(user, req.twin.clock.now)
    listed = [{"productId": i["productId"], "quantity": i["quantity"],
               "product": _product(i["productId"], _one(query, "currencyCode"))} for i in items]
    return _json({"userId": user if items else "", "items": listed})


def _cart_post(req: PageRequest) -> Page:
    body = _body(req)
    user = body.get("userId") if isinstance(body, dict) else None
    item = body.get("item") if isinstance(body, dict) else None
    if not isinstance(user, str) or not isinstance(item, dict):
        raise HandlerError("cannot encode AddItemRequest")
    carts, now = _carts(req.twin), req.twin.clock.now
    items = [dict(i) for i in carts.get(user, now)]
    product_id, quantity = str(item.get("productId", "")), int(item.get("quantity", 0) or 0)
    existing = next((i for i in items if i["productId"] == product_id), None)
    if existing is None:
        items.append({"productId": product_id, "quantity": quantity})
    else:
        existing["quantity"] += quantity
    carts.carts[user] = (items, now + CART_TTL_S)
    return _json({"userId": user, "items": items})


def _cart_delete(req: PageRequest) -> Page:
    body = _body(req)
    user = body.get("userId") if isinstance(body, dict) else None
    if not isinstance(user, str):
        raise HandlerError("cannot encode EmptyCartRequest")
    _carts(req.twin).carts.pop(user, None)
    return Page(204, "", {})


def _shipping(req: PageRequest) -> Page:
    query = _query(req)
    try:
        items = json.loads(_one(query, "itemList"))
        address = json.loads(_one(query, "address"))
    except ValueError:
        raise HandlerError("Unexpected end of JSON input") from None
    count = _quote_items(items, address)
    return _json(catalogue.convert(catalogue.quote_usd(count), _one(query, "currencyCode", "USD")))


def _quote_items(items: Any, address: Any) -> int:
    """Shipping (actix + serde) accepts the quote request only with every field of every item
    and of the address, typed as its structs declare; else 400, which the gateway throws."""
    if not isinstance(items, list) or not isinstance(address, dict) or \
            not all(isinstance(address.get(f), str) for f in ADDRESS_FIELDS):
        raise HandlerError("HTTP error: 400 Bad Request")
    count = 0
    for item in items:
        quantity = item.get("quantity") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(item.get("productId"), str) or \
                not isinstance(quantity, int) or isinstance(quantity, bool) or quantity < 0:
            raise HandlerError("HTTP error: 400 Bad Request")
        count += quantity
    return count


def _checkout(req: PageRequest) -> Page:
    body = _body(req)
    if not isinstance(body, dict):
        raise HandlerError("cannot encode PlaceOrderRequest")
    user, currency = str(body.get("userId", "")), str(body.get("userCurrency", ""))
    now = req.twin.clock.now
    items = _carts(req.twin).get(user, now)
    costs = [catalogue.convert(_product(i["productId"], "")["priceUsd"], currency) for i in items]
    shipping = catalogue.convert(catalogue.quote_usd(sum(i["quantity"] for i in items)), currency)
    _charge(body.get("creditCard"), now)
    _carts(req.twin).carts.pop(user, None)
    rng = req.rng
    order = {"orderId": str(uuid.UUID(int=rng.getrandbits(128), version=1)),  # checkout: uuid.NewUUID()
             "shippingTrackingId": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
             "shippingCost": shipping}
    if isinstance(body.get("address"), dict):  # the Address message as ts-proto decodes it (zip_code: int32)
        address = body["address"]
        order["shippingAddress"] = {**{f: str(address.get(f) or "") for f in ADDRESS_FIELDS[:4]},
                                    "zipCode": _int32(address.get("zipCode"))}
    listed = [{"cost": cost, "item": {"productId": i["productId"], "quantity": i["quantity"],
                                      "product": _product(i["productId"], currency)}}
              for i, cost in zip(items, costs, strict=True)]
    return _json({**order, "items": listed})


def _ask_ai(req: PageRequest) -> Page:
    """`{ question } = body` (undefined unless a JSON/form body has it: the mock refuses it)."""
    body = _body(req)
    question = body.get("question") if isinstance(body, dict) else None
    text = ai_assistant.answer(req.twin, _path_id(req.path), question if isinstance(question, str) else "", req.rng)
    if text is None:  # no summary: product-reviews' `response = None` raises, the gateway throws
        raise HandlerError("AskProductAIAssistant failed")
    return _json({"response": text})


def _int32(value: Any) -> int:
    """protobufjs' int32 writer on a JSON value (`value | 0`)."""
    try:
        return int(float(value)) if value not in (None, "") else 0
    except (TypeError, ValueError):
        return 0


def _charge(card: Any, now: float) -> None:
    """payment's checks: a valid VISA or MasterCard number not expired (else checkout fails)."""
    if not isinstance(card, dict):
        raise HandlerError("Credit card info is invalid.")
    number = str(card.get("creditCardNumber", "")).replace(" ", "").replace("-", "")
    if not number.isdigit() or not 12 <= len(number) <= 19 or not _luhn(number):
        raise HandlerError("Credit card info is invalid.")
    if not (number[0] == "4" or 51 <= int(number[:2]) <= 55 or 2221 <= int(number[:4]) <= 2720):
        raise HandlerError("Only VISA or MasterCard is accepted.")
    today = time.gmtime(now)
    year, month = int(card.get("creditCardExpirationYear", 0) or 0), int(card.get("creditCardExpirationMonth", 0) or 0)
    if today.tm_year * 12 + today.tm_mon > year * 12 + month:
        raise HandlerError("The credit card expired.")


def _luhn(number: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(number)):
        digit = int(char) * (2 if index % 2 else 1)
        total += digit - 9 if digit > 9 else digit
    return total % 10 == 0


Handler = Callable[[PageRequest], Page]
# path -> ({method: handler}, whether a wrong method is answered (405 '') or left hanging)
ROUTES: dict[str, tuple[dict[str, Handler], bool]] = {
    "/api/products": ({"GET": _products}, True),
    "/api/products/{productId}": ({"GET": _one_product}, True),
    "/api/product-reviews/{productId}": ({"GET": _reviews}, True),
    "/api/product-reviews-avg-score/{productId}": ({"GET": _average_score}, True),
    "/api/recommendations": ({"GET": _recommendations}, True),
    "/api/data": ({"GET": _ads}, True),
    "/api/currency": ({"GET": _currency}, False),
    "/api/cart": ({"GET": _cart_get, "POST": _cart_post, "DELETE": _cart_delete}, False),
    "/api/checkout": ({"POST": _checkout}, True),
    "/api/product-ask-ai-assistant/{productId}": ({"POST": _ask_ai}, True),
    "/api/shipping": ({"GET": _shipping}, False),
}


def frontend_page(req: PageRequest) -> Page | None:
    """The frontend's answer to one request: an API route's body, a page's document, a file
    from `public/`, or Next's 404 page for anything else (frontend_pages.py)."""
    by_product = _BY_PRODUCT.match(req.path)
    route = "/api/products/{productId}" if _PRODUCT.match(req.path) else \
        f"/api/{by_product.group(1)}/{{productId}}" if by_product else req.path.rstrip("/") or "/"
    if route not in ROUTES:
        if req.path in PUBLIC_FILES:
            return Page(200, "", {"Content-Type": PUBLIC_FILES[req.path], "Cache-Control": "public, max-age=0",
                                  "Accept-Ranges": "bytes"})
        page_route = frontend_pages.document_route(req.path)
        if page_route is None:
            return frontend_pages.not_found(req)
        return frontend_pages.document(req, page_route) if req.ok else internal_error()
    handlers, answers_405 = ROUTES[route]
    handler = handlers.get(req.method.upper())
    if handler is None:
        return Page(405, "", {}) if answers_405 else Page(stall=True)
    if not req.ok:
        return internal_error()
    try:
        return handler(req)
    except _BadJson:
        return Page(400, "Invalid JSON", {})
    except HandlerError:
        return internal_error()


def proxy_page(req: PageRequest) -> Page | None:
    """frontend-proxy's answer on the catch-all route to the frontend: the frontend's page with
    Envoy's headers (lower-case on HTTP/1.1), or Envoy's 504 once its route timeout passes (a
    handler that never answers, or an upstream slower than a shortened route timeout)."""
    if req.path.startswith(("/images/", "/flagservice/", "/otlp-http/", "/jaeger/", "/grafana/", "/loadgen/",
                            "/feature")):
        return None
    if not req.ok and req.error == UPSTREAM_TIMEOUT_BODY:  # the route's timeout passed (envoy.py)
        return Page(504, UPSTREAM_TIMEOUT_BODY, {"content-length": "24", "content-type": "text/plain",
                                                 "server": "envoy"})
    page = frontend_page(req)
    if page is None:
        return None
    if page.stall:
        return Page(504, "upstream request timeout", {"content-length": "24", "content-type": "text/plain",
                                                       "server": "envoy"}, delay_ms=ROUTE_TIMEOUT_MS)
    headers = {k.lower(): v for k, v in page.headers.items()}
    headers.update({"x-envoy-upstream-service-time": "3", "server": "envoy"})
    return Page(page.status, page.body, headers, delay_ms=page.delay_ms)


__all__ = ["CART_TTL_S", "ROUTES", "frontend_page", "internal_error", "proxy_page"]
