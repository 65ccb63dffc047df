"""Registers the telemetry scraper (order 95), which lives with the rest of the telemetry code in
`sregym.twin.telemetry.scrape`."""

from __future__ import annotations

from sregym.twin.telemetry.scrape import TelemetryScraper

__all__ = ["TelemetryScraper"]
