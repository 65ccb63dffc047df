"""The shop's data as its services hold it (opentelemetry-demo 2.2.0), for the frontend's bodies.

- products: the rows `init.sql` (the chart's PostgreSQL init script) inserts into
  `catalog.products`, read from that file so the catalogue has one source; product-catalog
  returns them `ORDER BY p.id` with `categories` split on commas;
- currencies: the currency service's C++ `unordered_map`, listed in libstdc++'s iteration order
  (what `GetSupportedCurrencies` returns), and its `Convert` arithmetic, including how its
  `getDouble` rebuilds a fraction from `nanos` digit by digit (a leading zero is lost:
  0.05 reads as 0.5) and truncates the result to units and nanos;
- ads: the ad service's category map (books deliberately have none);
- quote: the PHP quote service's `round(8.99 * items, 2)` as shipping turns it into Money;
- reviews: the rows `init.sql` inserts into `reviews.productreviews`, as product-reviews reads them.
"""

from __future__ import annotations

import math
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any

RATES = {"EUR": 1.0, "USD": 1.1305, "JPY": 126.40, "BGN": 1.9558, "CZK": 25.592, "DKK": 7.4609, "GBP": 0.85970,
         "HUF": 315.51, "PLN": 4.2996, "RON": 4.7463, "SEK": 10.5375, "CHF": 1.1360, "ISK": 136.80, "NOK": 9.8040,
         "HRK": 7.4210, "RUB": 74.4208, "TRY": 6.1247, "AUD": 1.6072, "BRL": 4.2682, "CAD": 1.5128, "CNY": 7.5857,
         "HKD": 8.8743, "IDR": 15999.40, "ILS": 4.0875, "INR": 79.4320, "KRW": 1275.05, "MXN": 21.7999,
         "MYR": 4.6289, "NZD": 1.6679, "PHP": 59.083, "SGD": 1.5349, "THB": 36.012, "ZAR": 16.0583}
# The map's iteration order (std::unordered_map<std::string, double> built from the list above).
SUPPORTED = ("ZAR", "ISK", "ILS", "RON", "GBP", "BRL", "CZK", "AUD", "BGN", "JPY", "PHP", "HUF", "USD", "SGD", "IDR",
             "CHF", "TRY", "NZD", "THB", "DKK", "PLN", "NOK", "HRK", "HKD", "EUR", "RUB", "CAD", "INR", "SEK", "KRW",
             "CNY", "MXN", "MYR")

_ADS = {"binoculars": ("/product/2ZYFJ3GM2N", "Roof Binoculars for sale. 50% off."),
        "telescope": ("/product/66VCHSJNUP", "Starsense Explorer Refractor Telescope for sale. 20% off."),
        "imager": ("/product/0PUK6V6EV0", "Solar System Color Imager for sale. 30% off."),
        "tube": ("/product/9SIQT8TOJO", "Optical Tube Assembly for sale. 10% off."),
        "travel": ("/product/1YMWWN1N4O",
                   "Eclipsmart Travel Refractor Telescope for sale. Buy one, get second kit for free"),
        "filter": ("/product/6E92ZMYYFZ", "Solar Filter for sale. Buy two, get third one for free"),
        "kit": ("/product/L9ECAV7KIM", "Lens Cleaning Kit for sale. Buy one, get second one for free")}
AD_CATEGORIES = {"binoculars": ("binoculars",), "telescopes": ("telescope",),
                 "accessories": ("imager", "filter", "kit"), "assembly": ("tube",), "travel": ("travel",)}
MAX_RANDOM_ADS = 2
COST_PER_ITEM = 8.99


def ad(name: str) -> dict[str, str]:
    url, text = _ADS[name]
    return {"redirectUrl": url, "text": text}


def all_ads() -> list[dict[str, str]]:
    """Every ad in the multimap's value order (category by category, as built)."""
    return [ad(name) for names in AD_CATEGORIES.values() for name in names]


@cache
def products() -> tuple[dict[str, Any], ...]:
    """The catalogue rows as product-catalog returns them (Product messages, ts-proto field order)."""
    sql = resources.files(__package__ + ".chart").joinpath("init.sql").read_text()
    start = sql.index("INSERT INTO catalog.products")
    rows = _tuples(sql[sql.index("VALUES", start) + 6:])
    out = [{"id": r[0], "name": r[1], "description": r[2], "picture": r[3],
            "priceUsd": {"currencyCode": r[4], "units": int(r[5]), "nanos": int(r[6])},
            "categories": [c.strip() for c in r[7].split(",")] if r[7] else []} for r in rows]
    return tuple(sorted(out, key=lambda p: p["id"]))


