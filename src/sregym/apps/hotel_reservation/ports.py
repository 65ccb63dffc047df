"""The ports of Hotel Reservation's services: the app's one table (programs, Services' checks and
problems read it from here)."""

from __future__ import annotations

PORTS = {"frontend": 5000, "search": 8082, "geo": 8083, "profile": 8081, "rate": 8084,
         "recommendation": 8085, "reservation": 8087, "user": 8086}

__all__ = ["PORTS"]
