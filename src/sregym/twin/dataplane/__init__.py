"""The data plane: application programs, connections, the fluid traffic model and its telemetry."""