def product(product_id: str) -> dict[str, Any] | None:
    return next((p for p in products() if p["id"] == product_id), None)


@cache
def reviews() -> tuple[tuple[str, dict[str, str]], ...]:
    """(product id, ProductReview) rows of `reviews.productreviews` in insertion order (the
    service's `SELECT ... WHERE product_id = %s` has no ORDER BY); the score is psycopg2's
    Decimal as str: "5.0"."""
    sql = resources.files(__package__ + ".chart").joinpath("init.sql").read_text()
    start = sql.index("INSERT INTO reviews.productreviews")
    rows = _tuples(sql[sql.index("VALUES", start) + 6:])
    return tuple((r[0], {"username": r[1], "description": r[2], "score": r[3]}) for r in rows)


def product_reviews(product_id: str) -> list[dict[str, str]]:
    return [review for pid, review in reviews() if pid == product_id]


def average_score(product_id: str) -> str | None:
    """`SELECT AVG(score)` formatted `f"{avg:.1f}"`; None where AVG is NULL (the service's
    format then raises)."""
    scores = [Decimal(r["score"]) for r in product_reviews(product_id)]
    return f"{sum(scores) / len(scores):.1f}" if scores else None


def _tuples(text: str) -> list[list[str]]:
    """The `( 'a', 'b''c', 1 ), (...)` tuples of one VALUES list, up to its `;`."""
    rows: list[list[str]] = []
    row: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "'":
            j, buf = i + 1, []
            while True:
                if text[j] == "'" and text[j + 1:j + 2] == "'":
                    buf.append("'")
                    j += 2
                elif text[j] == "'":
                    break
                else:
                    buf.append(text[j])
                    j += 1
            row.append("".join(buf))
            i = j + 1
        elif ch == "(":
            row = []
            i += 1
        elif ch == ")":
            rows.append(row)
            i += 1
        elif ch == ";":
            break
        elif ch.isdigit() or ch == "-":
            j = i
            while text[j].isdigit() or text[j] in "-.":
                j += 1
            row.append(text[i:j])
            i = j
        else:
            i += 1
    return rows


def _c_div(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _get_double(units: int, nanos: int) -> float:
    decimal = 0.0
    while nanos != 0:
        digit = nanos - _c_div(nanos, 10) * 10  # C++ % truncates toward zero
        nanos = _c_div(nanos, 10)
        decimal = decimal / 10 + digit / 10
    return float(units) + decimal


def convert(money: dict[str, Any], to_code: str) -> dict[str, Any]:
    """The currency service's Convert; an unknown code has rate 0 (the map's default value)."""
    rate = RATES.get(money.get("currencyCode", ""), 0.0)
    value = _get_double(int(money.get("units", 0)), int(money.get("nanos", 0)))
    euros = value / rate if rate else math.inf
    final = euros * RATES.get(to_code, 0.0) if rate else 0.0
    unit = math.trunc(final)
    nanos = math.trunc((final - unit) * 1e9)
    return {"currencyCode": to_code, "units": unit, "nanos": nanos}


def price(money: dict[str, Any], currency_code: str) -> dict[str, Any]:
    """The frontend's getProductPrice: converted only for a non-empty code other than USD."""
    return convert(money, currency_code) if currency_code and currency_code != "USD" else dict(money)


def quote_usd(items: int) -> dict[str, Any]:
    """Shipping's cost for `items` items: quote's PHP round(), then dollars and whole cents."""
    value = _php_round(COST_PER_ITEM * items, 2)
    cents = int(value * 100) % 100
    return {"currencyCode": "USD", "units": math.floor(value), "nanos": cents * 10_000_000}


def _php_round(value: float, places: int) -> float:
    scaled = value * 10 ** places
    return math.floor(scaled + 0.5) / 10 ** places if scaled >= 0 else math.ceil(scaled - 0.5) / 10 ** places


__all__ = ["AD_CATEGORIES", "MAX_RANDOM_ADS", "RATES", "SUPPORTED", "ad", "all_ads", "average_score", "convert", "price",
           "product", "product_reviews", "products", "quote_usd", "reviews"]
