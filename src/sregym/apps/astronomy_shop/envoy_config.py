"""frontend-proxy's Envoy configuration as the demo's `src/frontend-proxy/envoy.tmpl.yaml` (2.2.0)
renders it: the routes in their order (exact-path redirects for `/loadgen`, `/jaeger`, `/grafana`,
prefix routes, the catch-all to `frontend`), `/flagservice/` with its route timeout disabled
(`timeout: 0s`), every other route on Envoy's default 15 s, no retry policy (so no `URX`), the
STRICT_DNS clusters named by the env vars the chart sets, the admin listener on
`${ENVOY_ADMIN_PORT}`, and the access log: only the OpenTelemetry access logger
(`envoy.access_loggers.open_telemetry` to the collector's gRPC cluster), whose body is the format
string and whose attributes are the template's, so its lines reach the log backend, not stdout."""

from __future__ import annotations

from sregym.twin.dataplane.envoy import Cluster, EnvoyConfig, Route

ACCESS_LOG_FORMAT = (
    '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% '
    '%RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% '
    '"%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% %DURATION% '
    '%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" '
    '"%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER% %UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% '
    '%DOWNSTREAM_REMOTE_ADDRESS% %REQUESTED_SERVER_NAME% %ROUTE_NAME%\n')

LOG_ATTRIBUTES = (
    ("destination.address", "%UPSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%"),
    ("event.name", "proxy.access"),
    ("server.address", "%DOWNSTREAM_LOCAL_ADDRESS%"),
    ("source.address", "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%"),
    ("upstream.cluster", "%UPSTREAM_CLUSTER%"),
    ("upstream.host", "%UPSTREAM_HOST%"),
    ("user_agent.original", "%REQ(USER-AGENT)%"),
    ("url.full", "%REQ(:SCHEME)%://%REQ(:AUTHORITY)%%REQ(:PATH)%"),
    ("url.path", "%REQ(:PATH)%"),
    ("url.query", "%REQ(:QUERY)%"),
    ("url.template", "%ROUTE_NAME%"),
)

ROUTES = (
    Route("/loadgen", exact=True, redirect="/loadgen/"),
    Route("/loadgen/", "loadgen"),
    Route("/otlp-http/", "opentelemetry_collector_http"),
    Route("/jaeger", exact=True, redirect="/jaeger/"),
    Route("/jaeger/", "jaeger"),
    Route("/grafana", exact=True, redirect="/grafana/"),
    Route("/grafana/", "grafana"),
    Route("/images/", "image-provider"),
    Route("/flagservice/", "flagservice", timeout_ms=0.0),
    Route("/feature", "flagd-ui"),
    Route("/", "frontend"),
)
CLUSTERS = (
    Cluster("opentelemetry_collector_grpc", "OTEL_COLLECTOR_HOST", "OTEL_COLLECTOR_PORT_GRPC"),
    Cluster("opentelemetry_collector_http", "OTEL_COLLECTOR_HOST", "OTEL_COLLECTOR_PORT_HTTP"),
    Cluster("frontend", "FRONTEND_HOST", "FRONTEND_PORT"),
    Cluster("image-provider", "IMAGE_PROVIDER_HOST", "IMAGE_PROVIDER_PORT"),
    Cluster("flagservice", "FLAGD_HOST", "FLAGD_PORT"),
    Cluster("flagd-ui", "FLAGD_UI_HOST", "FLAGD_UI_PORT"),
    Cluster("loadgen", "LOCUST_WEB_HOST", "LOCUST_WEB_PORT"),
    Cluster("grafana", "GRAFANA_HOST", "GRAFANA_PORT"),
    Cluster("jaeger", "JAEGER_HOST", "JAEGER_UI_PORT"),
)
FRONTEND_PROXY = EnvoyConfig(routes=ROUTES, clusters=CLUSTERS, log_format=ACCESS_LOG_FORMAT,
                             admin_port_env="ENVOY_ADMIN_PORT", access_log="otlp", log_attributes=LOG_ATTRIBUTES)

__all__ = ["ACCESS_LOG_FORMAT", "CLUSTERS", "FRONTEND_PROXY", "LOG_ATTRIBUTES", "ROUTES"]
