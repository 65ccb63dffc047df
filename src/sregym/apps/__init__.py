"""Applications that run in the twin: one folder per app, each with one `AppSpec` (manifests,
programs, images, load generator, entry point and SLOs, app context, namespace, ports).

`deploy_app(twin, "hotel-reservation")` is what `sregym twin up --app hotel-reservation` calls;
problems name the app and `get_app(name)` gives its spec.
"""

from __future__ import annotations

from sregym.apps.catalog import (
    APPS,
    AppSpec,
    ClosedLoop,
    OpenLoop,
    RequestClass,
    Slo,
    Workload,
    app,
    deploy_app,
    get_app,
    list_apps,
    load_apps_dir,
)

__all__ = ["APPS", "AppSpec", "ClosedLoop", "OpenLoop", "RequestClass", "Slo", "Workload", "app", "deploy_app",
           "get_app", "list_apps", "load_apps_dir"]
