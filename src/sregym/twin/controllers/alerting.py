"""Registers the Prometheus rule evaluator (`sregym.twin.telemetry.alerts`) as a controller.

Controllers are discovered from this package only; the evaluator lives with the rest of the
telemetry code, so this module just imports it for its `@controller` registration."""

from __future__ import annotations

from sregym.twin.telemetry.alerts import AlertingController

__all__ = ["AlertingController"]
