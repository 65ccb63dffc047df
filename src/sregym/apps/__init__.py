"""Applications that run in the twin: manifests, program behaviour, workload and SLOs per app.

`deploy_app(twin, "hotel-reservation")` is what `sregym twin up --app hotel-reservation` calls.
"""

from __future__ import annotations

from sregym.apps.catalog import (
    APPS,
    AppSpec,
    RequestClass,
    Slo,
    Workload,
    app,
    deploy_app,
    get_app,
    list_apps,
)

__all__ = ["APPS", "AppSpec", "RequestClass", "Slo", "Workload", "app", "deploy_app", "get_app", "list_apps"]
