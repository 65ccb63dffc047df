"""Telemetry of the twin: the time-series database, traces, and (in their own modules) the scrapers
that fill them and the query engines that read them. Logs live in `sregym.twin.node.logs`."""
