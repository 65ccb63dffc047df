"""The ports of Social Network's services: the app's one table (programs, Services and problems
read it from here). Every C++ service serves Thrift on 9090; the two OpenResty front ends speak HTTP."""

from __future__ import annotations

THRIFT_PORT = 9090
THRIFT_SERVICES = ("compose-post-service", "home-timeline-service", "user-timeline-service",
                   "post-storage-service", "social-graph-service", "text-service", "url-shorten-service",
                   "user-service", "user-mention-service", "media-service", "unique-id-service")
PORTS = {"nginx-thrift": 8080, "media-frontend": 8081, **{name: THRIFT_PORT for name in THRIFT_SERVICES}}

__all__ = ["PORTS", "THRIFT_PORT", "THRIFT_SERVICES"]
