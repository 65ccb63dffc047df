"""checkout's log records per placed order, as demo 2.2.0's `src/checkout/main.go` writes them
through its `otelslog` logger (so over OTLP only, never on stdout).

PlaceOrder logs "[PlaceOrder]" with the user id and currency, "payment went through" with the
transaction id, "order placed" with the order id, amounts, item count and tracking id, then
"sending to postProcessor"; sarama's success channel then logs the write's offset and duration.
The order is the `orders` record accounting and fraud-detection log (`order_records.py`), so the
ids agree across the three services. Failed writes log through the dependency's `error_log`.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from sregym.apps.astronomy_shop.order_records import order_id, order_totals, tracking_id
from sregym.twin.dataplane.consumer_records import Record


def _uuid4(record: Record, what: str) -> str:
    digest = hashlib.sha256(f"{record.topic}/{record.partition}/{record.offset}/{what}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def checkout_lines(record: Record) -> list[tuple[str, str, dict[str, Any]]]:
    """(level, body, attributes) of one order, in the order main.go logs them."""
    items, shipping, total = order_totals(record)
    digest = hashlib.sha256(f"{record.topic}/{record.partition}/{record.offset}/write".encode()).digest()
    micros = 800 + int.from_bytes(digest[:2], "big") % 4000  # the async producer's ack wait
    return [
        ("info", "[PlaceOrder]", {"user_id": _uuid4(record, "user"), "user_currency": "USD"}),
        ("info", "payment went through", {"transaction_id": _uuid4(record, "transaction")}),
        ("info", "order placed", {"app.order.id": order_id(record), "app.shipping.amount": shipping,
                                  "app.order.amount": total, "app.order.items.count": items,
                                  "app.shipping.tracking.id": tracking_id(record)}),
        ("info", "sending to postProcessor", {}),
        ("info", f"Successful to write message. offset: {record.offset}, duration: {micros / 1000:g}ms", {}),
    ]


__all__ = ["checkout_lines"]
