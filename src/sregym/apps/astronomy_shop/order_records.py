"""What the `orders` records hold and how the demo's consumers log them.

A record is checkout's `OrderResult` protobuf. The twin does not carry payloads, so a record's
content is derived from where it sits in the log (topic, partition, offset): every consumer of a
record sees the same order id (a version-1 UUID, as checkout's `uuid.NewUUID()` makes), the
same shipping tracking id, address (one of the load generator's people) and items (catalogue
products at their USD prices, shipping priced as quote prices it). accounting logs it through
`Log.OrderReceivedMessage` ("Order details: {@OrderResult}." with the message's protobuf JSON,
.NET console format); fraud-detection through log4j2's pattern
`%d{yyyy-MM-dd HH:mm:ss} - %logger{36} - %msg trace_id=... span_id=... trace_flags=... `.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from sregym.apps.astronomy_shop.catalogue import products, quote_usd
from sregym.twin.dataplane.consumer_records import Record

# (streetAddress, zipCode, city, state, country) of the load generator's people.json.
ADDRESSES = (
    ("1600 Amphitheatre Parkway", "94043", "Mountain View", "CA", "United States"),
    ("One Microsoft Way", "98052", "Redmond", "WA", "United States"),
    ("One Apple Park Way", "95014", "Cupertino", "CA", "United States"),
    ("1 Hacker Way", "94025", "Menlo Park", "CA", "United States"),
    ("410 Terry Ave N", "98109", "Seattle", "WA", "United States"),
    ("100 Winchester Circle", "95032", "Los Gatos", "CA", "United States"),
    ("150 Elgin St", "K2P1L4", "Ottawa", "ON", "Canada"),
    ("1355 Market St", "94103", "San Francisco", "CA", "United States"),
    ("2300 Traverwood Dr", "48105", "Ann Arbor", "MI", "United States"),
)


def _digest(record: Record, what: str) -> bytes:
    return hashlib.sha256(f"{record.topic}/{record.partition}/{record.offset}/{what}".encode()).digest()


def order_id(record: Record) -> str:
    """A version-1 (time and node) UUID, as github.com/google/uuid's NewUUID formats it."""
    raw = bytearray(_digest(record, "order")[:16])
    raw[6] = (raw[6] & 0x0F) | 0x10
    raw[8] = (raw[8] & 0x3F) | 0x80
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def tracking_id(record: Record) -> str:
    raw = bytearray(_digest(record, "tracking")[:16])
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _money(money: dict[str, Any]) -> str:
    # Google.Protobuf's JsonFormatter: int64 units as a string, int32 nanos as a number, zero omitted.
    parts = [f'"currencyCode": "{money["currencyCode"]}"']
    if money["units"]:
        parts.append(f'"units": "{money["units"]}"')
    if money["nanos"]:
        parts.append(f'"nanos": {money["nanos"]}')
    return "{ " + ", ".join(parts) + " }"


def order_json(record: Record) -> str:
    """The OrderResult as `OrderResult.ToString()` prints it (protobuf JSON, C# formatter)."""
    seed = _digest(record, "content")
    catalogue = products()
    count = 1 + seed[0] % 2
    items = []
    for n in range(count):
        product = catalogue[seed[1 + n] % len(catalogue)]
        quantity = 1 + seed[4 + n] % 3
        items.append('{ "item": { "productId": "' + product["id"] + f'", "quantity": {quantity} }}, "cost": '
                     + _money(product["priceUsd"]) + " }")
    street, zip_code, city, state, country = ADDRESSES[seed[8] % len(ADDRESSES)]
    address = (f'{{ "streetAddress": "{street}", "city": "{city}", "state": "{state}", "country": "{country}", '
               f'"zipCode": "{zip_code}" }}')
    return (f'{{ "orderId": "{order_id(record)}", "shippingTrackingId": "{tracking_id(record)}", '
            f'"shippingCost": {_money(quote_usd(count))}, "shippingAddress": {address}, '
            f'"items": [ {", ".join(items)} ] }}')


def order_totals(record: Record) -> tuple[int, float, float]:
    """(item lines, shipping USD, order total USD with shipping) of the order `order_json` prints,
    the amounts checkout's "order placed" record carries."""
    seed = _digest(record, "content")
    catalogue = products()
    count = 1 + seed[0] % 2
    total = 0.0
    for n in range(count):
        price = catalogue[seed[1 + n] % len(catalogue)]["priceUsd"]
        total += (price["units"] + price["nanos"] / 1e9) * (1 + seed[4 + n] % 3)
    shipping = quote_usd(count)
    shipping_usd = shipping["units"] + shipping["nanos"] / 1e9
    return count, shipping_usd, round(total + shipping_usd, 2)


def accounting_lines(record: Record) -> list[str]:
    return ["info: Accounting.Consumer[0]", f"      Order details: {order_json(record)}."]


def fraud_detection_lines(record: Record) -> list[str]:
    stamp = datetime.fromtimestamp(record.at, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
    trace_id, span_id = consumer_trace(record)
    ids = f"trace_id={trace_id} span_id={span_id} trace_flags=01 "
    sleeping = [f"{stamp} - fraud-detection - FeatureFlag 'kafkaQueueProblems' is enabled, sleeping 1 second {ids}"]
    return [*(sleeping if record.slowed else []), f"{stamp} - fraud-detection - Consumed record with orderId: {order_id(record)}, and updated total "
            f"count to: {record.total} {ids}"]


def consumer_trace(record: Record) -> tuple[str, str]:
    """(trace id, span id) of the consumer span a record is handled in: the order's trace, carried
    in the record's `traceparent` header (fraud-detection prints the same ids in its pattern)."""
    trace = _digest(record, "trace").hex()
    return trace[:32], trace[32:48]


def accounting_records(record: Record) -> list[tuple[Any, ...]]:
    """The OTLP record of `Log.OrderReceivedMessage`: .NET exports the message template as the
    body (formatted messages are off by default) and the argument as an attribute; the record
    carries the consumer activity's trace context."""
    return [("info", "Order details: {@OrderResult}.", {"OrderResult": order_json(record)}, consumer_trace(record))]


def fraud_detection_records(record: Record) -> list[tuple[Any, ...]]:
    """What the Java agent's log4j capture exports: the formatted message, without the pattern,
    inside the consumer span (its trace context on the record)."""
    context = consumer_trace(record)
    sleeping = [("info", "FeatureFlag 'kafkaQueueProblems' is enabled, sleeping 1 second", {}, context)]
    return [*(sleeping if record.slowed else []),
            ("info", f"Consumed record with orderId: {order_id(record)}, and updated total count to: {record.total}",
             {}, context)]


__all__ = [
    "ADDRESSES",
    "accounting_lines",
    "accounting_records",
    "consumer_trace",
    "fraud_detection_lines",
    "fraud_detection_records",
    "order_id",
    "order_json",
    "order_totals",
    "tracking_id",
]
