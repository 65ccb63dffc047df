"""Where each Astronomy Shop service's own log lines go in demo 2.2.0 (its `src/<service>` code).

- OTLP only: checkout and product-catalog (Go `slog` set to the `otelslog` bridge), shipping (Rust
  `tracing` with only the OpenTelemetry appender layer), currency (C++ OTLP gRPC log exporter),
  quote (Monolog with only the OpenTelemetry handler), recommendation and product-reviews
  (Python `logging` with only the SDK's `LoggingHandler`).
- Both: cart and accounting (.NET console logger beside the OTLP exporter / auto-instrumentation),
  payment (pino-opentelemetry-transport with a gRPC and a console exporter), email (`$logger.on_emit`
  and `puts`), ad and fraud-detection (log4j2's console appender, captured again by the Java agent).
- stdout only: frontend (Next.js console), flagd, image-provider (nginx), llm, and Envoy's own log;
  frontend-proxy's access log takes the OpenTelemetry access logger (`envoy_config.py`).
"""

from __future__ import annotations

LOG_SINKS = {
    "checkout": "otlp", "product-catalog": "otlp", "shipping": "otlp", "currency": "otlp", "quote": "otlp",
    "recommendation": "otlp", "product-reviews": "otlp",
    "cart": "both", "accounting": "both", "payment": "both", "email": "both", "ad": "both",
    "fraud-detection": "both",
}


def sinks(service: str) -> str:
    """The log channel of `service` (stdout when its code prints only)."""
    return LOG_SINKS.get(service, "stdout")


__all__ = ["LOG_SINKS", "sinks"]
